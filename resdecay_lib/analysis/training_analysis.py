"""Reading the stored training sweep, and the analysis Chapter 7 rests on.

Loading: :class:`StoredSweep` reads every stored run of a sweep file (``results/<out>/*.json``),
keyed by (placement, depth, seed), and says which are missing.

Flags (:func:`flag_runs`): a run is excluded from every fit, with its reason printed by
the chapters, when it *diverged* (a non-finite loss, or a final validation loss above its
loss at step 0), did *not converge* (:func:`resdecay_lib.training.runs.convergence`), or is an
*outlier*: its final validation loss lies more than :data:`OUTLIER_Z` scales from the mean
of its other seeds, the scale being the larger of their standard deviation and the median
seed-to-seed standard deviation over all cells (two seeds alone estimate a spread badly).

Exponents: per seed, the least-squares slope of log of the mean (over sequences) change
omega_k^2 on log k over k_min <= k <= L (:func:`seed_exponents`); over seeds, a t interval
(:func:`resdecay_lib.stats.inference.t_interval`; 3 seeds give 2 degrees of freedom). Before an
exponent summarises a curve, :func:`curvature` fits log omega^2 = a + b log k + q (log k)^2
per seed and reports the drift of the local slope over the fit range, 2 q (log L - log
k_min), with its t interval: a *power law* when that interval lies inside
+-:data:`DRIFT_MARGIN`, *bent* when it excludes 0, else *undetermined*.

Reference exponents (:func:`reference_exponent`) are the slope of the theorem's exact
curve over the same k range, in the convention the measured embedding-to-block variance
ratio rho (:func:`rho`) chooses (:func:`convention`), never a bare -1.

Chapter 8's cost of depth (ablations, the depth ladder and law, the depth slope, the gaps at
equal depth) is :mod:`resdecay_lib.analysis.depth_analysis`.

Knows nothing of torch.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..stats import inference as stats
from ..maths import theory
from ..checks import ArgumentTypeError, check_int, check_real, show
from ..nn.config import ARCH_NAMES
from ..stats.fit import loglog_slope
from ..stats.exponents import check_array as _check_array
from ..stats.exponents import check_bool as _check_bool
from ..stats.exponents import check_gram as _check_gram
from ..stats.exponents import convention, half_ratio, halves, reference_exponent, rho  # noqa: F401 (the chapters' R.rho, R.half_ratio)
from ..stats.exponents import FRONT_BLOCKS, TAIL_BLOCKS, Exponent
from ..training.records import RunRecord, as_run
from ..training.store import load_run, load_sweep, result_path, run_id, sweep_runs
from ..training.runs import part_read

__all__ = ["OUTLIER_Z", "DRIFT_MARGIN", "StoredSweep", "choose_lr", "choose_lr_two_stage",
           "flag_runs", "final_loss", "at_step", "measured", "omega_per_sequence", "gram_at", "rho",
           "convention", "reference_exponent", "curve_exponent", "seed_exponents", "SETTLE_STEPS", "SETTLE_ALPHA", "exponent_path", "Settling", "settling",
           "curvature", "rc_from_gram", "predictions", "prediction_log_errors", "departure",
           "correlation", "error_shares", "check_sweep", "check_cell", "check_exclude", "check_level", "run_status",
           "mean_abs_block_corr", "TooFewSeeds", "exponent_fit", "compare_exponents"]

#: a run whose final loss lies more than this many scales from its other seeds is an outlier
OUTLIER_Z = 3.0
#: a curve is a power law over its fit range when the local slope drifts by less than this
#: (in exponent units) from one end of the range to the other, with 95% confidence: a tenth
#: of the theorem's exponent, -1, either way would already be visible in every table, so
#: twice that is the loosest margin that still calls a curve straight
DRIFT_MARGIN = 0.2

#: the stream each placement's blocks read: ResiDual's Post-LN stream x_a
def part_of(arch: str) -> str:
    """The part of a stored run's measurement that holds the stream the blocks read
    (:func:`resdecay_lib.training.runs.part_read`, the one rule: ``"post_ln"`` for a
    two-stream placement, ResiDual's x_a, else ``"stream"``)."""
    return part_read(arch)


# ----------------------------------------------------------------------------- argument checks
# (entry checks only: they reject bad input with a message naming the parameter and leave
# every computation on valid input as it was)

def check_sweep(sweep, name="sweep"):
    if not isinstance(sweep, StoredSweep):
        raise ArgumentTypeError(f"{name} must be a training_analysis.StoredSweep (StoredSweep.load(...)), got {type(sweep).__name__}")


def check_cell(sweep, arch, L, name="sweep"):
    check_sweep(sweep, name)
    if not isinstance(arch, str) or arch not in sweep.archs:
        raise ValueError(f"arch must be one of the {name}'s placements {sweep.archs}, got {arch!r}")
    check_int("L", L, 1)
    if L not in sweep.depths(arch):
        raise ValueError(f"L must be one of the depths {sweep.depths(arch)} of {arch} in the {name}, got {L}")


def check_exclude(exclude):
    if isinstance(exclude, (str, bytes)) or not hasattr(exclude, "__contains__"):
        raise ArgumentTypeError(f"exclude must be a collection of run names (a set, list or dict), "
                        f"got {type(exclude).__name__} {exclude!r}")


def check_level(level):
    check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)


def _sweep_name(sweep) -> str:
    spec = sweep.spec if isinstance(sweep.spec, Mapping) else {}
    return str(spec.get("out", "?"))


@dataclass
class StoredSweep:
    """Stored runs of one sweep file: ``runs[(arch, depth, seed)]`` -> its
    :class:`~resdecay_lib.training.records.RunRecord` (a dict given here is read as one). (What a sweep
    file asks for is a ``training.store.SweepSpec``; ``training.sweep`` runs it; this is what it
    left under ``results/``.)"""
    spec: dict
    runs: dict
    missing: list = field(default_factory=list)

    def __post_init__(self):
        self.runs = {k: as_run(r, f"runs[{k!r}]") for k, r in self.runs.items()}

    @classmethod
    def load(cls, spec_or_path, root=".") -> "StoredSweep":
        spec = load_sweep(spec_or_path)
        runs, missing = {}, []
        for cfg in sweep_runs(spec):
            p = result_path(spec, cfg, root)
            if p.exists():
                runs[(cfg.arch, cfg.n_layer, cfg.seed)] = load_run(p)
            else:
                missing.append(run_id(spec, cfg))
        return cls(spec, runs, missing)

    @property
    def archs(self) -> list:
        return list(self.spec["archs"])

    @property
    def name(self) -> str:
        """The sweep's output folder name (its ``out``), for messages."""
        return _sweep_name(self)

    def check_arch(self, arch, name: str = "arch") -> str:
        """``arch`` if it is a placement of the registry (:data:`resdecay_lib.nn.config.ARCH_NAMES`)
        that this sweep trained; :class:`ArgumentTypeError` for a non-str, ValueError listing
        the valid names otherwise (a typo is not a placement without runs). ``name``: the
        parameter the messages name."""
        if not isinstance(arch, str):
            raise ArgumentTypeError(f"{name} must be one of {sorted(ARCH_NAMES)} (a placement's name), got "
                                    f"{type(arch).__name__} {show(arch)}")
        if arch not in ARCH_NAMES:
            raise ValueError(f"{name} must be one of {sorted(ARCH_NAMES)}, got {arch!r}")
        if arch not in self.spec["archs"]:
            raise ValueError(f"{name} {arch!r} was not trained in sweep {self.name}: this sweep's placements "
                             f"{sorted(self.archs)}")
        return arch

    def check_depth(self, arch, L) -> int:
        """``L`` if it is an integer on the sweep's grid of depths for ``arch``:
        :class:`ArgumentTypeError` for a non-integer (a float, a str, a bool), ValueError
        listing the grid for an integer off it."""
        self.check_arch(arch)
        check_int("L", L, 1)
        grid = self.depths(arch)
        if L not in grid:
            raise ValueError(f"L must be one of the depths {grid} of {arch} in sweep {self.name}, got {L}")
        return L

    def depths(self, arch: str) -> list:
        self.check_arch(arch)
        return sorted(self.spec["depths"][arch])

    @property
    def seeds(self) -> list:
        return list(self.spec["seeds"])

    @property
    def measure_steps(self) -> list:
        return list(self.spec["plan"]["measure_steps"])

    def cell(self, arch: str, L: int, exclude=()) -> list:
        """The stored runs of (arch, L), seed order, without the names in ``exclude``; ``[]``
        when none of the cell is stored. ``arch`` must be a placement the sweep trained and
        ``L`` one of its depths (:meth:`check_depth`): a typo raises instead of reading as a
        cell whose runs are missing."""
        self.check_depth(arch, L)
        check_exclude(exclude)
        return [self.runs[(arch, L, s)] for s in self.seeds
                if (arch, L, s) in self.runs and self.runs[(arch, L, s)].name not in exclude]

    def complete(self, arch: str, L: int) -> bool:
        """Whether every seed of (arch, L) is stored (``arch``, ``L`` checked as by :meth:`cell`)."""
        self.check_depth(arch, L)
        return all((arch, L, s) in self.runs for s in self.seeds)

    def deepest(self, arch: str, exclude=(), min_seeds: int = 3, min_depth: int = 4):
        """The deepest depth of ``arch`` with at least ``min_seeds`` finished runs not named
        in ``exclude``, among depths >= ``min_depth`` (a fit over k = 2..L, or a rank trend
        over it, needs L >= 4: three blocks); None if there is none. Flags are decided
        before any fit, so this selects nothing on a fit's outcome."""
        check_int("min_seeds", min_seeds, 1)
        check_int("min_depth", min_depth, 1)
        ok = [L for L in self.depths(arch) if L >= min_depth
              and sum(r.status == "ok" for r in self.cell(arch, L, exclude)) >= min_seeds]
        return max(ok, default=None)

    def losses(self, arch: str, fn, exclude=()) -> dict:
        """``{depth: [fn(run) per seed]}`` over the depths whose cell is complete, holds no
        run named in ``exclude`` and gives a finite ``fn`` for every seed (seed order, so
        the seeds pair across depths): the rungs of the depth ladder."""
        check_exclude(exclude)
        out = {}
        for L in self.depths(arch):
            cell = self.cell(arch, L)
            if len(cell) == len(self.seeds) and not any(r.name in exclude for r in cell):
                v = [fn(r) for r in cell]
                if all(math.isfinite(x) for x in v):
                    out[L] = v
        return out

    def kept_by_seed(self, arch: str, L: int, exclude=(), fn=None) -> dict:
        """``{seed: fn(run)}`` over the kept runs of (arch, L); ``fn`` defaults to
        :func:`final_loss`."""
        fn = final_loss if fn is None else fn
        return {r.seed: fn(r) for r in self.cell(arch, L, exclude)}


def choose_lr(pilot_spec, root=".") -> dict:
    """Per placement, the pilot's learning rate with the lowest final validation loss.

    Runs that diverged are not candidates. Returns ``{arch: {"lr": best, "losses": {lr:
    final loss or None}}}``.
    """
    spec = load_sweep(pilot_spec)
    out = {}
    for a in spec["archs"]:
        losses = {}
        for cfg in sweep_runs(spec):
            p = result_path(spec, cfg, root)
            if cfg.arch != a or not p.exists():
                continue
            r = load_run(p)
            ok = r.status == "ok" and not r.convergence.diverged      # a finished run holds its verdict
            losses[cfg.lr] = r.final.val_loss.mean if ok else None
        cands = {lr: v for lr, v in losses.items() if v is not None and math.isfinite(v)}
        if not cands:
            raise ValueError(f"the pilot has no finished, non-diverged run of {a}")
        out[a] = {"lr": min(cands, key=cands.get), "losses": dict(sorted(losses.items()))}
    return out


def choose_lr_two_stage(short_pilot, long_pilot, root=".") -> dict:
    """The sweep's rates from two pilots: a short one over every placement, and a second one,
    at the sweep's own budget, for the placements whose short-pilot choice is the top rate of
    its grid (nothing above it brackets the choice, and a short pilot favours fast early
    progress).

    The rule, stated when configs/train_long_pilot_peri.toml was made (after the 0.096 Peri-LN
    run of the long sweep had plateaued): such a placement takes the long pilot's choice when
    the long pilot covers it; every other placement keeps the short pilot's. Returns
    ``{arch: {"lr", "losses", "stage": "short" | "long", "short": the short pilot's entry}}``.
    """
    short = choose_lr(short_pilot, root)
    long_ = choose_lr(long_pilot, root)
    out = {}
    for a, c in short.items():
        at_top = c["lr"] == max(c["losses"])
        if at_top and a in long_:
            out[a] = {**long_[a], "stage": "long", "short": c}
        else:
            out[a] = {**c, "stage": "short", "short": c}
    return out


# ----------------------------------------------------------------------------- flags

def run_status(r) -> str:
    """The status of a stored run result, one of
    :data:`~resdecay_lib.training.records.RESULT_STATUSES` (read and checked by
    :class:`~resdecay_lib.training.records.RunRecord`)."""
    return as_run(r).status


def final_loss(r) -> float:
    """Final validation loss (nats/char); NaN for a run that did not finish (its status is not
    "ok": the documented "no loss", which every fit and flag reads as such). A finished run's
    ``final.val_loss.mean`` is a finite number, checked where the record is read."""
    r = as_run(r)
    return float(r.final.val_loss.mean) if r.status == "ok" else float("nan")


def _convergence(r: RunRecord):
    """The run's convergence verdict; ValueError naming the run and the field when it has none."""
    if r.convergence is None:
        raise ValueError(f"run {r.name}: convergence.diverged is missing (a stored result holds "
                         f"its convergence verdict)")
    return r.convergence


def flag_runs(sweep: StoredSweep, z: float = OUTLIER_Z) -> dict:
    """{run name: [reasons]} for every run to exclude from fits (see the module docstring)."""
    check_sweep(sweep)
    check_real("z", z, 0.0, lo_open=True)
    flags: dict = {}
    sds = []
    for a in sweep.archs:
        for L in sweep.depths(a):
            v = [final_loss(r) for r in sweep.cell(a, L)]
            v = [x for x in v if math.isfinite(x)]
            if len(v) >= 2:
                sds.append(float(np.std(v, ddof=1)))
    floor = float(np.median(sds)) if sds else 0.0
    for a in sweep.archs:
        for L in sweep.depths(a):
            cell = sweep.cell(a, L)
            for r in cell:
                why = []
                status = r.status
                if status != "ok" or _convergence(r).diverged:
                    why.append("diverged" + (f" (non-finite loss at step {r.failed_step})"
                                             if status == "non_finite" else ""))
                else:
                    if not r.convergence.met:
                        why.append(f"not converged (last-fifth improvement "
                                   f"{r.convergence.improvement:.1%})")
                    others = [final_loss(o) for o in cell if o is not r]
                    others = [x for x in others if math.isfinite(x)]
                    if len(others) >= 2:
                        scale = max(float(np.std(others, ddof=1)), floor)
                        dev = abs(final_loss(r) - float(np.mean(others)))
                        if scale > 0 and dev > z * scale:
                            why.append(f"outlier ({dev / scale:.1f} scales from its other seeds)")
                if why:
                    flags[r.name] = why
    return flags


# ----------------------------------------------------------------------------- curves

def at_step(r, step: int):
    """The checkpoint of run ``r`` at ``step`` (a :class:`~resdecay_lib.training.records.Checkpoint`:
    its measure and validation loss)."""
    r = as_run(r)
    check_int("step", step, 0)
    return r.at_step(step)


def omega_per_sequence(r, step: int) -> np.ndarray:
    """[n_sequences, L] per-sequence omega_k^2 of the stream the blocks read, at ``step``."""
    return _stored_array(as_run(r), step, "omega_sq_per_sequence", ndim=2)


def gram_at(r, step: int) -> np.ndarray:
    """[L+1, L+1] Gram matrix of the summands (embedding, block outputs) stored in run ``r`` at
    ``step`` (measured there by :func:`resdecay_lib.nn.probe.gram`, which computes one from a stream)."""
    return _stored_array(as_run(r), step, "gram", ndim=2, square=True)


def measured(r, step: int):
    """The :class:`~resdecay_lib.training.records.StreamMeasure` of the stream the blocks read
    (:func:`part_of`) at ``step``; ValueError naming the run and the field when it is not there."""
    r = as_run(r)
    c, part = at_step(r, step), part_of(r.arch)
    if c.measure is None or part not in c.measure:
        raise ValueError(f"run {r.name}: checkpoints[step={step}].measure.{part} is missing")
    return c.measure[part]


def _stored_array(r: RunRecord, step, key, ndim, square=False) -> np.ndarray:
    """A stored array of run ``r`` at ``step`` as float64, checked where it is read: a
    rectangular array of ``ndim`` dimensions of finite numbers (JSON stores a non-finite value
    as null), else ValueError naming the run and the field. The stored runs all pass."""
    field_name = f"checkpoints[step={step}].measure.{part_of(r.arch)}.{key}"
    m = measured(r, step)
    raw = getattr(m, key) if key in ("gram", "omega_sq_per_sequence") else m.metrics.get(key)
    if raw is None:
        raise ValueError(f"run {r.name}: {field_name} is missing")
    try:
        a = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"run {r.name}: {field_name} must be a rectangular array of numbers, "
                         f"got {show(raw)}") from None
    if a.ndim != ndim or a.size == 0 or (square and a.shape[0] != a.shape[1]):
        raise ValueError(f"run {r.name}: {field_name} must be a non-empty "
                         f"{'square ' if square else ''}{ndim}-D array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"run {r.name}: {field_name} holds NaN, an infinity or a null")
    return a


def curve_exponent(y, k_min: int) -> float:
    """Slope of log y_k on log k for k = k_min..len(y) (y indexed from k = 1)."""
    n = len(_check_array("y", y, 1, positive=True, min_len=2))
    check_int("k_min", k_min, 1, n - 1)
    y = np.asarray(y, float)
    k = np.arange(1, len(y) + 1)
    return loglog_slope(k[k_min - 1:], y[k_min - 1:])[0]


def seed_exponents(sweep: StoredSweep, arch: str, L: int, step: int, k_min: int = 2,
                   exclude=()) -> np.ndarray:
    """Per stored seed (excluded runs left out), the exponent of the mean omega_k^2 curve."""
    check_cell(sweep, arch, L)
    check_int("step", step, 0)
    check_int("k_min", k_min, 1, max(L - 1, 1))
    check_exclude(exclude)
    return np.array([curve_exponent(omega_per_sequence(r, step).mean(0), k_min)
                     for r in sweep.cell(arch, L, exclude) if run_status(r) == "ok"])


def _check_steps(sweep, steps, n):
    """``steps``: a list or tuple of steps the sweep measures, at least one (``n`` = 1) or two."""
    if not isinstance(steps, (tuple, list)) or not all(isinstance(s, int) and not isinstance(s, bool) for s in steps):
        raise ArgumentTypeError(f"steps must be a list of integer steps, got {steps!r}")
    if (len(steps) < 1 if n == 1 else len(steps) != n) or any(s not in sweep.measure_steps for s in steps):
        raise ValueError(f"steps must be {'steps' if n == 1 else 'two steps'} the sweep measures "
                         f"({list(sweep.measure_steps)}), got {steps!r}")


#: the settling test of the 10,800-step runs, declared before any of their measurements
#: at these steps was read: the exponent's change between these two steps of the same run
SETTLE_STEPS = (6000, 10800)
#: its level: TOST at this alpha for "settled", a (1 - alpha) interval for "rising"/"falling"
SETTLE_ALPHA = 0.05


def exponent_path(sweep: StoredSweep, arch: str, L: int, steps=None, k_min: int = 2,
                  level: float = 0.95) -> dict:
    """The exponent through training: ``{step: TInterval}`` over the stored seeds of one cell at
    every measured step (``steps``, default the sweep's) where at least 3 runs are stored; each
    seed's value is :func:`seed_exponents`'s (slope of log mean omega_k^2 on log k, k_min..L)."""
    check_cell(sweep, arch, L)
    check_level(level)
    steps = sweep.measure_steps if steps is None else steps
    _check_steps(sweep, steps, 1)
    out = {}
    for st in steps:
        v = seed_exponents(sweep, arch, L, st, k_min)
        if len(v) >= 3:
            out[int(st)] = stats.t_interval(v, level)
    return out


@dataclass(frozen=True)
class Settling:
    """Whether a cell's exponent settles late in training (:func:`settling`).

    ``change``: the t interval over runs of the paired change of each run's exponent from
    ``steps[0]`` to ``steps[1]`` at (1 - 2 alpha) (the TOST reading); ``margin``: the
    between-seed standard deviation of the exponent at the end of the reference schedule;
    ``verdict``: "settled", "rising", "falling" or "undetermined"; ``end_diff``: the mean
    exponent at ``steps[1]`` minus the reference runs' at their last step, ``end_lo``,
    ``end_hi`` its Welch (1 - alpha) interval."""
    steps: tuple
    change: stats.TInterval
    margin: float
    verdict: str
    end_lo: float
    end_hi: float
    end_diff: float
    alpha: float


def settling(sweep: StoredSweep, reference: StoredSweep, arch: str, L: int, k_min: int = 2,
             steps=SETTLE_STEPS, alpha: float = SETTLE_ALPHA) -> Settling:
    """Does the exponent of a longer schedule (``sweep``) settle? Declared before the data.

    Statistic: per run, d = b(steps[1]) - b(steps[0]), the change of its exponent
    (:func:`seed_exponents`, k_min..L) between two late steps of the same run (paired, so the
    seed-to-seed spread cancels). Margin: the between-seed standard deviation of the exponent
    at the last measured step of ``reference`` (the shorter schedule, every stored seed): a
    change smaller than seeds differ by at the end of training is not one a run resolves.
    Rule: "settled" when the (1 - 2 alpha) t interval of d lies inside +-margin (TOST at
    alpha); otherwise "rising" or "falling" when the (1 - alpha) interval excludes 0 on that
    side; otherwise "undetermined". Beside it, end of schedule against end of schedule: the
    Welch (1 - alpha) interval of b(steps[1]) of ``sweep`` minus b(last step) of ``reference``.
    """
    from scipy.stats import ttest_ind
    check_cell(sweep, arch, L)
    check_cell(reference, arch, L, "reference")
    check_real("alpha", alpha, 0.0, 0.5, lo_open=True, hi_open=True)
    _check_steps(sweep, steps, 2)
    if steps[0] >= steps[1]:
        raise ValueError(f"steps must be two increasing steps, got {steps!r}")
    a, b = (seed_exponents(sweep, arch, L, s, k_min) for s in steps)
    if len(b) < 3:
        raise TooFewSeeds(f"settling needs 3 or more stored runs of {arch} at L={L}, got {len(b)}")
    ref = seed_exponents(reference, arch, L, max(reference.measure_steps), k_min)
    if len(ref) < 3:
        raise TooFewSeeds(f"settling needs 3 or more reference runs of {arch} at L={L}, got {len(ref)}")
    margin = float(np.std(ref, ddof=1))
    d = b - a
    tost = stats.t_interval(d, 1 - 2 * alpha)
    two_sided = stats.t_interval(d, 1 - alpha)
    if stats.within_margin(tost.lo, tost.hi, 0.0, margin):
        verdict = "settled"
    elif two_sided.lo > 0:
        verdict = "rising"
    elif two_sided.hi < 0:
        verdict = "falling"
    else:
        verdict = "undetermined"
    ci = ttest_ind(b, ref, equal_var=False).confidence_interval(1 - alpha)
    return Settling(tuple(steps), tost, margin, verdict, float(ci.low), float(ci.high),
                    float(b.mean() - ref.mean()), alpha)


def curvature(curves, k_min: int, level: float = 0.95) -> dict:
    """Is each curve a power law over k_min..L? ``curves``: [seeds, L] mean omega_k^2 per seed.

    Per seed, least squares of log y = a + b u + q u^2 (u = log k); the drift of the local
    slope over the range is 2 q (u_max - u_min). Returns the drift's t interval and the
    shape: "power law" (interval inside +-DRIFT_MARGIN), "bent" (excludes 0), or
    "undetermined".
    """
    c = _check_array("curves", curves, 2, positive=True)
    if c.shape[0] < 3:
        raise ValueError(f"curves must hold at least 3 seeds (rows) for a t interval, got shape {c.shape}")
    check_int("k_min", k_min, 1, c.shape[1] - 2)  # a quadratic needs three points
    check_level(level)
    Y = np.log(np.asarray(curves, float))
    L = Y.shape[1]
    u = np.log(np.arange(k_min, L + 1))
    X = np.stack([np.ones_like(u), u, u * u], 1)
    coef = np.linalg.lstsq(X, Y[:, k_min - 1:].T, rcond=None)[0]        # (3, seeds)
    drift = 2 * coef[2] * (u[-1] - u[0])
    iv = stats.t_interval(drift, level)
    if -DRIFT_MARGIN <= iv.lo and iv.hi <= DRIFT_MARGIN:
        shape = "power law"
    elif iv.lo > 0 or iv.hi < 0:
        shape = "bent"
    else:
        shape = "undetermined"
    return {"drift": iv, "shape": shape}


# ----------------------------------------------------------------------------- independence

def rc_from_gram(G):
    """Stream-level r_k = sqrt(F_k / V_k) and c_k = C_k / sqrt(V_k F_k), k = 1..L.

    V_k = sum_{i,j<k} G_ij (the stream entering block k), F_k = G_kk, C_k = sum_{i<k} G_ik.
    """
    _check_gram(G)
    G = np.asarray(G, float)
    L = len(G) - 1
    V = np.array([G[:k, :k].sum() for k in range(1, L + 1)])
    F = np.diag(G)[1:]
    C = np.array([G[:k, k].sum() for k in range(1, L + 1)])
    return np.sqrt(F / V), np.clip(C / np.sqrt(V * F), -1, 1)


def predictions(G, embedding_counted: bool = True) -> dict:
    """Three predictions of omega_k^2, k = 1..L, from the Gram matrix of the summands.

    ``theorem``: equal variances, independent (the exact curve in the given convention);
    ``hetero``: the measured variances, still independent (theory.omega_sq_hetero of the
    diagonal); ``rc``: variances and correlations (theory.change_sq_rc of :func:`rc_from_gram`).
    In the seed convention block 1's theorem value is undefined (NaN).
    """
    _check_gram(G)
    _check_bool("embedding_counted", embedding_counted)
    G = np.asarray(G, float)
    L = len(G) - 1
    theo = np.array([float(theory.omega_sq(k, embedding_counted=True)) if embedding_counted
                     else (float(theory.omega_sq(k)) if k >= 2 else float("nan"))
                     for k in range(1, L + 1)])
    r, c = rc_from_gram(G)
    return {"theorem": theo, "hetero": np.asarray(theory.omega_sq_hetero(np.diag(G))),
            "rc": np.asarray(theory.change_sq_rc(r, c), float)}


def prediction_log_errors(G, measured, k_min: int = 2, embedding_counted: bool = True) -> dict:
    """Mean over k = k_min..L of |log(pred / measured)| for each prediction."""
    L = len(_check_gram(G)) - 1
    m = _check_array("measured", measured, 1, positive=True)
    if len(m) != L:
        raise ValueError(f"measured must hold omega_k^2 for k = 1..L = {L} (the Gram matrix's blocks), "
                         f"got {len(m)} values")
    check_int("k_min", k_min, 1, L)
    _check_bool("embedding_counted", embedding_counted)
    m = np.asarray(measured, float)[k_min - 1:]
    return {n: float(np.mean(np.abs(np.log(p[k_min - 1:] / m))))
            for n, p in predictions(G, embedding_counted).items()}


def mean_abs_block_corr(G) -> float:
    """Mean |correlation| between different block outputs u_1..u_L (embedding excluded)."""
    _check_gram(G, min_L=2)
    G = np.asarray(G, float)
    C = correlation(G)[1:, 1:]
    return float(np.abs(C[~np.eye(len(C), dtype=bool)]).mean())


#: Chapter 5's departures, by what they predict for r_k ~ k^a and c_k at large k
DEPARTURES = {
    "independent (theorem, or power-law variances)": {"r_exp": -0.5, "c_sign": 0},
    "feedback a > 0 (blocks write back what they read)": {"r_exp": -1.0, "c_sign": 1},
    "no decay (geometric growth, or feedback a < 0)": {"r_exp": 0.0, "c_sign": None},
}


def departure(grams, k_min: int = 2, level: float = 0.95) -> dict:
    """Where trained networks sit among Chapter 5's departures.

    ``grams``: one Gram matrix per seed. Per seed: the exponent a of r_k ~ k^a over
    k_min..L and the mean of c_k over the same range; their t intervals over seeds; and the
    departures of :data:`DEPARTURES` whose predicted r exponent lies inside the interval of
    a and whose sign of c agrees with the interval of the mean c (0: the interval holds 0).
    """
    if isinstance(grams, (str, bytes, Mapping)) or not hasattr(grams, "__len__"):
        raise ArgumentTypeError(f"grams must be a list of Gram matrices (one per seed), got {type(grams).__name__}")
    shapes = {_check_gram(G, name=f"grams[{i}]").shape for i, G in enumerate(grams)}
    if len(shapes) > 1:
        raise ValueError(f"grams must all have one shape (one depth), got shapes {sorted(shapes)}")
    if shapes:
        check_int("k_min", k_min, 1, shapes.pop()[0] - 2)
    check_level(level)
    if len(grams) < 3:
        raise TooFewSeeds(f"{len(grams)} kept seeds; an interval needs 3")
    a, cm = [], []
    for G in grams:
        r, c = rc_from_gram(G)
        a.append(curve_exponent(r, k_min))
        cm.append(float(np.mean(c[k_min - 1:])))
    ia, ic = stats.t_interval(a, level), stats.t_interval(cm, level)
    sign = 0 if ic.lo <= 0 <= ic.hi else (1 if ic.lo > 0 else -1)
    fits = [name for name, d in DEPARTURES.items()
            if ia.contains(d["r_exp"]) and (d["c_sign"] is None or d["c_sign"] == sign)]
    return {"r_exp": ia, "c_mean": ic, "c_sign": sign, "consistent_with": fits}


def correlation(G) -> np.ndarray:
    """The correlation matrix of a Gram matrix G (G_ij / sqrt(G_ii G_jj))."""
    _check_gram(G)
    G = np.asarray(G, float)
    d = np.sqrt(np.diag(G))
    return G / np.outer(d, d)


def error_shares(errors: list, level: float = 0.95) -> tuple:
    """What each departure removes of the theorem's error, per seed, as t intervals over
    seeds. ``errors``: one :func:`prediction_log_errors` dict per seed. Returns
    (share removed by the unequal variances, 1 - hetero / theorem; share removed by the
    correlations on top of them, (hetero - rc) / theorem)."""
    if not isinstance(errors, (list, tuple)) or len(errors) < 2:
        raise ValueError("errors must be a list of prediction_log_errors dicts, one per seed (at least 2)")
    var = np.array([1 - e["hetero"] / e["theorem"] for e in errors])
    corr = np.array([(e["hetero"] - e["rc"]) / e["theorem"] for e in errors])
    return stats.t_interval(var, level), stats.t_interval(corr, level)


# ----------------------------------------------------------------------------- summaries

class TooFewSeeds(ValueError):
    """A cell has fewer than 3 kept seeds: no t interval over seeds can be made."""


def exponent_fit(sweep: StoredSweep, arch: str, L: int, step: int, k_min: int = 2, exclude=(),
                 level: float = 0.95) -> Exponent:
    """The exponent of omega_k^2 of one (placement ``arch``, depth ``L``, ``step``) cell over
    k = k_min..L, from its kept seeds (at least 3, else :class:`TooFewSeeds`): an
    :class:`~resdecay_lib.stats.exponents.Exponent` over seeds, whose ``interval`` is the t
    interval of the seeds' exponents (at ``level``); ``rho`` the seeds' mean embedding-to-block
    variance ratio and ``embedding_counted`` the convention it chooses; ``reference`` the
    theorem's exponent over the same range in that convention and ``reference_other`` in the
    other; ``shape`` and ``drift`` :func:`curvature`'s verdict and interval."""
    check_cell(sweep, arch, L)
    check_int("step", step, 0)
    check_int("k_min", k_min, 1, max(L - 2, 1))
    check_exclude(exclude)
    check_level(level)
    cell = [r for r in sweep.cell(arch, L, exclude) if run_status(r) == "ok"]
    if len(cell) < 3:
        raise TooFewSeeds(f"{arch} at L = {L} has {len(cell)} kept seeds; an interval needs 3")
    curves = np.array([omega_per_sequence(r, step).mean(0) for r in cell])
    slopes = [curve_exponent(c, k_min) for c in curves]
    rh = float(np.mean([rho(gram_at(r, step)) for r in cell]))
    ec = convention(rh)
    kr = max(k_min, 2)  # the seed convention starts at k = 2
    ref = reference_exponent(k_min if ec else kr, L, ec)
    other = reference_exponent(kr if ec else k_min, L, not ec) if (ec or k_min >= 1) else float("nan")
    cv = curvature(curves, k_min, level)
    iv = stats.t_interval(slopes, level)
    return Exponent(exponent=iv.mean, lo=iv.lo, hi=iv.hi, level=level, reference=ref, embedding_counted=ec, rho=rh,
                    k_min=k_min, k_max=L, n=iv.n, over="seeds", reference_other=other, interval=iv,
                    shape=cv["shape"], drift=cv["drift"])


def compare_exponents(a: stats.TInterval, b: stats.TInterval) -> str:
    """How exponent ``b`` stands to exponent ``a``, read from their intervals: "steeper"
    (b's interval wholly below a's), "flatter" (wholly above), or "not distinguishable"
    (the intervals overlap). A description of two intervals, not a test."""
    for name, v in (("a", a), ("b", b)):
        if not isinstance(v, stats.TInterval):
            raise ArgumentTypeError(f"{name} must be a stats.TInterval (an exponent's interval), got {type(v).__name__}")
    if b.hi < a.lo:
        return "steeper"
    if b.lo > a.hi:
        return "flatter"
    return "not distinguishable"


# ----------------------------------------------------------------------------- the verdicts' statistics
# (each is the primary statistic of one ledger claim)

def convention_gram(G, embedding_counted: bool) -> np.ndarray:
    """The Gram matrix of the summands the convention counts: all of them (embedding first)
    when ``embedding_counted``, the block outputs alone in the seed convention (the stream
    block k reads is then the sum of blocks 1..k-1, and block 1 reads nothing)."""
    _check_gram(G, min_L=2)
    _check_bool("embedding_counted", embedding_counted)
    G = np.asarray(G, float)
    return G if embedding_counted else G[1:, 1:]


def _change_from_gram(G) -> np.ndarray:
    """omega^2 of each summand after the first, from a Gram matrix of summands (rc_from_gram
    and the exact (r, c) identity): entry i is the change summand i + 1 makes."""
    r, c = rc_from_gram(G)
    return np.asarray(theory.change_sq_rc(r, c), float)


def exponent_split(G, measured, embedding_counted: bool, k_min: int = 2) -> dict:
    """Which departure from the theorem moves the exponent: an order-free split.

    Four curves of omega_k^2, k = 1..L, each fitted as a power law over k_min..L:
    ``theorem`` (equal variances, independent: the exact curve in the convention),
    ``hetero`` (the measured variances, independent), ``corr`` (the measured correlations
    with equal variances: the Gram's correlation matrix), ``full`` (the measured variances and
    correlations: the exact (r, c) identity), and ``measured``. Moving from ``theorem`` to
    ``full`` changes two things; their contributions to the exponent are split symmetrically
    (the two-factor Shapley value: each factor's effect averaged over both orders),
    ``var_effect = ((hetero - theorem) + (full - corr)) / 2`` and
    ``corr_effect = ((corr - theorem) + (full - hetero)) / 2``, which add up to
    ``full - theorem``; ``corr_share = corr_effect / (full - theorem)``.
    The convention (the measured rho's, :func:`convention`) decides which summands the
    stream holds (:func:`convention_gram`). Returns the five exponents, both effects and the share.
    """
    Gc = convention_gram(G, embedding_counted)
    L = len(_check_gram(G)) - 1
    m = _check_array("measured", measured, 1, positive=True)
    if len(m) != L:
        raise ValueError(f"measured must hold omega_k^2 for k = 1..L = {L}, got {len(m)} values")
    check_int("k_min", k_min, 1 if embedding_counted else 2, L - 2)
    first = 1 if embedding_counted else 2          # the first block whose change the curves define
    d = np.sqrt(np.diag(Gc))
    curves = {"theorem": np.array([float(theory.omega_sq(k, embedding_counted=embedding_counted))
                                   for k in range(first, L + 1)]),
              "hetero": np.asarray(theory.omega_sq_hetero(np.diag(Gc)), float),
              "corr": _change_from_gram(Gc / np.outer(d, d)),
              "full": _change_from_gram(Gc),
              "measured": np.asarray(measured, float)[first - 1:]}
    k = np.arange(first, L + 1)
    sel = k >= k_min
    e = {n: loglog_slope(k[sel], c[sel])[0] for n, c in curves.items()}
    var_effect = ((e["hetero"] - e["theorem"]) + (e["full"] - e["corr"])) / 2
    corr_effect = ((e["corr"] - e["theorem"]) + (e["full"] - e["hetero"])) / 2
    total = e["full"] - e["theorem"]
    return {**{f"exp_{n}": v for n, v in e.items()}, "var_effect": var_effect, "corr_effect": corr_effect,
            "corr_share": corr_effect / total if total != 0 else float("nan")}


def flattening(summand_var, embedding_counted: bool, front: int | None = None, tail: int | None = None) -> float:
    """How much the scaling of the blocks past the front flattens the decay, in exponent units.

    ``summand_var``: the variances (or mean square norms: only ratios count) of the stream's
    summands, the embedding's first and then blocks 1..L's outputs, [L + 1] (a Gram matrix's
    diagonal). Under independence (Chapter 5, :func:`resdecay_lib.maths.beyond.omega_sq_hetero`,
    in the convention ``embedding_counted`` chooses) the measured variances give one curve of
    omega_k^2; the same with blocks front + 1..L - tail set to their mean variance gives another
    (the front and the embedding as measured in both, so the front's offset of the decay,
    omega_k^2 ~ 1/(k + k0), is common to both). The result is the first curve's power-law
    exponent over k = front + 1..L - tail minus the second's: 0 when the blocks past the front
    have equal variances, above 0 when their growth flattens the decay over that range. It is
    what the card's "compensate by scaling later blocks' outputs up" would move, and only that:
    the size of the front, and the correlations, do not enter. (Chapter 5's limit: s_k^2 = k^beta
    gives k omega_k^2 -> beta + 1, the 1/k rate again, so a power-law scale-up flattens the decay
    over a finite range only, by less the longer the range.) Defaults:
    :data:`~resdecay_lib.stats.exponents.FRONT_BLOCKS`, ``TAIL_BLOCKS``."""
    front = FRONT_BLOCKS if front is None else front
    tail = TAIL_BLOCKS if tail is None else tail
    _check_bool("embedding_counted", embedding_counted)
    v = np.asarray(_check_array("summand_var", summand_var, 1, positive=True), float)
    L = len(v) - 1
    check_int("front", front, 0, L)
    check_int("tail", tail, 0, L)
    if L - front - tail < 3:
        raise ValueError(f"the fit needs 3 blocks past the front and before the tail: L = {L}, "
                         f"front = {front}, tail = {tail}")
    past = slice(front + 1, L + 1 - tail)          # summand index j is block j (0: the embedding)
    flat = v.copy()
    flat[past] = v[past].mean()
    first = 1 if embedding_counted else 2          # the first block whose change the curves define
    k = np.arange(first, L + 1)
    sel = (k > front) & (k <= L - tail)
    exp = lambda s2: loglog_slope(k[sel], np.asarray(theory.omega_sq_hetero(s2 if embedding_counted else s2[1:]),  # noqa: E731
                                                     float)[sel])[0]
    return exp(v) - exp(flat)


def block_variance_exponent(G, front: int | None = None, tail: int | None = None) -> float:
    """Slope of log s_k^2 on log k, s_k^2 = G_kk the output variance of block k, over the
    blocks past the front and before the tail, k = front + 1..L - tail (defaults
    :data:`resdecay_lib.stats.exponents.FRONT_BLOCKS` and ``TAIL_BLOCKS``; ``tail=0`` keeps the last
    block): above 0 when later blocks' outputs are scaled up."""
    front = FRONT_BLOCKS if front is None else front
    tail = TAIL_BLOCKS if tail is None else tail
    L = len(_check_gram(G)) - 1
    check_int("front", front, 0, L)
    check_int("tail", tail, 0, L)
    if L - front - tail < 3:
        raise ValueError(f"the fit needs 3 blocks past the front and before the tail: L = {L}, "
                         f"front = {front}, tail = {tail}")
    s2 = np.diag(np.asarray(G, float))[1:]
    k = np.arange(1, L + 1)
    sel = slice(front, L - tail)
    return loglog_slope(k[sel], s2[sel])[0]


def theorem_half_ratio(L: int, embedding_counted: bool, front: int | None = None, last: bool = True) -> float:
    """:func:`half_ratio` of the theorem's own change omega_k^2 (the exact curve in the given
    convention; ``last`` as in :func:`~resdecay_lib.stats.exponents.halves`): how fast later
    blocks' contributions vanish by the theorem's account."""
    _check_bool("embedding_counted", embedding_counted)
    late, early = halves(L, front, last)
    w = lambda ks: float(np.mean([float(theory.omega_sq(int(k), embedding_counted=embedding_counted)) for k in ks]))  # noqa: E731
    return w(late) / w(early)


def merged(*sweeps: StoredSweep) -> StoredSweep:
    """Several sweep files' stored runs read as one sweep: the runs of a grid trained in rounds
    (``configs/train_long.toml``'s seeds 0-4, ``configs/resi_dual_L24.toml``'s deeper ResiDual
    rung, ``configs/confirm.toml``'s seeds 5-7). Their recipe must be one: the same store
    (``out``), ``base`` and measurement ``plan``, and the same learning rate for a placement two
    of them train, else ValueError naming the field; the placements, each placement's depths and
    the seeds are the union, in first-seen order (seeds sorted). :meth:`StoredSweep.cell` reads
    every seed of the union, so a cell a round has not reached yet is one with missing runs."""
    if not sweeps:
        raise ValueError("merged needs at least one StoredSweep, got none")
    for i, sw in enumerate(sweeps):
        check_sweep(sw, f"sweeps[{i}]")
    first = sweeps[0].spec
    spec = {**first, "archs": [], "depths": {}, "seeds": [], "arch": {}}
    for sw in sweeps:
        for key in ("out", "base", "plan"):
            if sw.spec.get(key) != first.get(key):
                raise ValueError(f"sweeps to merge must share their {key!r}: {sweeps[0].name} has "
                                 f"{show(first.get(key))}, {sw.name} has {show(sw.spec.get(key))}")
        for a in sw.archs:
            lr = sw.spec["arch"][a]
            if a in spec["arch"] and spec["arch"][a] != lr:
                raise ValueError(f"sweeps to merge must train {a} at one learning rate: {show(spec['arch'][a])} "
                                 f"and {show(lr)}")
            if a not in spec["archs"]:
                spec["archs"].append(a)
                spec["arch"][a] = lr
            spec["depths"][a] = sorted(set(spec["depths"].get(a, [])) | set(sw.depths(a)))
        spec["seeds"] = sorted(set(spec["seeds"]) | set(sw.seeds))
    runs = {}
    for sw in sweeps:
        for key, r in sw.runs.items():
            runs.setdefault(key, r)
    names = {r.name for r in runs.values()}
    missing = list(dict.fromkeys(m for sw in sweeps for m in sw.missing if m not in names))
    return StoredSweep(spec, runs, missing)


def subset(sweep: StoredSweep, seeds) -> StoredSweep:
    """The same sweep read on ``seeds`` alone (a seed set of the replication: its runs, its
    missing runs, and a spec whose seeds are those)."""
    check_sweep(sweep)
    seeds = [check_int("seeds[]", s, 0) for s in seeds]
    spec = {**sweep.spec, "seeds": seeds}
    runs = {k: v for k, v in sweep.runs.items() if k[2] in seeds}
    missing = [m for m in sweep.missing if any(m.endswith(f"_s{s}") for s in seeds)]
    return StoredSweep(spec, runs, missing)
