"""The cost of depth in the trained networks: the analysis Chapter 8 rests on.

The loss increase from removing block k (:func:`ablation`), its trend over k
(:func:`ablation_trend`: Spearman's rank correlation per seed, no selection on the
outcome), the validation loss against depth at a fixed number of steps or a fixed compute
(:func:`loss_at_flops`), paired steps up the depth ladder (:func:`ladder_steps`), the
ladder's best depth and the depths not worse than it (:func:`depth_ladder`), a fix's paired
gap to Pre-LN (:func:`paired_gap`) and the depth law L(l) = c l^-alpha + L_inf
(:func:`depth_law`). Over the deeper rungs (depths 48 and 96) the
depth slope (:func:`depth_slope`: the least-squares slope of the final loss on log2 depth,
nats/char per doubling, with a t interval) and the gap of each fix to Pre-LN at equal depth
(:func:`equal_depth_gap`). Where depth starts to cost accuracy: the gain per doubling rung by
rung (:func:`gain_per_doubling`), Pre-LN's paired gap to a fix at each depth
(:func:`gaps_by_depth`) and the depth from which that gap exceeds a margin (:func:`cost_onset`).

The runs come from :class:`resdecay_lib.analysis.training_analysis.StoredSweep`. Knows nothing of torch.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..checks import ArgumentTypeError, check_int, check_real
from ..stats import inference as stats
from ..stats.exponents import check_array
from .training_analysis import (StoredSweep, TooFewSeeds, check_cell, check_exclude, check_level, check_sweep,
                                final_loss, run_status)
from ..training.records import as_run

__all__ = ["ablation", "ablation_trend", "loss_at_flops", "ladder_steps", "depth_law", "depth_law_over_seeds",
           "ablation_halves", "DepthLadder", "depth_ladder", "paired_gap", "depth_slope", "equal_depth_gap",
           "gain_per_doubling", "DepthGap", "gaps_by_depth", "cost_onset", "gap_growth"]


def ablation(r) -> tuple[np.ndarray, np.ndarray]:
    """(delta_k, se_k), k = 1..L: the validation-loss increase from removing block k."""
    r = as_run(r)
    if r.final is None or r.final.ablation is None:
        raise ValueError(f"run {r.name}: final.ablation.delta is missing")
    return np.asarray(r.final.ablation.delta), np.asarray(r.final.ablation.delta_se)


def ablation_trend(sweep: StoredSweep, arch: str, L: int, exclude=(), level: float = 0.95):
    """Spearman's rank correlation of delta_k with k over k = 2..L, per seed, and its t
    interval over seeds, clipped to [-1, 1] (block 1, which reads the bare embedding, is
    reported apart); the interval is None with fewer than 3 seeds."""
    check_cell(sweep, arch, L)
    check_exclude(exclude)
    check_level(level)
    rhos = [stats.spearman(np.arange(2, L + 1), ablation(r)[0][1:])
            for r in sweep.cell(arch, L, exclude) if run_status(r) == "ok"]
    if len(rhos) < 3:
        return np.array(rhos), None
    iv = stats.t_interval(rhos, level)
    # a correlation lies in [-1, 1]: the t interval's ends are clipped there
    return np.array(rhos), stats.TInterval(iv.mean, max(iv.lo, -1.0), min(iv.hi, 1.0), iv.se, iv.t, iv.n, iv.level)


def loss_at_flops(r, flops: float) -> float:
    """The validation loss of run ``r`` after ``flops`` training FLOPs: its loss curve,
    interpolated linearly in log step between evaluations; NaN beyond the run's end."""
    r = as_run(r)
    if len(r.val_curve) < 2:
        raise ValueError(f"r (run {r.name}) must hold a loss curve of at least 2 evaluations")
    check_real("r.flops_per_step", r.flops_per_step, 0.0, lo_open=True)
    check_real("flops", flops, 0.0, lo_open=True)
    steps = np.array([p.step for p in r.val_curve], float)
    loss = np.array([np.nan if p.mean is None else p.mean for p in r.val_curve], float)   # null: diverged
    s = flops / r.flops_per_step
    if s > steps[-1] * (1 + 1e-9) or s < steps[1]:
        return float("nan")
    return float(np.interp(math.log(s), np.log(steps[1:]), loss[1:]))


def ladder_steps(losses: dict, level: float = 0.95) -> list:
    """Paired steps up a depth ladder. ``losses``: {depth: [loss per seed]} (seeds in one
    order: a seed sees the same batches at every depth, so the pairing is real).

    For each consecutive pair of depths, the per-seed change of the loss and its t
    interval at ``level`` (the caller corrects ``level`` for the number of steps):
    (l_from, l_to, TInterval).
    """
    if not isinstance(losses, Mapping) or len(losses) < 2:
        raise (ArgumentTypeError if not isinstance(losses, Mapping) else ValueError)(
            f"losses must be a dict {{depth: [loss per seed]}} of at least 2 depths, got "
            + (f"{len(losses)} depth(s)" if isinstance(losses, Mapping) else type(losses).__name__))
    n = set()
    for d, v in losses.items():
        check_int("losses' depths", d, 1)
        n.add(len(check_array(f"losses[{d}]", v, 1, min_len=3)))
    if len(n) > 1:
        raise ValueError(f"losses must hold one loss per seed, the same seeds at every depth; got "
                         f"{sorted(n)} values at different depths")
    check_level(level)
    ds = sorted(losses)
    out = []
    for a, b in zip(ds, ds[1:]):
        diff = np.asarray(losses[b], float) - np.asarray(losses[a], float)
        out.append((a, b, stats.t_interval(diff, level)))
    return out


def depth_law(depths, loss, alphas=np.geomspace(0.05, 5.0, 600)) -> dict:
    """Least squares of loss(l) = c l^-alpha + L_inf over ``depths``: for each alpha of the
    grid, (c, L_inf) is a linear fit; the alpha with the smallest residual is returned with
    c, L_inf and ``at_edge`` (True when it is the grid's end: the fit is not determined)."""
    d = check_array("depths", depths, 1, positive=True, min_len=3)
    if len(check_array("loss", loss, 1, min_len=3)) != len(d):
        raise ValueError(f"loss must hold one value per depth ({len(d)} depths), got {len(np.asarray(loss))}")
    check_array("alphas", alphas, 1, positive=True)
    l = np.asarray(depths, float)
    y = np.asarray(loss, float)
    best = None
    for al in alphas:
        X = np.stack([l ** -al, np.ones_like(l)], 1)
        coef, *_ = np.linalg.lstsq(X, y, rcond=None)
        res = float(((X @ coef - y) ** 2).sum())
        if best is None or res < best[0]:
            best = (res, float(al), float(coef[0]), float(coef[1]))
    _, al, c, linf = best
    return {"alpha": al, "c": c, "L_inf": linf,
            "at_edge": bool(al in (float(alphas[0]), float(alphas[-1])))}


def depth_law_over_seeds(losses: Mapping, level: float = 0.95) -> dict:
    """:func:`depth_law` fitted to each seed's losses over the ladder, alpha summarised over
    seeds.

    ``losses``: ``{depth: [loss of seed 0, seed 1, ...]}`` (:meth:`StoredSweep.losses`, every depth
    with the same seeds). Returns ``{"depths", "per_seed": [depth_law of each seed], "alpha":
    t interval of alpha over seeds at ``level``, "n_edge": fits at the alpha grid's edge,
    "L_inf": mean extrapolated loss}``. Needs 3 depths (three parameters) and 3 seeds.
    """
    if not isinstance(losses, Mapping):
        raise ArgumentTypeError(f"losses must be a dict {{depth: per-seed losses}}, got {type(losses).__name__}")
    check_level(level)
    depths = sorted(losses)
    if len(depths) < 3:
        raise ValueError(f"losses must cover at least 3 depths (c, alpha, L_inf), got {depths}")
    n = {len(losses[d]) for d in depths}
    if len(n) != 1 or min(n) < 3:
        raise TooFewSeeds(f"every depth needs the same >= 3 seeds, got {[len(losses[d]) for d in depths]}")
    per_seed = [depth_law(depths, [losses[d][i] for d in depths]) for i in range(n.pop())]
    return {"depths": depths, "per_seed": per_seed,
            "alpha": stats.t_interval([f["alpha"] for f in per_seed], level),
            "n_edge": sum(f["at_edge"] for f in per_seed),
            "L_inf": float(np.mean([f["L_inf"] for f in per_seed]))}


def ablation_halves(deltas) -> tuple[float, float]:
    """From the per-seed increases of removing each block, [S, L] (rows :func:`ablation`'s
    delta): the mean increase of block 1, and the mean increase of the later half (blocks
    L//2 + 1..L) over that of the earlier half without block 1 (blocks 2..L//2)."""
    d = check_array("deltas", deltas, 2)
    L = d.shape[1]
    if L < 4:
        raise ValueError(f"deltas must cover at least 4 blocks (two per half, block 1 apart), got {L}")
    half = L // 2
    return float(d[:, 0].mean()), float(d[:, half:].mean() / d[:, 1:half].mean())


@dataclass(frozen=True)
class DepthLadder:
    """The depth ladder read at one cut (fixed steps or fixed compute).

    ``steps``: :func:`ladder_steps` at ``level``; ``best``: the depth of lowest mean loss;
    ``not_worse``: the depths whose paired difference from ``best`` (over seeds) has a t
    interval at ``level`` reaching 0 or below (``best`` among them). Three readings
    (``reading``):

    * ``"stops paying"``: the top of the ladder is significantly worse than ``best``, an
      interior depth; ``stops`` = ``best``, [``lo``, ``hi``] the range of ``not_worse``;
    * ``"keeps paying"`` (``keeps_paying``): the top is ``best`` and every lower depth is
      significantly worse; ``stops`` = ``hi`` = inf, ``lo`` the top;
    * ``"not located"``: ``not_worse`` reaches the top but holds lower depths too, so the
      ladder shows neither; ``stops`` = ``best``, ``lo`` the smallest depth of the set,
      ``hi`` = inf (the depth where depth stops paying may lie beyond the ladder).

    Failing to show that depth stops paying is not shown to keep paying: that needs the top
    to beat every lower rung.
    """
    steps: list
    best: int
    not_worse: list
    level: float
    top: int

    @property
    def reaches_top(self) -> bool:
        return self.top in self.not_worse

    @property
    def keeps_paying(self) -> bool:
        return self.not_worse == [self.top]

    @property
    def reading(self) -> str:
        return ("keeps paying" if self.keeps_paying else "not located" if self.reaches_top
                else "stops paying")

    @property
    def stops(self) -> float:
        return math.inf if self.keeps_paying else float(self.best)

    @property
    def lo(self) -> float:
        return float(min(self.not_worse))

    @property
    def hi(self) -> float:
        return math.inf if self.reaches_top else float(max(self.not_worse))


def depth_ladder(losses: Mapping, alpha: float = 0.05) -> DepthLadder:
    """:class:`DepthLadder` of ``losses`` ({depth: [loss per seed]}, seeds paired, as
    :meth:`StoredSweep.losses` gives): each comparison at level 1 - alpha / (number of depths - 1)
    (Bonferroni over the comparisons with the best depth, and over the ladder's steps)."""
    check_real("alpha", alpha, 0, 1, lo_open=True, hi_open=True)
    if not isinstance(losses, Mapping) or len(losses) < 2:
        raise ValueError("losses must be a dict {depth: [loss per seed]} of at least 2 depths")
    ds = sorted(losses)
    level = 1 - stats.bonferroni(alpha, len(ds) - 1)
    steps = ladder_steps(losses, level=level)
    mean = {d: float(np.mean(losses[d])) for d in ds}
    best = min(mean, key=mean.get)
    not_worse = [d for d in ds if d == best or
                 stats.t_interval(np.asarray(losses[d]) - np.asarray(losses[best]), level).lo <= 0]
    return DepthLadder(steps, best, not_worse, level, ds[-1])


def paired_gap(sweep: StoredSweep, arch: str, against: str = "pre_ln", exclude=(), level: float = 0.95):
    """``arch``'s final validation loss minus ``against``'s, seed by seed, at the deepest depth
    both have with at least 3 kept seeds in common: ``(depth, TInterval)``, or ``None`` when no
    depth has 3 paired seeds (no interval over seeds can be made)."""
    check_sweep(sweep)
    sweep.check_arch(arch)
    sweep.check_arch(against, "against")
    check_exclude(exclude)
    check_level(level)
    shared = [L for L in sweep.depths(arch) if L in sweep.depths(against)
              and len(set(sweep.kept_by_seed(arch, L, exclude)) & set(sweep.kept_by_seed(against, L, exclude))) >= 3]
    if not shared:
        return None
    L = max(shared)
    a, b = sweep.kept_by_seed(arch, L, exclude), sweep.kept_by_seed(against, L, exclude)
    return L, stats.t_interval([a[s] - b[s] for s in sorted(set(a) & set(b))], level)


def depth_slope(depths, losses, level: float = 0.95) -> dict:
    """Least squares of the final loss on log2 of the depth over runs (one point a run):
    the slope (nats/char per doubling), its standard error, the degrees of freedom n - 2 and
    its t interval at ``level``. Negative when depth pays."""
    d = check_array("depths", depths, 1, positive=True, min_len=3)
    y = check_array("losses", losses, 1, min_len=3)
    if len(d) != len(y):
        raise ValueError(f"depths and losses must have one length, got {len(d)} and {len(y)}")
    if not np.all(np.isfinite(y)):
        raise ValueError("losses must be finite")
    check_level(level)
    x = np.log2(np.asarray(d, float))
    if np.ptp(x) == 0:
        raise ValueError("depths must hold at least two different depths")
    xc = x - x.mean()
    y = np.asarray(y, float)
    slope = float(xc @ (y - y.mean()) / (xc @ xc))
    res = y - y.mean() - slope * xc
    df = len(y) - 2
    if df < 1:
        raise ValueError("a slope's interval needs at least 3 runs")
    se = float(math.sqrt((res @ res) / df / (xc @ xc)))
    t = stats.t_quantile(1 - (1 - level) / 2, df)
    return {"slope": slope, "se": se, "df": df, "lo": slope - t * se, "hi": slope + t * se, "n": len(y),
            "level": level}


def equal_depth_gap(sweep: StoredSweep, arch: str, against: str = "pre_ln", min_depth: int = 8,
                    level: float = 0.95):
    """``arch``'s final loss minus ``against``'s over every depth >= ``min_depth`` both have,
    every finished run (no flags: a loss claim reads all runs): per seed the mean of the
    paired differences over those depths, and the t interval over the seeds present at all
    of them. Returns ``(depths, TInterval)``, or ``(depths, None)`` below 3 seeds (the
    documented "no interval", which :func:`resdecay_lib.analysis.training_claims.cost_evidence`
    glues as NaN: the data cannot tell). ``arch`` and ``against`` must be placements the sweep
    trained, ``min_depth`` an integer >= 1 that leaves at least one depth both have (else
    ValueError: no depth is not a gap of None)."""
    check_sweep(sweep)
    sweep.check_arch(arch)
    sweep.check_arch(against, "against")
    check_int("min_depth", min_depth, 1)
    check_level(level)
    depths = [L for L in sweep.depths(arch) if L >= min_depth and L in sweep.depths(against)]
    if not depths:
        raise ValueError(f"min_depth={min_depth} leaves no depth that both {arch} {sweep.depths(arch)} and "
                         f"{against} {sweep.depths(against)} have in sweep {sweep.name}")
    per_seed = []
    for s in sweep.seeds:
        pairs = [(sweep.runs.get((arch, L, s)), sweep.runs.get((against, L, s))) for L in depths]
        if depths and all(a is not None and b is not None for a, b in pairs):
            diffs = [final_loss(a) - final_loss(b) for a, b in pairs]
            if all(math.isfinite(x) for x in diffs):
                per_seed.append(float(np.mean(diffs)))
    return depths, (stats.t_interval(per_seed, level) if len(per_seed) >= 3 else None)


# ----------------------------------------------------------------------------- where depth starts to cost

def gain_per_doubling(losses: Mapping, level: float = 0.95) -> list:
    """The loss each rung of the depth ladder gains per doubling of depth, paired by seed.

    ``losses``: ``{depth: [final loss per seed]}`` (:meth:`StoredSweep.losses`; the same seeds,
    in one order, at every depth). For each consecutive pair of depths a < b, per seed

        g_s = (loss_s(a) - loss_s(b)) / log2(b / a)      (nats/char per doubling; > 0: depth pays)

    and its t interval over seeds at ``level`` (the caller corrects ``level`` for the number of
    rungs): a list of ``(a, b, TInterval)``. A straight line in log2 depth reads one slope for
    the whole ladder; this reads each rung, so a ladder that flattens shows where."""
    check_level(level)
    out = []
    for a, b, _ in ladder_steps(losses):                 # every check of ``losses``, once
        gain = (np.asarray(losses[a], float) - np.asarray(losses[b], float)) / math.log2(b / a)
        out.append((a, b, stats.t_interval(gain, level)))
    return out


@dataclass(frozen=True)
class DepthGap:
    """One depth's paired gap of Pre-LN (``against``) to a fix (``arch``): ``interval`` the t
    interval over the ``seeds`` both have of loss(against) - loss(arch) (> 0: Pre-LN is worse),
    None with fewer than 3 such seeds (no interval over seeds can be made)."""
    depth: int
    seeds: tuple
    interval: stats.TInterval | None


def gaps_by_depth(runs: Mapping, arch: str = "resi_dual", against: str = "pre_ln", level: float = 0.95) -> list:
    """Pre-LN's gap to a fix at each depth both were trained at, paired by seed.

    ``runs``: ``{(placement, depth, seed): result}`` (a :class:`StoredSweep`'s ``runs``, or
    several merged: the depths and seeds need not come from one sweep file). At each depth L
    with runs of both ``arch`` and ``against``, over the seeds s whose two runs both finished
    (every finished run: a loss claim reads all runs)

        gap_s(L) = final_loss(against, L, s) - final_loss(arch, L, s)     (nats/char)

    and its t interval at ``level`` (:class:`DepthGap`, depths ascending; the caller corrects
    ``level`` for the number of depths). A positive gap is what "the decay costs accuracy" means
    at that depth, if the fix removes the decay and nothing else that matters."""
    if not isinstance(runs, Mapping):
        raise ArgumentTypeError(f"runs must be a dict {{(placement, depth, seed): result}}, got {type(runs).__name__}")
    for key in runs:
        if not (isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], str)):
            raise ValueError(f"runs must be keyed by (placement, depth, seed), got the key {key!r}")
    if arch == against:
        raise ValueError(f"arch and against must be two placements, got {arch!r} twice")
    check_level(level)
    depths = sorted({L for a, L, _ in runs if a == arch} & {L for a, L, _ in runs if a == against})
    if not depths:
        have = sorted({a for a, _, _ in runs})
        raise ValueError(f"runs hold no depth with both {arch} and {against} (placements: {have})")
    out = []
    for L in depths:
        paired = {}
        for (a, d, s), r in runs.items():
            if d == L and a in (arch, against) and run_status(r) == "ok":
                paired.setdefault(s, {})[a] = final_loss(r)
        seeds = tuple(sorted(s for s, v in paired.items() if len(v) == 2))
        diff = [paired[s][against] - paired[s][arch] for s in seeds]
        out.append(DepthGap(L, seeds, stats.t_interval(diff, level) if len(seeds) >= 3 else None))
    return out


def _paired_losses(runs: Mapping, arch: str, against: str) -> dict:
    """``{depth: {seed: {placement: final loss}}}`` of the finished runs of ``arch`` and ``against``."""
    out = {}
    for (a, d, s), r in runs.items():
        if a in (arch, against) and run_status(r) == "ok":
            out.setdefault(d, {}).setdefault(s, {})[a] = final_loss(r)
    return out


def gap_growth(runs: Mapping, depths, arch: str = "resi_dual", against: str = "pre_ln", level: float = 0.95):
    """How Pre-LN's gap to a fix grows with depth, paired by seed.

    ``runs`` as in :func:`gaps_by_depth`; ``depths`` (at least two). Over the seeds s with a
    finished run of both placements at every one of ``depths``, per seed the least-squares slope

        b_s = slope of gap_s(L) = final_loss(against, L, s) - final_loss(arch, L, s) on log2 L

    (nats/char per doubling of depth; > 0: the gap widens with depth, which is what the decay's
    cost growing with depth would show), and its t interval over seeds at ``level``; None with
    fewer than 3 such seeds."""
    if not isinstance(runs, Mapping):
        raise ArgumentTypeError(f"runs must be a dict {{(placement, depth, seed): result}}, got {type(runs).__name__}")
    ds = sorted(check_int("depths[]", d, 1) for d in depths)
    if len(set(ds)) < 2:
        raise ValueError(f"depths must hold at least two distinct depths, got {depths!r}")
    check_level(level)
    paired = _paired_losses(runs, arch, against)
    seeds = sorted(set.intersection(*(set(s for s, v in paired.get(L, {}).items() if len(v) == 2) for L in ds)))
    if len(seeds) < 3:
        return None
    x = np.log2(ds)
    xc = x - x.mean()
    slopes = [float(np.dot(xc, [paired[L][s][against] - paired[L][s][arch] for L in ds]) / np.dot(xc, xc))
              for s in seeds]
    return stats.t_interval(slopes, level)


def cost_onset(gaps, margin: float) -> stats.Onset:
    """The depth at which the decay starts to cost accuracy, from :func:`gaps_by_depth`: the
    smallest depth from which Pre-LN's gap to the fix lies wholly above ``margin`` (nats/char)
    at it and every deeper depth, or why none can be named
    (:func:`resdecay_lib.stats.inference.onset`, the ledger's reading; a depth without an
    interval is undecided)."""
    if not isinstance(gaps, (list, tuple)) or not gaps or not all(isinstance(g, DepthGap) for g in gaps):
        raise ArgumentTypeError(f"gaps must be gaps_by_depth's non-empty list of DepthGap, got {gaps!r}")
    check_real("margin", margin, 0.0, lo_open=True)
    nan = float("nan")
    return stats.onset([g.depth for g in gaps], [g.interval.lo if g.interval else nan for g in gaps],
                       [g.interval.hi if g.interval else nan for g in gaps], margin)
