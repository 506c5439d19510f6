"""Chapter 7b, *Past the front*: everything the chapter shows, as one :class:`FrontResult`.

The chapter tests, at depths 48 and 96, what was predicted from trained Pre-LN at depth 24
before any deeper run was made (``results/predictions/front.json``, :mod:`resdecay_lib.analysis.front`):

* the depth-24 front: per seed, the front's stream V_front, the bulk's s^2, a, r, c and the
  offset k0 = V_front / s^2 - F of the front model omega_k^2 ~ 1 / (k + k0);
* the order of the records: the predictions' commit before every deeper or longer run's code
  (``results/predictions/order.json``);
* each deep run's local slopes of log omega_k^2 on log k in the windows [L/4, L/2] and [L/2, L]
  and its position u = (slope - m) / h between the front (u = -1) and level (u = +1) models'
  predicted slopes over [L/2, L] (:func:`analysis.front.position`); over the runs, the (1 - 0.05/2) t
  interval of u (the evidence of ledger claim ``claim-front``);
* every committed prediction tested by the file's Welch test (:func:`analysis.front.prediction_tests`);
* the shifted law a / (k + k0) against a power law past the front (:func:`analysis.front.laws_past_front`);
* the exponent through a 10,800-step schedule and whether it settles (:func:`analysis.training_analysis.settling`);
* the exponent and front at width 128 (descriptive);
* declared after the deep runs were seen (exploratory): how many runs claim-front's statistic would
  need (:func:`analysis.front.runs_needed`), how the front's k0 grows with depth
  (:func:`analysis.front.depth_scaling`), the sign of every deep run's slope over [L/4, L/2]
  (:func:`analysis.front.sign_test`), u without the last block (:func:`analysis.front.position_without_last`),
  the front model against its own source runs, and the settling test read at the book's exponent
  margin (:func:`analysis.front.settling_at_margin`) over a schedule with no constant part
  (:func:`analysis.front.schedule`).

:func:`chapter` computes it from the stored runs and records under the book's folder; the
wording functions (``*_words``) write each sentence that depends on the evidence, and the
table functions (``*_table``) each Markdown table, from plain numbers. Knows nothing of torch.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ...book import ledger
from ...book.glues import EvidenceGlue, Table, Words
from ...book.notebooks import book_root
from ...stats import inference as stats
from .. import front as front_models
from .. import pretrained_analysis
from .. import training_analysis

__all__ = ["FrontResult", "chapter", "FrontProfile", "PredictedSlopes", "DeepRun", "DraftReading",
           "CommittedPredictions", "RunOrder", "OrderedRun", "LawComparison", "WideRun",
           "PRETRAINED", "missing_words", "front_words", "premise_words", "premise_reading_words",
           "laws_words", "long_words", "long_front_words", "long_card_words", "wide_words",
           "profiles_table", "predicted_table", "runs_table", "tests_table", "laws_table",
           "settling_table", "wide_table", "power_words", "scaling_words", "settle_margin_words",
           "schedule_words", "scaling_table", "sensitivity_table", "source_table", "U_SEPARATION"]

#: the pretrained models whose curves join the shifted-law comparison (their Shakespeare records)
PRETRAINED = ("smollm2-135m", "qwen2.5-coder-0.5b", "gemma3-270m", "all-minilm-l6")
#: a fitted shifted law whose k0 exceeds this is a flat curve (its grid runs to 1e6)
FLAT_K0 = 1e5
#: the distance between the two predictions on the scale of u (front -1, level +1)
U_SEPARATION = 2.0


# ----------------------------------------------------------------------------- the result's parts

@dataclass(frozen=True)
class FrontProfile:
    """One run's stream split into front, bulk and tail (:class:`analysis.front.BlockProfile`'s summary):
    ``v_front_sq`` the variance of the stream block F + 1 reads, ``s2``, ``a`` the bulk's mean output
    variance and aligned part, ``r``, ``c`` its mean r_k, c_k; ``k0`` = V_front / s^2 - F."""
    run: str
    L: int
    v_front_sq: float
    s2: float
    a: float
    r: float
    c: float
    k0: float


@dataclass(frozen=True)
class PredictedSlopes:
    """One model's committed prediction at depth ``L``: its mean curve omega_k^2 over ``k``
    (mean over the source seeds), its local slope per window as (mean, lo, hi) (95 % t interval
    over the seeds) and, at the source depth, its in-sample mean |log(predicted / measured)|."""
    model: str
    L: int
    k: tuple
    curve_mean: tuple
    slopes: Mapping[str, tuple]
    in_sample_log_error: float | None


@dataclass(frozen=True)
class DeepRun:
    """One finished deep run at its final step: ``omega`` its mean omega_k^2 (k = 1..L),
    ``slopes`` its local slope per window, ``u`` the position of its [L/2, L] slope between the
    two predictions, ``side`` that slope against the front model's interval ("above", "within",
    "below"), ``profile`` its front, ``final_loss``, ``converged`` (the convergence criterion)."""
    name: str
    L: int
    omega: np.ndarray
    slopes: Mapping[str, float]
    u: float
    side: str
    profile: front_models.BlockProfile
    final_loss: float
    converged: bool


@dataclass(frozen=True)
class DraftReading:
    """The draft rule's reading (the committed file's refutation paragraph): u over the depth-96
    runs alone, with its (1 - 0.05/2) t interval once three are stored."""
    u: tuple
    interval: stats.TInterval | None

    def __str__(self) -> str:
        if self.interval is None:
            return f"sensitivity, depth 96 alone: {len(self.u)} runs stored, no interval yet"
        return f"sensitivity, depth 96 alone: u = {self.interval:.2f}"


@dataclass(frozen=True)
class CommittedPredictions:
    """What the committed prediction file says of itself: what it is, when and from which code it
    was written, the rule it was committed with, how it extrapolates and what would refute it."""
    what: str
    written_utc: str
    code_version: str
    rule: Mapping
    extrapolation: str
    refutation: str

    def __str__(self) -> str:
        return "\n".join([self.what,
                          f"written {self.written_utc} by code {self.code_version} | rule {self.rule}",
                          f"extrapolation: {self.extrapolation}", f"refutation: {self.refutation}"])


@dataclass(frozen=True)
class OrderedRun:
    """A deeper or longer run stored, with what ``order.json`` records of its code version: its
    commit time (ISO, "" when unrecorded) and whether it descends from the predictions' commit."""
    name: str
    code_version: str
    committed: str
    descends_from_predictions: bool

    @property
    def dirty(self) -> bool:
        """Whether the run ran from uncommitted code."""
        return self.code_version.endswith("-dirty")


@dataclass(frozen=True)
class RunOrder:
    """The predictions' commit (``predictions_commit``, ``predictions_committed`` ISO time) and
    every deeper or longer run stored (``runs``); ``missing``: the runs of the sweeps not stored."""
    predictions_commit: str
    predictions_committed: str
    runs: tuple
    missing: tuple

    def __str__(self) -> str:
        versions = sorted({r.code_version for r in self.runs})
        return (f"predictions: commit {self.predictions_commit[:7]}, {self.predictions_committed}\n"
                f"{len(self.runs)} deeper or longer runs stored, from the code versions "
                + ", ".join(f"{v} (committed {next(r.committed for r in self.runs if r.code_version == v)})"
                            for v in versions))


@dataclass(frozen=True)
class LawComparison:
    """The shifted law against a power law past the front of one curve (:func:`analysis.front.compare_laws`):
    ``curve`` the run or model, ``steps`` the run's last step when it is not the common final step
    (a longer run; None otherwise), ``n_past`` blocks past the front, ``d_aic`` the Akaike
    difference (NaN when too few blocks to compare), ``better`` its verdict, ``k0_fitted`` the
    shifted law's k0, ``k0_gram`` the front's k0 read from the Gram matrix (NaN when too few
    blocks), ``better_without_last`` the verdict without the last block (None when too few)."""
    curve: str
    steps: int | None
    n_past: int
    d_aic: float
    better: str
    k0_fitted: float
    k0_gram: float
    better_without_last: str | None


@dataclass(frozen=True)
class WideRun:
    """A width-128 run at the end of training: its exponent over 2 <= k <= L, its front."""
    name: str
    exponent: float
    profile: front_models.BlockProfile
    final_loss: float
    converged: bool


# ----------------------------------------------------------------------------- wording functions

def missing_words(missing: Sequence[str]) -> Words:
    """The runs of the deep and long sweeps not stored yet, each as code, or "none"."""
    return Words(", ".join(f"`{m}`" for m in missing) or "none")


def front_words(u: Sequence[float], lo: float, hi: float) -> Words:
    """What the deep runs say of claim-front: the mean position u of their slopes over [L/2, L]
    (u = -1 the front model's prediction, +1 the level model's) read through its interval
    [lo, hi]; with fewer than three runs, the positions stored."""
    if len(u) < 3:
        return Words(f"fewer than three deep runs are stored, so the data cannot tell yet (the {len(u)} "
                     "stored: u = " + ", ".join(f"{x:+.1f}" for x in u) + ")")
    if hi < 0:
        return Words("the decay resumes past the front, on the front model's side")
    if lo > 1:
        return Words("the change does not resume its decay: it rises, beyond even the level model's prediction")
    if lo > 0:
        return Words("the change does not resume its decay, on the level model's side")
    return Words("the runs stored so far cannot tell the two apart")


def premise_words(n_above: int, n_rising: int, n_within: int, n_below: int) -> Words:
    """The deep runs' slopes over the later half of the blocks against the front model's predicted
    interval: ``n_above`` above it (``n_rising`` of them rising), ``n_within`` inside, ``n_below``
    below."""
    n = n_above + n_within + n_below
    if n_above == n:
        return Words(f"In every one of the {n} stored, the change over the later half of the blocks falls more "
                     "slowly than the front model predicted (its slope lies above the front model's 95% "
                     "interval), or rises")
    return Words(f"Over the later half of the blocks the change rises in {n_rising} of the {n} stored, falls "
                 f"more slowly than the front model predicted in {n_above - n_rising} (above its 95% interval), "
                 f"falls as it predicted in {n_within} and faster in {n_below}")


def premise_reading_words(n_above: int, n_rising: int, n: int) -> Words:
    """What the deep runs say of the card's premise (a change falling towards zero block by block):
    of ``n`` runs, ``n_above`` have a slope over [L/2, L] above the front model's interval and
    ``n_rising`` a rising change there."""
    if n_above == n:
        return Words("the sentence's premise, a change that falls towards zero block by block, is not what "
                     "trained Pre-LN shows: its later blocks go on changing the normalised stream")
    if n_rising > n / 2:
        return Words("the sentence's premise, a change that falls towards zero block by block, does not "
                     "describe most of the runs, whose later blocks go on changing the normalised stream as "
                     "much as their earlier ones or more, while a few seeds do follow the front model")
    return Words("the runs are split: some follow the front model's renewed decay and others do not, so they "
                 "neither confirm nor refute the sentence's premise at these depths")


def laws_words(shifted: int, power: int, neither: int) -> Words:
    """How many curves the Akaike criterion gives to the shifted law, to the power law, to neither."""
    return Words(f"{shifted} shifted, {power} power, {neither} neither")


#: what the settling test's verdict says, in the sentence of :func:`long_words`
SETTLE_CLAUSES = {"settled": "it has settled, to within the seeds' own spread",
                  "rising": "it has not settled and is still rising (the 95% interval of the change excludes 0)",
                  "falling": "it has not settled and is still falling (the 95% interval of the change excludes 0)",
                  "undetermined": "the runs cannot tell whether it still moves"}
#: what the verdict means for the card's question, in :func:`long_card_words`: within each run
SETTLE_CARD = {"rising": "trained three times longer, the depth-24 exponent is still rising late in each run "
                         "(steps 6,000 to 10,800, paired), away from the theorem's decay",
               "falling": "trained three times longer, the depth-24 exponent is still falling late in each run "
                          "(steps 6,000 to 10,800, paired), back towards the theorem's decay",
               "settled": "trained three times longer, the depth-24 exponent settles, so the flat curve is not an "
                          "artefact of a short schedule",
               "undetermined": "trained three times longer, the runs cannot tell whether the depth-24 exponent "
                               "still moves"}
#: and end of schedule against end of schedule (the Welch interval), in :func:`long_card_words`
END_CARD = {"flatter": "its end is flatter than the 3,600-step schedule's ({end}): longer training ends further "
                       "from the theorem's decay",
            "steeper": "its end is steeper than the 3,600-step schedule's ({end}): longer training ends closer "
                       "to the theorem's decay",
            "not distinguishable": "its end is not distinguishable from the 3,600-step schedule's ({end}), so the "
                                   "runs do not show that longer training ends further from the theorem's decay, "
                                   "or closer to it"}


def long_words(n_runs: int, settle: training_analysis.Settling | None = None,
               end: stats.TInterval | None = None, reference_end: float = float("nan")) -> Words:
    """The settling test of the 10,800-step runs (``settle``: :func:`analysis.training_analysis.settling`,
    its paired change b(steps[1]) - b(steps[0]) against the margin, and its verdict), then end of
    schedule against end of schedule: ``end`` the exponent at the last step, ``reference_end``
    the 3,600-step runs' at theirs. With ``settle`` None (fewer than three runs), the wait."""
    if settle is None:
        return Words(f"the test waits for three runs ({n_runs} stored)")
    ch = settle.change
    return Words(f"between steps {settle.steps[0]:,} and {settle.steps[1]:,} the exponent moves by {ch.mean:+.3f} "
                 f"({ch.lo:+.3f} to {ch.hi:+.3f}, 90% interval over the {ch.n} runs), against a margin of "
                 f"{settle.margin:.3f}: " + SETTLE_CLAUSES[settle.verdict]
                 + f". At the end of its schedule it is {end.mean:+.2f} ({end.lo:+.2f} to {end.hi:+.2f}), against "
                 f"{reference_end:+.2f} at the end of the 3,600-step schedule: a difference of {settle.end_diff:+.2f} "
                 f"({settle.end_lo:+.2f} to {settle.end_hi:+.2f}, Welch 95%)")


def long_front_words(k0_long: Mapping[int, float], k0_short: Mapping[int, float]) -> Words:
    """The front (k0 from the Gram) of each 10,800-step run at its end beside the same seed's at
    the end of the 3,600-step schedule: "smaller" when every long run's is below every short
    run's, "larger" the reverse, else "about as large" (a description, not a test). With fewer
    than three long runs, the wait."""
    if len(k0_long) < 3:
        return Words("Their front is compared once three are stored")
    seeds = sorted(k0_long)
    how = ("smaller" if max(k0_long.values()) < min(k0_short.values()) else
           "larger" if min(k0_long.values()) > max(k0_short.values()) else "about as large")
    return Words(f"Their front is {how} than at the end of the 3,600-step schedule: $k_0$ read from the Gram is "
                 + ", ".join(f"{k0_long[s]:.0f}" for s in seeds) + " for seeds "
                 + ", ".join(str(s) for s in seeds) + ", against "
                 + ", ".join(f"{k0_short[s]:.0f}" for s in seeds) + " for the same seeds trained 3,600 steps "
                 "(a description of three runs, not a test)")


def long_card_words(settle: training_analysis.Settling | None) -> Words:
    """What the settling test (None: fewer than three runs) says of the card's question: its verdict
    within each run (:data:`SETTLE_CARD`), then end against end (:data:`END_CARD`: the Welch interval
    of the exponent at the end of the 10,800-step schedule minus the 3,600-step one's, "flatter" when
    it lies above 0, "steeper" below, else "not distinguishable")."""
    if settle is None:
        return Words("whether longer training moves the depth-24 exponent waits for the 10,800-step runs")
    how = "flatter" if settle.end_lo > 0 else "steeper" if settle.end_hi < 0 else "not distinguishable"
    end = f"{settle.end_diff:+.2f}, {settle.end_lo:+.2f} to {settle.end_hi:+.2f}, Welch 95%"
    return Words(SETTLE_CARD[settle.verdict] + "; end against end, " + END_CARD[how].format(end=end))


#: what :func:`analysis.front.settling_at_margin` says, in :func:`settle_margin_words`
MARGIN_CLAUSES = {
    "settled": "lies inside it: settled at this margin too",
    "rising beyond the margin": "lies wholly above it: between the two steps the exponent rises by more than "
                                "the margin (one-sided, at the test's alpha)",
    "falling beyond the margin": "lies wholly below its negative: between the two steps the exponent falls by "
                                 "more than the margin (one-sided, at the test's alpha)",
    "rising": "crosses it while the 95% interval excludes 0: rising, by an amount the runs cannot place "
              "against the margin",
    "falling": "crosses it while the 95% interval excludes 0: falling, by an amount the runs cannot place "
               "against the margin",
    "undetermined": "crosses it and the 95% interval holds 0: the runs cannot say"}


def settle_margin_words(reading: front_models.MarginSettling | None) -> Words:
    """The settling test's paired change read at the book's exponent margin (``reading``:
    :func:`analysis.front.settling_at_margin`; None below three runs)."""
    if reading is None:
        return Words("the reading at the book's exponent margin waits for three runs")
    ch = reading.change
    return Words(f"the same 90% interval of the change ({ch.lo:+.3f} to {ch.hi:+.3f}) "
                 + MARGIN_CLAUSES[reading.verdict])


def schedule_words(s: front_models.Schedule | None, steps: Sequence[int]) -> Words:
    """What the 10,800-step runs' schedule ``s`` (None below one run) is, and the rate's fall over ``steps``."""
    if s is None:
        return Words("the schedule is read once a run is stored")
    parts = ("no constant part" if s.constant_steps == 0 else
             f"a part of {s.constant_steps:,} steps past the warm-up at which the rate does not fall")
    return Words(f"a linear warm-up of {s.warmup:,} steps, then a cosine from the peak rate to {s.min_lr_frac:g} of "
                 f"it at step {s.steps:,}: {parts}. Between steps {steps[0]:,} and {steps[1]:,} the rate falls from "
                 f"{s.factor(steps[0]):.2f} to {s.factor(steps[1]):.2f} of its peak")


def power_words(n_runs: int, n_sep: int, n_zero: int) -> Words:
    """Whether ``n_runs`` deep runs could decide claim-front, against ``n_sep`` (runs for a half-width
    below the two predictions' separation) and ``n_zero`` (runs for an interval around the observed
    mean to exclude 0), both from :func:`analysis.front.runs_needed`."""
    if n_runs >= n_sep:
        return Words(f"the {n_runs} runs stored are enough to tell the two predictions apart")
    return Words(f"these {n_runs} runs cannot decide: telling the two predictions apart needs about {n_sep} runs, "
                 f"and even if the true mean were the observed one, an interval excluding 0 needs about {n_zero}")


#: what :func:`analysis.front.depth_scaling`'s reading says, in :func:`scaling_words`
SCALING_CLAUSES = {
    "proportional": "its interval contains 1 and excludes 0: the front grows in proportion to the depth",
    "slower": "its interval lies between 0 and 1: the front grows with depth, more slowly than the depth, so a "
              "deep enough network would reach past it",
    "faster": "its interval lies above 1: the front grows faster than the depth",
    "not shown to grow": "its interval contains 0: the runs do not show the front growing with depth",
    "shrinks": "its interval lies below 0: the front shrinks with depth"}


def scaling_words(scaling: front_models.DepthScaling | None) -> Words:
    """What the slope of log k0 on log L (``scaling``; None: too few runs) says; when it reads
    "proportional", also where the depth stands against the front: the mean k0 / L of every depth
    at 1 or above puts every block before its front (k <= L <= k0), so "past the front" is not reached."""
    if scaling is None:
        return Words("the front's growth with depth is read once two depths hold four runs")
    sl = scaling.slope
    words = (f"the least-squares slope of $\\log k_0$ on $\\log L$ over the {sl.n} runs is {sl.mean:.2f} "
             f"({sl.lo:.2f} to {sl.hi:.2f}, 95% $t$ interval): " + SCALING_CLAUSES[scaling.reading])
    if scaling.reading == "proportional":
        ratios = [r.mean for r in scaling.ratio.values()]
        lo, hi = min(ratios), max(ratios)
        words += (f", and its mean $k_0 / L$ lies between {lo:.2f} and {hi:.2f} at the depths trained, so on "
                  "average even the last block lies before $k_0$: \"past the front\" is never reached at these depths"
                  if lo >= 1 else
                  f", its mean $k_0 / L$ between {lo:.2f} and {hi:.2f}: a deeper network's front keeps the same "
                  "share of its blocks")
    return Words(words)


#: what :func:`analysis.training_analysis.compare_exponents` says, in :func:`wide_words`
WIDTH_CLAUSES = {"steeper": "steeper at the larger width", "flatter": "flatter at the larger width",
                 "not distinguishable": "the intervals overlap, so the runs do not tell the widths apart"}


def wide_words(n_runs: int, w64: stats.TInterval | None = None, w128: stats.TInterval | None = None,
               how: str | None = None) -> Words:
    """The exponent at width 128 (``w128``) against width 64 (``w64``), 95 % t intervals over
    seeds, and ``how`` the first stands to the second; with fewer than three width-128 runs
    (``w128`` None), how many are stored."""
    if w128 is None:
        return Words(f"fewer than three are stored ({n_runs}), so there is no interval yet; "
                     "the runs listed above are all there is")
    return Words(f"the exponent at width 128 is {w128.mean:+.2f} ({w128.lo:+.2f} to {w128.hi:+.2f}) against "
                 f"{w64.mean:+.2f} ({w64.lo:+.2f} to {w64.hi:+.2f}) at width 64 (95% t intervals over seeds): "
                 + WIDTH_CLAUSES[how])


# ----------------------------------------------------------------------------- tables

def _window_heading(name: str) -> str:
    f0, f1 = front_models.WINDOWS[name]
    ends = {0.25: "L/4", 0.5: "L/2", 1.0: "L"}
    return f"$k \\in [{ends[f0]}, {ends[f1]}]$"


def _interval(mean: float, lo: float, hi: float) -> str:
    return f"{mean:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def profiles_table(profiles: Sequence[FrontProfile]) -> Table:
    """Each run's front and bulk: depth, V_front, s^2, a, mean r, mean c and k0."""
    return Table.of(["run", "depth", "$V_{\\mathrm{front}}$", "bulk $s^2$", "bulk $a$", "mean $r_k$",
                     "mean $c_k$", "$k_0$"],
                    [[f"`{p.run}`", p.L, f"{p.v_front_sq:.1f}", f"{p.s2:.2f}", f"{p.a:+.3f}", f"{p.r:.3f}",
                      f"{p.c:+.3f}", f"{p.k0:.1f}"] for p in profiles])


def predicted_table(predicted: Sequence[PredictedSlopes]) -> Table:
    """Each model's predicted local slope per window and depth (mean and 95 % t interval over the
    source seeds) and its in-sample log error at the source depth (blank at the other depths)."""
    rows = []
    for p in predicted:
        err = "" if p.in_sample_log_error is None else f"{p.in_sample_log_error:.2f}"
        rows.append([p.model, p.L, *(_interval(*p.slopes[w]) for w in front_models.WINDOWS), err])
    return Table.of(["model", "depth", *(_window_heading(w) for w in front_models.WINDOWS),
                     "in-sample log error"], rows)


def runs_table(runs: Sequence[DeepRun]) -> Table:
    """Each deep run's local slopes per window, its position u, its final loss and whether it
    met the convergence criterion."""
    return Table.of(["run", "depth", *(f"slope, {_window_heading(w)}" for w in front_models.WINDOWS), "$u$",
                     "final loss", "converged"],
                    [[f"`{r.name}`", r.L, *(f"{r.slopes[w]:+.2f}" for w in front_models.WINDOWS), f"{r.u:+.2f}",
                      f"{r.final_loss:.3f}", "yes" if r.converged else "no"] for r in runs])


def tests_table(tests: Sequence[front_models.PredictionTest]) -> Table:
    """Each committed prediction tested (:func:`analysis.front.prediction_tests`): depth, window, model,
    predicted and measured slope, the interval of their difference, the verdict."""
    rows = []
    for t in tests:
        lo_k, hi_k = front_models.window(t.L, t.window)
        rows.append([t.L, f"$k \\in [{lo_k}, {hi_k}]$", t.model, f"{t.predicted:+.2f}",
                     f"{t.measured:+.2f} ({t.n_runs})", f"[{t.lo:+.2f}, {t.hi:+.2f}]",
                     "**refuted**" if t.refuted else "not refuted"])
    return Table.of(["depth", "window", "model", "predicted", "measured (runs)", "measured - predicted", "verdict"],
                    rows)


def laws_table(laws: Sequence[LawComparison]) -> Table:
    """Each curve's Akaike difference (power minus shifted RSS, in n log units), the law it
    favours, the shifted law's fitted k0 ("flat" past :data:`FLAT_K0`) beside the Gram's, and the
    verdict without the last block."""
    rows = []
    for c in laws:
        curve = f"`{c.curve}`" + (f" ({c.steps:,} steps)" if c.steps is not None else "")
        if c.better_without_last is None:
            rows.append([curve, "-", f"{c.better} ({c.n_past} blocks past the front: too few)", "-", "-",
                         "-"])
            continue
        k0_fit = "flat" if c.k0_fitted > FLAT_K0 else f"{c.k0_fitted:.1f}"
        rows.append([curve, f"{c.d_aic:+.1f}", c.better, k0_fit, f"{c.k0_gram:.1f}", c.better_without_last])
    return Table.of(["curve", "$\\Delta$AIC", "favours", "$k_0$ fitted", "$k_0$ from the Gram",
                     "without the last block"], rows)


def settling_table(short: Mapping[int, stats.TInterval], long: Mapping[int, stats.TInterval]) -> Table:
    """The exponent over 2 <= k <= L at every measured step of either schedule (95 % t interval
    over seeds; "-" where a schedule has no such step)."""
    return Table.of(["step", "3,600-step schedule", "10,800-step schedule"],
                    [[f"{st:,}", *(_interval(iv[st].mean, iv[st].lo, iv[st].hi) if st in iv else "-"
                                   for iv in (short, long))] for st in sorted(set(short) | set(long))])


def scaling_table(k0: Mapping[int, Sequence[float]], scaling: front_models.DepthScaling) -> Table:
    """Per depth: the runs, their k0 (each run's, from the Gram) and k0 / L (mean and 95 % t interval over runs)."""
    rows = []
    for L, r in scaling.ratio.items():
        ratio = _interval(r.mean, r.lo, r.hi).replace("+", "") if r.n >= 3 else f"{r.mean:.2f}"
        rows.append([L, len(k0[L]), ", ".join(f"{v:.0f}" for v in k0[L]), ratio])
    return Table.of(["depth $L$", "runs", "$k_0$ of each run", "$k_0 / L$"], rows)


def sensitivity_table(runs: Sequence[DeepRun], u_without_last: Sequence[float], jumps: Sequence[float]) -> Table:
    """Each deep run's position u, how much its last block's change exceeds the rest of the window
    (:func:`analysis.front.last_block_jump`) and u without that block (:func:`analysis.front.position_without_last`)."""
    return Table.of(["run", "depth", "$u$", "last block / rest of the window", "$u$ without block $L$"],
                    [[f"`{r.name}`", r.L, f"{r.u:+.2f}", f"{j:.1f}", f"{u:+.2f}"]
                     for r, u, j in zip(runs, u_without_last, jumps)])


def source_table(source: Mapping[str, Mapping[str, float]], predicted_per_seed: Sequence[float]) -> Table:
    """The front model at its own source runs: per run, its predicted slope over [L/4, L/2] (from
    that run's profile) beside the run's measured slope there."""
    return Table.of(["run", "front model's slope", "measured slope"],
                    [[f"`{n}`", f"{p:+.2f}", f"{source[n]['quarter_half']:+.2f}"]
                     for n, p in zip(sorted(source), predicted_per_seed)])


def wide_table(wide: Sequence[WideRun]) -> Table:
    """Each width-128 run's exponent, front (V_front, s^2, k0), final loss and convergence."""
    return Table.of(["run", "exponent", "$V_{\\mathrm{front}}$", "bulk $s^2$", "$k_0$", "final loss", "converged"],
                    [[f"`{r.name}`", f"{r.exponent:+.2f}", f"{r.profile.v_front_sq:.1f}", f"{r.profile.s2:.2f}",
                      f"{r.profile.k0:.1f}", f"{r.final_loss:.3f}", "yes" if r.converged else "no"] for r in wide])


# ----------------------------------------------------------------------------- the result

@dataclass(frozen=True)
class FrontResult:
    """Everything Chapter 7b shows (see the module docstring).

    ``final_step``: the last measured step of the 3,600-step schedules; ``committed``: the
    prediction file's own text; ``k0_mean``, ``k0_lo``, ``k0_hi``: its k0 over the source seeds
    (95 % t interval); ``source_profiles``: the source runs' fronts as the file records them;
    ``predicted``: every model's prediction at every depth; ``order``: the records' order;
    ``runs``: the finished deep runs; ``position``: the (1 - 0.05/2) t interval of their u (None
    below three runs); ``pred_width``: the front model's own half-width in units of u;
    ``draft``: the draft rule's depth-96 reading; ``tests``: every prediction tested;
    ``laws``: the shifted law against a power law, per curve; ``long_n_runs``, ``exponent_short``,
    ``exponent_long`` ({step: TInterval}), ``settle`` (None below three runs), ``k0_long``,
    ``k0_short`` ({seed: k0}): the 10,800-step runs; ``wide``, ``wide_64``, ``wide_128``,
    ``wide_how``: the width-128 runs (the intervals None below three); declared after the deep runs were
    seen: ``source_slopes`` ({run: {window: slope}} of the predictions' source runs at their final
    step), ``k0_by_depth`` ({L: (k0 of each run)}: every finished Pre-LN run at L = 24 of the source
    sweep and each deep run), ``predictions`` (the committed file, for the sensitivity without the last
    block), ``settle_exp`` (the settling test read at ``ledger.EXP_MARGIN``; None below three runs),
    ``long_schedule`` (the 10,800-step runs' schedule; None with none stored)."""
    final_step: int
    committed: CommittedPredictions
    k0_mean: float
    k0_lo: float
    k0_hi: float
    source_profiles: tuple
    predicted: tuple
    order: RunOrder
    runs: tuple
    position: stats.TInterval | None
    pred_width: float
    draft: DraftReading
    tests: tuple
    laws: tuple
    long_n_runs: int
    exponent_short: Mapping
    exponent_long: Mapping
    settle: training_analysis.Settling | None
    k0_long: Mapping
    k0_short: Mapping
    wide: tuple
    wide_64: stats.TInterval | None
    wide_128: stats.TInterval | None
    wide_how: str | None
    source_slopes: Mapping
    k0_by_depth: Mapping
    predictions: Mapping
    settle_exp: front_models.MarginSettling | None
    long_schedule: front_models.Schedule | None

    # --- declared after the deep runs were seen (exploratory)
    @property
    def runs_needed_sep(self) -> int | None:
        """Runs a (1 - CLAIM_ALPHA) t interval of u needs for a half-width below :data:`U_SEPARATION`,
        at the deep runs' own sd of u (None below three runs)."""
        return (front_models.runs_needed(self.u_sd, U_SEPARATION, front_models.CLAIM_ALPHA)
                if len(self.u) >= 3 else None)

    @property
    def runs_needed_zero(self) -> int | None:
        """Runs the same interval needs for a half-width below |mean u|: an interval around the
        observed mean that just excludes 0 (None below three runs)."""
        return (front_models.runs_needed(self.u_sd, abs(float(np.mean(self.u))), front_models.CLAIM_ALPHA)
                if len(self.u) >= 3 else None)

    @property
    def scaling(self) -> front_models.DepthScaling | None:
        """k0 against depth (:func:`analysis.front.depth_scaling`; None with fewer than two depths or four runs)."""
        k0 = {L: v for L, v in self.k0_by_depth.items() if v}
        return front_models.depth_scaling(k0) if len(k0) >= 2 and sum(map(len, k0.values())) >= 4 else None

    @property
    def early_signs(self) -> front_models.SignTest | None:
        """The sign test of every deep run's slope over [L/4, L/2] (None with no run)."""
        return front_models.sign_test([r.slopes["quarter_half"] for r in self.runs]) if self.runs else None

    @property
    def jumps(self) -> list:
        """Each deep run's last block against the rest of its primary window (:func:`analysis.front.last_block_jump`)."""
        return [front_models.last_block_jump(r.omega) for r in self.runs]

    @property
    def u_without_last(self) -> list:
        """Each deep run's u without block L, measured and predicted alike (:func:`analysis.front.position_without_last`)."""
        return [front_models.position_without_last(r.omega, self.predictions) for r in self.runs]

    def half_gap(self, L: int) -> float:
        """Half the separation of the level and front models' mean predicted slopes over [L/2, L] at
        depth ``L``: the unit of u there."""
        w = front_models.PRIMARY_WINDOW
        return (self._predicted("level", L).slopes[w][0] - self._predicted("front", L).slopes[w][0]) / 2

    def slope_sd(self, L: int) -> float:
        """The standard deviation over the deep runs of depth ``L`` of their slope over [L/2, L] (NaN below two)."""
        v = [r.slopes[front_models.PRIMARY_WINDOW] for r in self.runs if r.L == L]
        return float(np.std(v, ddof=1)) if len(v) > 1 else float("nan")

    @property
    def source_predicted(self) -> PredictedSlopes:
        """The front model at its source depth (its in-sample prediction)."""
        return self._predicted("front", min(p.L for p in self.predicted))

    # --- the deep runs against the predictions
    @property
    def u(self) -> list:
        """Each deep run's position u, in the order of :attr:`runs`."""
        return [r.u for r in self.runs]

    @property
    def sides(self) -> list:
        """Each deep run's [L/2, L] slope against the front model's interval ("above", "within", "below")."""
        return [r.side for r in self.runs]

    @property
    def u_sd(self) -> float:
        """The standard deviation of u over the deep runs (NaN below two)."""
        return float(np.std(self.u, ddof=1)) if len(self.u) > 1 else float("nan")

    @property
    def n_beyond_level(self) -> int:
        """Runs beyond even the level model's prediction, u > 1."""
        return sum(u > 1 for u in self.u)

    @property
    def n_front_side(self) -> int:
        """Runs on the front model's side of the midpoint, u < 0."""
        return sum(u < 0 for u in self.u)

    @property
    def n_at_front(self) -> int:
        """Runs within the front model's own interval around -1, |u + 1| <= :attr:`pred_width`."""
        return sum(abs(u + 1) <= self.pred_width for u in self.u)

    @property
    def n_slope_rising(self) -> int:
        """Runs whose change rises over [L/2, L] (a positive local slope there)."""
        return sum(r.slopes[front_models.PRIMARY_WINDOW] > 0 for r in self.runs)

    @property
    def n_unconverged(self) -> int:
        """Deep runs that missed the convergence criterion (the rule reads every finished run)."""
        return sum(not r.converged for r in self.runs)

    @property
    def profiles(self) -> list:
        """The source runs' fronts, then each deep run's (:func:`analysis.front.block_profile` at its final step)."""
        return [*self.source_profiles, *(FrontProfile(r.name, r.L, r.profile.v_front_sq, r.profile.s2, r.profile.a,
                                                      r.profile.r, r.profile.c, r.profile.k0) for r in self.runs)]

    # --- each prediction tested
    @property
    def refuted(self) -> set:
        """The predictions refuted, as (depth, window, model)."""
        return {(t.L, t.window, t.model) for t in self.tests if t.refuted}

    def test(self, L: int, window: str, model: str) -> front_models.PredictionTest | None:
        """The test of ``model``'s prediction at depth ``L`` in ``window`` (None when not made)."""
        return next((t for t in self.tests if (t.L, t.window, t.model) == (L, window, model)), None)

    # --- the shifted law
    @property
    def laws_count(self) -> dict:
        """{verdict: number of curves} over "shifted", "power", "neither"."""
        return {b: sum(c.better == b for c in self.laws) for b in ("shifted", "power", "neither")}

    # --- the figures' data
    def _predicted(self, model: str, L: int) -> PredictedSlopes:
        return next(p for p in self.predicted if (p.model, p.L) == (model, L))

    @property
    def prediction_curves(self) -> dict:
        """:func:`book.plots.line_panels`'s panels: per deep depth, each model's mean predicted curve
        and the measured mean over the runs stored."""
        fmt = {"front": "--", "feedback": ":", "level": "-."}
        panels = {}
        for L in front_models.PREDICT_DEPTHS:
            lines = [{"k": list(self._predicted(m, L).k), "y": list(self._predicted(m, L).curve_mean),
                      "fmt": fmt[m], "label": f"{m} model"} for m in front_models.MODELS]
            ys = np.array([r.omega for r in self.runs if r.L == L])
            if len(ys):
                lines.append({"k": np.arange(1, L + 1), "y": ys.mean(0), "fmt": "o-",
                              "label": f"measured ({len(ys)} runs)"})
            panels[f"Pre-LN, L = {L}"] = lines
        return panels

    @property
    def slope_forest(self) -> dict:
        """:func:`book.plots.forest`'s rows: per deep depth and window, the front and level models'
        predicted slope and the measured one (95 % t interval over runs, from three)."""
        rows = {}
        for L in front_models.PREDICT_DEPTHS:
            for w in front_models.WINDOWS:
                lo_k, hi_k = front_models.window(L, w)
                for m in ("front", "level"):
                    rows[f"L={L}, k {lo_k}-{hi_k}: {m} predicted"] = self._predicted(m, L).slopes[w]
                got = [r.slopes[w] for r in self.runs if r.L == L]
                if len(got) >= 3:
                    iv = stats.t_interval(got)
                    rows[f"L={L}, k {lo_k}-{hi_k}: measured ({len(got)})"] = (iv.mean, iv.lo, iv.hi)
                else:
                    rows[f"L={L}, k {lo_k}-{hi_k}: measured ({len(got)} runs)"] = (
                        float(np.mean(got)) if got else float("nan"), float("nan"), float("nan"))
        return rows

    # --- what the chapter glues
    def glues(self) -> dict:
        """Every name the chapter glues, with its value (:func:`resdecay_lib.book.glues.glue_all`)."""
        nan = float("nan")
        pos, settle = self.position, self.settle
        q48 = self.test(48, "quarter_half", "level")
        end = self.exponent_long.get(training_analysis.SETTLE_STEPS[1]) if settle else None
        return {
            "front_blocks": front_models.FRONT_BLOCKS,
            "bulk_first": front_models.FRONT_BLOCKS + 1,
            "front_k0_mean": round(self.k0_mean, 1),
            "front_k0_lo": round(self.k0_lo, 1),
            "front_k0_hi": round(self.k0_hi, 1),
            "front_profiles_table": profiles_table(self.profiles),
            "front_predicted_table": predicted_table(self.predicted),
            "front_missing": missing_words(self.order.missing),
            "ev_front_position": (EvidenceGlue(pos.mean, lo=pos.lo, hi=pos.hi, se=pos.se, digits=3) if pos
                                  else EvidenceGlue.nan("interval_se")),
            "ev_front_n_runs": EvidenceGlue(float(len(self.runs))),
            "ev_front_pred_width": EvidenceGlue(self.pred_width, digits=3),
            "front_words": front_words(self.u, pos.lo if pos else nan, pos.hi if pos else nan),
            "front_runs_table": runs_table(self.runs),
            "front_n_u": len(self.u),
            "front_n_rising": self.n_beyond_level,
            "front_n_front_side": self.n_front_side,
            "front_n_at_front": self.n_at_front,
            "front_n_above_front": self.sides.count("above"),
            "front_n_unconverged": self.n_unconverged,
            "front_u_sd": round(self.u_sd, 1),
            "front_premise_words": premise_words(self.sides.count("above"), self.n_slope_rising,
                                                 self.sides.count("within"), self.sides.count("below")),
            "front_premise_reading": premise_reading_words(self.sides.count("above"), self.n_slope_rising,
                                                           len(self.sides)),
            "front_tests_table": tests_table(self.tests),
            "front_n_tests": len(self.tests),
            "front_tests_alpha": front_models.TESTS_ALPHA,
            "front_tests_level": round(self.tests[0].level, 4) if self.tests else nan,
            "front_q48_measured": round(q48.measured, 2) if q48 else nan,
            "aic_margin": front_models.AIC_MARGIN,
            "front_laws_table": laws_table(self.laws),
            "laws_counts": laws_words(**self.laws_count),
            "laws_n": len(self.laws),
            "front_settling_table": settling_table(self.exponent_short, self.exponent_long),
            "long_n_runs": self.long_n_runs,
            "settle_alpha": training_analysis.SETTLE_ALPHA,
            "ev_long_n_runs": EvidenceGlue(float(self.long_n_runs)),
            "ev_long_exp_end": EvidenceGlue(end.mean, lo=end.lo, hi=end.hi) if settle else EvidenceGlue.nan("interval"),
            "ev_long_exp_change": (EvidenceGlue(settle.change.mean, lo=settle.change.lo, hi=settle.change.hi, digits=3)
                                   if settle else EvidenceGlue.nan("interval")),
            "ev_long_settle_margin": EvidenceGlue(settle.margin, digits=3) if settle else EvidenceGlue.nan(),
            "long_words": long_words(self.long_n_runs, settle, end, self.exponent_short[self.final_step].mean
                                     if settle else nan),
            "long_front_words": long_front_words(self.k0_long, self.k0_short),
            "long_card_words": long_card_words(settle),
            "front_wide_table": wide_table(self.wide),
            "wide_n_runs": len(self.wide),
            "wide_words": wide_words(len(self.wide), self.wide_64, self.wide_128, self.wide_how),
            **self._exploratory_glues(),
        }

    def _exploratory_glues(self) -> dict:
        """The names declared after the deep runs were seen (no rule reads them)."""
        nan = float("nan")
        sc, signs, src = self.scaling, self.early_signs, self.source_predicted
        measured = [v["quarter_half"] for v in self.source_slopes.values()]
        lo_k, hi_k = front_models.window(src.L, "quarter_half")
        uw, jumps = self.u_without_last, self.jumps
        reading, sched = self.settle_exp, self.long_schedule
        return {
            "front_claim_level": round(100 * (1 - front_models.CLAIM_ALPHA), 1),
            "front_u_separation": U_SEPARATION,
            "front_runs_needed_sep": self.runs_needed_sep if self.runs_needed_sep is not None else nan,
            "front_runs_needed_zero": self.runs_needed_zero if self.runs_needed_zero is not None else nan,
            "front_half_gap_48": round(self.half_gap(48), 2),
            "front_half_gap_96": round(self.half_gap(96), 2),
            "front_slope_sd_48": round(self.slope_sd(48), 1),
            "front_slope_sd_96": round(self.slope_sd(96), 1),
            "front_u_mean_abs": round(abs(float(np.mean(self.u))), 2) if self.u else nan,
            "front_power_words": power_words(len(self.u), self.runs_needed_sep or 0, self.runs_needed_zero or 0)
                                 if len(self.u) >= 3 else Words("the power computation waits for three deep runs"),
            "front_scaling_table": scaling_table(self.k0_by_depth, sc) if sc else Table.of(["depth $L$"], []),
            "front_scaling_words": scaling_words(sc),
            "front_early_positive": signs.n_positive if signs else 0,
            "front_early_n": signs.n if signs else 0,
            "front_early_p": float(f"{signs.p:.2g}") if signs else nan,
            "front_sensitivity_table": sensitivity_table(self.runs, uw, jumps),
            "front_jump_min": round(min(jumps), 1) if jumps else nan,
            "front_jump_max": round(max(jumps), 1) if jumps else nan,
            "front_u_without_last_mean": round(float(np.mean(uw)), 2) if uw else nan,
            "front_source_table": source_table(self.source_slopes, self._source_per_seed()),
            "front_source_n": len(measured),
            "front_source_k_lo": lo_k,
            "front_source_k_hi": hi_k,
            "front_source_pred": round(src.slopes["quarter_half"][0], 2),
            "front_source_pred_lo": round(src.slopes["quarter_half"][1], 2),
            "front_source_pred_hi": round(src.slopes["quarter_half"][2], 2),
            "front_source_min": round(min(measured), 2) if measured else nan,
            "front_source_max": round(max(measured), 2) if measured else nan,
            "front_exp_margin": reading.margin if reading else nan,
            "front_settle_margin_words": settle_margin_words(reading),
            "front_schedule_words": schedule_words(sched, training_analysis.SETTLE_STEPS),
        }

    def _source_per_seed(self) -> list:
        src = self.source_predicted.L
        return list(self.predictions["models"]["front"][str(src)]["slopes"]["quarter_half"]["per_seed"]) \
            if self.predictions else []


# ----------------------------------------------------------------------------- computing it

def _ok(runs) -> list:
    return [r for r in runs if r.status == "ok"]


def _predictions(pred: Mapping) -> tuple:
    out = []
    for m in front_models.MODELS:
        for L, e in pred["models"][m].items():
            err = e.get("in_sample_log_error")
            out.append(PredictedSlopes(m, int(L), tuple(e["k"]), tuple(e["curve_mean"]),
                                       {w: (v["mean"], v["lo"], v["hi"]) for w, v in e["slopes"].items()},
                                       err["mean"] if err else None))
    return tuple(out)


def _order(order: Mapping, stored: Sequence, missing: Sequence[str]) -> RunOrder:
    runs = []
    for r in stored:
        entry = order["code_versions"].get(r.code_version, {})
        runs.append(OrderedRun(r.name, r.code_version, entry.get("committed", ""),
                               bool(entry.get("descends_from_predictions", False))))
    return RunOrder(order["predictions"]["commit"], order["predictions"]["committed"], tuple(runs), tuple(missing))


def _laws(candidates) -> tuple:
    out = []
    for name, steps, om, G in candidates:
        n_past = len(om) - front_models.FRONT_BLOCKS
        c = front_models.laws_past_front(om)
        if n_past < 4:        # MiniLM: 6 blocks leave 3 past the front, no room for the sensitivity
            out.append(LawComparison(name, steps, n_past, float("nan"), c["better"], c["shifted"].k0,
                                     float("nan"), None))
            continue
        c1 = front_models.laws_past_front(om, tail=1)
        out.append(LawComparison(name, steps, n_past, c["d_aic"], c["better"], c["shifted"].k0,
                                 front_models.block_profile(G).k0, c1["better"]))
    return tuple(out)


def chapter(root) -> FrontResult:
    """Chapter 7b's result from the stored runs and records under the book's folder ``root``:
    the predictions (``results/predictions/front.json``) and their order (``order.json``), the
    source sweep they name, the deep sweeps (``configs/deep_L48.toml``, ``deep_L96.toml``), the
    10,800-step (``long_L24.toml``) and width-128 (``wide_L24.toml``) sweeps, and the pretrained
    records (``results/pretrained``)."""
    root = book_root(root)
    pred = json.loads((root / "results" / "predictions" / "front.json").read_text(encoding="utf-8"))
    order = json.loads((root / "results" / "predictions" / "order.json").read_text(encoding="utf-8"))
    src = training_analysis.StoredSweep.load(root / pred["source"]["sweep"], root)
    final = src.measure_steps[-1]
    deep = {L: training_analysis.StoredSweep.load(root / "configs" / f"deep_L{L}.toml", root) for L in front_models.PREDICT_DEPTHS}
    longer = training_analysis.StoredSweep.load(root / "configs" / "long_L24.toml", root)
    wide_sweep = training_analysis.StoredSweep.load(root / "configs" / "wide_L24.toml", root)
    stored = [r for s in (*deep.values(), longer) for r in s.runs.values()]
    missing = [m for s in (*deep.values(), longer) for m in s.missing]

    # the deep runs against the predictions
    runs = []
    for L, sw in deep.items():
        for r in _ok(sw.cell("pre_ln", L)):
            om = training_analysis.omega_per_sequence(r, final).mean(0)
            sl = front_models.curve_slopes(om)
            runs.append(DeepRun(r.name, L, om, sl, front_models.position(sl["half_end"], L, pred),
                                front_models.against_front(sl[front_models.PRIMARY_WINDOW], L, pred),
                                front_models.block_profile(training_analysis.gram_at(r, final)), training_analysis.final_loss(r),
                                r.convergence.met))
    u = [r.u for r in runs]
    position = stats.t_interval(u, 1 - front_models.CLAIM_ALPHA) if len(u) >= 3 else None
    u96 = tuple(r.u for r in runs if r.L == 96)
    draft = DraftReading(u96, stats.t_interval(u96, 1 - front_models.CLAIM_ALPHA) if len(u96) >= 3 else None)
    tests = front_models.prediction_tests(
        {L: {w: [r.slopes[w] for r in runs if r.L == L] for w in front_models.WINDOWS}
         for L in deep if any(r.L == L for r in runs)}, pred)

    # the shifted law against a power law: the source sweep's depth-24 runs, the deeper and
    # longer runs (at their own final step), the pretrained models
    def last(r):
        return r.checkpoints[-1].step
    candidates = [(r.name, last(r) if last(r) != final else None,
                   training_analysis.omega_per_sequence(r, last(r)).mean(0), training_analysis.gram_at(r, last(r)))
                  for r in [*_ok(src.cell("pre_ln", 24)), *_ok(stored)]]
    records = pretrained_analysis.load_records(root / "results" / "pretrained")
    candidates += [(m, None, records[m, "shakespeare"].change["omega_sq"].mean(0),
                    records[m, "shakespeare"].gram) for m in PRETRAINED]

    # the exponent through 10,800 steps
    short = training_analysis.exponent_path(src, "pre_ln", 24)
    long_path = training_analysis.exponent_path(longer, "pre_ln", 24)
    long_ok = _ok(longer.cell("pre_ln", 24))
    settle, k0_long, k0_short = None, {}, {}
    if len(long_ok) >= 3:
        settle = training_analysis.settling(longer, src, "pre_ln", 24)
        k0_long = {r.seed: front_models.block_profile(training_analysis.gram_at(r, training_analysis.SETTLE_STEPS[1])).k0 for r in long_ok}
        k0_short = {s: front_models.block_profile(training_analysis.gram_at(src.runs[("pre_ln", 24, s)], final)).k0
                    for s in k0_long if ("pre_ln", 24, s) in src.runs}

    # at twice the width
    wide = tuple(WideRun(r.name, training_analysis.curve_exponent(training_analysis.omega_per_sequence(r, final).mean(0), 2),
                         front_models.block_profile(training_analysis.gram_at(r, final)), training_analysis.final_loss(r),
                         r.convergence.met) for r in _ok(wide_sweep.cell("pre_ln", 24)))
    w64 = w128 = how = None
    if len(wide) >= 3:
        w64 = training_analysis.exponent_fit(src, "pre_ln", 24, final).interval
        w128 = training_analysis.exponent_fit(wide_sweep, "pre_ln", 24, final).interval
        how = training_analysis.compare_exponents(w64, w128)

    # declared after the deep runs were seen: the front's growth with depth, its source runs' slopes,
    # the settling test at the book's exponent margin and the schedule it reads
    k0_by_depth = {pred["source"]["L"]: tuple(front_models.block_profile(training_analysis.gram_at(r, final)).k0
                                              for r in _ok(src.cell("pre_ln", pred["source"]["L"])))}
    k0_by_depth |= {L: tuple(r.profile.k0 for r in runs if r.L == L) for L in deep}
    source_slopes = {r.name: front_models.curve_slopes(training_analysis.omega_per_sequence(r, pred["source"]["step"]).mean(0))
                     for r in _ok(src.cell(pred["source"]["arch"], pred["source"]["L"])) if r.name in pred["runs"]}
    settle_exp = (front_models.settling_at_margin(longer, "pre_ln", 24, ledger.EXP_MARGIN) if len(long_ok) >= 3
                  else None)
    schedules = {front_models.schedule(r.config) for r in long_ok}
    if len(schedules) > 1:
        raise ValueError(f"the 10,800-step runs record {len(schedules)} different schedules; the chapter reads one")

    k0 = pred["k0"]
    return FrontResult(
        final_step=final,
        committed=CommittedPredictions(pred["what"], pred["written_utc"], pred["code_version"], pred["rule"],
                                       pred["declared"]["extrapolation"], pred["declared"]["refutation"]),
        k0_mean=k0["mean"], k0_lo=k0["lo"], k0_hi=k0["hi"],
        source_profiles=tuple(FrontProfile(n, pred["source"]["L"], p["v_front_sq"], p["s2"], p["a"], p["r"], p["c"],
                                           p["k0"]) for n, p in pred["profile"].items()),
        predicted=_predictions(pred), order=_order(order, stored, missing), runs=tuple(runs), position=position,
        pred_width=front_models.prediction_width(pred), draft=draft, tests=tuple(tests),
        laws=_laws(candidates), long_n_runs=len(long_ok), exponent_short=short, exponent_long=long_path,
        settle=settle, k0_long=k0_long, k0_short=k0_short, wide=wide, wide_64=w64, wide_128=w128, wide_how=how,
        source_slopes=source_slopes, k0_by_depth=k0_by_depth, predictions=pred, settle_exp=settle_exp,
        long_schedule=next(iter(schedules), None))
