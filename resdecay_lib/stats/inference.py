"""Intervals over seeds, equivalence tests and multiplicity corrections, with numpy and SciPy.

* :func:`t_quantile`, :func:`t_cdf` -- Student's t quantile and distribution function
  (``scipy.stats.t``).
* :func:`t_interval` -- the two-sided t interval of a mean over independent replicates
  (seeds): mean +- t_{1 - a/2, n-1} s / sqrt(n), with a the (possibly corrected) level.
* :func:`equivalent` -- two one-sided tests (TOST): the mean lies within ``margin`` of a
  reference when the (1 - 2a) t interval lies inside [ref - margin, ref + margin].
* :func:`within_margin`, :func:`outside_margin`, :func:`margin_verdict` -- an interval
  against a reference and an equivalence margin: wholly inside (equivalent, the two ends being
  the two one-sided tests), wholly outside (not equivalent), or neither (undetermined).
* :func:`bonferroni` -- the per-test level a / m of m tests at family-wise level a;
  :class:`Family` -- the interval levels its equivalence (TOST) and difference tests read;
  :func:`run_family` -- a chapter's claims as one such family (:class:`Hypothesis` in,
  :class:`HypothesisResult` out), :func:`family_markdown` -- their table.
* :class:`Replicates` -- per-seed values with :meth:`Replicates.interval` at any level (the
  same protocol as :class:`resdecay_lib.stats.fit.PowerLawFit`: ``estimate`` and ``interval``).
* :func:`z_check` -- a family of z statistics of a Monte Carlo check against its
  Bonferroni critical value (Chapters 3 to 5).
* :func:`power_above` -- the power of a t interval's lower end against a threshold (noncentral t).
* :func:`onset` -- the depth from which a cost's intervals lie wholly above a margin.
* :func:`spearman` -- Spearman's rank correlation (ties get average ranks,
  ``scipy.stats.rankdata``).

Knows nothing of torch.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata as _rankdata
from scipy.stats import t as _scipy_t

from ..checks import ArgumentTypeError, Array, Int, OneOf, Real, Text, accepts, check_fields, check_items, declare, show
from ..maths.gaussian import bonferroni_z_crit

#: the domains several functions here share, declared once
_LEVEL = Real(0, 1, lo_open=True, hi_open=True)           # a confidence level
#: a significance level: from 1e-12 (below it 1 - alpha rounds towards 1 and the quantiles the
#: tests read lose every digit) to 1, open
_ALPHA = Real(1e-12, 1, hi_open=True)
_TOST_ALPHA = Real(1e-12, 0.5, hi_open=True)              # a TOST's: 1 - 2 alpha must be a level
_BOUND = Real(finite=False)                               # an interval's end (one-sided: infinite)
_MARGIN = Real(0)                                         # an equivalence margin (0: a difference test)
_REPLICATES = Array(1, 3, what="a 1-D array of at least 3 finite replicates (seeds)")

__all__ = ["t_cdf", "t_quantile", "TInterval", "t_interval", "equivalent", "within_margin", "outside_margin",
           "margin_verdict", "bonferroni", "Family", "Replicates", "Hypothesis", "HypothesisResult", "run_family",
           "family_markdown", "ZCheck", "z_check", "spearman", "ONSET_READINGS", "Onset", "onset",
           "power_above"]


#: degrees of freedom: from 0.1 to 1e9 (at 1e9 the t quantiles equal the normal's to 1e-9)
_DF = Real(0.1, 1e9)


@accepts(t=Real(), df=_DF)
def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (``scipy.stats.t.cdf``).

    >>> round(t_cdf(4.302652729911275, 2), 9)
    0.975
    """
    return float(_scipy_t.cdf(t, df))


@accepts(p=Real(0, 1, lo_open=True, hi_open=True), df=_DF)
def t_quantile(p: float, df: float) -> float:
    """The p quantile of Student's t (``scipy.stats.t.ppf``).

    >>> round(t_quantile(0.975, 2), 3), round(t_quantile(0.975, 4), 3), round(t_quantile(0.975, 1e6), 3)
    (4.303, 2.776, 1.96)
    """
    return _t_quantile(p, df)


def _t_quantile(p: float, df: float) -> float:
    if p < 0.5:            # by symmetry: SciPy's lower tail can lose its sign for p below 1e-250
        return -_t_quantile(1 - p, df)
    return float(_scipy_t.ppf(p, df))


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


@accepts(values=_REPLICATES, level=_LEVEL)
def t_interval(values, level: float = 0.95) -> TInterval:
    """Two-sided t interval of the mean of independent replicates (at least 3 of them).

    >>> iv = t_interval([1.0, 2.0, 3.0]); round(iv.lo, 4), round(iv.hi, 4)
    (-0.4841, 4.4841)
    """
    v = np.asarray(values, dtype=np.float64)
    n = v.size
    se = float(v.std(ddof=1) / math.sqrt(n))
    t = _t_quantile(1 - (1 - level) / 2, n - 1)
    m = float(v.mean())
    return TInterval(m, m - t * se, m + t * se, se, t, n, float(level))


@accepts(values=_REPLICATES, reference=Real(), margin=Real(0, lo_open=True), alpha=_TOST_ALPHA)
def equivalent(values, reference: float, margin: float, alpha: float = 0.05) -> tuple[bool, TInterval]:
    """TOST: is the mean of ``values`` within ``margin`` of ``reference`` at level ``alpha``?

    Equivalent when the (1 - 2 alpha) t interval lies inside [reference - margin,
    reference + margin]. Returns (decision, that interval).
    """
    iv = t_interval(values, 1 - 2 * alpha)
    return within_margin(iv.lo, iv.hi, reference, margin), iv


def _check_interval(lo, hi) -> None:
    if lo > hi:
        raise ValueError(f"the interval must have lo <= hi, got lo={show(lo)}, hi={show(hi)}")


#: an interval [lo, hi] (either end may be infinite: a one-sided interval; never NaN), a
#: finite reference and a finite margin >= 0 (0: a difference test)
_MARGIN_TEST = dict(lo=_BOUND, hi=_BOUND, ref=Real(), margin=_MARGIN)


@accepts(**_MARGIN_TEST)
def within_margin(lo: float, hi: float, ref: float, margin: float) -> bool:
    """The interval [lo, hi] lies wholly within ``margin`` of ``ref``: equivalence (TOST),
    each end being one of the two one-sided tests at the interval's (1 - level) / 2."""
    _check_interval(lo, hi)
    return ref - margin <= lo and hi <= ref + margin


@accepts(**_MARGIN_TEST)
def outside_margin(lo: float, hi: float, ref: float, margin: float) -> bool:
    """The interval [lo, hi] lies wholly outside ``margin`` of ``ref``: significantly not
    equivalent (with ``margin`` 0: significantly different from ``ref``)."""
    _check_interval(lo, hi)
    return hi < ref - margin or lo > ref + margin


@accepts(**_MARGIN_TEST)
def margin_verdict(lo: float, hi: float, ref: float, margin: float) -> str:
    """"equivalent", "not equivalent" or "undetermined" (the interval straddles a margin's end).

    >>> margin_verdict(-0.98, -0.86, -0.95, 0.1), margin_verdict(-0.6, -0.5, -0.95, 0.1)
    ('equivalent', 'not equivalent')
    """
    _check_interval(lo, hi)
    if within_margin(lo, hi, ref, margin):
        return "equivalent"
    return "not equivalent" if outside_margin(lo, hi, ref, margin) else "undetermined"


@accepts(effect=Real(), sd=Real(0, lo_open=True), n=Int(2), level=_LEVEL, threshold=Real())
def power_above(effect: float, sd: float, n: int, level: float, threshold: float) -> float:
    """The probability that a two-sided t interval at ``level`` over ``n`` replicates lies wholly
    above ``threshold``, when the replicates are normal with mean ``effect`` and standard
    deviation ``sd``: the power of the one-sided test that the interval's lower end reads.

    The lower end is m - t s / sqrt(n) with t = t_{(1 + level)/2, n - 1}; it exceeds the
    threshold when T' = (m - threshold) / (s / sqrt(n)) > t, and T' follows a noncentral t
    with n - 1 degrees of freedom and noncentrality (effect - threshold) sqrt(n) / sd
    (``scipy.stats.nct``). A planning number: ``effect`` and ``sd`` are what another sample
    estimated, not known values.

    >>> round(power_above(1.0, 1.0, 10, 0.95, 0.0), 3)
    0.803
    """
    from scipy.stats import nct, norm
    t = _t_quantile((1 + level) / 2, n - 1)
    nc = (effect - threshold) * math.sqrt(n) / sd
    p = float(nct.sf(t, n - 1, nc))
    # SciPy's noncentral t loses every digit for a noncentrality of thousands of standard errors,
    # where the power is 0 or 1 to double precision: the normal limit gives it
    return p if math.isfinite(p) else float(norm.sf(t - nc))


#: what :func:`onset` can say
ONSET_READINGS = ("costs from this depth on", "costs nothing up to the deepest depth", "cannot tell")


@dataclass(frozen=True)
class Onset:
    """Where a cost starts (:func:`onset`): ``depth`` the onset (None when none can be named),
    ``reading`` one of :data:`ONSET_READINGS`, ``undecided`` the depths whose interval meets
    ``margin`` or is missing (NaN), ``margin`` the margin read."""
    depth: int | None
    reading: str
    undecided: tuple
    margin: float


def onset(depths, lo, hi, margin: float) -> Onset:
    """The depth from which a cost lies wholly above ``margin``, from one interval per depth.

    ``depths`` (distinct positive ints, any order) with the ends ``lo``, ``hi`` of each depth's
    interval of the cost (NaN ends: no interval there) and ``margin`` > 0, the smallest cost
    that counts:

    * the onset is the smallest depth L* whose interval lies wholly above ``margin`` at L* and at
      every deeper depth ("costs from this depth on");
    * when every interval lies wholly below ``margin``, the cost is within the margin at every
      depth: "costs nothing up to the deepest depth" (an equivalence on the side that matters);
    * otherwise "cannot tell", with the depths whose interval meets ``margin`` or is missing.

    A depth above ``margin`` followed by a deeper one that is not starts no onset: the question is
    the depth from which it costs, and a cost that comes and goes is not one.

    >>> onset([4, 8, 16], [-0.02, 0.02, 0.03], [0.01, 0.05, 0.06], 0.01).depth
    8
    """
    if isinstance(depths, (str, bytes)) or not hasattr(depths, "__len__"):
        raise ArgumentTypeError(f"depths must be a sequence of depths (ints), got {type(depths).__name__} {show(depths)}")
    ds = check_items("depths", depths, numbers.Integral, "a depth (a positive int)")
    if not ds or any(isinstance(d, bool) or d < 1 for d in ds) or len(set(ds)) != len(ds):
        raise ValueError(f"depths must be distinct positive ints, at least one, got {show(depths)}")
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    if lo.shape != (len(ds),) or hi.shape != (len(ds),):
        raise ValueError(f"lo and hi must hold one end per depth ({len(ds)}), got shapes {lo.shape} and {hi.shape}")
    Real(0, lo_open=True).check("margin", margin)
    order = np.argsort(ds)
    ds = [int(ds[i]) for i in order]
    lo, hi = lo[order], hi[order]
    known = np.isfinite(lo) & np.isfinite(hi)
    above = known & (lo > margin)
    below = known & (hi < margin)
    undecided = tuple(d for d, a, b in zip(ds, above, below) if not (a or b))
    start = None
    for i in range(len(ds) - 1, -1, -1):                 # the longest run of "above" ending at the deepest depth
        if not above[i]:
            break
        start = ds[i]
    if start is not None:
        return Onset(start, ONSET_READINGS[0], undecided, float(margin))
    if below.all():
        return Onset(None, ONSET_READINGS[1], (), float(margin))
    return Onset(None, ONSET_READINGS[2], undecided, float(margin))


@accepts(alpha=_ALPHA, m=Int(1))
def bonferroni(alpha: float, m: int) -> float:
    """Per-test level of ``m`` tests (m >= 1) at family-wise level ``alpha``: alpha / m."""
    return alpha / m


@declare
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

    DOMAINS = {"m": Int(1), "alpha": _TOST_ALPHA}

    def __post_init__(self):
        check_fields(self, self.DOMAINS)
        if not 1 - 2 * self.alpha / self.m < 1:
            raise ValueError(f"alpha / m = {self.alpha / self.m:.3g} is too small: the TOST level "
                             f"1 - 2 alpha / m rounds to 1 (m={self.m}, alpha={self.alpha!r})")

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

    @accepts(values=_REPLICATES)
    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)
        self.estimate = float(self.values.mean())

    @accepts(level=_LEVEL)
    def interval(self, level: float) -> tuple[float, float]:
        iv = t_interval(self.values, level)
        return iv.lo, iv.hi


#: what each kind of claim reads: the equivalence's TOST interval, or the difference's
_KINDS = {"equivalent": "tost_level", "differs": "diff_level", "above": "diff_level", "below": "diff_level"}


@declare
@dataclass(frozen=True)
class Hypothesis:
    """One claim of a chapter about an estimate ``x`` (anything with ``estimate`` and
    ``interval(level)``: a :class:`~resdecay_lib.stats.fit.PowerLawFit`, :class:`Replicates`).

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

    DOMAINS = {"text": Text(empty=True), "kind": OneOf(_KINDS), "margin": _MARGIN}

    def __post_init__(self):
        check_fields(self, self.DOMAINS)
        if self.kind == "equivalent" and not self.margin > 0:
            raise ValueError(f"an equivalence claim needs a margin > 0, got {self.margin!r}")
        if not (hasattr(self.x, "estimate") and callable(getattr(self.x, "interval", None))):
            raise ArgumentTypeError(f"x must be an estimate (with estimate and interval(level): a PowerLawFit, "
                            f"Replicates), got {type(self.x).__name__} {show(self.x)}")
        ref_ok = (isinstance(self.ref, numbers.Real) and not isinstance(self.ref, bool)
                  and math.isfinite(self.ref)) or (
            self.kind in ("above", "below") and callable(getattr(self.ref, "interval", None)))
        if not ref_ok:
            raise ValueError(f"ref must be a finite number{' or an estimate' if self.kind in ('above', 'below') else ''}"
                             f", got {type(self.ref).__name__} {show(self.ref)}")


@dataclass(frozen=True)
class HypothesisResult:
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


@accepts(alpha=_TOST_ALPHA)
def run_family(claims, alpha: float = 0.05) -> list:
    """Every claim of ``claims`` tested as one Bonferroni family at family-wise ``alpha``."""
    claims = check_items("claims", claims, Hypothesis, "a Hypothesis")
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
        out.append(HypothesisResult(c.text, c.kind, float(c.x.estimate), lo, hi, ref_text, level, shown, word))
    return out


def family_markdown(results) -> str:
    """A MyST table of :func:`run_family`'s results: claim, kind, estimate and interval,
    reference, verdict."""
    results = check_items("results", results, HypothesisResult, "a HypothesisResult (run_family's)")
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


@accepts(alpha=_ALPHA)
def z_check(z, alpha: float = 0.01) -> ZCheck:
    """:class:`ZCheck` of ``z``: an array of z statistics, or a list of arrays (one family)."""
    parts = [np.asarray(v, dtype=float).ravel() for v in (z if isinstance(z, (list, tuple)) else [z])]
    zs = np.concatenate(parts) if parts else np.array([])
    if zs.size == 0 or not np.all(np.isfinite(zs)):
        raise ValueError(f"z must hold at least one finite z statistic, got {zs.size} values"
                         + ("" if zs.size == 0 else " with non-finite ones"))
    if not 1 - alpha / (2 * zs.size) < 1:
        raise ValueError(f"alpha / (2 n) = {alpha / (2 * zs.size):.3g} is too small for z's {zs.size} "
                         f"statistics: 1 - alpha / (2 n) rounds to 1 (alpha={alpha!r})")
    return ZCheck(float(np.max(np.abs(zs))), bonferroni_z_crit(int(zs.size), alpha), int(zs.size), float(alpha))


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties given their average rank (``scipy.stats.rankdata``)."""
    return _rankdata(x)


@accepts(x=Array(1, 3, what="a 1-D array of at least 3 finite real numbers (a NaN has no rank)"),
         y=Array(1, 3, what="a 1-D array of at least 3 finite real numbers (a NaN has no rank)"))
def spearman(x, y) -> float:
    """Spearman's rank correlation of two 1-D arrays of equal length >= 3.

    >>> spearman([1, 2, 3, 4], [10, 20, 15, 40])
    0.8
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape:
        raise ValueError(f"x and y must be 1-D of one length >= 3, got {x.shape} and {y.shape}")
    rx, ry = _ranks(x), _ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    den = math.sqrt(float((rx * rx).sum() * (ry * ry).sum()))
    if den == 0:
        raise ValueError("x or y is constant: the rank correlation is undefined")
    return float((rx * ry).sum() / den)
