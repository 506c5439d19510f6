"""Past the front: what trained Pre-LN predicts beyond the depth it was measured at.

Trained Pre-LN at depth 24 (Chapter 7) is not the theorem's stream. Its first blocks write
outputs whose variance is many times the rest's (block 1 about 25, block 2 about 7, block 3
about 2, then about 1.3 up to the last block), so the stream the later blocks read already
holds a large *front*. Two accounts of what comes after agree up to depth 24 and part beyond
it; this module writes both down, from the stored depth-24 runs alone, before deeper runs
test them (``results/predictions/front.json``, committed before the deep runs' results).

Every model is the same large-width recursion (:func:`resdecay_lib.maths.theory.stream_writes_change`):
the stream entering block k has per-coordinate variance v_k^2; block k writes
x^f_k = a_k LN(x^a_k) + b_k z_k, a part a_k = c_k s_k along the normalised stream it read and
an independent rest of variance b_k^2 = s_k^2 - a_k^2; then
v_{k+1}^2 = (v_k + a_k)^2 + b_k^2 and omega_k^2 = 2 (1 - (v_k + a_k) / v_{k+1}).
What is measured in a depth-L run (its Gram matrix of the summands at the final step) is
split in three, by declaration (:data:`FRONT_BLOCKS`, :data:`TAIL_BLOCKS`):

* the *front*: the embedding and blocks 1..F; its stream, V_front = the variance of the sum
  of those summands (the Gram's top-left block summed, correlations included), is where
  every model starts (block F + 1 reads it);
* the *bulk*: blocks F+1..L-T, summarised by their mean output variance s^2, mean aligned
  part a = mean(c_k s_k) and mean independent part b^2 = mean(s_k^2 - a_k^2);
* the *tail*: the last T blocks, kept as measured (their own a_k, b_k^2).

A network of depth L' is extrapolated as the same front, L' - F - T bulk blocks and the same
tail. The models differ only in what a bulk block writes:

* **front** (independence past the front): a = 0, b^2 = s^2 -- the theorem with an offset.
  omega_k^2 is about 1 / (k + k0) with k0 = V_front / s^2 - F: flat while k is small against
  k0, then falling like 1/k (a local slope going to -1);
* **feedback** (Chapter 5's blocks that read the stream, fitted): the measured bulk a and b^2.
  With a < 0 it levels off at 4 a^2 / (a^2 + b^2); with a > 0 it decays faster than 1/k;
* **level** (the levelling-off rival): each later block keeps writing the bulk's measured
  share of the stream it reads, r = mean r_k and c = mean c_k, so omega_k^2 stays at
  change_sq_rc(r, c) -- the fixed point of the feedback model with a < 0, where later
  blocks write against the stream and hold it still (the measured bulk is flat or rising
  over k = 4..23 at depth 24, which the two other models cannot produce).

Measured against them: the local slope of log omega_k^2 on log k in the windows
k in [L/4, L/2] and [L/2, L] (:data:`WINDOWS`), per seed, over seeds a t interval.
Also here: the shifted law a / (k + k0) against a power law (:func:`compare_laws`).

Knows nothing of torch.
"""
from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..book import ledger
from ..book.preregistration import fingerprint
from ..checks import ArgumentTypeError, Array, Int, Real, accepts, check_int, check_real, show
from ..maths import theory
from ..stats import inference as stats
from ..stats.exponents import FRONT_BLOCKS, TAIL_BLOCKS
from ..stats.fit import loglog_slope
from ..training.plan import TrainConfig
from ..training.store import code_version, write_json_atomic
from . import training_analysis

__all__ = ["FRONT_BLOCKS", "TAIL_BLOCKS", "MODELS", "WINDOWS", "PREDICT_DEPTHS", "BlockProfile",
           "block_profile", "model_curve", "window", "local_slope", "ShiftedLaw", "shifted_law",
           "power_law_rss", "compare_laws", "AIC_MARGIN", "predict", "position", "against_front", "PredictionTest", "TESTS_ALPHA", "prediction_tests",
           "prediction_width", "curve_slopes", "runs_needed", "DepthScaling", "depth_scaling", "SignTest",
           "sign_test", "last_block_jump", "position_without_last", "MarginSettling", "MARGIN_VERDICTS",
           "settling_at_margin", "Schedule", "schedule"]

#: the three accounts of what later blocks write (see the module docstring)
MODELS = ("front", "feedback", "level")
#: the windows of the local slope, as fractions of the depth L: k in [L/4, L/2] and [L/2, L]
WINDOWS = {"quarter_half": (0.25, 0.5), "half_end": (0.5, 1.0)}
#: the depths the predictions are made for (the deep runs of Chapter 7b)
PREDICT_DEPTHS = (48, 96)


def _gram(G) -> np.ndarray:
    try:
        g = np.asarray(G, dtype=np.float64)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"G must be a square matrix of numbers (a Gram matrix), got {type(G).__name__}") from None
    if g.ndim != 2 or g.shape[0] != g.shape[1] or g.shape[0] < 2:
        raise ValueError(f"G must be a square (L+1) x (L+1) Gram matrix, got shape {g.shape}")
    if not np.all(np.isfinite(g)) or np.any(np.diag(g) <= 0):
        raise ValueError("G must be finite with a positive diagonal (each summand's variance)")
    return g


@dataclass(frozen=True)
class BlockProfile:
    """One run's stream, split into front, bulk and tail (see the module docstring).

    ``L``: depth; ``front``, ``tail``: block counts; ``v_front_sq``: variance of the stream
    entering block front + 1; ``s2``, ``a``, ``b_sq``: the bulk's mean output variance,
    aligned part and independent part; ``r``, ``c``: the bulk's mean r_k and c_k;
    ``tail_a``, ``tail_b_sq``, ``tail_r``, ``tail_c``: the tail blocks' own values, in order.
    """
    L: int
    front: int
    tail: int
    v_front_sq: float
    s2: float
    a: float
    b_sq: float
    r: float
    c: float
    tail_a: tuple
    tail_b_sq: tuple
    tail_r: tuple
    tail_c: tuple

    @property
    def k0(self) -> float:
        """The front model's offset: omega_k^2 ~ 1 / (k + k0), k0 = V_front / s^2 - front."""
        return self.v_front_sq / self.s2 - self.front


def block_profile(G, front: int = FRONT_BLOCKS, tail: int = TAIL_BLOCKS) -> BlockProfile:
    """:class:`BlockProfile` of a Gram matrix of the summands (embedding first, then blocks 1..L).

    r_k, c_k come from the Gram (``training_analysis.rc_from_gram``: the stream entering block k,
    V_k = sum of G_ij over i, j < k; r_k = sqrt(G_kk / V_k); c_k = sum_{i<k} G_ik / sqrt(V_k G_kk)).
    Needs at least two bulk blocks: L >= front + tail + 2.
    """
    g = _gram(G)
    L = g.shape[0] - 1
    check_int("front", front, 0, L)
    check_int("tail", tail, 0, L)
    if L - front - tail < 2:
        raise ValueError(f"the bulk needs at least 2 blocks: L = {L}, front = {front}, tail = {tail}")
    V = np.array([g[:k, :k].sum() for k in range(1, L + 1)])      # stream entering block k
    F = np.diag(g)[1:]
    C = np.array([g[:k, k].sum() for k in range(1, L + 1)])
    if np.any(V <= 0):
        raise ValueError("G gives a stream of zero or negative variance (not a Gram matrix)")
    r = np.sqrt(F / V)
    c = np.clip(C / np.sqrt(V * F), -1, 1)
    a = c * np.sqrt(F)
    b_sq = F - a * a
    bulk = slice(front, L - tail)
    tl = slice(L - tail, L)
    return BlockProfile(L, front, tail, float(V[front]), float(F[bulk].mean()), float(a[bulk].mean()),
                        float(b_sq[bulk].mean()), float(r[bulk].mean()), float(c[bulk].mean()),
                        tuple(map(float, a[tl])), tuple(map(float, b_sq[tl])),
                        tuple(map(float, r[tl])), tuple(map(float, c[tl])))


def model_curve(p: BlockProfile, model: str, L: int) -> tuple[np.ndarray, np.ndarray]:
    """(k, omega_k^2) for k = front + 1..L of ``model`` (one of :data:`MODELS`) extrapolated
    from profile ``p`` to depth ``L`` (the same front and tail, L - front - tail bulk blocks)."""
    if not isinstance(p, BlockProfile):
        raise ArgumentTypeError(f"p must be a BlockProfile (block_profile's), got {type(p).__name__}")
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    check_int("L", L, p.front + p.tail + 2, 100_000)
    n_bulk = L - p.front - p.tail
    k = np.arange(p.front + 1, L + 1)
    if model == "level":
        bulk = np.full(n_bulk, theory.change_sq_rc(p.r, p.c))
        tail = np.array([theory.change_sq_rc(r, c) for r, c in zip(p.tail_r, p.tail_c)])
        return k, np.concatenate([bulk, tail])
    a_bulk, b_bulk = (0.0, p.s2) if model == "front" else (p.a, p.b_sq)
    a = np.concatenate([np.full(n_bulk, a_bulk), p.tail_a])
    b_sq = np.concatenate([np.full(n_bulk, b_bulk), p.tail_b_sq])
    return k, theory.stream_writes_change(p.v_front_sq, a, b_sq)


def window(L: int, name: str) -> tuple[int, int]:
    """The k range [ceil(L f0), floor(L f1)] of window ``name`` (a key of :data:`WINDOWS`)."""
    check_int("L", L, 4, 100_000)
    if not isinstance(name, str):
        raise ArgumentTypeError(f"name must be one of {sorted(WINDOWS)} (a window's name), got "
                                f"{type(name).__name__} {show(name)}")
    if name not in WINDOWS:
        raise ValueError(f"name must be one of {sorted(WINDOWS)}, got {name!r}")
    f0, f1 = WINDOWS[name]
    return max(1, math.ceil(L * f0)), math.floor(L * f1)


@accepts(k=Array(1, 3, positive=True, what="a 1-D array of at least 3 positive finite indices"),
         y=Array(1, 3, finite=False, what="a 1-D array of at least 3 real numbers (positive in the window)"),
         lo=Int(), hi=Int())
def local_slope(k, y, lo: int, hi: int) -> float:
    """Least-squares slope of log y on log k over lo <= k <= hi (at least 3 points).

    ``lo`` and ``hi`` are integers (not bools) with min(k) <= lo < hi <= max(k): a window
    reaching past the indices given would be fitted over fewer than it names, so it raises
    ValueError instead; ``y`` has one value per index and is positive inside the window."""
    k = np.asarray(k)
    if np.shape(y) != k.shape:
        raise ValueError(f"y must hold one value per index of k ({k.size}), got shape {np.shape(y)}")
    check_int("lo", lo, math.ceil(float(k.min())), math.floor(float(k.max())) - 1)
    check_int("hi", hi, lo + 1, math.floor(float(k.max())))
    m = (k >= lo) & (k <= hi)
    if m.sum() < 3:
        raise ValueError(f"the window [{lo}, {hi}] holds {int(m.sum())} indices of k; a local slope needs 3")
    return loglog_slope(k[m], np.asarray(y, dtype=np.float64)[m])[0]


# ----------------------------------------------------------------------------- shifted law

#: the shifted law "describes better" than a power law (or the reverse) when the difference
#: of their Akaike criteria exceeds 2; both have two parameters, so this is n log(RSS ratio)
AIC_MARGIN = 2.0
#: fewer points than this (two parameters each, and three residual degrees of freedom) leave
#: the comparison undecided
MIN_POINTS = 5


@dataclass(frozen=True)
class ShiftedLaw:
    """y ~ amplitude / (k + k0) fitted by least squares on log y over ``k_min..k_max``;
    ``rss``: residual sum of squares of log y; ``n``: points."""
    amplitude: float
    k0: float
    rss: float
    n: int
    k_min: int
    k_max: int


def _log_curve(k, y):
    k = np.asarray(k, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if k.ndim != 1 or k.shape != y.shape or k.size < 3:
        raise ValueError(f"k and y must be 1-D of one length >= 3, got shapes {k.shape} and {y.shape}")
    if not (np.all(np.isfinite(k)) and np.all(k > 0) and np.all(np.isfinite(y)) and np.all(y > 0)):
        raise ValueError("k and y must be positive and finite (the laws are fitted on log y)")
    return k, np.log(y)


def _shifted_rss(k, ly, k0):
    lk = np.log(k + k0)
    la = float(np.mean(ly + lk))                   # the best log amplitude at this k0
    res = ly - la + lk
    return float(res @ res), la


def shifted_law(k, y) -> ShiftedLaw:
    """Fit y = A / (k + k0), k0 > -min(k), by least squares on log y.

    For a fixed k0 the best log A is the mean of log y + log(k + k0); k0 is found on a
    log-spaced grid of k + k0 at its smallest k (1e-3 to 1e6), then refined by golden
    section. A k0 at the grid's top means the curve is flat over the range (the law's limit
    for k0 -> infinity is a constant)."""
    k, ly = _log_curve(k, y)
    kmin = float(k.min())
    grid = np.geomspace(1e-3, 1e6, 400) - kmin      # k0 such that kmin + k0 spans the grid
    rss = [_shifted_rss(k, ly, g)[0] for g in grid]
    i = int(np.argmin(rss))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    phi = (math.sqrt(5) - 1) / 2
    for _ in range(100):
        x1, x2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
        if _shifted_rss(k, ly, x1)[0] <= _shifted_rss(k, ly, x2)[0]:
            hi = x2
        else:
            lo = x1
    k0 = 0.5 * (lo + hi)
    r, la = _shifted_rss(k, ly, k0)
    return ShiftedLaw(float(math.exp(la)), float(k0), r, int(k.size), int(k.min()), int(k.max()))


def power_law_rss(k, y) -> tuple[float, float]:
    """(exponent, residual sum of squares of log y) of the least-squares power law y = A k^p."""
    k, ly = _log_curve(k, y)
    p, c = loglog_slope(k, np.exp(ly))
    res = ly - c - p * np.log(k)
    return p, float(res @ res)


def compare_laws(k, y) -> dict:
    """The shifted law against a power law over the given points (criterion stated first:
    both have two parameters, so the Akaike difference is n log(RSS_power / RSS_shifted);
    "shifted" when it exceeds :data:`AIC_MARGIN`, "power" when below -AIC_MARGIN, else
    "neither"; "neither" also below :data:`MIN_POINTS` points)."""
    s = shifted_law(k, y)
    p, rss_p = power_law_rss(k, y)
    tiny = 1e-300     # an exact fit has RSS 0: keep the logarithm finite
    d_aic = float(s.n * (math.log(rss_p + tiny) - math.log(s.rss + tiny)))
    better = "shifted" if d_aic > AIC_MARGIN else ("power" if d_aic < -AIC_MARGIN else "neither")
    if s.n < MIN_POINTS:   # two 2-parameter laws through so few points: no comparison
        better = "neither"
    return {"shifted": s, "exponent": p, "rss_power": rss_p, "d_aic": d_aic, "better": better}


# ----------------------------------------------------------------------------- predictions

def _summary(values, level: float = 0.95) -> dict:
    v = [float(x) for x in values]
    out = {"per_seed": v, "n": len(v), "mean": float(np.mean(v))}
    if len(v) >= 3:
        iv = stats.t_interval(v, level)
        out.update(lo=iv.lo, hi=iv.hi, se=iv.se, level=level)
    return out


def predict(grams: Mapping[str, np.ndarray], measured: Mapping[str, np.ndarray] | None = None,
            depths=PREDICT_DEPTHS) -> dict:
    """Each model's predicted omega_k^2 curve and window slopes at each of ``depths``.

    ``grams``: {run name: its Gram matrix at the final step} (one per seed, one depth);
    ``measured``: optionally {run name: its measured omega_k^2, k = 1..L} for the in-sample
    check (each model's mean |log(pred / measured)| over the bulk). Returns a JSON-ready dict
    with, per model and depth, the curve per seed and its mean, and per window the slopes
    per seed with their mean and 95 % t interval over seeds; and per seed the front model's
    k0 = V_front / s^2 - FRONT_BLOCKS.
    """
    if not isinstance(grams, Mapping) or len(grams) < 1:
        raise ArgumentTypeError("grams must be a non-empty dict {run name: Gram matrix}")
    names = sorted(grams)
    profiles = {n: block_profile(grams[n]) for n in names}
    if len({p.L for p in profiles.values()}) != 1:
        raise ValueError("grams must all come from one depth")
    L0 = profiles[names[0]].L
    out = {"source_depth": L0, "runs": names,
           "profile": {n: {f: getattr(p, f) for f in ("v_front_sq", "s2", "a", "b_sq", "r", "c")} | {"k0": p.k0}
                       for n, p in profiles.items()},
           "k0": _summary([profiles[n].k0 for n in names]), "models": {}}
    for model in MODELS:
        per_depth = {}
        for L in (L0, *depths):
            curves = [model_curve(profiles[n], model, L) for n in names]
            k = curves[0][0]
            entry = {"k": [int(x) for x in k],
                     "curve_per_seed": [[float(x) for x in c] for _, c in curves],
                     "curve_mean": [float(x) for x in np.mean([c for _, c in curves], axis=0)],
                     "slopes": {w: _summary([local_slope(k, c, *window(L, w)) for _, c in curves])
                                for w in WINDOWS}}
            if L == L0 and measured is not None:
                errs = []
                for n, (kk, c) in zip(names, curves):
                    m = np.asarray(measured[n], dtype=np.float64)[kk[0] - 1:L0 - profiles[n].tail]
                    errs.append(float(np.mean(np.abs(np.log(c[:len(m)] / m)))))
                entry["in_sample_log_error"] = _summary(errs)
            per_depth[str(L)] = entry
        out["models"][model] = per_depth
    return out


#: how the predictions extrapolate past the measured depth, and what would refute each model
#: (written into the predictions file beside the numbers)
EXTRAPOLATION = (
    "Each seed's depth-24 run (final step) is split into the front (embedding and blocks 1..3, "
    "their summed stream V_front), the bulk (blocks 4..23: mean output variance s^2, mean aligned "
    "part a = mean(c_k s_k), mean independent part b^2 = mean(s_k^2 - a_k^2), mean r_k and c_k) "
    "and the tail (block 24, as measured). A network of depth L is the same front, L - 4 bulk "
    "blocks and the same tail: nothing measured is rescaled with depth.")
REFUTATION = (
    "Primary test (ledger claim-front, rule_front): each deep run's local slope of log omega_k^2 on "
    "log k over k in [L/2, L] (L = 48 and 96) is placed between its depth's two predictions, "
    "u = (slope - midpoint) / half the separation of the front and level models' mean slopes "
    "(u = -1 front, +1 level); the mean of u over the deep runs with a t interval at 1 - 0.05/2 (one "
    "family of two tests). Wholly below 0 refutes the levelling-off (level) model; wholly above 0 "
    "refutes the front model; the front model is refuted in its rate, too, when the interval does "
    "not meet its own predicted interval around -1. The feedback model is read the same way, "
    "reported beside.")


def write_predictions(path, root=".", sweep_file="configs/train_long.toml", arch="pre_ln", L=24,
                      seeds=(0, 1, 2), depths=PREDICT_DEPTHS) -> dict:
    """Compute :func:`predict` from the stored runs ``arch`` at depth ``L`` of ``seeds`` (their
    final step) and write it to ``path`` as JSON (atomically), with the declarations, the
    source runs and their code versions, this code's version and the time (UTC)."""
    sw = training_analysis.StoredSweep.load(sweep_file, root=root)
    step = sw.measure_steps[-1]
    runs = [r for r in sw.cell(arch, L) if r.seed in seeds]
    if sorted(r.seed for r in runs) != sorted(seeds):
        raise ValueError(f"{arch} at L = {L}: stored seeds {sorted(r.seed for r in runs)}, need {sorted(seeds)}")
    grams = {r.name: training_analysis.gram_at(r, step) for r in runs}
    measured = {r.name: training_analysis.omega_per_sequence(r, step).mean(0) for r in runs}
    out = {"what": "predictions of trained Pre-LN's per-layer change past depth 24, "
                   "written before any deeper run; resdecay_lib.analysis.front",
           "written_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "code_version": code_version(),
           "source": {"sweep": sweep_file, "arch": arch, "L": L, "step": step, "seeds": list(seeds),
                      "code_versions": {r.name: r.code_version for r in runs}},
           "declared": {"front_blocks": FRONT_BLOCKS, "tail_blocks": TAIL_BLOCKS, "windows": WINDOWS,
                        "depths": list(depths), "models": list(MODELS), "extrapolation": EXTRAPOLATION,
                        "refutation": REFUTATION},
           "rule": {"claim": "claim-front", "fingerprint": fingerprint(ledger.rule_front)},
           **predict(grams, measured, depths)}
    write_json_atomic(out, path)
    return out


#: the primary window of claim-front, and the level of each of its two tests (one family of two)
PRIMARY_WINDOW = "half_end"
CLAIM_ALPHA = 0.05 / 2


def _check_slope_at(slope, L) -> None:
    Real().check("slope", slope)          # a finite real: NaN would place a slope nowhere
    check_int("L", L, 1)


def _predicted(predictions: Mapping, model: str, L: int, name: str = PRIMARY_WINDOW) -> dict:
    if not isinstance(predictions, Mapping) or "models" not in predictions:
        raise ArgumentTypeError("predictions must be the dict of results/predictions/front.json (front.predict's)")
    try:
        return predictions["models"][model][str(L)]["slopes"][name]
    except KeyError:
        raise ValueError(f"the predictions hold no {model!r} slope for L = {L}, window {name!r}") from None


def position(slope: float, L: int, predictions: Mapping, name: str = PRIMARY_WINDOW) -> float:
    """Where a measured local slope lies between the two predictions of its depth:
    u = (slope - m) / h with m the midpoint of the front and level models' mean predicted
    slopes and h half their separation (level minus front). u = -1 is the front model's
    prediction, u = +1 the level model's. NaN when the front does not predict the lower slope
    (the window cannot tell the models apart)."""
    _check_slope_at(slope, L)
    pf = _predicted(predictions, "front", L, name)["mean"]
    pl = _predicted(predictions, "level", L, name)["mean"]
    h = (pl - pf) / 2
    return (slope - (pf + pl) / 2) / h if h > 0 else float("nan")


def against_front(slope: float, L: int, predictions: Mapping, name: str = PRIMARY_WINDOW) -> str:
    """A measured local slope against the front model's predicted interval [lo, hi] at depth L
    (its t interval over the seeds it was made from, as written in the predictions):
    ``"above"`` (the change falls more slowly than the front model predicts, or rises),
    ``"within"``, or ``"below"`` (it falls faster)."""
    _check_slope_at(slope, L)
    f = _predicted(predictions, "front", L, name)
    return "above" if slope > f["hi"] else "below" if slope < f["lo"] else "within"


@dataclass(frozen=True)
class PredictionTest:
    """One model's predicted local slope at depth ``L`` in ``window`` against the measured ones:
    ``predicted`` (mean over the seeds it was made from) and ``measured`` (mean over the deep
    runs), ``lo``, ``hi`` the Welch t interval of measured minus predicted at ``level``; the
    prediction is ``refuted`` when that interval excludes 0."""
    model: str
    L: int
    window: str
    predicted: float
    measured: float
    n_runs: int
    lo: float
    hi: float
    level: float

    @property
    def refuted(self) -> bool:
        return self.lo > 0 or self.hi < 0


#: the family-wise level of :func:`prediction_tests` (Bonferroni over every test made)
TESTS_ALPHA = 0.05


def prediction_tests(slopes: Mapping, predictions: Mapping, alpha: float = TESTS_ALPHA) -> list:
    """Every model's prediction in every window at every depth with three runs or more, against
    the measured slopes ``{L: {window: [slope of each run]}}``: the committed file's test (the
    Welch interval of measured minus predicted slope, ``scipy.stats.ttest_ind`` with unequal
    variances, the prediction's replicates being its per-seed values), Bonferroni-corrected over
    every test made (family-wise ``alpha``). A list of :class:`PredictionTest`, ordered by depth,
    window and model. A prediction whose per-seed values do not vary (the level model's flat
    window) is tested as a constant: a one-sample t interval of the runs."""
    from scipy.stats import ttest_ind
    if not isinstance(slopes, Mapping) or not all(isinstance(v, Mapping) and v for v in slopes.values()):
        raise ArgumentTypeError(f"slopes must be a dict {{L: {{window: [slope of each run]}}}}, got "
                                f"{type(slopes).__name__} {show(slopes)}")
    for L, by_w in slopes.items():
        check_int("slopes' depths", L, 1)
        missing = [w for w in WINDOWS if w not in by_w]
        if missing:
            raise ValueError(f"slopes[{L}] must hold a list of slopes for every window {sorted(WINDOWS)}, "
                             f"it lacks {missing}")
        for w in WINDOWS:
            Array(1, finite=True, what="a list of finite slopes, one per run").check(f"slopes[{L}][{w!r}]", by_w[w])
    cells = [(int(L), w, m) for L, by_w in sorted(slopes.items()) if min(len(by_w[w]) for w in WINDOWS) >= 3
             for w in WINDOWS for m in MODELS]
    if not cells:
        return []
    level = 1 - alpha / len(cells)
    out = []
    for L, w, m in cells:
        runs = np.asarray(slopes[L][w], dtype=np.float64)
        pred = _predicted(predictions, m, L, w)
        seeds = np.asarray(pred["per_seed"], dtype=np.float64)
        if np.ptp(seeds) <= 1e-12 * max(1.0, float(np.abs(seeds).max())):
            iv = stats.t_interval(runs - float(seeds.mean()), level)
            lo, hi = iv.lo, iv.hi
        else:
            ci = ttest_ind(runs, seeds, equal_var=False).confidence_interval(level)
            lo, hi = float(ci.low), float(ci.high)
        out.append(PredictionTest(m, L, w, float(seeds.mean()), float(runs.mean()), int(runs.size), lo, hi, level))
    return out


def prediction_width(predictions: Mapping, depths=PREDICT_DEPTHS, name: str = PRIMARY_WINDOW,
                     alpha: float = CLAIM_ALPHA) -> float:
    """Half-width, in units of :func:`position`, of the front model's own (1 - alpha) t interval
    over the seeds it was made from, the largest over ``depths``."""
    widths = []
    for L in depths:
        f = _predicted(predictions, "front", L, name)
        pl = _predicted(predictions, "level", L, name)["mean"]
        t = stats.t_quantile(1 - alpha / 2, f["n"] - 1)
        widths.append(t * f["se"] / ((pl - f["mean"]) / 2))
    return float(max(widths))


def curve_slopes(curve) -> dict:
    """The local slope of a measured omega_k^2 curve (k = 1..L) in each window of :data:`WINDOWS`."""
    try:
        y = np.asarray(curve, dtype=np.float64)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"curve must be a 1-D omega_k^2 curve over k = 1..L (real numbers), got "
                                f"{type(curve).__name__} {show(curve)}") from None
    if y.ndim != 1 or y.size < 8:
        raise ValueError(f"curve must be a 1-D omega_k^2 curve over k = 1..L with L >= 8, got shape {y.shape}")
    L = y.size
    k = np.arange(1, L + 1)
    return {w: local_slope(k, y, *window(L, w)) for w in WINDOWS}


def laws_past_front(curve, front: int = FRONT_BLOCKS, tail: int = 0) -> dict:
    """:func:`compare_laws` on a measured curve (k = 1..L) over the blocks past the front,
    k = front + 1..L - tail (``tail=1``: the last block left out, the sensitivity)."""
    y = np.asarray(curve, dtype=np.float64)
    L = y.size
    check_int("front", front, 0, max(L - 3, 0))      # three points past the front at least
    check_int("tail", tail, 0, max(L - front - 3, 0))
    k = np.arange(front + 1, L - tail + 1)
    return compare_laws(k, y[front:L - tail])


# ----------------------------------------------------------------------------- what the deep runs can show
# Declared after the deep runs were seen (exploratory): how many runs claim-front's statistic
# would need, whether the front grows with depth, the sign of the earlier window's slope, the
# last block's weight in the primary window, and the settling test at the book's exponent margin.

def runs_needed(sd: float, half_width: float, alpha: float = CLAIM_ALPHA, n_max: int = 100_000) -> int:
    """The fewest runs n >= 3 whose (1 - alpha) t interval of a mean has half-width below ``half_width``
    when the runs' standard deviation is ``sd``:

        n = min { n >= 3 : t_{1 - alpha/2, n - 1} sd / sqrt(n) < half_width }.

    The sd is held at its observed value (a planning number, not a guarantee: a new set of runs
    has its own sd). With ``half_width`` the distance from 0 to a true mean m, this is the n at which
    an interval centred on m just excludes 0; the mean of n new runs lands on either side of m, so such
    an interval excludes 0 about half the time (power about 1/2, not the usual 0.8).
    ``n_max``: the search's end (ValueError past it).

    >>> runs_needed(1.0, 1.0, alpha=0.05)      # t_{0.975, 6} / sqrt(7) = 0.925 < 1; n = 6 gives 1.049
    7
    """
    sd = check_real("sd", sd, 0.0, lo_open=True)
    half_width = check_real("half_width", half_width, 0.0, lo_open=True)
    alpha = check_real("alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
    check_int("n_max", n_max, 3)
    for n in range(3, n_max + 1):
        if stats.t_quantile(1 - alpha / 2, n - 1) * sd / math.sqrt(n) < half_width:
            return n
    raise ValueError(f"no n up to n_max = {n_max} brings the half-width below {half_width:g} at sd = {sd:g}")


@dataclass(frozen=True)
class DepthScaling:
    """How the front's offset k0 grows with the depth L (:func:`depth_scaling`).

    ``ratio``: {L: t interval over runs of k0 / L (NaN bounds below three runs)}; ``slope``: the
    least-squares slope of log k0 on log L over every run, with its t interval (df = n - 2);
    ``reading``: "proportional" (the interval contains 1 and excludes 0), "slower" (wholly in
    (0, 1)), "faster" (wholly above 1), "not shown to grow" (it contains 0), or "shrinks"."""
    ratio: Mapping
    slope: stats.TInterval
    reading: str


def depth_scaling(k0: Mapping, level: float = 0.95) -> DepthScaling:
    """k0 (each run's front offset, :attr:`BlockProfile.k0`) against depth: ``k0`` is {L: [k0 of each run]}.

    Per depth, the t interval of k0 / L over its runs. Over all n runs, the least-squares fit
    log k0 = c + beta log L: beta = S_xy / S_xx with x = log L, y = log k0; its standard error
    se = sqrt(RSS / (n - 2) / S_xx), its interval beta +- t_{(1 + level)/2, n - 2} se. beta = 1: k0
    proportional to L (the front stays the same share of the network); beta = 0: k0 the same at every
    depth. Needs at least two depths, four runs and every k0 positive (the fit is on log k0).
    """
    if not isinstance(k0, Mapping) or not k0:
        raise ArgumentTypeError(f"k0 must be a dict {{depth: [k0 of each run]}}, got {type(k0).__name__} {show(k0)}")
    training_analysis.check_level(level)
    L, y = [], []
    for depth, values in k0.items():
        check_int("k0's depths", depth, 1)
        v = Array(1, 1, positive=True, what="a list of positive k0, one per run").check(f"k0[{depth}]", values)
        L += [depth] * len(v)
        y += [float(x) for x in v]
    if len(k0) < 2 or len(y) < 4:
        raise ValueError(f"k0 must hold at least two depths and four runs, got {len(k0)} depths, {len(y)} runs")
    x, ly = np.log(np.asarray(L, dtype=np.float64)), np.log(np.asarray(y))
    sxx = float(((x - x.mean()) ** 2).sum())
    beta = float(((x - x.mean()) * (ly - ly.mean())).sum() / sxx)
    res = ly - ly.mean() - beta * (x - x.mean())
    n = len(y)
    se = math.sqrt(float(res @ res) / (n - 2) / sxx)
    t = stats.t_quantile((1 + level) / 2, n - 2)
    slope = stats.TInterval(beta, beta - t * se, beta + t * se, se, t, n, float(level))
    nan = float("nan")
    ratio = {}
    for depth, values in sorted(k0.items()):
        r = [float(v) / depth for v in values]
        ratio[int(depth)] = (stats.t_interval(r, level) if len(r) >= 3 else
                             stats.TInterval(float(np.mean(r)), nan, nan, nan, nan, len(r), float(level)))
    if slope.lo > 0:
        reading = "proportional" if slope.lo <= 1 <= slope.hi else "slower" if slope.hi < 1 else "faster"
    else:
        reading = "not shown to grow" if slope.hi >= 0 else "shrinks"
    return DepthScaling(ratio, slope, reading)


@dataclass(frozen=True)
class SignTest:
    """``n_positive`` of ``n`` nonzero values are positive; ``p``: the two-sided sign test's p value."""
    n_positive: int
    n: int
    p: float


def sign_test(values) -> SignTest:
    """The two-sided sign test of values that are positive or negative with probability 1/2 each:
    with n nonzero values of which m are positive, p = min(1, 2 min(P(X <= m), P(X >= m))) for
    X ~ Binomial(n, 1/2) (``scipy.stats.binomtest``); zeros are left out (ties carry no sign).

    >>> sign_test([0.5, 0.2, 0.1]).p        # 2 / 2^3
    0.25
    """
    from scipy.stats import binomtest
    v = Array(1, 1, what="a list of finite numbers").check("values", values)
    v = np.asarray(v, dtype=np.float64)
    v = v[v != 0]
    if v.size < 1:
        raise ValueError("values must hold at least one nonzero value (a sign test reads signs)")
    m = int((v > 0).sum())
    return SignTest(m, int(v.size), float(binomtest(m, int(v.size), 0.5).pvalue))


def last_block_jump(curve) -> float:
    """How much the last block's change exceeds the rest of the primary window: for a curve
    omega_k^2, k = 1..L, omega_L^2 / mean(omega_k^2 : L/2 <= k <= L - 1) (the window of
    :data:`PRIMARY_WINDOW` without its last block)."""
    y = _curve(curve)
    L = y.size
    lo, hi = window(L, PRIMARY_WINDOW)
    return float(y[hi - 1] / y[lo - 1:hi - 1].mean())


def _curve(curve) -> np.ndarray:
    try:
        y = np.asarray(curve, dtype=np.float64)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"curve must be a 1-D omega_k^2 curve over k = 1..L (real numbers), got "
                                f"{type(curve).__name__} {show(curve)}") from None
    if y.ndim != 1 or y.size < 8 or not np.all(np.isfinite(y)) or np.any(y <= 0):
        raise ValueError(f"curve must be a 1-D positive omega_k^2 curve over k = 1..L with L >= 8, got shape {y.shape}")
    return y


def position_without_last(curve, predictions: Mapping) -> float:
    """:func:`position` of a deep run's curve (k = 1..L) with its last block left out, measured and
    predicted alike: the run's local slope over k in [L/2, L - 1] placed between the front and level
    models' mean slopes over the same k, each model's slope the mean over its seeds of the slope of
    its committed per-seed curve (``curve_per_seed`` in the predictions). A sensitivity: the last block
    jumps (:func:`last_block_jump`), and the level model's [L/2, L] slope is its measured tail alone."""
    y = _curve(curve)
    L = y.size
    lo, hi = window(L, PRIMARY_WINDOW)
    k = np.arange(1, L + 1)
    slope = local_slope(k, y, lo, hi - 1)
    means = {}
    for m in ("front", "level"):
        if not isinstance(predictions, Mapping) or "models" not in predictions:
            raise ArgumentTypeError("predictions must be the dict of results/predictions/front.json (front.predict's)")
        try:
            e = predictions["models"][m][str(L)]
        except KeyError:
            raise ValueError(f"the predictions hold no {m!r} curve for L = {L}") from None
        kk = np.asarray(e["k"], dtype=np.float64)
        means[m] = float(np.mean([local_slope(kk, np.asarray(c, dtype=np.float64), lo, hi - 1)
                                  for c in e["curve_per_seed"]]))
    h = (means["level"] - means["front"]) / 2
    return (slope - (means["front"] + means["level"]) / 2) / h if h > 0 else float("nan")


@dataclass(frozen=True)
class MarginSettling:
    """The settling test's paired change read at a given ``margin`` (:func:`settling_at_margin`):
    ``change`` the (1 - 2 alpha) t interval of d = b(steps[1]) - b(steps[0]) over runs (the TOST
    reading), ``two_sided`` its (1 - alpha) interval; ``verdict`` one of :data:`MARGIN_VERDICTS`."""
    steps: tuple
    change: stats.TInterval
    two_sided: stats.TInterval
    margin: float
    verdict: str


#: what :func:`settling_at_margin` may say
MARGIN_VERDICTS = ("settled", "rising beyond the margin", "falling beyond the margin", "rising", "falling",
                   "undetermined")


def settling_at_margin(sweep, arch: str, L: int, margin: float, k_min: int = 2,
                       steps=training_analysis.SETTLE_STEPS,
                       alpha: float = training_analysis.SETTLE_ALPHA) -> MarginSettling:
    """``training_analysis.settling``'s paired change of each run's exponent from steps[0] to steps[1]
    (:func:`training_analysis.seed_exponents`, k_min..L), read at ``margin`` instead of the between-seed sd:
    "settled" when the (1 - 2 alpha) interval lies inside +-margin (TOST at alpha); "rising beyond the
    margin" when it lies wholly above +margin (one-sided at alpha: the change exceeds the margin),
    "falling beyond the margin" wholly below -margin; otherwise "rising" or "falling" when the
    (1 - alpha) interval excludes 0 on that side; otherwise "undetermined"."""
    if not isinstance(sweep, training_analysis.StoredSweep):
        raise ArgumentTypeError(f"sweep must be a StoredSweep, got {type(sweep).__name__}")
    margin = check_real("margin", margin, 0.0, lo_open=True)
    alpha = check_real("alpha", alpha, 0.0, 0.5, lo_open=True, hi_open=True)
    if (not isinstance(steps, (tuple, list)) or len(steps) != 2
            or any(s not in sweep.measure_steps for s in steps) or steps[0] >= steps[1]):
        raise ValueError(f"steps must be two increasing steps the sweep measures ({list(sweep.measure_steps)}), "
                         f"got {steps!r}")
    a, b = (training_analysis.seed_exponents(sweep, arch, L, s, k_min) for s in steps)
    if len(b) < 3 or len(a) != len(b):
        raise ValueError(f"settling_at_margin needs 3 or more runs of {arch} at L={L} measured at both steps, "
                         f"got {len(a)} and {len(b)}")
    d = b - a
    tost, two = stats.t_interval(d, 1 - 2 * alpha), stats.t_interval(d, 1 - alpha)
    if -margin <= tost.lo and tost.hi <= margin:
        verdict = "settled"
    elif tost.lo > margin:
        verdict = "rising beyond the margin"
    elif tost.hi < -margin:
        verdict = "falling beyond the margin"
    else:
        verdict = "rising" if two.lo > 0 else "falling" if two.hi < 0 else "undetermined"
    return MarginSettling(tuple(steps), tost, two, margin, verdict)


@dataclass(frozen=True)
class Schedule:
    """A run's learning-rate schedule (``training.train.lr_factor``): ``warmup`` steps of linear
    warm-up, then a cosine from 1 to ``min_lr_frac`` at the last of ``steps``; ``constant_steps``:
    steps past the warm-up at which the factor does not fall (0: every window past it is in the decay)."""
    steps: int
    warmup: int
    min_lr_frac: float
    constant_steps: int

    def factor(self, step: int) -> float:
        """The learning-rate multiplier at ``step`` (0-based): (s + 1) / warmup for s < warmup, else
        min_lr_frac + (1 - min_lr_frac) (1 + cos(pi p)) / 2, p = min(1, (s - warmup) / max(1, steps - warmup - 1))."""
        check_int("step", step, 0)
        if step < self.warmup:
            return (step + 1) / self.warmup
        p = min(1.0, (step - self.warmup) / max(1, self.steps - self.warmup - 1))
        return self.min_lr_frac + (1 - self.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * p))


def schedule(config) -> Schedule:
    """The :class:`Schedule` of a run's :class:`~resdecay_lib.training.plan.TrainConfig` (its
    ``steps``, ``warmup``, ``min_lr_frac``; a stored record's ``config``, or a dict of those fields)."""
    if isinstance(config, TrainConfig):
        config = {"steps": config.steps, "warmup": config.warmup, "min_lr_frac": config.min_lr_frac}
    if not isinstance(config, Mapping) or not all(f in config for f in ("steps", "warmup", "min_lr_frac")):
        raise ArgumentTypeError(f"config must be a run's TrainConfig (or a dict with steps, warmup and "
                                f"min_lr_frac), got {type(config).__name__} {show(config)}")
    steps = check_int("config['steps']", config["steps"], 1)
    warmup = check_int("config['warmup']", config["warmup"], 0, steps - 1)
    frac = check_real("config['min_lr_frac']", config["min_lr_frac"], 0.0, 1.0)
    s = Schedule(steps, warmup, frac, 0)
    f = np.array([s.factor(i) for i in range(warmup, steps)])
    return Schedule(steps, warmup, frac, int((np.diff(f) >= 0).sum()))
