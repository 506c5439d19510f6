"""Exponents of omega_k^2 curves and Gram matrices, without torch: what the probe's
:func:`resdecay_lib.nn.probe.exponent` and the analyses above it share.

* :func:`rho` (the embedding-to-block variance ratio of a Gram matrix of the summands) and
  :func:`convention` (the index convention it chooses); :func:`reference_exponent` (the slope
  of the theorem's exact curve over a range of k, :mod:`resdecay_lib.maths.theory`);
* :data:`FRONT_BLOCKS` and :data:`TAIL_BLOCKS` (the front and tail blocks every "past the front"
  reading leaves out, declared with the predictions of :mod:`resdecay_lib.analysis.front`),
  :func:`halves` and :func:`half_ratio` (the later half's cost over the earlier half's);
* :class:`Exponent`, the one result type of a fitted exponent: the probe's
  (:func:`resdecay_lib.nn.probe.exponent`, over sequences), a cell of training runs'
  (:func:`resdecay_lib.analysis.training_analysis.exponent_fit`, over seeds) and a pretrained
  model's (:func:`resdecay_lib.analysis.pretrained_analysis.exponent_report`, over sequences);
* the array checks they share (:func:`check_array`, :func:`check_gram`, :func:`check_bool`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..checks import ArgumentTypeError, check_int, check_real
from ..maths import theory
from .fit import loglog_slope

__all__ = ["MAX_K", "FRONT_BLOCKS", "TAIL_BLOCKS", "check_array", "check_gram", "check_bool", "rho", "convention",
           "reference_exponent", "halves", "half_ratio", "OVER", "Exponent"]

#: the deepest curve the reference exponent is computed for (the models' own bound on n_layer)
MAX_K = 4096


#: blocks 1..3 form the front: at depth 24 after training their output variances are about
#: 25, 7 and 2 against about 1.3 for blocks 4..23 (every seed), and they read the embedding
#: directly. Declared with the predictions, before any deep run; every later reading of
#: "past the front" (the fits, the contrasts of the verdicts) uses this one number.
FRONT_BLOCKS = 3
#: the last block is kept apart: it writes about 3 to 4 times the bulk's variance at depth 24
#: (and pretrained models are reported to jump at the final layer)
TAIL_BLOCKS = 1


def check_array(name, value, ndim, *, positive=False, min_len=1):
    """``value`` as a finite float array of ``ndim`` dimensions, each at least ``min_len`` long."""
    if value is None or isinstance(value, (str, bytes, Mapping)):
        raise ArgumentTypeError(f"{name} must be a {ndim}-D array of finite numbers, got {type(value).__name__}")
    try:
        if np.iscomplexobj(value):
            raise ArgumentTypeError("complex")
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ArgumentTypeError(f"{name} must be a {ndim}-D array of finite real numbers, got "
                        f"{type(value).__name__}") from exc
    if a.ndim != ndim or min(a.shape, default=0) < min_len:
        raise ValueError(f"{name} must be a {ndim}-D array with at least {min_len} entries along each "
                         f"axis, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite: it holds NaN or an infinity")
    if positive and not np.all(a > 0):
        raise ValueError(f"{name} must be positive everywhere (a variance, change or loss curve), "
                         f"got minimum {a.min():g}")
    return a


def check_gram(G, min_L=1, name="G"):
    """A Gram matrix of the summands: square [L+1, L+1] (L >= min_L), finite, positive diagonal."""
    a = check_array(name, G, 2, min_len=min_L + 1)
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} must be a square [L+1, L+1] Gram matrix, got shape {a.shape}")
    if not np.all(np.diag(a) > 0):
        raise ValueError(f"{name} must have a positive diagonal (the summands' variances), got "
                         f"minimum {np.diag(a).min():g}")
    return a


def check_bool(name, value):
    """Raise ``TypeError`` unless ``value`` is a bool (Python's or NumPy's)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")


def rho(G) -> float:
    """Embedding-to-block variance ratio: G_00 over the mean of G_kk, k = 1..L."""
    check_gram(G)
    G = np.asarray(G)
    return float(G[0, 0] / np.mean(np.diag(G)[1:]))


def convention(rho_value: float) -> bool:
    """The index convention rho chooses: embedding-counted (True) when the embedding weighs
    at least half a block output (rho >= 1/2), the seed convention (False) below."""
    check_real("rho_value", rho_value, 0.0)
    return bool(rho_value >= 0.5)


def reference_exponent(k_min: int, k_max: int, embedding_counted: bool) -> float:
    """Slope of log omega_k^2 (the theorem's exact curve) on log k over k_min..k_max."""
    check_int("k_min", k_min, 1, MAX_K - 1)
    check_int("k_max", k_max, 2, MAX_K)
    if k_max <= k_min:
        raise ValueError(f"k_max must exceed k_min (a slope needs two points), got k_min={k_min}, k_max={k_max}")
    check_bool("embedding_counted", embedding_counted)
    k = np.arange(k_min, k_max + 1)
    if not embedding_counted and k_min < 2:
        raise ValueError("the seed convention starts at k = 2 (k_min must be >= 2)")
    y = [float(theory.omega_sq(int(j), embedding_counted=embedding_counted)) for j in k]
    return loglog_slope(k, y)[0]


def halves(L: int, front: int | None = None, last: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The blocks of the two halves the idle-block contrasts compare (1-based): the later half
    L//2 + 1..L (the last block included; ``last=False``: L//2 + 1..L - 1, the last block
    apart, as the sensitivity reading declared beside it) and the earlier half past the front,
    front + 1..L//2."""
    front = FRONT_BLOCKS if front is None else front
    check_bool("last", last)
    check_int("L", L, 2 * front + 2 + (0 if last else 2))
    return np.arange(L // 2 + 1, L + (1 if last else 0)), np.arange(front + 1, L // 2 + 1)


def half_ratio(costs, front: int | None = None, last: bool = True) -> float:
    """Mean cost of the later half over the mean cost of the earlier half past the front
    (:func:`halves`, ``last`` as there); ``costs``: [L], one per block (k = 1..L). Below 1 when
    later blocks cost less."""
    c = check_array("costs", costs, 1)
    late, early = halves(len(c), front, last)
    den = float(np.mean(np.asarray(c, float)[early - 1]))
    if not den > 0:
        raise ValueError(f"the earlier half's mean cost must be positive for a ratio, got {den}")
    return float(np.mean(np.asarray(c, float)[late - 1])) / den


#: what an exponent's interval is taken over: the sequences of one model (a percentile bootstrap)
#: or the seeds of a cell of training runs (a t interval over the seeds' exponents)
OVER = ("sequences", "seeds")


@dataclass(frozen=True)
class Exponent:
    """A fitted exponent of the per-layer change, omega_k^2 ~ k^exponent over k = k_min..k_max,
    with its interval [lo, hi] at ``level`` over ``n`` replicates of kind ``over`` (one of
    :data:`OVER`; lo and hi None when one replicate leaves nothing to resample), beside the
    theorem's exponent over the same range in the same index convention (``reference``,
    :func:`reference_exponent`).

    ``embedding_counted``: the convention (True: var(x_k) = k sigma^2, the embedding counted as
    a summand; False: the seed's, var(x_k) = (k-1) sigma^2), named by :attr:`convention`;
    ``rho``: the embedding-to-block variance ratio that chose it (:func:`rho`; None when the
    convention was given). Set where they were computed: ``reference_other``, the theorem's
    exponent in the other convention; ``interval``, the
    :class:`~resdecay_lib.stats.inference.TInterval` of an interval over seeds (its se and t);
    ``shape`` and ``drift``, the curvature test's verdict and drift interval; ``fit``, the
    :class:`~resdecay_lib.stats.fit.PowerLawFit` of a bootstrap (its ``interval(level)`` reads
    other levels, its ``n_dropped`` the replicates left out)."""
    exponent: float
    lo: float | None
    hi: float | None
    level: float
    reference: float
    embedding_counted: bool
    rho: float | None
    k_min: int
    k_max: int
    n: int
    over: str = "sequences"
    reference_other: float | None = None
    interval: object = None
    shape: str | None = None
    drift: object = None
    fit: object = field(repr=False, compare=False, default=None)

    def __post_init__(self):
        if self.over not in OVER:
            raise ValueError(f"over must be one of {OVER}, got {self.over!r}")

    @property
    def convention(self) -> str:
        """The index convention's name: "embedding-counted" or "seed"."""
        return "embedding-counted" if self.embedding_counted else "seed"

    @property
    def reading(self) -> str:
        """Where the theorem's exponent lies against the interval, in words."""
        if self.lo is None or self.hi is None:
            return f"no interval (one {self.over[:-1]}): the data cannot tell"
        if self.lo <= self.reference <= self.hi:
            return "consistent with the theorem (its exponent lies inside the interval)"
        if self.hi < self.reference:
            return "decays faster than the theorem (the interval lies below its exponent)"
        return "decays slower than the theorem (the interval lies above its exponent)"

    @property
    def how(self) -> str:
        """How the interval was made, in words: "95% percentile bootstrap over 16 sequences"."""
        kind = "percentile bootstrap" if self.over == "sequences" else "t interval"
        return f"{self.level:.0%} {kind} over {self.n} {self.over}"

    def __str__(self):
        kind = "bootstrap" if self.over == "sequences" else "t interval"
        iv = (f" [{self.lo:.3f}, {self.hi:.3f}] ({self.level:.0%} {kind} over {self.n} {self.over})"
              if self.lo is not None and self.hi is not None else "")
        why = f", rho = {self.rho:.2f}" if self.rho is not None else ""
        return (f"exponent {self.exponent:.3f}{iv} over k = {self.k_min}..{self.k_max}; the theorem's "
                f"{self.reference:.3f} ({self.convention} convention{why}): {self.reading}")
