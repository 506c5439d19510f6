"""Chapter 8, the cost in accuracy: every number, sentence, table and figure's data it shows.

:func:`chapter` reads the stored sweep ``configs/train_long.toml`` and the deeper Pre-LN rungs
(``configs/deep_L48.toml``, ``configs/deep_L96.toml``) under the book's folder and returns a
:class:`CostResult`:

* removing block k (:func:`~resdecay_lib.analysis.depth_analysis.ablation`): each placement's
  mean increase delta_k over seeds at its deepest depth >= 8, block 1 apart, and the rank trend
  over k >= 2 (:func:`~resdecay_lib.analysis.depth_analysis.ablation_trend`, a 95 % t interval
  over seeds of Spearman's rho);
* the later-half over earlier-half contrast, per seed (``exponents.half_ratio``);
* the validation loss against depth at a fixed number of steps and at a fixed compute
  (:func:`~resdecay_lib.analysis.depth_analysis.loss_at_flops`), and the paired depth ladder of
  each placement at each cut (:func:`~resdecay_lib.analysis.depth_analysis.depth_ladder`);
* the depth slope of the final loss on log2 L over every Pre-LN run at depths >= 8
  (:func:`~resdecay_lib.analysis.depth_analysis.depth_slope`, at 1 - 0.05/4);
* the depth law L(l) = c l^-alpha + L_inf per seed
  (:func:`~resdecay_lib.analysis.depth_analysis.depth_law`) and alpha's t interval over seeds;
* each fix's gap to Pre-LN at equal depths
  (:func:`~resdecay_lib.analysis.depth_analysis.equal_depth_gap`, at 1 - 0.05/4);
* the ledger's statistics on every seed, on the discovery seeds and on the held-out seeds
  (:func:`~resdecay_lib.analysis.training_claims.cost_evidence`).

:func:`reproduce` ties the stored runs to the code as it stands (:mod:`~resdecay_lib.analysis.recheck`):
it re-trains, live, the first checkpoint interval of every placement's smallest run (seed 0),
and it evaluates, live, the final weights stored beside the smallest Pre-LN run
(``<out>/<run>.weights.pt``, :mod:`resdecay_lib.training.weights`; stored by a re-run of the
same configuration with the ``sweep`` command's ``--keep-weights``): each block's removal cost,
the final validation loss and the per-layer change at the last measured step against the
stored ones. It trains (seconds per placement), so it is kept apart from :func:`chapter`,
which only reads (the weights file's provenance among what it reads).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...book import evidence as E
from ...book import ledger
from ...book.glues import EvidenceGlue, Table, Words
from ...book.plots import NAMES
from ...stats import inference as stats
from ...training.store import plan_of
from ...training.weights import load_weights, weights_path
from .. import depth_analysis, recheck, training_analysis, training_claims

__all__ = ["CostResult", "SeedSetEvidence", "Reproduction", "chapter", "reproduce", "depth_slope_words",
           "depth_verdict_words", "depth_set_words", "alpha_vs_liu_words", "liu_fit_words", "onset_words", "gap_words",
           "listed_words", "LIU_ALPHA_FIT", "LADDER_DEPTHS",
           "ABLATION_LEVEL", "GAP_LEVEL", "FLOPS_DEPTH", "DEEP_DEPTHS", "Z_MAX"]

#: the level of the descriptive intervals of the ablation trend, one per placement (no ledger
#: rule reads them)
ABLATION_LEVEL = 0.95
#: the level of the depth slope and the fixes' gaps: claim-depth-cost's family of four tests
GAP_LEVEL = 1 - 0.05 / 4
#: the fixed-compute cut: each placement's budget is the compute of its own full run at this depth
FLOPS_DEPTH = 4
#: the deeper Pre-LN rungs (configs/deep_L<depth>.toml): whatever of them is stored enters
DEEP_DEPTHS = (48, 96)
#: a live re-run agrees with the stored one within this many of its standard errors
Z_MAX = 3.0
#: the theorem's alpha of the depth law (Liu et al.: the depth term falls like 1/l)
LIU_ALPHA = 1.0
#: Liu et al. 2026's fitted alpha of the depth term and its standard error, across the Chinchilla
#: sizes (liuyz0/DepthScaling, Scaling/fit-8.ipynb): the field's number beside the book's
LIU_ALPHA_FIT = (1.07, 0.24)
#: the rungs of Pre-LN's depth ladder, the deeper sweeps' included: each gain per doubling is paired
#: over the seeds both depths have, one family over the rungs (Bonferroni)
LADDER_DEPTHS = (2, 4, 8, 16, 24, 48, 96)


# ----------------------------------------------------------------------------- wording

def listed_words(values, fmt: str = "{}") -> Words:
    """``values`` joined by commas, each written with ``fmt`` (``"{:.2f}"``): a list the prose
    shows as it is, e.g. the depths of a ladder or one number per seed."""
    return Words(", ".join(fmt.format(v) for v in values))


def depth_slope_words(lo: float, hi: float, margin: float) -> Words:
    """What the depth slope's interval [lo, hi] (nats/char per doubling) says against the
    margin m: wholly below -m, depth still pays; wholly above -m, it has stopped paying (a gain
    under m per doubling); across -m, the runs cannot tell."""
    if hi < -margin:
        return Words("depth still pays at the deepest rung")
    if lo > -margin:
        return Words("depth has stopped paying")
    return Words("the runs cannot tell whether depth still pays")


def depth_verdict_words(reading: str, best: int, lo: float) -> Words:
    """The paired ladder's reading (:attr:`~resdecay_lib.analysis.depth_analysis.DepthLadder.reading`)
    as a clause: ``best`` the depth of lowest mean loss, ``lo`` the smallest depth not worse
    than it."""
    words = {
        "keeps paying": "keeps paying within the ladder: its top beats every lower depth",
        "stops paying": f"stops paying at depth {best}",
        "not located": f"has its lowest mean loss at depth {best}, and its paired steps do not locate where depth "
                       f"stops paying: every depth from {lo:g} up is within the noise of the best"}
    if reading not in words:
        raise ValueError(f"reading must be one of {sorted(words)}, got {reading!r}")
    return Words(words[reading])


def depth_set_words(depths) -> Words:
    """The depths not significantly worse than the best (a ladder's ``not_worse``), or why
    there are none (a ladder needs two depths)."""
    return listed_words(depths) if len(depths) else Words("none (fewer than two depths)")


def alpha_vs_liu_words(lo: float, hi: float) -> Words:
    """What the interval [lo, hi] of the depth law's alpha says of Liu et al.'s alpha = 1 (and
    of alpha = 0, no depth term); NaN ends: no interval (fewer than three seeds' fits)."""
    if not math.isfinite(lo):
        return Words("no interval")
    if lo <= 0 <= hi and lo <= LIU_ALPHA <= hi:
        return Words("contains 1, and contains 0 too: the runs cannot tell Liu et al.'s law from no depth term")
    if lo <= LIU_ALPHA <= hi:
        return Words("contains 1 and excludes 0")
    return Words(f"excludes 1: the depth term falls {'slower' if hi < LIU_ALPHA else 'faster'} than Liu et al.'s")


def liu_fit_words(lo: float, hi: float) -> Words:
    """The depth law's alpha interval [lo, hi] beside Liu et al.'s fitted alpha (mean +- 2 se of
    :data:`LIU_ALPHA_FIT`): whether the two overlap."""
    if not math.isfinite(lo):
        return Words("no interval to set beside it")
    m, se = LIU_ALPHA_FIT
    a, b = m - 2 * se, m + 2 * se
    if hi < a:
        return Words(f"lies wholly below theirs ({a:.2f} to {b:.2f}, two standard errors): the toy ladder's depth term "
                     "falls more slowly than the field's")
    if lo > b:
        return Words(f"lies wholly above theirs ({a:.2f} to {b:.2f}, two standard errors)")
    return Words(f"overlaps theirs ({a:.2f} to {b:.2f}, two standard errors)")


def onset_words(onset, growth) -> Words:
    """The card's question answered as a clause: ``onset`` a
    :class:`~resdecay_lib.stats.inference.Onset` of Pre-LN's gap to ResiDual, ``growth`` the gap's
    growth per doubling (a TInterval, or None without three seeds at every depth)."""
    if onset.depth is not None:
        grows = ("and grows with depth" if growth is not None and growth.lo > 0 else
                 "but is not shown to grow with depth")
        return Words(f"Pre-LN's gap to ResiDual lies above {onset.margin:g} nats/char from depth {onset.depth} on, "
                     f"{grows}")
    if onset.reading == stats.ONSET_READINGS[1]:
        return Words(f"Pre-LN's gap to ResiDual lies below {onset.margin:g} nats/char at every depth: no depth at which "
                     "the decay costs accuracy")
    return Words(f"no depth can be named yet: the gap cannot tell at depth{'s' if len(onset.undecided) > 1 else ''} "
                 f"{', '.join(map(str, onset.undecided))}")


def gap_words(gaps) -> Words:
    """The fixes' gaps to Pre-LN, one clause each: ``gaps`` a list of (placement's name, mean,
    lo, hi), a placement's final loss minus Pre-LN's (nats/char); an interval wholly below 0
    is better than Pre-LN, wholly above worse, across 0 not distinguishable."""
    clauses = [f"{name} {mean:+.3f} ({lo:+.3f} to {hi:+.3f}), "
               + ("better than" if hi < 0 else "worse than" if lo > 0 else "not distinguishable from") + " Pre-LN"
               for name, mean, lo, hi in gaps]
    return Words("; ".join(clauses) or "no placement has three seeds paired with Pre-LN")


# ----------------------------------------------------------------------------- tables

def _interval(x: float, lo: float, hi: float, fmt: str = "{:.2f}") -> str:
    """x [lo, hi], or what a NaN means: the seed set has too few seeds for an interval."""
    if any(math.isnan(v) for v in (x, lo, hi)):
        return "cannot tell (< 3 seeds)"
    return f"{fmt.format(x)} [{fmt.format(lo)}, {fmt.format(hi)}]"


def _final_losses_table(sweep, deep_sweeps, excluded) -> Table:
    """Final validation loss of every stored run: one row per (placement, depth), one column
    per seed; a flagged run marked *."""
    seeds = sweep.seeds
    rows = []
    for a in sweep.archs:
        for L in sweep.depths(a):
            rows.append([NAMES[a], str(L)] + [_seed_loss(sweep, a, L, s, excluded) for s in seeds])
    for d in deep_sweeps:
        for L in d.depths("pre_ln"):
            rows.append([NAMES["pre_ln"], f"{L} (deeper rung)"] + [_seed_loss(d, "pre_ln", L, s, excluded) for s in seeds])
    return Table.of(["placement", "L"] + [f"seed {s}" for s in seeds], rows)


def _seed_loss(sweep, a, L, s, excluded) -> str:
    r = sweep.runs.get((a, L, s))
    if r is None:
        return "not stored"
    return f"{training_analysis.final_loss(r):.3f}" + ("\\*" if r.name in excluded else "")


# ----------------------------------------------------------------------------- results

@dataclass(frozen=True)
class SeedSetEvidence:
    """The ledger's statistics of this chapter computed on one seed set of
    :data:`resdecay_lib.book.evidence.SEED_SETS` (``seed_set``), every finished run:
    ``evidence`` ``{declared name: parts}`` as
    :func:`~resdecay_lib.analysis.training_claims.cost_evidence` gives them. Glued as
    ``<name>__<seed_set>`` (``glue_all(result.seed_sets["s012"])``)."""
    seed_set: str
    evidence: dict

    def glues(self) -> dict:
        return {str(e): EvidenceGlue(p["value"], lo=p.get("lo"), hi=p.get("hi"), se=p.get("se"), digits=4,
                                     seed_set=self.seed_set)
                for e, p in self.evidence.items()}


@dataclass(frozen=True)
class CostResult:
    """Everything Chapter 8 shows, from the stored runs (see the module docstring).

    Ablation (``delta_k``, the loss increase from removing block k, nats/char):
    ``ablation_profiles`` {title: (mean delta_k over seeds [L], se [L])} (the figure's data);
    ``block1`` and ``later_max`` {placement: mean delta_1, max over k >= 2 of mean delta_k};
    ``trend`` Pre-LN's rho over k >= 2 at ``ABLATION_LEVEL``; ``block1_pre_ln`` and
    ``late_pre_ln`` the mean delta_1 and the mean delta_k of the later half, Pre-LN at the
    deepest depth >= 8; ``half_ratio_seeds`` Pre-LN's later/earlier half ratio per seed at
    ``training_claims.TRAINED_L``.

    Depth: ``depth_panels`` {title: {placement: (depths, mean, lo, hi)}} (the figure's data);
    ``ladders`` {(cut, placement): DepthLadder}, cut "steps" or "flops", every run;
    ``slope`` :func:`~resdecay_lib.analysis.depth_analysis.depth_slope`'s dict over ``n_slope_runs``
    runs; ``law_fits`` {seed: depth_law dict} (seeds with 3 depths or more), ``law_depths``
    {seed: the Pre-LN depths it has}, ``alpha`` the t
    interval of alpha over seeds (NaN with fewer than 3 fits), ``alpha_edge`` fits at the
    grid's edge, ``law_linf`` mean L_inf; ``gaps`` {placement: (depths, TInterval or None)}
    minus Pre-LN at ``GAP_LEVEL``; ``lr`` {placement: learning rate}.

    Where the decay starts to cost accuracy: ``gains`` Pre-LN's gain per doubling rung by rung
    over :data:`LADDER_DEPTHS`, a list of (a, b, seeds, TInterval), each paired over the seeds
    both depths have, at 1 - 0.05/(rungs); ``depth_gaps`` Pre-LN minus ResiDual at each depth
    both are trained at (:class:`~resdecay_lib.analysis.depth_analysis.DepthGap`, at
    ``training_claims.GAP_LEVEL``), ``growth`` that gap's growth per doubling (TInterval or
    None), ``onset`` the depth from which it lies above the margin
    (:class:`~resdecay_lib.stats.inference.Onset`); the tables ``gain_table`` and
    ``gap_depth_table``.

    ``evidence`` the ledger's statistics on every seed, ``seed_sets`` on each seed set; the
    tables ``final_losses``, ``ablation``, ``ladder``, ``depth_law``, ``gap_table``,
    ``seed_set_table``; ``stored`` a line on what is stored.

    What :func:`reproduce` checks, as read (nothing evaluated): ``first_step`` the first measured
    step after 0 (the end of the re-trained first interval); ``weights_run`` the run whose
    stored weights it evaluates (the smallest Pre-LN run, seed 0), ``weights_run_code`` the
    code version that run's result records, ``weights_file`` the weights file (relative to the
    book's folder), ``weights_code`` the code version of the re-run that stored them.
    """
    stored: str
    final_steps: int
    final_losses: Table
    ablation_profiles: dict
    block1: dict
    later_max: dict
    trend: stats.TInterval
    ablation: Table
    block1_pre_ln: float
    late_pre_ln: float
    half_ratio_seeds: Words
    depth_panels: dict
    ladders: dict
    ladder: Table
    slope: dict
    n_slope_runs: int
    law_fits: dict
    law_depths: dict
    alpha: stats.TInterval
    alpha_edge: int
    law_linf: float
    depth_law: Table
    gaps: dict
    gap_table: Table
    lr: dict
    evidence: dict
    seed_sets: dict
    seed_set_table: Table
    gains: list
    gain_table: Table
    depth_gaps: list
    growth: object
    onset: object
    gap_depth_table: Table
    first_step: int
    weights_run: str
    weights_run_code: str
    weights_file: str
    weights_code: str

    def glues(self) -> dict:
        """Every name Chapter 8 glues on all seeds (the seed sets' names: :attr:`seed_sets`)."""
        t = self.trend
        lad = self.ladders[("steps", "pre_ln")]
        flops = self.ladders.get(("flops", "pre_ln"))
        ia = self.alpha
        out = {
            "abl_level": round(ABLATION_LEVEL, 3),
            "ev_ablation_trend_pre_ln": EvidenceGlue(t.mean, lo=t.lo, hi=t.hi, digits=4),
            "ev_ablation_trend_level": EvidenceGlue(ABLATION_LEVEL, digits=4),
            "ev_ablation_block1_pre_ln": EvidenceGlue(self.block1_pre_ln, digits=4),
            "ev_ablation_late_pre_ln": EvidenceGlue(self.late_pre_ln, digits=4),
            "abl_seed_t": round(t.t, 1),
            "abl_seed_n": t.n,
            "abl_seed_df": t.n - 1,
            "cost_ablation_table": self.ablation,
            "half_ratio_per_seed": self.half_ratio_seeds,
            "cost_final_losses_table": self.final_losses,
            "flops_depth": FLOPS_DEPTH,
            "cost_ladder_table": self.ladder,
            "ladder_lr": training_claims.LADDER_LR,
            "depth_slope_margin": ledger.DEPTH_SLOPE_MARGIN,
            "depth_slope_words": depth_slope_words(self.slope["lo"], self.slope["hi"], ledger.DEPTH_SLOPE_MARGIN),
            "ev_depth_stops_paying_pre_ln": EvidenceGlue(lad.stops, lo=lad.lo, hi=lad.hi),
            "ev_depth_best_at_flops_pre_ln": EvidenceGlue(float(flops.best) if flops else math.nan),
            "depth_set_steps": depth_set_words(lad.not_worse),
            "depth_set_flops": depth_set_words(flops.not_worse if flops else []),
            "depth_verdict_steps": depth_verdict_words(lad.reading, lad.best, lad.lo),
            "ev_depth_alpha_pre_ln": EvidenceGlue(ia.mean, lo=ia.lo, hi=ia.hi, digits=4),
            "depth_alpha_edge": self.alpha_edge,
            "depth_ladder": listed_words(sorted({d for ds in self.law_depths.values() for d in ds})),
            "depth_n_seeds": len(self.law_fits),
            "depth_linf": round(self.law_linf, 3),
            "depth_alpha_vs_liu": alpha_vs_liu_words(ia.lo, ia.hi),
            "cost_depth_law_table": self.depth_law,
            "cost_gaps_table": self.gap_table,
            "gap_words": gap_words([(NAMES[a], iv.mean, iv.lo, iv.hi) for a in ledger.GAP_FIXES
                                    if (iv := self.gaps[a][1]) is not None]),
            **{f"lr_{a}": self.lr[a] for a in ("pre_ln",) + tuple(ledger.GAP_FIXES)},
            "cost_seed_sets_table": self.seed_set_table,
            "cost_gain_table": self.gain_table,
            "cost_gap_depth_table": self.gap_depth_table,
            "gap_onset_words": onset_words(self.onset, self.growth),
            "gap_margin": ledger.DEPTH_GAP_MARGIN,
            "gap_level": round(training_claims.GAP_LEVEL, 4),
            "liu_alpha_fit": LIU_ALPHA_FIT[0], "liu_alpha_fit_se": LIU_ALPHA_FIT[1],
            "depth_alpha_vs_liu_fit": liu_fit_words(ia.lo, ia.hi),
            "rep_z_max": Z_MAX, "rep_first_step": self.first_step,
            # a run's name, a file and code versions, shown as code
            "rep_run": Words(f"`{self.weights_run}`"), "rep_run_code": Words(f"`{self.weights_run_code}`"),
            "rep_weights_file": Words(f"`{self.weights_file}`"), "rep_weights_code": Words(f"`{self.weights_code}`"),
        }
        out.update({str(e): EvidenceGlue(p["value"], lo=p.get("lo"), hi=p.get("hi"), se=p.get("se"), digits=4)
                    for e, p in self.evidence.items()})
        return out


@functools.lru_cache(maxsize=4)
def _load(root: str):
    """The sweep train_long and the deeper rungs' sweeps stored under ``root`` (read once)."""
    sweep, rounds = training_claims.load_rounds(root)
    deep = tuple(training_analysis.StoredSweep.load(Path(root) / "configs" / f"deep_L{L}.toml", root) for L in DEEP_DEPTHS)
    return sweep, rounds, deep


def _weights_of(root, sweep):
    """(the stored result of the smallest Pre-LN run, seed 0; the path of its stored weights)."""
    small = sweep.runs.get(("pre_ln", min(sweep.depths("pre_ln")), sweep.seeds[0]))
    if small is None:
        raise ValueError(f"sweep {sweep.name} has no stored result of its smallest Pre-LN run, seed {sweep.seeds[0]}")
    return small, weights_path(Path(root) / sweep.spec["out"] / f"{small.name}.json")


def chapter(root) -> CostResult:
    """Chapter 8's result from the runs stored under the book's folder ``root``
    (:func:`resdecay_lib.book.notebooks.find_book_root`)."""
    sweep, rounds, deep_sweeps = _load(str(root))
    deep_runs = [r for d in deep_sweeps for r in d.runs.values()]
    flags = training_analysis.flag_runs(sweep)
    excluded = set(flags)
    final = sweep.measure_steps[-1]
    stored = (f"{len(sweep.runs)} runs stored; missing: {', '.join(sweep.missing) or 'none'}. Deeper Pre-LN rungs "
              f"stored: {', '.join(sorted(r.name for r in deep_runs)) or 'none'}; missing: "
              f"{', '.join(m for d in deep_sweeps for m in d.missing) or 'none'}")

    # -- removing block k: drawn at the deepest depth >= 8 with two finished seeds (an error
    # bar), else one; the trend at the deepest depth >= 8 with three (a rank correlation over
    # k = 2..4 has three ranks: no trend to read)
    profiles, block1, later_max, trend, abl_rows = {}, {}, {}, {}, []
    for a in sweep.archs:
        Ld = sweep.deepest(a, (), min_seeds=2, min_depth=8) or sweep.deepest(a, (), min_seeds=1, min_depth=8)
        d = np.array([depth_analysis.ablation(r)[0] for r in sweep.cell(a, Ld) if r.status == "ok"])  # [S, L]
        se = d.std(0, ddof=1) / math.sqrt(len(d)) if len(d) > 1 else np.full(Ld, np.nan)
        profiles[f"{NAMES[a]}, L = {Ld} ({len(d)} seed{'s' if len(d) > 1 else ''})"] = (d.mean(0), se)
        block1[a], later_max[a] = float(d.mean(0)[0]), float(d.mean(0)[1:].max())
        ratio = training_analysis.half_ratio(d.mean(0))
        L = sweep.deepest(a, (), min_depth=8)
        if L is None:
            abl_rows.append([NAMES[a], str(Ld), str(len(d)), f"{block1[a]:.3f}", f"{ratio:.2f}",
                             "no depth >= 8 with 3 seeds", "-"])
            continue
        per, iv = depth_analysis.ablation_trend(sweep, a, L, (), level=ABLATION_LEVEL)
        trend[a] = iv
        abl_rows.append([NAMES[a], str(L), str(len(d)), f"{block1[a]:.3f}", f"{ratio:.2f}", f"{iv:.2f}",
                         ", ".join(f"{x:.2f}" for x in per)])
    if "pre_ln" not in trend:
        raise ValueError(f"sweep {sweep.name} has no Pre-LN depth >= 8 with 3 finished seeds: no ablation trend")
    ablation = Table.of(["placement", "L", "seeds", "block 1 (nats)", "later half / earlier half",
                         f"rho, k >= 2 ({ABLATION_LEVEL:.0%})", "rho per seed"], abl_rows)
    Lp = sweep.deepest("pre_ln", (), min_depth=8)
    dpre = np.array([depth_analysis.ablation(r)[0] for r in sweep.cell("pre_ln", Lp) if r.status == "ok"])
    half_seeds = [training_analysis.half_ratio(depth_analysis.ablation(r)[0])
                  for r in sweep.cell("pre_ln", training_claims.TRAINED_L) if r.status == "ok"]

    # -- validation loss against depth, at a fixed number of steps and at a fixed compute
    budget = {a: sweep.runs[(a, FLOPS_DEPTH, sweep.seeds[0])].flops_per_step * final for a in sweep.archs}
    cuts = {"steps": lambda a: training_analysis.final_loss,
            "flops": lambda a: (lambda r: depth_analysis.loss_at_flops(r, budget[a]))}
    ladders, panels, panels_kept, ladder_rows = {}, {}, {}, []
    for cut, fn_of in cuts.items():
        panels[cut], panels_kept[cut] = {}, {}
        for a in sweep.archs:
            for store, excl in ((panels, ()), (panels_kept, excluded)):
                losses = sweep.losses(a, fn_of(a), excl)
                if len(losses) < 2:
                    continue
                ivs = {L: stats.t_interval(v) for L, v in losses.items()}
                ds = sorted(losses)
                store[cut][a] = (ds, [ivs[L].mean for L in ds], [ivs[L].lo for L in ds], [ivs[L].hi for L in ds])
                if store is panels:
                    lad = depth_analysis.depth_ladder(losses)
                    ladders[(cut, a)] = lad
                    ladder_rows.append([{"steps": f"{final} steps", "flops": f"depth {FLOPS_DEPTH}'s compute"}[cut],
                                        NAMES[a], str(lad.best), listed_words(lad.not_worse), f"{lad.level:.1%}",
                                        "; ".join(f"{x} to {y}: {iv.mean:+.3f} [{iv.lo:+.3f}, {iv.hi:+.3f}]"
                                                  for x, y, iv in lad.steps)])
    for d in deep_sweeps:          # the deeper Pre-LN rungs, drawn where at least three seeds are stored
        for L in d.depths("pre_ln"):
            v = [training_analysis.final_loss(r) for r in d.cell("pre_ln", L) if r.status == "ok"]
            if len(v) >= 3:
                iv = stats.t_interval(v)
                ds, m, lo, hi = panels["steps"]["pre_ln"]
                panels["steps"]["pre_ln"] = (ds + [L], m + [iv.mean], lo + [iv.lo], hi + [iv.hi])
    depth_panels = {f"after {final} steps, every run": panels["steps"],
                    f"after {final} steps, flagged runs left out": panels_kept["steps"],
                    f"at depth {FLOPS_DEPTH}'s compute, every run": panels["flops"]}
    ladder = Table.of(["cut", "placement", "best depth", "not worse", "level", "paired steps"], ladder_rows)

    pts = training_claims.depth_points(sweep, deep_runs)        # (depth, final loss, run name)
    slope = depth_analysis.depth_slope([p[0] for p in pts], [p[1] for p in pts], GAP_LEVEL)

    # -- the depth law, per seed over every Pre-LN depth it has (the deeper rungs included)
    per_seed = {}
    shallow = [(L, training_analysis.final_loss(r), r.name) for L in sweep.depths("pre_ln") if L < training_claims.DEPTH_MIN
               for r in sweep.cell("pre_ln", L) if r.status == "ok"]
    for L, v, name in pts + shallow:
        per_seed.setdefault(int(name.rsplit("_s", 1)[1]), {})[L] = v
    fits = {s: depth_analysis.depth_law(sorted(p), [p[L] for L in sorted(p)])
            for s, p in sorted(per_seed.items()) if len(p) >= 3}
    if len(fits) >= 3:
        alpha = stats.t_interval([f["alpha"] for f in fits.values()])
        edge, linf = sum(f["at_edge"] for f in fits.values()), float(np.mean([f["L_inf"] for f in fits.values()]))
    else:
        alpha = stats.TInterval(math.nan, math.nan, math.nan, math.nan, math.nan, 0, 0.95)
        edge, linf = 0, math.nan
    law_depths = {s: sorted(p) for s, p in sorted(per_seed.items())}
    law = Table.of(["seed", "depths", "alpha", "c", "L_inf (nats/char)", "at the grid's edge"],
                   [[str(s), listed_words(law_depths[s]), f"{f['alpha']:.3g}", f"{f['c']:.3g}", f"{f['L_inf']:.3f}",
                     "yes" if f["at_edge"] else "no"] for s, f in fits.items()])

    # -- the fixes (and Post-LN) against Pre-LN at equal depth
    lr = {a: sweep.spec["arch"][a]["lr"] for a in sweep.archs}
    gaps = {a: depth_analysis.equal_depth_gap(sweep, a, level=GAP_LEVEL) for a in tuple(ledger.GAP_FIXES) + ("post_ln",)}
    gap_table = Table.of(
        ["placement", "learning rate", "depths", f"minus Pre-LN ({GAP_LEVEL:.2%})", "seeds"],
        [[NAMES[a], f"{lr[a]:g}", listed_words(ds)] + ([f"{iv:+.3f}", str(iv.n)] if iv is not None
                                                         else ["fewer than three paired seeds", "-"])
         for a, (ds, iv) in gaps.items()])

    # -- where the decay starts to cost accuracy: the ladder rung by rung, and the gap to ResiDual by depth
    pre_runs = {(a, L, s): r for (a, L, s), r in sweep.runs.items() if a == "pre_ln"}
    pre_runs.update({("pre_ln", r.n_layer, r.seed): r for r in deep_runs})
    by_depth = {}
    for (_, L, s), r in pre_runs.items():
        if r.status == "ok" and math.isclose(r.config.lr, training_claims.LADDER_LR):
            by_depth.setdefault(L, {})[s] = training_analysis.final_loss(r)
    rungs = [(a, b) for a, b in zip(LADDER_DEPTHS, LADDER_DEPTHS[1:]) if a in by_depth and b in by_depth]
    gains = []
    for a, b in rungs:
        seeds = sorted(set(by_depth[a]) & set(by_depth[b]))
        if len(seeds) >= 3:
            ((_, _, iv),) = depth_analysis.gain_per_doubling({a: [by_depth[a][s] for s in seeds],
                                                              b: [by_depth[b][s] for s in seeds]},
                                                             level=1 - 0.05 / len(rungs))
            gains.append((a, b, tuple(seeds), iv))
    gain_table = Table.of(["rung", "seeds", f"gain per doubling (nats/char, {1 - 0.05 / max(len(rungs), 1):.2%})"],
                          [[f"{a} to {b}", listed_words(sd), f"{iv:+.4f}"] for a, b, sd, iv in gains])
    depth_gaps = depth_analysis.gaps_by_depth(sweep.runs, level=training_claims.GAP_LEVEL)
    growth = depth_analysis.gap_growth(sweep.runs, sorted(E.GAP_BY_DEPTH), level=training_claims.GAP_LEVEL)
    onset = depth_analysis.cost_onset([g for g in depth_gaps if g.depth in E.GAP_BY_DEPTH]
                                      + [depth_analysis.DepthGap(L, (), None) for L in sorted(E.GAP_BY_DEPTH)
                                         if L not in {g.depth for g in depth_gaps}], ledger.DEPTH_GAP_MARGIN)
    gap_depth_table = Table.of(
        ["depth", "seeds", f"Pre-LN minus ResiDual (nats/char, {training_claims.GAP_LEVEL:.0%})"],
        [[str(g.depth), listed_words(g.seeds), f"{g.interval:+.4f}" if g.interval is not None
          else "fewer than three paired seeds"] for g in depth_gaps]
        + [[str(L), "none yet", "not trained yet"] for L in sorted(E.GAP_BY_DEPTH)
           if L not in {g.depth for g in depth_gaps}])

    # -- the ledger's statistics on every seed and on each seed set
    evidence = training_claims.cost_evidence(sweep, deep_runs)
    subsets = {n: training_analysis.subset(rounds, s) for n, s in E.SEED_SETS.items()}
    seed_sets = {n: SeedSetEvidence(n, training_claims.not_computed(evidence) if training_claims.pending(sub)
                                    else training_claims.cost_evidence(sub, deep_runs))
                 for n, sub in subsets.items()}
    set_rows = []
    for n, ev in (("all seeds", evidence), *((f"{n} (seeds {', '.join(map(str, E.SEED_SETS[n]))})", s.evidence)
                                             for n, s in seed_sets.items())):
        if n != "all seeds" and training_claims.pending(subsets[n.split(" ")[0]]):
            set_rows.append([n] + ["not trained yet"] * (4 + len(E.GAP_BY_DEPTH)))
            continue
        h, sl = ev[E.HALF_RATIO_TOY], ev[E.DEPTH_SLOPE_PRE_LN]
        set_rows.append([n, _interval(h["value"], h["lo"], h["hi"]), f"{ev[E.HALF_RATIO_REF_TOY]['value']:.2f}",
                         _interval(sl["value"], sl["lo"], sl["hi"], "{:+.4f}")]
                        + [_interval(g["value"], g["lo"], g["hi"], "{:+.3f}")
                           for g in (ev[E.GAP_BY_DEPTH[L]] for L in sorted(E.GAP_BY_DEPTH))]
                        + [_interval(ev[E.GAP_GROWTH]["value"], ev[E.GAP_GROWTH]["lo"], ev[E.GAP_GROWTH]["hi"], "{:+.3f}")])
    seed_set_table = Table.of(["seeds", "half ratio (95%)", "theorem's", f"depth slope ({GAP_LEVEL:.2%})"]
                              + [f"Pre-LN minus ResiDual, L = {L} ({training_claims.GAP_LEVEL:.0%})"
                                 for L in sorted(E.GAP_BY_DEPTH)]
                              + [f"its growth per doubling ({training_claims.GAP_LEVEL:.0%})"], set_rows)

    # -- what reproduce() re-trains and what it reads: the weights file checked to be the run's
    small, wfile = _weights_of(root, sweep)
    weights = load_weights(wfile, small)
    plan = plan_of(sweep.spec)
    first_steps = {plan.resolve(sweep.runs[(a, min(sweep.depths(a)), sweep.seeds[0])].config.steps)[0][1]
                   for a in sweep.archs}
    if len(first_steps) != 1:     # the prose names one step for every placement's first interval
        raise ValueError(f"sweep {sweep.name}: the first intervals of its smallest runs end at different steps "
                         f"{sorted(first_steps)}")

    return CostResult(
        stored=stored, final_steps=final, final_losses=_final_losses_table(sweep, deep_sweeps, excluded),
        ablation_profiles=profiles, block1=block1, later_max=later_max, trend=trend["pre_ln"], ablation=ablation,
        block1_pre_ln=float(dpre[:, 0].mean()), late_pre_ln=float(dpre[:, Lp // 2:].mean()),
        half_ratio_seeds=listed_words(half_seeds, "{:.2f}"),
        depth_panels=depth_panels, ladders=ladders, ladder=ladder, slope=slope, n_slope_runs=len(pts),
        law_fits=fits, law_depths=law_depths, alpha=alpha, alpha_edge=edge, law_linf=linf, depth_law=law,
        gaps=gaps, gap_table=gap_table, lr=lr, evidence=evidence, seed_sets=seed_sets,
        seed_set_table=seed_set_table, gains=gains, gain_table=gain_table, depth_gaps=depth_gaps, growth=growth,
        onset=onset, gap_depth_table=gap_depth_table, first_step=first_steps.pop(),
        weights_run=small.name, weights_run_code=small.code_version,
        weights_file=Path(wfile).relative_to(root).as_posix(), weights_code=weights.provenance["code_version"])


# ----------------------------------------------------------------------------- the live re-run

@dataclass(frozen=True)
class Reproduction:
    """The live checks of :func:`reproduce`: ``first`` the :func:`recheck.first_interval` dict
    of each placement's smallest run (seed 0), ``weights`` the :func:`recheck.stored_weights`
    dict of the smallest Pre-LN run's stored final weights, ``stored_delta`` that run's stored
    delta_k. ``z_scores``: every |live - stored| / se, by what it compares."""
    first: tuple
    weights: dict
    stored_delta: np.ndarray

    @property
    def z_scores(self) -> dict:
        out = {}
        for rc in self.first:
            out[f"{rc['name']} change"] = rc["max_z_change"]
            out[f"{rc['name']} loss"] = rc["z_loss"]
        w = self.weights
        out[f"{w['name']} removal costs"] = w["max_z"]
        out[f"{w['name']} final loss"] = w["z_loss"]
        out[f"{w['name']} final change"] = w["max_z_change"]
        return out

    def __str__(self) -> str:
        lines = [f"{rc['name']:16s} step {rc['step']}: within {Z_MAX:g} standard errors of the stored change and loss"
                 if rc["max_z_change"] <= Z_MAX and rc["z_loss"] <= Z_MAX else
                 f"{rc['name']:16s} step {rc['step']}: change {rc['max_z_change']:.2f}, loss {rc['z_loss']:.2f} "
                 f"standard errors from the stored" for rc in self.first]
        w = self.weights
        worst = max(w["max_z"], w["z_loss"], w["max_z_change"])
        lines.append(f"{w['name']}: stored increases {np.round(self.stored_delta, 2)}; its stored final weights give "
                     f"removal costs, final loss and change at step {w['step']} "
                     + (f"within {Z_MAX:g} standard errors of each" if worst <= Z_MAX else
                        f"up to {worst:.2f} standard errors from them"))
        return "\n".join(lines)


def reproduce(root) -> Reproduction:
    """Re-train, live, the first checkpoint interval of every placement's smallest run (seed 0)
    of the sweep under ``root`` and compare each with the stored measurement at its end
    (:func:`recheck.first_interval`); evaluate, live, the final weights stored beside the
    smallest Pre-LN run (seed 0) and compare its removal costs, final loss and final change with
    the stored ones (:func:`recheck.stored_weights`). Seconds per placement on a CPU."""
    sweep, _, _ = _load(str(root))
    plan = plan_of(sweep.spec)
    first = tuple(recheck.first_interval(sweep.runs[(a, min(sweep.depths(a)), sweep.seeds[0])], plan)
                  for a in sweep.archs)
    small, wfile = _weights_of(root, sweep)
    return Reproduction(first, recheck.stored_weights(small, wfile), depth_analysis.ablation(small)[0])
