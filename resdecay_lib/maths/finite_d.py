"""Theorem 3.3 of Xie et al. (2023), "ResiDual", arXiv:2304.14802, section 3.2, at finite width,
in SymPy: the change a real LayerNorm in d dimensions makes (Chapter 2 of the book; Chapters 3
to 5 take their width-d predictions from here).

The theorem's model is the limit d -> infinity. The real LayerNorm centres, so the stream
lives in the m = d - 1 dimensions orthogonal to (1, ..., 1), and with eps = 0 the change is
exactly 2 (1 - E cos) (the identity of :mod:`.theorem`). Derived here:

* the theorem's stream at width d (Chapter 2): E cos as a series in 1/m by the delta method
  with exact joint moments (:func:`expected_cos_series`), its exact value
  (:func:`expected_cos_exact`, Olkin and Pratt 1958) and that value's series, computed
  independently (:func:`expected_cos_exact_series`); the change to first and second order
  (:func:`omega_sq_finite_d`), exactly (:func:`omega_sq_exact_d`), the allowance for a
  LayerNorm's eps (:func:`eps_bias_bound`), and Chapter 2's table of them
  (:func:`finite_d_predictions`);
* the change at width d for any norm ratio r = |f|/|x| and cosine c = cos(x, f) by the delta
  method (:func:`finite_d_terms`, :func:`change_sq_finite_d`; Chapter 5 compares it with its
  simulations) and the mean absolute change it gives (:func:`mean_abs_finite_d`; Chapter 3
  evaluates it at Corollary 3.4's r; :mod:`.corollaries` evaluates :func:`change_sq_finite_d`
  at Corollary 3.5's). The argument check :func:`check_rc` is shared with :mod:`.beyond`; it
  is not in ``__all__``.

Imports :mod:`.theorem`. Returns SymPy expressions, and floats or NumPy arrays where a
function evaluates a derived formula on numbers. :mod:`resdecay_lib.maths.theory` re-exports
its names.
"""
from __future__ import annotations

import functools
import math
import numbers

import numpy as np
import sympy as sp
from sympy.utilities.iterables import multiset_partitions

from ..checks import ArgumentTypeError, check_int, check_real
from .theorem import check_k, check_symbolic, omega_sq

__all__ = ["MAX_EXACT_D", "MAX_R", "MAX_R_FINITE_D", "RHO", "M", "correlation_rho", "expected_cos_series", "expected_cos_exact",
           "expected_cos_exact_series", "omega_sq_finite_d", "omega_sq_exact_d", "eps_bias_bound",
           "finite_d_predictions", "finite_d_terms", "change_sq_finite_d", "mean_abs_finite_d"]

#: largest width of the exact finite-d formulas (Gamma functions of d/2: d = 2**16 takes
#: under a second, d = 10**6 minutes; the chapters use up to 4096)
MAX_EXACT_D = 2**16
#: largest norm ratio r of :func:`check_rc`: (1 + r)^2 stays finite up to it (sqrt of the
#: largest float, halved)
MAX_R = math.sqrt(__import__("sys").float_info.max) / 2
#: largest r of the finite-width terms (:func:`change_sq_finite_d`, :func:`mean_abs_finite_d`):
#: they hold r^3, finite up to the cube root of the largest float
MAX_R_FINITE_D = __import__("sys").float_info.max ** (1 / 3) / 2


# --- the theorem's stream at width d (the real LayerNorm centres: m = d - 1 dimensions) ---

#: correlation per coordinate of x^a_k and x^a_{k+1}, and the dimension after centring
RHO = sp.Symbol("rho", positive=True)
M = sp.Symbol("m", positive=True)


def correlation_rho(k, embedding_counted: bool = False) -> sp.Expr:
    """rho_k = sqrt(var x^a_k / var x^a_{k+1}): sqrt((k-1)/k), or sqrt(k/(k+1)) with the
    embedding counted. Then omega_sq(k) = 2 (1 - rho_k)."""
    k = check_k(k, embedding_counted)
    n = k + 1 if embedding_counted else k
    return sp.sqrt((n - 1) / n)


def _check_d(d, minimum=2, maximum=None):
    """Validate the width ``d``: a non-integer SymPy expression passes; an integer must be
    >= minimum (and <= maximum, when given)."""
    if isinstance(d, sp.Basic) and not d.is_Integer:
        return check_symbolic("d", d, f"an integer >= {minimum} or a SymPy symbol")
    if isinstance(d, bool) or not isinstance(d, (numbers.Integral, sp.Integer)):
        raise ArgumentTypeError(f"d must be an integer >= {minimum} or a SymPy symbol, got {type(d).__name__} {d!r}")
    if int(d) < minimum or (maximum is not None and int(d) > maximum):
        span = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"
        raise ValueError(f"d must be an integer {span}, got {int(d)}")
    return sp.Integer(int(d))


@functools.lru_cache(maxsize=None)
def _cgf_uz(degree: int) -> sp.Poly:
    """Taylor polynomial, to total ``degree``, of the joint cumulant generating function of
    (u^2, u z, z^2) for u, z iid N(0, 1):

        K = -1/2 log((1 - 2 t1)(1 - 2 t3) - t2^2) = 1/2 sum_n w^n / n,
        w = 2 t1 + 2 t3 - 4 t1 t3 + t2^2

    (E exp(t1 u^2 + t2 u z + t3 z^2) = det(I - 2T)^(-1/2) for the Gaussian pair).
    """
    t1, t2, t3 = sp.symbols("t1 t2 t3")
    w = 2 * t1 + 2 * t3 - 4 * t1 * t3 + t2**2          # every term has degree >= 1
    K = sp.expand(sum(w**n / (2 * n) for n in range(1, degree + 1)))
    poly = sp.Poly(K, t1, t2, t3)
    return sp.Poly.from_dict({e: c for e, c in poly.as_dict().items() if sum(e) <= degree},
                             t1, t2, t3)


def _cumulant_uz(p: int, q: int, r: int) -> sp.Expr:
    """Joint cumulant of (u^2, u z, z^2) of order (p, q, r): p! q! r! [t1^p t2^q t3^r] K."""
    coeff = _cgf_uz(4).as_dict().get((p, q, r), 0) if p + q + r <= 4 else None
    if coeff is None:
        coeff = _cgf_uz(p + q + r).as_dict().get((p, q, r), 0)
    return sp.factorial(p) * sp.factorial(q) * sp.factorial(r) * sp.Rational(coeff)


@functools.lru_cache(maxsize=None)
def _central_moment(idx: tuple) -> sp.Expr:
    """E[prod_i X_{idx_i}] for the centred means X = (A - 1, B, C - 1) over m coordinates.

    A = |u|^2/m, B = u.z/m, C = |z|^2/m. A mean of m iid terms has joint cumulants
    kappa / m^(order - 1); moments are sums over set partitions of products of cumulants
    (blocks of size 1 vanish: the variables are centred).
    """
    total = sp.Integer(0)
    for part in multiset_partitions(list(range(len(idx)))):
        if any(len(block) == 1 for block in part):
            continue
        term = sp.Integer(1)
        for block in part:
            sub = [idx[i] for i in block]
            term *= _cumulant_uz(sub.count(0), sub.count(1), sub.count(2)) / M ** (len(sub) - 1)
        total += term
    return total


def _check_order(order):
    if isinstance(order, bool) or not isinstance(order, numbers.Integral) or order not in (1, 2):
        raise ValueError(f"order must be 1 or 2, got {order!r}")
    return int(order)


@functools.lru_cache(maxsize=None)
def _expected_cos_series(order: int = 2) -> sp.Expr:
    r"""E cos(u, rho u + sqrt(1 - rho^2) z), u, z iid N(0, I_m), as a series in 1/m.

    This is E cos(a_c, a_c + f_c) for the centred stream: after centring, x^a_k and
    x^f_k are isotropic Gaussians in the m = d - 1 dimensional complement of (1, ..., 1),
    and cos is scale-invariant, so only their correlation per coordinate rho_k matters.

    Derivation (delta method, exact to the stated order): cos = g(A, B, C) with
    g = (rho A + s B) / sqrt(A (rho^2 A + 2 rho s B + s^2 C)), s = sqrt(1 - rho^2), and
    A = |u|^2/m, B = u.z/m, C = |z|^2/m. Expand g about (1, 0, 1) to degree 2*order and
    take expectations with the exact joint moments of (A - 1, B, C - 1), whose degree-j
    moments are O(m^-ceil(j/2)); keep powers of 1/m up to ``order``. g is bounded
    (|cos| <= 1) and the means have exponential tails, so the truncation is an
    asymptotic expansion with remainder O(m^-(order+1)).

    Result (order 2): rho - rho(1 - rho^2)/(2m) + rho(1 - rho^2)(1 - 9 rho^2)/(8 m^2).
    Returns a SymPy expression in ``RHO`` and ``M``.
    """
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2, got {order!r}")
    h = sp.Symbol("h")
    x, y, z = sp.symbols("x y z")     # A - 1, B, C - 1 (scaled by h, the expansion order)
    s = sp.Symbol("s")                # s = sqrt(1 - rho^2), substituted at the end
    degree = 2 * order
    gens = (h, x, y, z, RHO, s)
    # g = num * A^(-1/2) * Q^(-1/2) with A = 1 + h x and, as rho^2 + s^2 = 1,
    # Q = rho^2 A + 2 rho s B + s^2 C = 1 + h q: binomial series of (1 + t)^(-1/2)
    num = sp.Poly(RHO + h * (RHO * x + s * y), *gens)
    q = RHO**2 * x + 2 * RHO * s * y + s**2 * z

    def inv_sqrt(t):
        return sp.Poly(sum(sp.binomial(-sp.Rational(1, 2), n) * t**n for n in range(degree + 1)), *gens)

    def truncate(poly):   # drop powers of h above the expansion degree
        return sp.Poly.from_dict({e: c for e, c in poly.as_dict().items() if e[0] <= degree}, *gens)

    taylor = truncate(truncate(num * inv_sqrt(h * x)) * inv_sqrt(h * q))
    expectation = sp.Integer(0)
    for (_, p, q_, r, e_rho, e_s), coef in taylor.terms():
        expectation += coef * RHO**e_rho * s**e_s * _central_moment((0,) * p + (1,) * q_ + (2,) * r)
    # odd powers of B (hence of s) have zero moments; s^2 = 1 - rho^2
    expectation = sp.expand(sp.expand(expectation).subs(s, sp.sqrt(1 - RHO**2)))
    w = sp.Symbol("w")   # w = 1/m, to truncate
    poly = sp.Poly(sp.expand(expectation.subs(M, 1 / w)), w)
    return sum(sp.factor(poly.coeff_monomial(w**i)) / M**i for i in range(order + 1))


def expected_cos_series(order: int = 2) -> sp.Expr:
    return _expected_cos_series(_check_order(order))  # checked, then memoised


expected_cos_series.__doc__ = _expected_cos_series.__doc__


def expected_cos_exact(rho, m) -> sp.Expr:
    r"""Exact E cos for m pairs with correlation rho (zero means known):

    .. math:: \mathbb{E}\cos = \frac{2}{m}\left(\frac{\Gamma((m+1)/2)}{\Gamma(m/2)}\right)^2
              \rho\; {}_2F_1\!\left(\tfrac12, \tfrac12; \tfrac{m}{2} + 1; \rho^2\right),

    the expectation of a sample correlation coefficient with m degrees of freedom
    (Olkin and Pratt 1958; Ghosh 1966). Used to measure the remainder of
    :func:`expected_cos_series`; its series in 1/m is checked against that derivation.

    ``rho``: a real number in [-1, 1] or a SymPy expression; ``m``: a positive number up to
    :data:`MAX_EXACT_D` or a SymPy expression.
    """
    for name, v in (("rho", rho), ("m", m)):
        if isinstance(v, (bool, str, bytes)) or v is None or not (
                isinstance(v, (numbers.Number, sp.Basic))):
            raise ArgumentTypeError(f"{name} must be a real number or a SymPy expression, got "
                            f"{type(v).__name__} {v!r}")
    rho, m = sp.sympify(rho), sp.sympify(m)
    if rho.is_number and not (rho.is_real and rho.is_finite and bool(-1 <= rho <= 1)):
        raise ValueError(f"rho must be a correlation, a real number in [-1, 1], got {rho}")
    if m.is_number and not (m.is_real and m.is_finite and bool(0 < m <= MAX_EXACT_D)):
        raise ValueError(f"m must be a real number in (0, {MAX_EXACT_D}] (m = d - 1), got {m}")
    return (2 / m * (sp.gamma((m + 1) / 2) / sp.gamma(m / 2)) ** 2 * rho
            * sp.hyper([sp.Rational(1, 2), sp.Rational(1, 2)], [m / 2 + 1], rho**2))


def expected_cos_exact_series(order: int = 2) -> sp.Expr:
    """Series in 1/m of :func:`expected_cos_exact`, computed independently of the delta method.

    log of the Gamma ratio by SymPy's asymptotic series of loggamma; the 2F1 by its
    defining sum, whose n-th term is O(m^-n), truncated at n = ``order``. Equal to
    :func:`expected_cos_series` term by term (a check of both).
    """
    order = _check_order(order)
    w = sp.Symbol("w", positive=True)   # w = 1/m
    m = 1 / w
    log_ratio = sp.series(2 * (sp.loggamma((m + 1) / 2) - sp.loggamma(m / 2)) + sp.log(2 * w),
                          w, 0, order + 1).removeO()   # log of (2/m) Gamma-ratio^2
    prefactor = sp.series(sp.exp(log_ratio), w, 0, order + 1).removeO()
    half = sp.Rational(1, 2)
    hyper = sum(sp.rf(half, n) ** 2 / (sp.rf(m / 2 + 1, n) * sp.factorial(n)) * RHO ** (2 * n)
                for n in range(order + 1))
    series = sp.series(prefactor * RHO * hyper, w, 0, order + 1).removeO()
    poly = sp.Poly(sp.expand(series), w)
    return sum(sp.factor(poly.coeff_monomial(w**i)) / M**i for i in range(order + 1))


def omega_sq_finite_d(k, d, embedding_counted: bool = False, order: int = 1) -> sp.Expr:
    r"""Mean square change per coordinate with a real LayerNorm (eps = 0) at width d.

    With eps = 0, ||LN(a) - LN(b)||^2 / d = 2 (1 - cos(a_c, b_c)) exactly, so the change is
    2 (1 - E cos) with E cos from :func:`expected_cos_series` at m = d - 1:

    .. math:: \omega_{k,d}^2 = \omega_k^2 + \frac{\rho_k (1 - \rho_k^2)}{d - 1} + O(d^{-2}),
              \qquad \rho_k = \sqrt{(k-1)/k}

    (seed convention; embedding-counted: rho_{k+1}). ``order=2`` adds the 1/(d-1)^2 term
    -rho(1 - rho^2)(1 - 9 rho^2) / (4 (d-1)^2). Tends to :func:`omega_sq` as d -> oo.
    """
    rho = correlation_rho(k, embedding_counted)
    d = _check_d(d)
    correction = -2 * (expected_cos_series(order) - RHO)  # order checked there
    return omega_sq(k, embedding_counted) + correction.subs({RHO: rho, M: d - 1})


def omega_sq_exact_d(k, d, embedding_counted: bool = False) -> sp.Expr:
    """Exact mean square change per coordinate with a real LayerNorm, eps = 0, at width d:
    2 (1 - E cos) with :func:`expected_cos_exact` at rho_k, m = d - 1. Evaluate with
    ``float(...)`` (mpmath underneath). ``d`` from 2 to :data:`MAX_EXACT_D`."""
    rho = correlation_rho(k, embedding_counted)
    d = _check_d(d, maximum=MAX_EXACT_D)
    return 2 * (1 - expected_cos_exact(rho, d - 1))


def eps_bias_bound(k, d, eps: float = 1e-5, sigma: float = 1.0, embedding_counted: bool = False) -> sp.Expr:
    r"""Bound on |E[change with eps] - E[change with eps = 0]| for the Gaussian stream.

    Per sample, |E| <= 2 eps (1/v_k + 1/v_{k+1}) (:func:`layer_norm_eps_error`), with
    v_k = ||x^a_k,c||^2 / d = sigma^2 (n - 1) chi^2_{d-1} / d, n = k (seed) or k + 1.
    E[1/chi^2_m] = 1/(m - 2), so the bound is

    .. math:: \frac{2\epsilon d}{\sigma^2 (d - 3)}\left(\frac{1}{n-1} + \frac{1}{n}\right),

    finite for d >= 4.
    """
    k = check_k(k, embedding_counted)
    d = _check_d(d, minimum=4)
    check_real("eps", eps, 0.0)
    check_real("sigma", sigma, 0.0, lo_open=True)
    n = k + 1 if embedding_counted else k
    return 2 * sp.nsimplify(eps) * d / (sp.nsimplify(sigma) ** 2 * (d - 3)) * (1 / (n - 1) + 1 / n)


def finite_d_predictions(ks, d: int, eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Chapter 2's predictions of omega_k^2 at width ``d`` for each k of ``ks`` (seed
    convention), as float arrays: the first-order and second-order finite-d corrections
    (:func:`omega_sq_finite_d`), the exact finite-d value for eps = 0
    (:func:`omega_sq_exact_d`), and the allowance for a LayerNorm's ``eps``
    (:func:`eps_bias_bound`)."""
    ks = [int(check_int("ks[i]", k, 2)) for k in np.asarray(ks).tolist()]
    first = np.array([float(omega_sq_finite_d(k, d)) for k in ks])
    second = np.array([float(omega_sq_finite_d(k, d, order=2)) for k in ks])
    exact = np.array([float(omega_sq_exact_d(k, d)) for k in ks])
    allowance = np.array([float(eps_bias_bound(k, d, eps=eps)) for k in ks])
    return first, second, exact, allowance


# --- any norm ratio r and cosine c (Chapter 5), to O(1/d^2) by the delta method ---


def check_rc(r, c):
    """Check r >= 0 finite, c in [-1, 1], and x + f != 0 (r = 1, c = -1); numbers or arrays."""
    arrays = []
    for name, val, rng in (("r", r, "finite and >= 0"), ("c", c, "in [-1, 1]")):
        if isinstance(val, (bool, str, bytes)) or val is None:
            raise ArgumentTypeError(f"{name} must be a real number or array, {rng}, got {type(val).__name__} {val!r}")
        try:
            arrays.append(np.asarray(val, dtype=float))
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"{name} must be a real number or array, {rng}, got {type(val).__name__}") from None
    ra, ca = arrays
    if not np.all(np.isfinite(ra)) or np.any(ra < 0):
        raise ValueError(f"r must be finite and >= 0 (r = |f|/|x|), got {r!r}")
    if np.any(ra > MAX_R):
        raise ValueError(f"r must be at most {MAX_R:.4g} (past it 1 + 2rc + r^2 overflows), got {r!r}")
    if not np.all(np.isfinite(ca)) or np.any(np.abs(ca) > 1):
        raise ValueError(f"c must be in [-1, 1] (c = cos(x, f)), got {c!r}")
    if np.any((ra == 1) & (ca == -1)):
        raise ValueError("r = 1 with c = -1 makes x + f = 0, where LN is undefined: need 1 + 2rc + r^2 > 0")
    return ra, ca


@functools.lru_cache(maxsize=1)
def finite_d_terms() -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Symbol, sp.Symbol]:
    r"""Leading finite-width corrections of the change, by the delta method (real LayerNorm, eps = 0).

    Model: x = g, f = r (c g + s h) with s = sqrt(1 - c^2) and g, h ~ N(0, I_d)
    independent. After centring, g and h are standard Gaussian in the n = d - 1
    dimensional subspace, and the per-sample mean square change is a smooth function of
    A = |g|^2/n, B = g.h/n, C = |h|^2/n, whose means are (1, 0, 1) and covariances
    diag(2, 1, 2)/n. Second-order Taylor expansion about the means gives

    .. math:: E\,m = F + m_1/n + O(n^{-2}),\qquad E\sqrt{m} = \sqrt F + h_1/n + O(n^{-2})

    Returns ``(F, m1, h1, r, c)``:
    :math:`F = 2(1 - (1+rc)/\sqrt{Q})`, :math:`m_1 = r^2(1-c^2)(1+rc)/Q^{3/2}`,
    :math:`h_1 = -r^2 (1-c^2)\sqrt F/(8Q)`, with :math:`Q = 1 + 2rc + r^2`.
    """
    A, B, C = sp.symbols("A B C", positive=True)
    r = sp.Symbol("r", nonnegative=True)
    c = sp.Symbol("c", real=True)
    s = sp.sqrt(1 - c**2)
    xf = r * (c * A + s * B)                                  # x.f / n
    ff = r**2 * (c**2 * A + 2 * c * s * B + s**2 * C)         # |f|^2 / n
    m = 2 * (1 - (A + xf) / (sp.sqrt(A) * sp.sqrt(A + 2 * xf + ff)))
    at_means = {A: 1, B: 0, C: 1}
    var = {A: 2, B: 1, C: 2}                                 # n * covariance (diagonal)

    def second_order(expr):
        return sp.simplify(sum(var[v] * sp.diff(expr, v, 2) for v in (A, B, C)).subs(at_means) / 2)

    F = sp.simplify(m.subs(at_means))
    return F, second_order(m), second_order(sp.sqrt(m)), r, c


@functools.lru_cache(maxsize=1)
def _finite_d_numeric():
    F, m1, h1, r, c = finite_d_terms()
    return tuple(sp.lambdify((r, c), e, "math") for e in (F, m1, h1))


def _finite_d_r(r, c) -> None:
    for name, v in (("r", r), ("c", c)):
        if np.ndim(v) != 0:
            raise ArgumentTypeError(f"{name} must be one real number (call once per value), got "
                                    f"{type(v).__name__} of shape {np.shape(v)}")
    if np.any(np.asarray(r, dtype=float) > MAX_R_FINITE_D):
        raise ValueError(f"r must be at most {MAX_R_FINITE_D:.4g} (past it the finite-width terms, in r^3, "
                         f"overflow), got {r!r}")


#: below this sin^2 of the angle between x and x + f (with cos > 0), the expanded forms of
#: :func:`finite_d_terms` cancel: F = 2 (1 - cos) then has a relative error of about
#: 2**-52 / sin^2 (at c = 1 it is rounding noise, negative from r ~ 1e14, and sqrt(F) fails).
#: Every (r, c) the book evaluates has sin^2 >= 1e-4, where they are accurate to 1e-11.
_CANCELS = 1e-6


def _finite_d_values(r, c, which: tuple) -> tuple:
    """The terms ``which`` (of "F", "m1", "h1") of :func:`finite_d_terms` at (r, c).

    Where they are accurate (sin^2 >= :data:`_CANCELS`, or cos <= 0) they are the expanded
    forms, lambdified, as the book's numbers were computed; where 1 - cos cancels they are the
    same terms in the angle's sin^2 = r^2 (1 - c)(1 + c) / Q, computed without cancellation:
    F = 2 sin^2 sqrt(Q) / (sqrt(Q) + 1 + rc), m1 = sin^2 (1 + rc) / sqrt(Q),
    h1 = -sin^2 sqrt(F) / 8 (so all three are 0 at c = 1)."""
    rf, cf = float(r), float(c)
    p = 1 + rf * cf                                  # sqrt(Q) cos
    Q = 2 * cf * rf + rf**2 + 1
    sin2 = rf * rf * ((1 - cf) * (1 + cf)) / Q
    if sin2 >= _CANCELS or p <= 0:
        terms = dict(zip(("F", "m1", "h1"), _finite_d_numeric()))
        return tuple(terms[w](r, c) for w in which)
    sq = math.sqrt(Q)
    F = 2 * sin2 * sq / (sq + p)
    terms = {"F": F, "m1": sin2 * p / sq, "h1": -sin2 * math.sqrt(F) / 8}
    return tuple(terms[w] for w in which)


def change_sq_finite_d(r: float, c: float, d: int) -> float:
    r"""E of the per-coordinate mean square of LN(x + f) - LN(x) in width d, to O(1/d^2): F + m_1/(d-1).

    x ~ N(0, I_d), f = r (c x + sqrt(1 - c^2) h) (see :func:`finite_d_terms`); real
    LayerNorm with eps = 0. Independent blocks in the seed convention: r = (k-1)^{-1/2},
    c = 0; heteroscedastic: r^2 = s_k^2 / S_k (:func:`rc_hetero`).
    """
    check_rc(r, c)
    _finite_d_r(r, c)
    n = check_int("d", d, 2) - 1
    F, m1 = _finite_d_values(float(r), float(c), ("F", "m1"))
    return F + m1 / n


def mean_abs_finite_d(r: float, c: float, d: int) -> float:
    r"""E|LN(x + f)_i - LN(x)_i| for a real LayerNorm (eps = 0) in width d, to O(1/d^2).

    For x ~ N(0, I_d) and f = r (c x + sqrt(1 - c^2) h), h ~ N(0, I_d) independent (so r and
    c are the population norm ratio and cosine). The change is rotation-invariant in the
    centred subspace (dimension n = d - 1), so its direction is uniform and independent
    of its norm, which gives exactly

    .. math:: E|\Delta_i| = \sqrt{n}\,E|v_1|\;E\sqrt{m},\qquad
              \sqrt{n}\,E|v_1| = \frac{\sqrt{n}\,\Gamma(n/2)}{\sqrt\pi\,\Gamma((n+1)/2)}

    with m the per-sample mean square change; :math:`E\sqrt m` is taken to O(1/n^2) by
    the delta method (:func:`finite_d_terms`). As d -> infinity this tends to
    sqrt(2/pi) sqrt(change_sq_rc(r, c)). Independent blocks, seed convention: r = (k-1)^{-1/2}, c = 0.
    """
    check_rc(r, c)
    _finite_d_r(r, c)
    d = check_int("d", d, 2)   # LayerNorm centres over d coordinates
    n = d - 1
    F, h1 = _finite_d_values(r, c, ("F", "h1"))
    gamma_factor = math.exp(0.5 * math.log(n) + math.lgamma(n / 2) - math.lgamma((n + 1) / 2)) / math.sqrt(math.pi)
    return gamma_factor * (math.sqrt(F) + h1 / n)
