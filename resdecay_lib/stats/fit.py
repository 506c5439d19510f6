"""Power-law fits of a per-layer curve, with bootstrap confidence intervals.

Model: y(k) = A k^p over a chosen range k_min <= k <= k_max, fitted by least squares on
log y = log A + p log k, where y is the mean over samples (sequences, possibly from several
seeds) of the per-sample curves.

Interval: nonparametric percentile bootstrap over samples. Each replicate resamples the
rows of the [S, K] sample matrix with replacement (or, with ``groups`` given, first the
groups -- e.g. seeds -- with replacement, then the rows within each drawn group), averages,
and refits; the interval is the (alpha/2, 1 - alpha/2) percentile of the refitted
exponents. A replicate whose mean curve is not positive somewhere has no logarithm and is
dropped; ``n_dropped`` counts them (the interval is over the others).

No interval: a single curve ([K], or [1, K]) has nothing to resample. Its fit gives the
exponent alone with an explicit "no interval" (``lo``, ``hi`` and ``boot_se`` None,
``n_boot`` 0 whatever was asked, ``has_interval`` False, ``no_interval`` saying why), never
NaN; ``groups`` for such a curve raises ValueError (the book's theory curves are fitted this
way, for their exponent alone).
:meth:`PowerLawFit.interval` reads the same replicates at another level, so a corrected
interval needs no second bootstrap. The bootstrap generator is seeded (``seed=0`` by default), so a fit is
reproducible. Resampling whole rows keeps the correlation across k inside a sequence.

This module knows nothing of torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..checks import ArgumentTypeError, check_int, check_real

__all__ = ["PowerLawFit", "power_law", "loglog_slope"]


@dataclass(frozen=True)
class PowerLawFit:
    """y(k) ~ prefactor * k**exponent over k_min..k_max.

    ``lo``, ``hi``: percentile bootstrap interval of the exponent at ``level``; None when
    fitted to a single curve, which has nothing to resample (``no_interval`` says so, and
    ``n_boot`` is 0). ``boot_se``: standard deviation of the bootstrap exponents (None
    likewise). ``n_dropped``: replicates dropped (a non-positive mean curve); ``slopes``: the
    kept replicates' exponents, for :meth:`interval`.
    """
    exponent: float
    prefactor: float
    lo: float | None
    hi: float | None
    boot_se: float | None
    k_min: int
    k_max: int
    n_points: int
    n_samples: int
    n_groups: int
    n_boot: int
    level: float
    n_dropped: int = 0
    slopes: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: why the fit has no interval ("" when it has one)
    no_interval: str = ""

    @property
    def has_interval(self) -> bool:
        """Whether ``lo``, ``hi`` and ``boot_se`` hold a bootstrap interval."""
        return self.lo is not None

    @property
    def estimate(self) -> float:
        """The fitted exponent (the protocol of stats.inference.Hypothesis)."""
        return self.exponent

    def interval(self, level: float) -> tuple[float, float]:
        """The percentile interval of the exponent at ``level`` from the same replicates."""
        check_real("level", level, 0, 1, lo_open=True, hi_open=True)
        if self.slopes is None or self.slopes.size < 2:
            raise ValueError("this fit has no bootstrap replicates (one curve, or one sample)")
        a = (1 - level) / 2
        lo, hi = np.quantile(self.slopes, [a, 1 - a])
        return float(lo), float(hi)


def loglog_slope(k, y) -> tuple[float, float]:
    """Least-squares slope and intercept of log y on log k (1-D arrays, y > 0).

    >>> k = np.arange(1, 9); round(loglog_slope(k, 3 * k ** -0.5)[0], 12)
    -0.5
    """
    k, y = _positive_1d("k", k), _positive_1d("y", y)
    if k.shape != y.shape or k.size < 2:
        raise ValueError(f"k and y must be 1-D of one length >= 2, got shapes {k.shape} and {y.shape}")
    if np.all(k == k[0]):
        raise ValueError("k must hold at least two different values (a slope needs a spread in log k)")
    lk, ly = np.log(k), np.log(y)
    lkc = lk - lk.mean()
    slope = float((lkc * (ly - ly.mean())).sum() / (lkc * lkc).sum())
    return slope, float(ly.mean() - slope * lk.mean())


def _positive_1d(name, v) -> np.ndarray:
    """``v`` as a float64 array of positive finite numbers (what a logarithm needs)."""
    try:
        a = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{name} must be a 1-D array of positive finite numbers, got "
                        f"{type(v).__name__}") from None
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of positive finite numbers, got shape {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name} must be positive and finite everywhere (a power law is fitted "
                         f"on log {name}), got {v!r}")
    return a


#: most bootstrap replicates of one fit (their slopes are held at once)
MAX_BOOT = 1_000_000


def _slopes(lk, ly):
    """Vectorised slopes: lk (K,), ly (R, K) -> (R,)."""
    lkc = lk - lk.mean()
    return (ly - ly.mean(-1, keepdims=True)) @ lkc / (lkc @ lkc)


#: why a single curve has no interval
ONE_CURVE = "one curve: nothing to resample (pass per-sample curves [S, K], S >= 2, for an interval)"


def power_law(k, y, k_min=None, k_max=None, groups=None, n_boot: int = 1000,
              level: float = 0.95, seed: int = 0) -> PowerLawFit:
    """Fit y ~ A k^p over ``k_min <= k <= k_max`` with a bootstrap interval for p.

    Parameters
    ----------
    k : 1-D array of K positive indices (e.g. ``LayerChange.k``).
    y : array [K] (one curve: no interval, see the module docstring) or [S, K] (per-sample
        curves, e.g. ``LayerChange.per_sequence["omega_sq"]`` stacked over seeds; S = 1 is
        one curve too).
    k_min, k_max : fit range (inclusive), default the whole of ``k``; it must hold at
        least 3 indices and the mean curve must be positive there.
    groups : optional [S] labels (e.g. the seed of each row): two-stage bootstrap, groups
        then rows within groups.
    n_boot, level, seed : replicates, interval level, bootstrap generator seed. One curve has
        nothing to resample: its fit has no interval, ``n_boot`` 0 and ``no_interval`` says
        why, whatever ``n_boot`` asked for; ``groups`` for one curve raises ValueError.

    >>> k = np.arange(1, 11); rng = np.random.default_rng(0)
    >>> y = k ** -1.0 * np.exp(0.05 * rng.standard_normal((40, 10)))
    >>> f = power_law(k, y, k_min=2)
    >>> f.lo < -1 < f.hi, f.k_min, f.k_max, f.n_points
    (True, 2, 10, 9)
    """
    try:
        k = np.asarray(k, dtype=np.float64) if not isinstance(k, np.ndarray) or k.dtype.kind not in "fiu" else k
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"k must be a non-empty 1-D array of positive indices, got {type(k).__name__}") from None
    if k.ndim != 1 or k.size == 0:
        raise ValueError(f"k must be a non-empty 1-D array, got shape {k.shape}")
    if not np.all(np.isfinite(k)) or np.any(k <= 0):
        raise ValueError("k must be positive and finite (a power law is fitted on log k)")
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"y must be a real array [K] or [S, K], got {type(y).__name__}") from None
    if y.ndim == 1:
        y = y[None]
        resample = False
    elif y.ndim == 2:
        resample = True
    else:
        raise ValueError(f"y must have shape [K] or [S, K], got {y.shape}")
    if y.shape[1] != k.size:
        raise ValueError(f"y has {y.shape[1]} columns but k has {k.size} entries")
    k_min = float(k.min()) if k_min is None else k_min
    k_max = float(k.max()) if k_max is None else k_max
    for name, v in (("k_min", k_min), ("k_max", k_max)):
        check_real(name, v)
    if not k_min < k_max:
        raise ValueError(f"k_min must be below k_max, got k_min={k_min}, k_max={k_max}")
    sel = (k >= k_min) & (k <= k_max)
    if sel.sum() < 3:
        raise ValueError(f"the range k_min={k_min}..k_max={k_max} holds {int(sel.sum())} of the "
                         f"given k (from {k.min()} to {k.max()}); a fit needs at least 3")
    check_int("n_boot", n_boot, 1, MAX_BOOT)
    check_real("level", level, 0, 1, lo_open=True, hi_open=True)
    check_int("seed", seed, 0)
    ks, ys = k[sel].astype(float), y[:, sel]
    if not np.all(np.isfinite(ys)):
        raise ValueError("y must be finite inside the fit range")
    mean = ys.mean(0)
    if np.any(mean <= 0):
        bad = ks[mean <= 0]
        raise ValueError(f"the mean curve of y must be positive in the fit range (log), it is not at k={bad.tolist()}")
    slope, icpt = loglog_slope(ks, mean)
    S = ys.shape[0]
    n_groups = 1
    lo = hi = se = None
    slopes, n_dropped = None, 0
    why = ""
    if not resample or S < 2:
        what = "one curve [K]" if not resample else "one sample (a [1, K] array)"
        if groups is not None:
            raise ValueError(f"groups cannot be resampled: y is {what}; pass per-sample curves [S, K] with one "
                             f"group label per row")
        why = ONE_CURVE
    else:
        rng = np.random.default_rng(seed)
        lk = np.log(ks)
        if groups is None:
            idx = rng.integers(0, S, size=(n_boot, S))
            means = ys[idx].mean(1)                                  # (n_boot, K')
        else:
            groups = np.asarray(groups)
            if groups.shape != (S,):
                raise ValueError(f"groups must have shape [S] = ({S},), got {groups.shape}")
            labels = np.unique(groups)
            members = [np.flatnonzero(groups == g) for g in labels]
            n_groups = len(labels)
            means = np.empty((n_boot, ys.shape[1]))
            for b in range(n_boot):
                rows = [m[rng.integers(0, m.size, m.size)]
                        for m in (members[i] for i in rng.integers(0, n_groups, n_groups))]
                means[b] = ys[np.concatenate(rows)].mean(0)
        ok = np.all(means > 0, axis=1)  # a replicate with a non-positive mean has no log
        n_dropped = int((~ok).sum())
        if n_dropped > n_boot - 2:
            raise ValueError(f"{n_dropped} of the n_boot={int(n_boot)} bootstrap replicates have a mean curve that is "
                             f"not positive somewhere in the fit range: too few are left for an interval (y is "
                             f"negative too often there for a power law's bootstrap)")
        slopes = _slopes(lk, np.log(means[ok]))
        a = (1 - level) / 2
        lo, hi = (float(v) for v in np.quantile(slopes, [a, 1 - a]))
        se = float(slopes.std(ddof=1))
    return PowerLawFit(exponent=slope, prefactor=float(np.exp(icpt)), lo=lo, hi=hi, boot_se=se,
                       k_min=int(ks.min()), k_max=int(ks.max()), n_points=int(sel.sum()),
                       n_samples=S, n_groups=n_groups, n_boot=0 if why else int(n_boot),
                       level=float(level), n_dropped=n_dropped, slopes=slopes, no_interval=why)
