"""Intervals over seeds, equivalence tests and multiplicity corrections, in plain numpy.

* :func:`t_quantile` -- Student's t quantile (the regularised incomplete beta function,
  inverted by bisection; no SciPy).
* :func:`t_interval` -- the two-sided t interval of a mean over independent replicates
  (seeds): mean +- t_{1 - a/2, n-1} s / sqrt(n), with a the (possibly corrected) level.
* :func:`equivalent` -- two one-sided tests (TOST): the mean lies within ``margin`` of a
  reference when the (1 - 2a) t interval lies inside [ref - margin, ref + margin].
* :func:`within_margin`, :func:`outside_margin`, :func:`margin_verdict` -- an interval
  against a reference and an equivalence margin: wholly inside (equivalent, the two ends being
  the two one-sided tests), wholly outside (not equivalent), or neither (undetermined).
* :func:`bonferroni` -- the per-test level a / m of m tests at family-wise level a;
  :class:`Family` -- the interval levels its equivalence (TOST) and difference tests read;
  :func:`run_family` -- a chapter's claims as one such family (:class:`Claim` in,
  :class:`ClaimResult` out), :func:`family_markdown` -- their table.
* :class:`Replicates` -- per-seed values with :meth:`Replicates.interval` at any level (the
  same protocol as :class:`resdecay_lib.fit.PowerLawFit`: ``estimate`` and ``interval``).
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

__all__ = ["t_cdf", "t_quantile", "TInterval", "t_interval", "equivalent", "within_margin", "outside_margin",
           "margin_verdict", "bonferroni", "Family", "Replicates", "Claim", "ClaimResult", "run_family",
           "family_markdown", "ZCheck", "z_check", "spearman"]


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


def within_margin(lo: float, hi: float, ref: float, margin: float) -> bool:
    """The interval [lo, hi] lies wholly within ``margin`` of ``ref``: equivalence (TOST),
    each end being one of the two one-sided tests at the interval's (1 - level) / 2."""
    return ref - margin <= lo and hi <= ref + margin


def outside_margin(lo: float, hi: float, ref: float, margin: float) -> bool:
    """The interval [lo, hi] lies wholly outside ``margin`` of ``ref``: significantly not
    equivalent (with ``margin`` 0: significantly different from ``ref``)."""
    return hi < ref - margin or lo > ref + margin


def margin_verdict(lo: float, hi: float, ref: float, margin: float) -> str:
    """"equivalent", "not equivalent" or "undetermined" (the interval straddles a margin's end).

    >>> margin_verdict(-0.98, -0.86, -0.95, 0.1), margin_verdict(-0.6, -0.5, -0.95, 0.1)
    ('equivalent', 'not equivalent')
    """
    for name, v in (("lo", lo), ("hi", hi), ("ref", ref), ("margin", margin)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if margin < 0 or lo > hi:
        raise ValueError(f"need margin >= 0 and lo <= hi, got margin={margin}, lo={lo}, hi={hi}")
    if within_margin(lo, hi, ref, margin):
        return "equivalent"
    return "not equivalent" if outside_margin(lo, hi, ref, margin) else "undetermined"


def bonferroni(alpha: float, m: int) -> float:
    """Per-test level of ``m`` tests at family-wise level ``alpha``: alpha / m."""
    if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
        raise ValueError(f"m must be a positive integer (number of tests), got {m!r}")
    if not (isinstance(alpha, numbers.Real) and 0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    return alpha / m


@dataclass(frozen=True)
class Family:
    """``m`` tests at family-wise level ``alpha``, Bonferroni-corrected: each test is at
    ``alpha / m``. An equivalence test (TOST) at that level reads the two-sided interval at
    ``tost_level`` = 1 - 2 alpha / m; a two-sided difference test reads ``diff_level`` =
    1 - alpha / m.

    >>> f = Family(10); f.per_test, round(f.tost_level, 6), round(f.diff_level, 6)
    (0.005, 0.99, 0.995)
    """
    m: int
    alpha: float = 0.05

    def __post_init__(self):
        bonferroni(self.alpha, self.m)          # validates both
        if not self.alpha < 0.5:
            raise ValueError(f"alpha must lie in (0, 0.5) for a TOST, got {self.alpha!r}")

    @property
    def per_test(self) -> float:
        return bonferroni(self.alpha, self.m)

    @property
    def tost_level(self) -> float:
        return 1 - 2 * self.per_test

    @property
    def diff_level(self) -> float:
        return 1 - self.per_test


class Replicates:
    """Independent replicates (one value per seed): ``estimate`` their mean, ``interval(level)``
    their two-sided t interval (:func:`t_interval`)."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)
        t_interval(self.values)                  # validates: 1-D, >= 3, finite
        self.estimate = float(self.values.mean())

    def interval(self, level: float) -> tuple[float, float]:
        iv = t_interval(self.values, level)
        return iv.lo, iv.hi


#: what each kind of claim reads: the equivalence's TOST interval, or the difference's
_KINDS = {"equivalent": "tost_level", "differs": "diff_level", "above": "diff_level", "below": "diff_level"}


@dataclass(frozen=True)
class Claim:
    """One claim of a chapter about an estimate ``x`` (anything with ``estimate`` and
    ``interval(level)``: a :class:`~resdecay_lib.fit.PowerLawFit`, :class:`Replicates`).

    ``kind``:
    * ``"equivalent"`` -- within ``margin`` of the number ``ref`` (TOST);
    * ``"differs"`` -- not equal to the number ``ref`` (two-sided);
    * ``"above"`` / ``"below"`` -- wholly above / below ``ref``: a number (one-sided, read
      from the two-sided interval at the difference level), or another estimate (the two
      intervals, each at the difference level, do not overlap: conservative).
    """
    text: str
    kind: str
    x: object
    ref: object
    margin: float = 0.0

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {sorted(_KINDS)}, got {self.kind!r}")
        if self.kind == "equivalent" and not (isinstance(self.margin, numbers.Real) and self.margin > 0):
            raise ValueError(f"an equivalence claim needs a margin > 0, got {self.margin!r}")


@dataclass(frozen=True)
class ClaimResult:
    """A claim's verdict: ``shown`` (the family's test establishes it) and ``word``
    (equivalent / not equivalent / undetermined; shown / not shown), with the interval read."""
    text: str
    kind: str
    estimate: float
    lo: float
    hi: float
    ref_text: str
    level: float
    shown: bool
    word: str


def run_family(claims, alpha: float = 0.05) -> list:
    """Every claim of ``claims`` tested as one Bonferroni family at family-wise ``alpha``."""
    claims = list(claims)
    fam = Family(len(claims), alpha)
    out = []
    for c in claims:
        level = getattr(fam, _KINDS[c.kind])
        lo, hi = c.x.interval(level)
        if c.kind == "equivalent":
            word = margin_verdict(lo, hi, float(c.ref), c.margin)
            shown, ref_text = word == "equivalent", f"{float(c.ref):.3f} ± {c.margin:.3g}"
        elif c.kind == "differs":
            shown = outside_margin(lo, hi, float(c.ref), 0.0)
            word, ref_text = ("shown" if shown else "not shown"), f"{float(c.ref):.3f}"
        else:
            if isinstance(c.ref, numbers.Real):          # above / below a number
                rlo = rhi = float(c.ref)
                ref_text = f"{rlo:.3f}"
            else:                                         # above / below another estimate
                rlo, rhi = c.ref.interval(level)
                ref_text = f"[{rlo:.3f}, {rhi:.3f}]"
            shown = lo > rhi if c.kind == "above" else hi < rlo
            word = "shown" if shown else "not shown"
        out.append(ClaimResult(c.text, c.kind, float(c.x.estimate), lo, hi, ref_text, level, shown, word))
    return out


def family_markdown(results) -> str:
    """A MyST table of :func:`run_family`'s results: claim, kind, estimate and interval,
    reference, verdict."""
    lines = ["| claim | test | estimate [interval] | reference | verdict |", "| --- | --- | --- | --- | --- |"]
    for r in results:
        lines.append(f"| {r.text} | {r.kind} | {r.estimate:.3f} [{r.lo:.3f}, {r.hi:.3f}] | {r.ref_text} | "
                     f"**{r.word}** |")
    return "\n".join(lines)


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
