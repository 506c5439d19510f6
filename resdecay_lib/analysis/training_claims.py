"""The ledger's training statistics, computed on any set of seeds.

Chapters 7 and 8 glue every statistic a training claim's rule reads three times: on all the
seeds stored, on the discovery seeds 0-2 and on the held-out seeds 3-4
(:data:`resdecay_lib.book.evidence.SEED_SETS`), so that the ledger evaluates the same rule on each
(``ledger.evaluate(..., seed_set=...)``). This module is the one place those statistics are
computed; each function takes a :class:`resdecay_lib.analysis.training_analysis.StoredSweep` already cut to a seed set
(:func:`resdecay_lib.analysis.training_analysis.subset`) and returns ``{Evidence: parts}`` ready for
:func:`resdecay_lib.book.evidence.glue` (``value``, and ``lo``/``hi``/``se`` as the kind asks).

Declared with the rules, before seeds 3-4 were read:

* the depth every training claim reads is :data:`TRAINED_L` (the ladder's deepest rung);
* exponent fits leave out the runs :func:`resdecay_lib.analysis.training_analysis.flag_runs` flags on the seed
  set (not converged, diverged, outlier), with the flags decided before any fit; loss claims
  (the removal costs, the depth slope, the fixes' gaps) read every finished run;
* an interval over seeds needs 3 seeds: with fewer, the statistic is NaN and the ledger says
  the data cannot tell (the held-out set's two seeds give no t interval, so its column shows
  where it has no power).

NaN is that answer only: a sweep with no stored run at all, or whose Pre-LN runs at
:data:`TRAINED_L` all failed (none finished, or for the exponents none converged), is refused
with a ValueError naming the sweep and what it lacks, since its NaN would read as "the data
cannot tell" where there are no data (a wrong folder, a crashed sweep).
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ..book import evidence as E
from . import depth_analysis, training_analysis
from ..checks import check_items
from ..training.records import RunRecord, as_run
from ..stats import inference as stats

__all__ = ["TRAINED_L", "LADDER_LR", "DEPTH_MIN", "GAP_LEVEL", "exponent_evidence", "cost_evidence", "depth_points",
           "resi_dual_gaps",
           "EXPLORATORY_SWEEPS", "CONFIRMATORY_SWEEP", "load_rounds", "pending", "not_computed"]

#: the depth every training claim reads: the deepest rung of the sweep's ladder
TRAINED_L = 24
#: the ladder's learning rate (configs/train_long.toml, Pre-LN): rungs at another rate do not
#: enter the depth slope
LADDER_LR = 0.006
#: the depth slope reads depths from here up ("deep" blocks; 2 -> 4 pays in every account)
DEPTH_MIN = 8

NAN = float("nan")


def _iv(values, level) -> dict:
    """A t interval over seeds as glue parts, NaN below 3 values."""
    v = [float(x) for x in values]
    if len(v) < 3:
        return {"value": NAN, "lo": NAN, "hi": NAN}
    iv = stats.t_interval(v, level)
    return {"value": iv.mean, "lo": iv.lo, "hi": iv.hi}


def _iv_se(values, level) -> dict:
    v = [float(x) for x in values]
    if len(v) < 3:
        return {"value": NAN, "lo": NAN, "hi": NAN, "se": NAN}
    iv = stats.t_interval(v, level)
    return {"value": iv.mean, "lo": iv.lo, "hi": iv.hi, "se": iv.se}


def exponent_evidence(sweep: training_analysis.StoredSweep) -> dict:
    """Chapter 7's seed-set evidence on ``sweep`` (one seed set): the Pre-LN exponents at step 0
    and at the end (L = :data:`TRAINED_L`, k = 2..L, t intervals over the kept seeds, with the
    fit-start shifts and matched references), the order-free split of the exponent shift, the
    block-variance exponent, and the worst deep Pre-LN loss (every run)."""
    _check_not_empty(sweep)
    converged = [r for r in sweep.cell("pre_ln", TRAINED_L) if r.status == "ok"
                 and not r.convergence.diverged and r.convergence.met]
    if not converged:
        raise ValueError(f"sweep {sweep.name} has no converged run of pre_ln at L = {TRAINED_L} "
                         f"({_stored(sweep)}): no exponent to fit, which is not too few seeds")
    flags = training_analysis.flag_runs(sweep)
    excluded = set(flags)
    final = sweep.measure_steps[-1]
    L = TRAINED_L
    out = {}
    deep = [training_analysis.final_loss(r) for d in sweep.depths("pre_ln") if d >= DEPTH_MIN for r in sweep.cell("pre_ln", d)]
    out[E.PRE_LN_WORST_LOSS_DEEP] = {"value": max(deep) if deep else NAN}
    cell = [r for r in sweep.cell("pre_ln", L, excluded) if training_analysis.run_status(r) == "ok"]
    n = len(cell)
    out[E.EXP_N_SEEDS] = {"value": float(n)}
    out[E.EXP_T_DF] = {"value": float(n - 1) if n >= 3 else NAN}
    if n < 3:
        for e in (E.TRAINED_EXP_PRE_LN, E.INIT_EXP_TRAINEDRUNS_PRE_LN):
            out[e] = {"value": NAN, "lo": NAN, "hi": NAN, "se": NAN}
        for e in (E.TRAINED_REF_PRE_LN, E.INIT_REF_PRE_LN, E.TRAINED_FITSTART_SHIFT_PRE_LN,
                  E.INIT_FITSTART_SHIFT_PRE_LN, E.SPLIT_EXP_THEOREM, E.SPLIT_EXP_HETERO, E.SPLIT_EXP_CORR,
                  E.SPLIT_EXP_FULL, E.SPLIT_EXP_MEASURED):
            out[e] = {"value": NAN}
        out[E.SPLIT_CORR_SHARE] = {"value": NAN, "lo": NAN, "hi": NAN}
        out[E.VAR_EXP_TOY] = {"value": NAN, "lo": NAN, "hi": NAN}
        out[E.FLATTENING_TOY] = {"value": NAN, "lo": NAN, "hi": NAN}
        return out
    for step, exp_e, ref_e, shift_e in ((final, E.TRAINED_EXP_PRE_LN, E.TRAINED_REF_PRE_LN, E.TRAINED_FITSTART_SHIFT_PRE_LN),
                                        (0, E.INIT_EXP_TRAINEDRUNS_PRE_LN, E.INIT_REF_PRE_LN, E.INIT_FITSTART_SHIFT_PRE_LN)):
        fits = {km: training_analysis.exponent_fit(sweep, "pre_ln", L, step, km, excluded) for km in (2, 3, 4)}
        f = fits[2]
        out[exp_e] = {"value": f.interval.mean, "lo": f.interval.lo, "hi": f.interval.hi, "se": f.interval.se}
        out[ref_e] = {"value": f.reference}
        out[shift_e] = {"value": max(abs(fits[km].interval.mean - f.interval.mean) for km in (3, 4))}
    emb = training_analysis.exponent_fit(sweep, "pre_ln", L, final, 2, excluded).embedding_counted
    splits = [training_analysis.exponent_split(training_analysis.gram_at(r, final), training_analysis.omega_per_sequence(r, final).mean(0), emb) for r in cell]
    out[E.SPLIT_CORR_SHARE] = _iv([s["corr_share"] for s in splits], 0.95)
    for e, key in ((E.SPLIT_EXP_THEOREM, "exp_theorem"), (E.SPLIT_EXP_HETERO, "exp_hetero"),
                   (E.SPLIT_EXP_CORR, "exp_corr"), (E.SPLIT_EXP_FULL, "exp_full"),
                   (E.SPLIT_EXP_MEASURED, "exp_measured")):
        out[e] = {"value": float(np.mean([s[key] for s in splits]))}
    out[E.VAR_EXP_TOY] = _iv([training_analysis.block_variance_exponent(training_analysis.gram_at(r, final)) for r in cell], 1 - 0.05 / 3)
    out[E.FLATTENING_TOY] = _iv([training_analysis.flattening(np.diag(training_analysis.gram_at(r, final)), emb)
                                 for r in cell], 1 - 0.05 / 3)
    return out


#: the sweep files of the exploratory rounds (seeds 0-4: the ladder, then ResiDual's depth-24 rung,
#: trained after the registry that declared claim-depth-cost's gaps) and of the confirmatory
#: round (seeds 5-7, trained after the registry), under ``configs/``; one store, one recipe
EXPLORATORY_SWEEPS = ("train_long.toml", "resi_dual_L24.toml")
CONFIRMATORY_SWEEP = "confirm.toml"


def load_rounds(root) -> tuple:
    """(the exploratory rounds' runs, every round's runs) under the book's folder ``root``: the
    sweeps :data:`EXPLORATORY_SWEEPS` merged (:func:`training_analysis.merged`), and the same
    with :data:`CONFIRMATORY_SWEEP`. The chapters describe the first and cut the second into
    the seed sets of ``evidence.SEED_SETS`` (:func:`training_analysis.subset`)."""
    from pathlib import Path
    root = Path(root)
    exploratory = training_analysis.merged(*(training_analysis.StoredSweep.load(root / "configs" / f, root)
                                             for f in EXPLORATORY_SWEEPS))
    confirm = training_analysis.StoredSweep.load(root / "configs" / CONFIRMATORY_SWEEP, root)
    return exploratory, training_analysis.merged(exploratory, confirm)


def pending(sweep: training_analysis.StoredSweep) -> bool:
    """Whether ``sweep`` (one seed set) has no finished Pre-LN run at :data:`TRAINED_L` yet: a
    round that has not reached the depth every training claim reads (the confirmatory round
    before its runs land). Its statistics are then NaN (:func:`not_computed`): the data cannot
    tell yet. Any other sweep without those runs is refused, as the functions here say."""
    training_analysis.check_sweep(sweep)
    return not any(training_analysis.run_status(r) == "ok" for (a, L, _), r in sweep.runs.items()
                   if a == "pre_ln" and L == TRAINED_L)


def not_computed(evidence: Mapping) -> dict:
    """``evidence`` (``{Evidence: parts}``, as the functions here return) with every part NaN:
    the statistics of a seed set whose runs are :func:`pending`."""
    return {e: {k: NAN for k in parts} for e, parts in evidence.items()}


def _check_not_empty(sweep) -> None:
    training_analysis.check_sweep(sweep)
    if not sweep.runs:
        raise ValueError(f"sweep {sweep.name} (seeds {sweep.seeds}) holds no stored run: no evidence can be "
                         f"computed (was it loaded from the folder that holds its results/?)")


def _stored(sweep) -> str:
    cell = [r for s in sweep.seeds if (r := sweep.runs.get(("pre_ln", TRAINED_L, s))) is not None]
    return ("none of its seeds is stored there" if not cell else
            "stored: " + ", ".join(f"{r.name} {r.status}" for r in cell))


def _check_deep_runs(deep_runs) -> list:
    return [as_run(r, f"deep_runs[{i}]") for i, r in enumerate(
        check_items("deep_runs", deep_runs, (RunRecord, Mapping), "a stored run result (a RunRecord, or its dict)"))]


def depth_points(sweep: training_analysis.StoredSweep, deep_runs=()) -> list[tuple[int, float, str]]:
    """(depth, final loss, run name) of every finished Pre-LN run at depth >= :data:`DEPTH_MIN`
    trained at :data:`LADDER_LR`: the sweep's, then ``deep_runs`` (the stored RunRecords of deeper
    Pre-LN runs) whose seed is one of the sweep's."""
    training_analysis.check_sweep(sweep)
    deep_runs = _check_deep_runs(deep_runs)
    pts = []
    runs = [r for d in sweep.depths("pre_ln") if d >= DEPTH_MIN for r in sweep.cell("pre_ln", d)]
    runs += [r for r in deep_runs if r.seed in sweep.seeds and r.arch == "pre_ln"]
    for r in runs:
        if r.status == "ok" and math.isclose(r.config.lr, LADDER_LR) and r.n_layer >= DEPTH_MIN:
            pts.append((r.n_layer, training_analysis.final_loss(r), r.name))
    return pts


def cost_evidence(sweep: training_analysis.StoredSweep, deep_runs=()) -> dict:
    """Chapter 8's seed-set evidence on ``sweep`` (one seed set), every finished run: the
    later-half over earlier-half removal cost at L = :data:`TRAINED_L` (t interval over seeds of
    its log) and the theorem's ratio; the slope of the final loss on log2 depth over
    :func:`depth_points` (``deep_runs`` included) and the fixes' gaps at equal depths, each at
    1 - 0.05/4 (claim-depth-cost's family of four)."""
    from ..book.ledger import GAP_FIXES
    _check_not_empty(sweep)
    _check_deep_runs(deep_runs)
    out = {}
    final = sweep.measure_steps[-1]
    cell = [r for r in sweep.cell("pre_ln", TRAINED_L) if training_analysis.run_status(r) == "ok"]
    if not cell:
        raise ValueError(f"sweep {sweep.name} has no finished run of pre_ln at L = {TRAINED_L} "
                         f"({_stored(sweep)}): no removal cost to read, which is not too few seeds")
    logs = [math.log(training_analysis.half_ratio(depth_analysis.ablation(r)[0])) for r in cell]
    if len(logs) >= 3:
        iv = stats.t_interval(logs, 0.95)
        out[E.HALF_RATIO_TOY] = {"value": math.exp(iv.mean), "lo": math.exp(iv.lo), "hi": math.exp(iv.hi)}
    else:
        out[E.HALF_RATIO_TOY] = {"value": NAN, "lo": NAN, "hi": NAN}
    if cell:
        rho = float(np.mean([training_analysis.rho(training_analysis.gram_at(r, final)) for r in cell]))
        out[E.HALF_RATIO_REF_TOY] = {"value": training_analysis.theorem_half_ratio(TRAINED_L, training_analysis.convention(rho))}
    else:
        out[E.HALF_RATIO_REF_TOY] = {"value": NAN}
    level = 1 - 0.05 / 4
    pts = depth_points(sweep, deep_runs)
    if len(pts) >= 3 and len({p[0] for p in pts}) >= 2:
        sl = depth_analysis.depth_slope([p[0] for p in pts], [p[1] for p in pts], level)
        out[E.DEPTH_SLOPE_PRE_LN] = {"value": sl["slope"], "lo": sl["lo"], "hi": sl["hi"], "se": sl["se"]}
        out[E.DEPTH_SLOPE_DF] = {"value": float(sl["df"])}
    else:
        out[E.DEPTH_SLOPE_PRE_LN] = {"value": NAN, "lo": NAN, "hi": NAN, "se": NAN}
        out[E.DEPTH_SLOPE_DF] = {"value": NAN}
    for a in GAP_FIXES:
        _, iv = depth_analysis.equal_depth_gap(sweep, a, level=level)
        out[E.VAL_LOSS_GAP[a]] = ({"value": iv.mean, "lo": iv.lo, "hi": iv.hi} if iv is not None
                                  else {"value": NAN, "lo": NAN, "hi": NAN})
    out.update(resi_dual_gaps(sweep))
    return out


#: claim-depth-cost's family: the four gaps to ResiDual and their growth
GAP_LEVEL = 1 - 0.05 / 5


def _parts(iv) -> dict:
    return {"value": iv.mean, "lo": iv.lo, "hi": iv.hi} if iv is not None else {"value": NAN, "lo": NAN, "hi": NAN}


def resi_dual_gaps(sweep: training_analysis.StoredSweep) -> dict:
    """claim-depth-cost's evidence on ``sweep`` (one seed set, every finished run): Pre-LN's final
    loss minus ResiDual's at each depth of ``evidence.GAP_BY_DEPTH``, paired by seed
    (:func:`~resdecay_lib.analysis.depth_analysis.gaps_by_depth`), and the gap's growth per
    doubling over those depths (:func:`~resdecay_lib.analysis.depth_analysis.gap_growth`), each
    a t interval over seeds at :data:`GAP_LEVEL`; NaN where fewer than three seeds have both runs
    (a depth not yet trained, or a seed set without those runs)."""
    training_analysis.check_sweep(sweep)
    depths = sorted(E.GAP_BY_DEPTH)
    runs = sweep.runs
    shared = {L for a, L, _ in runs if a == "resi_dual"} & {L for a, L, _ in runs if a == "pre_ln"}
    by_depth = {g.depth: g.interval for g in depth_analysis.gaps_by_depth(runs, level=GAP_LEVEL)} if shared else {}
    out = {E.GAP_BY_DEPTH[L]: _parts(by_depth.get(L)) for L in depths}
    out[E.GAP_GROWTH] = _parts(depth_analysis.gap_growth(runs, depths, level=GAP_LEVEL))
    return out
