"""Intervals over seeds, equivalence tests and multiplicity corrections, in plain numpy.

* :func:`t_quantile` -- Student's t quantile (the regularised incomplete beta function,
  inverted by bisection; no SciPy).
* :func:`t_interval` -- the two-sided t interval of a mean over independent replicates
  (seeds): mean +- t_{1 - a/2, n-1} s / sqrt(n), with a the (possibly corrected) level.
* :func:`equivalent` -- two one-sided tests (TOST): the mean lies within ``margin`` of a
  reference when the (1 - 2a) t interval lies inside [ref - margin, ref + margin].
* :func:`bonferroni` -- the per-test level a / m of m tests at family-wise level a.
* :func:`z_check` -- a family of z statistics of a Monte Carlo check against its
  Bonferroni critical value (Chapters 3 to 5).
* :func:`spearman` -- Spearman's rank correlation (ties get average ranks).

Knows nothing of torch.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["t_cdf", "t_quantile", "TInterval", "t_interval", "equivalent", "bonferroni", "ZCheck", "z_check",
           "spearman"]


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (Lentz; Numerical Recipes 6.4)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def _check_df(df):
    if isinstance(df, bool) or not isinstance(df, numbers.Real) or not math.isfinite(df) or df <= 0:
        raise ValueError(f"df must be a positive finite number, got {df!r}")


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom.

    >>> round(t_cdf(4.302652729911275, 2), 9)
    0.975
    """
    _check_df(df)
    if isinstance(t, bool) or not isinstance(t, numbers.Real) or not math.isfinite(t):
        raise ValueError(f"t must be a finite number, got {t!r}")
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The p quantile of Student's t (bisection on :func:`t_cdf` to 1e-12).

    >>> round(t_quantile(0.975, 2), 3), round(t_quantile(0.975, 4), 3), round(t_quantile(0.975, 1e6), 3)
    (4.303, 2.776, 1.96)
    """
    _check_df(df)
    if not (isinstance(p, numbers.Real) and 0 < p < 1):
        raise ValueError(f"p must lie in (0, 1), got {p!r}")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class TInterval:
    """mean, [lo, hi] at ``level``; ``se`` = s / sqrt(n), ``t`` the critical value, ``n``."""
    mean: float
    lo: float
    hi: float
    se: float
    t: float
    n: int
    level: float

    def contains(self, x: float) -> bool:
        return self.lo <= x <= self.hi

    def __format__(self, spec):
        spec = spec or ".3g"
        return f"{self.mean:{spec}} [{self.lo:{spec}}, {self.hi:{spec}}]"


def t_interval(values, level: float = 0.95) -> TInterval:
    """Two-sided t interval of the mean of independent replicates (at least 3 of them).

    >>> iv = t_interval([1.0, 2.0, 3.0]); round(iv.lo, 4), round(iv.hi, 4)
    (-0.4841, 4.4841)
    """
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"values must be numbers (one per replicate), got {values!r}") from exc
    if v.ndim != 1 or v.size < 3:
        raise ValueError(f"values must be a 1-D array of at least 3 replicates (seeds), got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError("values must be finite")
    if not (isinstance(level, numbers.Real) and 0 < level < 1):
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    n = v.size
    se = float(v.std(ddof=1) / math.sqrt(n))
    t = t_quantile(1 - (1 - level) / 2, n - 1)
    m = float(v.mean())
    return TInterval(m, m - t * se, m + t * se, se, t, n, float(level))


def equivalent(values, reference: float, margin: float, alpha: float = 0.05) -> tuple[bool, TInterval]:
    """TOST: is the mean of ``values`` within ``margin`` of ``reference`` at level ``alpha``?

    Equivalent when the (1 - 2 alpha) t interval lies inside [reference - margin,
    reference + margin]. Returns (decision, that interval).
    """
    if isinstance(margin, bool) or not (isinstance(margin, numbers.Real) and math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a positive finite number, got {margin!r}")
    if isinstance(reference, bool) or not (isinstance(reference, numbers.Real) and math.isfinite(reference)):
        raise ValueError(f"reference must be a finite number, got {reference!r}")
    if not (isinstance(alpha, numbers.Real) and 0 < alpha < 0.5):
        raise ValueError(f"alpha must lie in (0, 0.5), got {alpha!r}")
    iv = t_interval(values, 1 - 2 * alpha)
    return (reference - margin <= iv.lo and iv.hi <= reference + margin), iv


def bonferroni(alpha: float, m: int) -> float:
    """Per-test level of ``m`` tests at family-wise level ``alpha``: alpha / m."""
    if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
        raise ValueError(f"m must be a positive integer (number of tests), got {m!r}")
    if not (isinstance(alpha, numbers.Real) and 0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    return alpha / m


@dataclass(frozen=True)
class ZCheck:
    """One family of z statistics, (simulated - predicted) / standard error, against the
    Bonferroni critical value at family-wise level ``alpha``: ``max_abs`` the largest |z|,
    ``z_crit`` = Phi^{-1}(1 - alpha / (2 n)) over its ``n`` statistics. ``passed``: no |z|
    exceeds it (if every prediction is right, this fails with probability at most alpha,
    whatever the dependence between the statistics)."""
    max_abs: float
    z_crit: float
    n: int
    alpha: float

    @property
    def passed(self) -> bool:
        return self.max_abs <= self.z_crit


def z_check(z, alpha: float = 0.01) -> ZCheck:
    """:class:`ZCheck` of ``z``: an array of z statistics, or a list of arrays (one family)."""
    from .gaussian import bonferroni_z_crit
    parts = [np.asarray(v, dtype=float).ravel() for v in (z if isinstance(z, (list, tuple)) else [z])]
    zs = np.concatenate(parts) if parts else np.array([])
    if zs.size == 0 or not np.all(np.isfinite(zs)):
        raise ValueError(f"z must hold at least one finite z statistic, got {zs.size} values"
                         + ("" if zs.size == 0 else " with non-finite ones"))
    return ZCheck(float(np.max(np.abs(zs))), bonferroni_z_crit(int(zs.size), alpha), int(zs.size), float(alpha))


def _ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x))
    r[order] = np.arange(1, len(x) + 1)
    for v in np.unique(x):             # average ranks of ties
        sel = x == v
        if sel.sum() > 1:
            r[sel] = r[sel].mean()
    return r


def spearman(x, y) -> float:
    """Spearman's rank correlation of two 1-D arrays of equal length >= 3.

    >>> spearman([1, 2, 3, 4], [10, 20, 15, 40])
    0.8
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 3:
        raise ValueError(f"x and y must be 1-D of one length >= 3, got {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite (a NaN has no rank)")
    rx, ry = _ranks(x), _ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    den = math.sqrt(float((rx * rx).sum() * (ry * ry).sum()))
    if den == 0:
        raise ValueError("x or y is constant: the rank correlation is undefined")
    return float((rx * ry).sum() / den)
