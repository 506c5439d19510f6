"""Theorem 3.3 of Xie et al. (2023), "ResiDual", arXiv:2304.14802, section 3.2, in SymPy.

The model (the theorem's assumptions). A Pre-LN stream accumulates block outputs
without renormalisation::

    x^a_{k+1} = x^a_k + x^f_k,        x^f_k ~ N(0, sigma^2 I) independent over k.

Index conventions (Chapter 1 of the book):

* ``embedding_counted=False`` (the seed's convention): x^a_k is the sum of the k - 1
  block outputs before block k and nothing else, so var(x^a_k) = (k - 1) sigma^2.
  The first index at which LN(x^a_k) is defined is k = 2.
* ``embedding_counted=True``: the embedding is one more N(0, sigma^2) summand, so
  var(x^a_k) = k sigma^2 and every formula of the seed's convention is evaluated at k + 1.
  The first valid index is k = 1.

Sections, in the book's order: the theorem and its finite-width corrections (Chapter 2),
Corollary 3.4 (Chapter 3), Corollary 3.5 (Chapter 4), and beyond independence: unequal
variances, aligned updates, feedback (Chapter 5). This module knows nothing of torch; it
returns SymPy expressions, and NumPy arrays or floats where a function evaluates a derived
formula on numbers (e.g. ``omega_sq_hetero``, ``change_sq_rc``).
"""
from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np
import sympy as sp
from sympy.utilities.iterables import multiset_partitions

from ..checks import check_int, check_real

__all__ = ["CONVENTIONS", "MAX_EXACT_D", "MAX_SERIES_TERMS", "MAX_SERIES_ORDER", "MAX_DEPTH",
           "first_valid_k", "omega_sq"]

#: largest width of the exact finite-d formulas (Gamma functions of d/2: d = 2**16 takes
#: under a second, d = 10**6 minutes; the chapters use up to 4096)
MAX_EXACT_D = 2**16
#: most terms of a series in k^(-1/2) (:func:`omega_series`; 200 terms take about a second)
MAX_SERIES_TERMS = 200
#: highest order of the series in r (:func:`change_sq_rc_series`)
MAX_SERIES_ORDER = 12
#: deepest numerical recursion (:func:`feedback_recursion`; one float per block)
MAX_DEPTH = 10**7


def _check_symbolic(name, value, what):
    """A SymPy number that is not an Integer (1/2, 2.0, I, oo, nan) is not a valid ``name``."""
    if value.is_number:
        raise TypeError(f"{name} must be {what}, got the SymPy number {value!r}")
    return value

#: name of each index convention, keyed by ``embedding_counted``
CONVENTIONS = {False: "seed convention (var(x^a_k) = (k-1) sigma^2)",
               True: "embedding-counted convention (var(x^a_k) = k sigma^2)"}


def first_valid_k(embedding_counted: bool = False) -> int:
    """Smallest k at which the stream entering block k has non-zero variance."""
    return 1 if embedding_counted else 2


def _check_k(k, embedding_counted, name="k"):
    """Validate ``k``: a SymPy expression passes through; an integer must be >= first_valid_k.

    Returns ``k`` as a SymPy object.
    """
    if not isinstance(embedding_counted, bool):
        raise TypeError(f"embedding_counted must be True or False, got {embedding_counted!r}")
    if isinstance(k, sp.Basic) and not k.is_Integer:
        return _check_symbolic(name, k, "an integer or a SymPy symbol")
    if isinstance(k, bool) or not isinstance(k, (numbers.Integral, sp.Integer)):
        raise TypeError(f"{name} must be an integer or a SymPy symbol, got {type(k).__name__} {k!r}")
    kmin = first_valid_k(embedding_counted)
    if int(k) < kmin:
        raise ValueError(
            f"{name}={int(k)} is out of range for the {CONVENTIONS[embedding_counted]}: "
            f"the smallest valid {name} is {kmin}")
    return sp.Integer(int(k))


def omega_sq(k, embedding_counted: bool = False) -> sp.Expr:
    r"""Variance per coordinate of LN(x^a_{k+1}) - LN(x^a_k) (Theorem 3.3).

    .. math:: \omega_k^2 = \frac{2}{\sqrt{k}\,(\sqrt{k-1} + \sqrt{k})}

    in the seed's convention; with ``embedding_counted=True`` the same formula at k + 1.

    Parameters
    ----------
    k : int or sympy expression
        Block index. An integer below :func:`first_valid_k` raises ``ValueError``.
    embedding_counted : bool
        Which index convention (see the module docstring).

    >>> omega_sq(2)
    sqrt(2)/(1 + sqrt(2))
    >>> omega_sq(1, embedding_counted=True) == omega_sq(2)
    True
    """
    k = _check_k(k, embedding_counted)
    n = k + 1 if embedding_counted else k
    return 2 / (sp.sqrt(n) * (sp.sqrt(n - 1) + sp.sqrt(n)))


# ======================================================================================
# Chapter 2: Theorem 3.3 derived from the assumptions, and its finite-d correction.
# ======================================================================================


__all__ += ["finite_d_predictions", "Derivation", "derive_omega_sq", "layer_norm_identity_residual",
            "layer_norm_eps_error", "correlation_rho", "expected_cos_series",
            "expected_cos_exact", "expected_cos_exact_series", "omega_sq_finite_d", "omega_sq_exact_d", "eps_bias_bound"]


@dataclass(frozen=True)
class Derivation:
    """Theorem 3.3 as SymPy reaches it from the assumptions.

    steps : tuple of (description, SymPy expression), in order
    closed_form : the simplified variance per coordinate SymPy reaches
    residual : ``simplify(closed_form - omega_sq(k))``; the theorem is proved when it is 0
    k, sigma : the symbols used (k > 0, sigma > 0)
    """
    steps: tuple
    closed_form: sp.Expr
    residual: sp.Expr
    k: sp.Symbol
    sigma: sp.Symbol


def derive_omega_sq(embedding_counted: bool = False) -> Derivation:
    r"""Derive Theorem 3.3 from its assumptions and prove the paper's closed form.

    Assumptions (Xie et al. 2023, section 3.2): block outputs x^f_j ~ N(0, sigma^2 I),
    independent over j; the stream x^a_k is their running sum (k - 1 summands in the seed
    convention, k with the embedding counted); LN is the idealised x / sqrt(var x) of the
    paper (no centring, no eps; the population variance, not a sample's).

    Each coordinate of LN(x^a_{k+1}) - LN(x^a_k) = c_S S + c_F F is linear in the two
    independent zero-mean variables S = x^a_k and F = x^f_k, so its variance is
    c_S^2 var S + c_F^2 var F (independence kills the cross term). SymPy computes the
    coefficients, the variance and its simplification; ``residual`` is the difference
    from :func:`omega_sq`, simplified (0 proves the closed form for every k > 0 where
    both sides are defined, not at sampled values).

    >>> derive_omega_sq().residual
    0
    """
    if not isinstance(embedding_counted, bool):
        raise TypeError(f"embedding_counted must be True or False, got {embedding_counted!r}")
    k = sp.Symbol("k", positive=True)
    sigma = sp.Symbol("sigma", positive=True)
    j = sp.Symbol("j", integer=True)
    S, F = sp.symbols("S F")   # one coordinate of x^a_k and of x^f_k (independent, mean 0)
    first = 0 if embedding_counted else 1   # the embedding is summand j = 0
    var_S = sp.Sum(sigma**2, (j, first, k - 1)).doit()
    var_next = sp.simplify(var_S + sigma**2)            # var(x^a_{k+1}) = var(S + F)
    ln_k = S / sp.sqrt(var_S)                          # idealised LN(x^a_k)
    ln_next = (S + F) / sp.sqrt(var_next)              # idealised LN(x^a_{k+1})
    delta = sp.expand(ln_next - ln_k)
    c_S, c_F = delta.coeff(S), delta.coeff(F)
    assert sp.expand(delta - c_S * S - c_F * F) == 0   # linear in (S, F), nothing else
    var_delta = c_S**2 * var_S + c_F**2 * sigma**2     # independence: no cross term
    closed = sp.simplify(var_delta)
    residual = sp.simplify(closed - omega_sq(k, embedding_counted))
    steps = (("var(x^a_k)", var_S),
             ("var(x^a_{k+1}) = var(x^a_k) + sigma^2", var_next),
             ("LN(x^a_k), one coordinate", ln_k),
             ("LN(x^a_{k+1}), one coordinate", ln_next),
             ("difference LN(x^a_{k+1}) - LN(x^a_k)", delta),
             ("its variance c_S^2 var(S) + c_F^2 sigma^2", var_delta),
             ("simplified", closed),
             ("closed form - 2/(sqrt(k)(sqrt(k-1)+sqrt(k))), simplified", residual))
    return Derivation(steps=steps, closed_form=closed, residual=residual, k=k, sigma=sigma)


def layer_norm_identity_residual(d: int = 4) -> sp.Expr:
    r"""Prove ||LN(a) - LN(b)||^2 / d = 2 (1 - cos(a_c, b_c)) symbolically in dimension ``d``.

    LN is the real parameter-free LayerNorm with eps = 0: LN(x) = x_c / sqrt(||x_c||^2 / d),
    x_c = x - mean(x). ``a`` and ``b`` are vectors of ``d`` independent real symbols; the
    function returns the difference of the two sides, expanded and simplified: 0 proves
    the identity for every pair with non-zero centred parts. (For general d the same
    algebra is ||u_a - u_b||^2 = 2 - 2 u_a.u_b for the unit vectors u = x_c / ||x_c||.)
    Cost grows quickly with d; d = 4 takes a few seconds.
    """
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or not 2 <= d <= 6:
        raise ValueError(f"d must be an integer in 2..6 (symbolic cost), got {d!r}")
    a = sp.symbols(f"a0:{d}", real=True)
    b = sp.symbols(f"b0:{d}", real=True)

    def centred(x):
        mu = sum(x) / d
        return [xi - mu for xi in x]

    ac, bc = centred(a), centred(b)
    na, nb = sum(c**2 for c in ac), sum(c**2 for c in bc)
    ln_a = [c / sp.sqrt(na / d) for c in ac]
    ln_b = [c / sp.sqrt(nb / d) for c in bc]
    lhs = sum((p - q) ** 2 for p, q in zip(ln_a, ln_b)) / d
    cos = sum(p * q for p, q in zip(ac, bc)) / sp.sqrt(na * nb)
    return sp.simplify(sp.expand(lhs - 2 * (1 - cos)))


def layer_norm_eps_error() -> dict:
    r"""The identity's error for LayerNorm with eps > 0, exactly, and its bound.

    With v = ||x_c||^2 / d, LN_eps(x) = lambda LN_0(x) where lambda = (1 + eps/v)^(-1/2)
    lies in (0, 1]. Then, with c = cos(a_c, b_c),

    .. math:: E = \frac{\|LN_\epsilon(a) - LN_\epsilon(b)\|^2}{d} - 2(1 - c)
                = (\lambda_a - \lambda_b)^2 - 2(1 - \lambda_a\lambda_b)(1 - c).

    The two terms have opposite signs, so |E| is at most the larger; 0 <= 1 - lambda <=
    eps/(2v) (convexity of (1+t)^(-1/2)) and 1 - lambda_a lambda_b <= (1 - lambda_a) +
    (1 - lambda_b) give

    .. math:: |E| \le 2\epsilon\,(1/v_a + 1/v_b).

    Returns a dict of SymPy expressions: ``error`` (E from its definition), ``factored``
    (the right-hand form), ``residual`` (their difference, simplified: 0), ``bound``, and
    the symbols ``eps, v_a, v_b, c``.
    """
    eps, va, vb = sp.symbols("epsilon v_a v_b", positive=True)
    c = sp.Symbol("c", real=True)
    lam_a, lam_b = 1 / sp.sqrt(1 + eps / va), 1 / sp.sqrt(1 + eps / vb)
    # ||lam_a u_a - lam_b u_b||^2 for unit vectors with u_a.u_b = c (LN_0 = sqrt(d) u)
    error = lam_a**2 + lam_b**2 - 2 * lam_a * lam_b * c - 2 * (1 - c)
    factored = (lam_a - lam_b) ** 2 - 2 * (1 - lam_a * lam_b) * (1 - c)
    return {"error": error, "factored": factored,
            "residual": sp.simplify(sp.expand(error - factored)),
            "bound": 2 * eps * (1 / va + 1 / vb),
            "symbols": (eps, va, vb, c)}


# --- finite d: the real LayerNorm centres, so the stream lives in m = d - 1 dimensions ---

#: correlation per coordinate of x^a_k and x^a_{k+1}, and the dimension after centring
RHO = sp.Symbol("rho", positive=True)
M = sp.Symbol("m", positive=True)


def correlation_rho(k, embedding_counted: bool = False) -> sp.Expr:
    """rho_k = sqrt(var x^a_k / var x^a_{k+1}): sqrt((k-1)/k), or sqrt(k/(k+1)) with the
    embedding counted. Then omega_sq(k) = 2 (1 - rho_k)."""
    k = _check_k(k, embedding_counted)
    n = k + 1 if embedding_counted else k
    return sp.sqrt((n - 1) / n)


def _check_d(d, minimum=2, maximum=None):
    """Validate the width ``d``: a non-integer SymPy expression passes; an integer must be
    >= minimum (and <= maximum, when given)."""
    if isinstance(d, sp.Basic) and not d.is_Integer:
        return _check_symbolic("d", d, f"an integer >= {minimum} or a SymPy symbol")
    if isinstance(d, bool) or not isinstance(d, (numbers.Integral, sp.Integer)):
        raise TypeError(f"d must be an integer >= {minimum} or a SymPy symbol, got {type(d).__name__} {d!r}")
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
            raise TypeError(f"{name} must be a real number or a SymPy expression, got "
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
    k = _check_k(k, embedding_counted)
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


# ======================================================================================
# Chapter 3: Corollary 3.4 (E|.| per coordinate, series in 1/k, remainder bound).
# ======================================================================================


__all__ += ["omega", "mean_abs_change", "derive_mean_abs_gaussian", "omega_closed_form",
            "omega_series_coefficient", "omega_series", "remainder_constant",
            "remainder_coefficient_ratio", "mean_abs_finite_d", "unit_fraction_denominator"]


def omega(k, embedding_counted: bool = False) -> sp.Expr:
    r"""Standard deviation per coordinate of LN(x^a_{k+1}) - LN(x^a_k): :math:`\omega_k = \sqrt{\omega_k^2}`.

    Same arguments and checks as :func:`omega_sq`.

    >>> omega(4)**2 == omega_sq(4)
    True
    """
    return sp.sqrt(omega_sq(k, embedding_counted))


def derive_mean_abs_gaussian() -> tuple[sp.Expr, sp.Symbol]:
    r"""E|Z| for Z ~ N(0, w^2), by integrating against the normal density.

    Returns ``(expr, w)`` with ``expr`` = :math:`\sqrt{2/\pi}\,w` as SymPy computes it.
    """
    w = sp.Symbol("w", positive=True)
    z = sp.Symbol("z", real=True)
    density = sp.exp(-z**2 / (2 * w**2)) / (w * sp.sqrt(2 * sp.pi))
    # |z| is even: twice the integral over z > 0
    return sp.simplify(2 * sp.integrate(z * density, (z, 0, sp.oo))), w


def mean_abs_change(k, embedding_counted: bool = False) -> sp.Expr:
    r"""Per-coordinate E|LN(x^a_{k+1}) - LN(x^a_k)| under Theorem 3.3's assumptions (Corollary 3.4).

    Each coordinate of the change is N(0, omega_k^2) in the theorem's (d -> infinity)
    model, so

    .. math:: E|\cdot| = \sqrt{2/\pi}\,\omega_k
              = \sqrt{2/\pi}\,\sqrt{\frac{2}{\sqrt{k}(\sqrt{k-1}+\sqrt{k})}}

    in the seed convention; the same formula at k + 1 with ``embedding_counted=True``.
    Argument checks as :func:`omega_sq` (integer below the first valid index ->
    ``ValueError`` naming the convention and the smallest valid k; wrong type -> ``TypeError``).

    >>> mean_abs_change(2) == sp.sqrt(2 / sp.pi) * omega(2)
    True
    """
    return sp.sqrt(2 / sp.pi) * omega(k, embedding_counted)


def omega_closed_form(k, embedding_counted: bool = False) -> sp.Expr:
    r""":math:`\omega_k = \sqrt{1 + k^{-1/2}} - \sqrt{1 - k^{-1/2}}` (seed convention; k + 1 if embedding-counted).

    Squaring gives :math:`2 - 2\sqrt{1 - 1/k}`, which is :func:`omega_sq`; both sides are
    positive, so the square root is this difference. It makes the series in
    :math:`u = k^{-1/2}` a difference of two binomial series.
    """
    k = _check_k(k, embedding_counted)
    n = k + 1 if embedding_counted else k
    u = 1 / sp.sqrt(n)
    return sp.sqrt(1 + u) - sp.sqrt(1 - u)


def omega_series_coefficient(m) -> sp.Expr:
    r"""Coefficient :math:`a_m` of :math:`k^{-m/2}` in :math:`\omega_k = \sum_m a_m k^{-m/2}` (seed convention).

    :math:`a_m = 2\binom{1/2}{m}` for odd m (the even terms of the two binomial series
    cancel) and 0 for even m. ``m`` is a positive integer or a SymPy symbol.
    """
    if isinstance(m, sp.Basic) and not m.is_Integer:
        return 2 * sp.binomial(sp.Rational(1, 2), _check_symbolic("m", m, "a positive integer or a SymPy symbol"))
    if isinstance(m, bool) or not isinstance(m, (numbers.Integral, sp.Integer)):
        raise TypeError(f"m must be a positive integer or a SymPy symbol, got {type(m).__name__} {m!r}")
    if not 1 <= int(m) <= 2 * MAX_SERIES_TERMS:
        raise ValueError(f"m must be an integer from 1 to {2 * MAX_SERIES_TERMS} (m >= 1), got {int(m)}")
    m = int(m)
    return 2 * sp.binomial(sp.Rational(1, 2), m) if m % 2 else sp.Integer(0)


def omega_series(k, n_terms: int = 4) -> sp.Expr:
    r"""The first ``n_terms`` non-zero terms of :math:`\omega_k` in powers of :math:`k^{-1/2}` (seed convention).

    :math:`\omega_k = k^{-1/2} + \tfrac18 k^{-3/2} + \tfrac{7}{128} k^{-5/2} + \dots`
    """
    if isinstance(n_terms, bool) or not isinstance(n_terms, numbers.Integral) \
            or not 1 <= n_terms <= MAX_SERIES_TERMS:
        raise ValueError(f"n_terms must be an integer from 1 to {MAX_SERIES_TERMS}, got {n_terms!r}")
    if not isinstance(k, sp.Basic) or k.is_number:
        k = _check_k(k, False)
    return sum(omega_series_coefficient(2 * j + 1) * k**(-sp.Rational(2 * j + 1, 2))
               for j in range(n_terms))


def remainder_coefficient_ratio() -> tuple[sp.Expr, sp.Symbol]:
    r""":math:`a_{m+2}/a_m` as a rational function of a symbol m (the positivity step of the remainder proof).

    Equals :math:`(2m-1)(2m+1)/(4(m+1)(m+2))`, positive for every m >= 1; with
    :math:`a_1 = 1 > 0` every odd coefficient is positive.
    """
    m = sp.Symbol("m", positive=True, integer=True)
    y = sp.Symbol("y")
    ratio = sp.gammasimp((omega_series_coefficient(m + 2) / omega_series_coefficient(m)).rewrite(sp.gamma))
    # the ratio is Gamma(3/2 - m) / Gamma(-1/2 - m) / ((m+1)(m+2)); SymPy reduces
    # Gamma(y + 2) / Gamma(y) = y (y + 1) once the argument reads y + integer: y = -m - 1/2
    half = sp.Rational(1, 2)
    ratio = sp.gammasimp(ratio.subs(m, -y - half)).subs(y, -m - half)
    return sp.factor(ratio), m


def remainder_constant() -> sp.Expr:
    r"""The sharp C in :math:`0 < \omega_k - k^{-1/2} \le C\,k^{-3/2}` for all k >= 2 (seed convention).

    With :math:`u = k^{-1/2}`, :math:`(\omega_k - u)/u^3 = \sum_{m \ge 3\ \rm odd} a_m u^{m-3}`
    has positive coefficients (:func:`remainder_coefficient_ratio`) and converges for
    u <= 1, so it increases with u, i.e. decreases with k: its supremum over k >= 2 is its
    value at k = 2, and its infimum is the limit a_3 = 1/8.

    .. math:: C = 2^{3/2}\,(\omega_2 - 2^{-1/2}) \approx 0.1648
    """
    return sp.Integer(2)**sp.Rational(3, 2) * (omega(2) - 1 / sp.sqrt(2))


def unit_fraction_denominator(ratio: float) -> int:
    """The n for which a ratio is "about 1/n": 1/ratio rounded to the nearest integer, halves up.

    So "about a fifth" is 4.5 <= 1/ratio < 5.5. ``ratio`` must be a finite float in (0, 1].
    """
    if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real):
        raise TypeError(f"ratio must be a real number in (0, 1], got {type(ratio).__name__} {ratio!r}")
    ratio = float(ratio)
    if not (0 < ratio <= 1):
        raise ValueError(f"ratio must be in (0, 1], got {ratio}")
    return math.floor(1 / ratio + 0.5)


# ======================================================================================
# Chapter 4: Corollary 3.5 (the output change from one more block).
# ======================================================================================

__all__ += ["derive_output_change_var", "output_change_var", "output_change_sq_finite_d"]


def derive_output_change_var(M=1) -> tuple[sp.Expr, sp.Symbol]:
    r"""Variance per coordinate of :math:`y_N - y_{N-M}`, :math:`y_N = LN(\sum_{j \le N} x^f_j)`, derived (Corollary 3.5).

    In the theorem's model LN divides by the standard deviation :math:`\sqrt{N}\sigma` of
    the sum :math:`X_N = \sum_{j\le N} x^f_j` (sigma = 1 loses nothing). Writing
    :math:`X_N = X_{N-M} + D` with D the sum of the M new block outputs, independent of
    :math:`X_{N-M}`,

    .. math:: \mathrm{var}\,(y_N - y_{N-M}) = (N-M)\Big(\tfrac{1}{\sqrt N} - \tfrac{1}{\sqrt{N-M}}\Big)^2 + \tfrac{M}{N}
              = 2\Big(1 - \sqrt{\tfrac{N-M}{N}}\Big).

    Returns ``(expr, N)``; N > M is a positive SymPy symbol. ``M`` (positive integer or
    symbol) is the number of blocks added.
    """
    if not isinstance(M, sp.Basic):
        if isinstance(M, bool) or not isinstance(M, numbers.Integral):
            raise TypeError(f"M must be a positive integer or a SymPy symbol, got {type(M).__name__} {M!r}")
        if M < 1:
            raise ValueError(f"M must be a positive integer (M >= 1), got {M}")
        M = sp.Integer(M)
    N = sp.Symbol("N", positive=True)
    var_old, var_new = N - M, M           # variances of X_{N-M} and D (sigma = 1)
    coef_old = 1 / sp.sqrt(N) - 1 / sp.sqrt(N - M)   # y_N - y_{N-M} = coef_old X_{N-M} + D / sqrt(N)
    expr = var_old * coef_old**2 + var_new / N
    return sp.simplify(sp.expand(expr)), N


def output_change_var(N, embedding_counted: bool = False) -> sp.Expr:
    r"""Variance per coordinate of y_N - y_{N-1}: the output change from adding block N (Corollary 3.5).

    :math:`y_N = LN(\sum_{j\le N} x^f_j)` (seed convention: the output of an N-block model
    sums N block outputs and nothing else); the change is the stream change of
    Theorem 3.3 at k = N, so this is ``omega_sq(N)``: :math:`2(1 - \sqrt{(N-1)/N})`.
    With ``embedding_counted=True`` the embedding is one more summand: ``omega_sq(N, True)``.
    ``N`` is checked like ``k`` in :func:`omega_sq` (smallest valid N: 2, or 1 if embedding-counted).
    """
    if not isinstance(embedding_counted, bool):
        raise TypeError(f"embedding_counted must be True or False, got {embedding_counted!r}")
    N = _check_k(N, embedding_counted, name="N")
    return omega_sq(N, embedding_counted)


def output_change_sq_finite_d(N: int, d: int, embedding_counted: bool = False) -> float:
    """Mean square per coordinate of y_N - y_{N-1} with a real LayerNorm in width d, to O(1/d^2).

    The theorem's model at finite d: :func:`change_sq_finite_d` with r^2 = 1/(N - 1)
    (seed convention) or 1/N (embedding-counted) and c = 0.
    """
    N = int(_check_k(N, embedding_counted, name="N"))
    prior = N if embedding_counted else N - 1     # summands before block N
    return change_sq_finite_d(1 / math.sqrt(prior), 0.0, d)


# ======================================================================================
# Chapter 5: beyond independence (heteroscedastic and correlated block outputs).
# ======================================================================================

__all__ += ["geometric_change", "derive_change_sq_rc", "change_sq_rc", "change_sq_rc_series", "finite_d_terms",
            "change_sq_finite_d", "derive_omega_sq_hetero", "omega_sq_hetero",
            "rc_hetero", "derive_power_law_limit", "derive_geometric_limit",
            "feedback_fixed_point", "feedback_recursion"]


def derive_change_sq_rc() -> tuple[sp.Expr, sp.Symbol, sp.Symbol]:
    r"""Mean square per coordinate of LN(x + f) - LN(x) from r = |f|/|x| and c = cos(x, f).

    For centred vectors and eps = 0, LN(v) = sqrt(d) v/|v|, so the mean square over the d
    coordinates is :math:`|\hat a - \hat b|^2 = 2(1 - \cos(x, x+f))`, and
    :math:`\cos(x, x+f) = (|x|^2 + x\cdot f)/(|x|\,|x+f|) = (1 + rc)/\sqrt{1 + 2rc + r^2}`.

    Returns ``(expr, r, c)`` with :math:`2\big(1 - (1 + rc)/\sqrt{1 + 2rc + r^2}\big)`.
    """
    r = sp.Symbol("r", nonnegative=True)
    c = sp.Symbol("c", real=True)
    X = sp.Symbol("X", positive=True)          # |x|; drops out
    dot, f_sq = r * c * X**2, r**2 * X**2       # x.f and |f|^2
    cos = (X**2 + dot) / (X * sp.sqrt(X**2 + 2 * dot + f_sq))
    return sp.simplify(2 * (1 - cos)), r, c


def _check_rc(r, c):
    """Check r >= 0 finite, c in [-1, 1], and x + f != 0 (r = 1, c = -1); numbers or arrays."""
    arrays = []
    for name, val, rng in (("r", r, "finite and >= 0"), ("c", c, "in [-1, 1]")):
        if isinstance(val, (bool, str, bytes)) or val is None:
            raise TypeError(f"{name} must be a real number or array, {rng}, got {type(val).__name__} {val!r}")
        try:
            arrays.append(np.asarray(val, dtype=float))
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a real number or array, {rng}, got {type(val).__name__}") from None
    ra, ca = arrays
    if not np.all(np.isfinite(ra)) or np.any(ra < 0):
        raise ValueError(f"r must be finite and >= 0 (r = |f|/|x|), got {r!r}")
    if not np.all(np.isfinite(ca)) or np.any(np.abs(ca) > 1):
        raise ValueError(f"c must be in [-1, 1] (c = cos(x, f)), got {c!r}")
    if np.any((ra == 1) & (ca == -1)):
        raise ValueError("r = 1 with c = -1 makes x + f = 0, where LN is undefined: need 1 + 2rc + r^2 > 0")
    return ra, ca


def change_sq_rc(r, c):
    r"""Exact mean square per coordinate of LN(x + f) - LN(x): :math:`2\big(1 - (1 + rc)/\sqrt{1 + 2rc + r^2}\big)`.

    r = |f|/|x| and c = cos(x, f) of the centred vectors; LayerNorm without eps or affine
    parameters. SymPy arguments give a SymPy expression; numbers give a float; arrays
    (anything numpy can broadcast) give a numpy array.
    ``r`` must be finite and >= 0, ``c`` in [-1, 1], and not (r = 1 and c = -1).

    >>> change_sq_rc(0, 0.3)
    0.0
    """
    if isinstance(r, sp.Basic) or isinstance(c, sp.Basic):
        return 2 * (1 - (1 + r * c) / sp.sqrt(1 + 2 * r * c + r**2))
    ra, ca = _check_rc(r, c)
    out = 2 * (1 - (1 + ra * ca) / (1 + 2 * ra * ca + ra**2) ** 0.5)
    return float(out) if out.ndim == 0 else out


def change_sq_rc_series(order: int = 4) -> tuple[sp.Expr, sp.Symbol, sp.Symbol]:
    r"""Series of :func:`change_sq_rc` in r up to (excluding) r**order: :math:`r^2(1-c^2) + r^3 c (\dots) + \dots`.

    Returns ``(series, r, c)``; ``order`` is an integer >= 3.
    """
    if isinstance(order, bool) or not isinstance(order, numbers.Integral) \
            or not 3 <= order <= MAX_SERIES_ORDER:
        raise ValueError(f"order must be an integer from 3 to {MAX_SERIES_ORDER}, got {order!r}")
    expr, r, c = derive_change_sq_rc()
    return sp.expand(sp.series(expr, r, 0, order).removeO()), r, c


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


def change_sq_finite_d(r: float, c: float, d: int) -> float:
    r"""E of the per-coordinate mean square of LN(x + f) - LN(x) in width d, to O(1/d^2): F + m_1/(d-1).

    x ~ N(0, I_d), f = r (c x + sqrt(1 - c^2) h) (see :func:`finite_d_terms`); real
    LayerNorm with eps = 0. Independent blocks in the seed convention: r = (k-1)^{-1/2},
    c = 0; heteroscedastic: r^2 = s_k^2 / S_k (:func:`rc_hetero`).
    """
    _check_rc(r, c)
    n = check_int("d", d, 2) - 1
    F, m1, _ = _finite_d_numeric()
    return F(float(r), float(c)) + m1(float(r), float(c)) / n


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
    _check_rc(r, c)
    d = check_int("d", d, 2)   # LayerNorm centres over d coordinates
    n = d - 1
    F, _, h1 = _finite_d_numeric()
    gamma_factor = math.exp(0.5 * math.log(n) + math.lgamma(n / 2) - math.lgamma((n + 1) / 2)) / math.sqrt(math.pi)
    return gamma_factor * (math.sqrt(F(r, c)) + h1(r, c) / n)


def derive_omega_sq_hetero() -> tuple[sp.Expr, sp.Symbol, sp.Symbol]:
    r"""w_k^2 for independent blocks of unequal variances, derived: :math:`2(1 - \sqrt{S_k/S_{k+1}})`.

    x^a_k = sum_{j<k} x^f_j (seed convention) with x^f_j ~ N(0, s_j^2 I) independent, so
    var(x^a_k) = S_k = sum_{j<k} s_j^2 and the idealised LN divides by sqrt(S_k):

    .. math:: \mathrm{var}\Big(\frac{x^a_k + x^f_k}{\sqrt{S_k + s_k^2}} - \frac{x^a_k}{\sqrt{S_k}}\Big)
              = S_k\Big(\tfrac{1}{\sqrt{S_{k+1}}} - \tfrac{1}{\sqrt{S_k}}\Big)^2 + \frac{s_k^2}{S_{k+1}}

    Returns ``(expr, S, s2)`` with S = S_k and s2 = s_k^2 positive symbols.
    """
    S, s2 = sp.symbols("S_k s_k^2", positive=True)
    expr = S * (1 / sp.sqrt(S + s2) - 1 / sp.sqrt(S))**2 + s2 / (S + s2)
    return sp.simplify(sp.expand(expr)), S, s2


def _check_variances(s2):
    try:
        arr = np.asarray(s2, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"s2 must be a sequence of positive finite block variances, got {type(s2).__name__}") from None
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"s2 must be a 1-d sequence of at least 2 block variances s_1^2..s_N^2, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError("s2 must hold positive finite block variances (s_j^2 > 0)")
    return arr


def omega_sq_hetero(s2):
    r"""w_k^2 = 2(1 - sqrt(S_k/S_{k+1})) for k = 2..N from block variances s2 = (s_1^2, ..., s_N^2).

    Seed convention: x^a_k sums the k - 1 blocks before block k, S_k = s_1^2 + ... + s_{k-1}^2.
    (For the embedding-counted convention put the embedding's variance first.)
    Returns a numpy float array of length N - 1 (entry i is k = i + 2), the same k as
    ``gaussian.simulate``. Computed as 2 (s_k^2/S_{k+1}) / (1 + sqrt(S_k/S_{k+1})), which is
    the same number without the cancellation of 1 - sqrt(.) when s_k^2 << S_k.

    >>> [round(float(v), 6) for v in omega_sq_hetero([1.0, 1.0, 1.0])] == [round(float(omega_sq(k)), 6) for k in (2, 3)]
    True
    """
    arr = _check_variances(s2)
    S = np.cumsum(arr)              # S[i] = s_1^2 + ... + s_{i+1}^2 = S_{i+2}
    S_k, S_next, s2_k = S[:-1], S[1:], arr[1:]
    ratio = S_k / S_next
    return 2 * (s2_k / S_next) / (1 + np.sqrt(ratio))


def rc_hetero(s2):
    """(r_k, c_k) of independent heteroscedastic blocks, k = 2..N: r_k = s_k / sqrt(S_k), c_k = 0.

    Feeds :func:`change_sq_finite_d` for the finite-d prediction; ``s2`` as in :func:`omega_sq_hetero`.
    """
    arr = _check_variances(s2)
    S = np.cumsum(arr)
    return np.sqrt(arr[1:] / S[:-1]), np.zeros(arr.size - 1)


def derive_power_law_limit() -> tuple[sp.Expr, sp.Symbol]:
    r"""lim k w_k^2 for s_j^2 = j^beta, beta > -1: :math:`\beta + 1`.

    w_k^2 = 2(1 - (1 + s_k^2/S_k)^{-1/2}) ~ s_k^2/S_k as s_k^2/S_k -> 0, and by
    Stolz-Cesaro S_k / k^{beta+1} -> lim k^beta / ((k+1)^{beta+1} - k^{beta+1})
    = 1/(beta+1) (computed here with t = 1/k). So k w_k^2 -> beta + 1: the exponent
    -1/2 of w_k survives and the constant becomes sqrt(beta + 1).
    Returns ``(limit, beta)``.
    """
    gamma = sp.Symbol("gamma", positive=True)   # gamma = beta + 1 > 0
    beta = sp.Symbol("beta", real=True)
    t = sp.Symbol("t", positive=True)
    # Stolz-Cesaro: S_k / k^(beta+1) has the limit of k^beta / ((k+1)^(beta+1) - k^(beta+1)),
    # which with t = 1/k is t / ((1+t)^(beta+1) - 1)
    lim_S = sp.limit(t / ((1 + t)**gamma - 1), t, 0)
    # k w_k^2 ~ k s_k^2 / S_k = k^(beta+1) / S_k -> 1 / lim_S
    return sp.simplify(1 / lim_S).subs(gamma, beta + 1), beta


def derive_geometric_limit() -> tuple[sp.Expr, sp.Symbol]:
    r"""lim w_k^2 for s_j^2 = q^j, q > 1: :math:`2(1 - q^{-1/2})`; no decay.

    S_k = q (q^{k-1} - 1)/(q - 1), so S_k/S_{k+1} -> 1/q. Returns ``(limit, q)``.
    """
    p = sp.Symbol("p", positive=True)            # q = 1 + p > 1
    q = sp.Symbol("q", positive=True)
    k = sp.Symbol("k", positive=True, integer=True)

    def S(kk):                                   # s_1^2 + ... + s_{kk-1}^2 with s_j^2 = q^j
        return (1 + p) * ((1 + p)**(kk - 1) - 1) / p

    ratio_lim = sp.limit(S(k) / S(k + 1), k, sp.oo)
    return (2 * (1 - sp.sqrt(ratio_lim))).subs(p, q - 1), q


@functools.lru_cache(maxsize=1)
def _geometric_limit_fn():
    limit, q = derive_geometric_limit()
    return sp.lambdify(q, limit, "math")


def geometric_change(g: float) -> float:
    """The limiting change w^2 of a stream whose norm grows by the factor ``g`` > 1 per block
    (block variances q^j with q = g^2, :func:`derive_geometric_limit`): 2(1 - 1/g)."""
    g = check_real("g", g, 1, lo_open=True, hi_open=True)
    return float(_geometric_limit_fn()(g ** 2))


def feedback_fixed_point(a, b):
    r"""Fixed point of the large-d feedback stream x^f_k = a LN(x^a_k) + b z_k (a < 0, b != 0).

    In width d -> infinity the per-coordinate scale v_k = |x^a_k|/sqrt(d) obeys
    :math:`v_{k+1}^2 = (v_k + a)^2 + b^2` and the change is
    :math:`w_k^2 = 2(1 - (v_k + a)/v_{k+1})`. For a < 0 the map has the fixed point
    :math:`v^* = -(a^2 + b^2)/(2a) > 0`, stable since the map's slope there is
    :math:`(b^2 - a^2)/(a^2 + b^2) \in (-1, 1)`, where :math:`w^2 = 4a^2/(a^2 + b^2)`:
    the change tends to a constant. Returns ``(v_star, w_sq_star)`` (SymPy if a or b is SymPy).
    """
    if not (isinstance(a, sp.Basic) or isinstance(b, sp.Basic)):
        for name, val in (("a", a), ("b", b)):
            if isinstance(val, bool) or not isinstance(val, numbers.Real) or not math.isfinite(val):
                raise TypeError(f"{name} must be a finite real number (a < 0, b != 0), got {val!r}")
        if not (a < 0 and b != 0):
            raise ValueError(f"a must be < 0 and b nonzero for a fixed point, got a={a!r}, b={b!r}")
    v = -(a**2 + b**2) / (2 * a)
    return v, 4 * a**2 / (a**2 + b**2)


def feedback_recursion(a: float, b: float, depth: int):
    r"""Large-d change w_k^2, k = 2..depth, of the feedback stream x^f_k = a LN(x^a_k) + b z_k (seed convention).

    x^a_2 = x^f_1 ~ N(0, I) (v_2 = 1); then :math:`v_{k+1} = \sqrt{(v_k + a)^2 + b^2}`
    and :math:`w_k^2 = 2(1 - (v_k + a)/v_{k+1})` (:func:`change_sq_rc` with
    r = sqrt(a^2 + b^2)/v_k, c = a/sqrt(a^2 + b^2)). ``a`` real, ``b`` nonzero real,
    ``depth`` integer >= 2. Returns a numpy array of length depth - 1.
    For a > 0, v_k grows like a k and k w_k -> |b|/a (exponent -1); for a = 0 this is
    the theorem's 1/k (b = 1).
    """
    for name, val in (("a", a), ("b", b)):
        if isinstance(val, bool) or not isinstance(val, numbers.Real) or not math.isfinite(val):
            raise TypeError(f"{name} must be a finite real number, got {val!r}")
    if b == 0:
        raise ValueError("b must be nonzero (b = 0 makes the stream one-dimensional)")
    if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or not 2 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be an integer from 2 to {MAX_DEPTH}, got {depth!r}")
    out = np.empty(depth - 1)
    v = 1.0
    for i in range(depth - 1):
        v_next = math.hypot(v + a, b)
        out[i] = 2 * (1 - (v + a) / v_next)
        v = v_next
    return out


__all__ += ["stream_writes_change"]


def stream_writes_change(v0_sq: float, a, b_sq):
    r"""Large-d change w_k^2 of a stream written by blocks x^f_k = a_k LN(x^a_k) + b_k z_k, from a start.

    The feedback model of Chapter 5 with one (a_k, b_k) per block and any starting stream:
    v_k^2 = |x^a_k|^2 / d is the per-coordinate variance of the stream block k reads
    (``v0_sq`` for the first block given), a_k = c_k s_k is the part of the block's output
    along the normalised stream it read (c_k = cos(x^a_k, x^f_k), s_k^2 = |x^f_k|^2 / d) and
    b_k^2 = s_k^2 - a_k^2 the rest, independent of everything before. Then

    .. math:: v_{k+1}^2 = (v_k + a_k)^2 + b_k^2,\qquad w_k^2 = 2\Big(1 - \frac{v_k + a_k}{v_{k+1}}\Big),

    which is :func:`change_sq_rc` with r_k = s_k / v_k and c_k = a_k / s_k. With every
    a_k = 0 it is :func:`omega_sq_hetero` (independent blocks of variances b_k^2 after a
    stream of variance ``v0_sq``); with constant a, b and ``v0_sq`` = 1 it is
    :func:`feedback_recursion`. ``a`` and ``b_sq`` are 1-D of one length (b_sq >= 0 finite,
    a finite, a_k^2 + b_k^2 > 0, and v_k + a_k > -v_{k+1} is not needed: the formula holds
    for any sign). Returns a numpy array of that length.

    >>> import numpy as np
    >>> bool(np.allclose(stream_writes_change(1.0, [0.0, 0.0], [1.0, 1.0]), omega_sq_hetero([1.0, 1.0, 1.0])))
    True
    """
    v0 = check_real("v0_sq", v0_sq, 0.0, lo_open=True)
    try:
        a_arr = np.asarray(a, dtype=np.float64)
        b_arr = np.asarray(b_sq, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("a and b_sq must be 1-D sequences of finite real numbers") from None
    if a_arr.ndim != 1 or a_arr.shape != b_arr.shape or a_arr.size < 1 or a_arr.size > MAX_DEPTH:
        raise ValueError(f"a and b_sq must be 1-D of one length from 1 to {MAX_DEPTH}, got shapes "
                         f"{a_arr.shape} and {b_arr.shape}")
    if not (np.all(np.isfinite(a_arr)) and np.all(np.isfinite(b_arr)) and np.all(b_arr >= 0)):
        raise ValueError("a must be finite and b_sq finite and >= 0 (b_k^2 is a variance)")
    if np.any(a_arr ** 2 + b_arr <= 0):
        raise ValueError("every block must write something: a_k^2 + b_k^2 > 0")
    out = np.empty(a_arr.size)
    v_sq = v0
    for i, (ak, bk) in enumerate(zip(a_arr, b_arr)):
        v = math.sqrt(v_sq)
        v_next_sq = (v + ak) ** 2 + bk
        out[i] = 2 * (1 - (v + ak) / math.sqrt(v_next_sq))
        v_sq = v_next_sq
    return out


__all__ += ["derive_influence_identity"]


def derive_influence_identity() -> tuple[sp.Expr, sp.Expr, tuple]:
    r"""ShortGPT's block influence is the per-layer change, up to the streams' means and eps.

    Block influence (Men et al. 2024) is :math:`BI = 1 - \cos(u, v)` of the uncentred streams
    u = x_k, v = x_{k+1}. Write each as its mean plus a centred part, u = a + \mu_u 1 with
    |a|^2 = d s_u^2, and m_u = \mu_u / s_u (the mean in units of the centred RMS). Then
    u.v = a.b + d \mu_u \mu_v and |u|^2 = d s_u^2 (1 + m_u^2), so

    .. math:: BI = 1 - \frac{c + m_u m_v}{\sqrt{(1 + m_u^2)(1 + m_v^2)}},\qquad c = \cos(a, b),

    and with the parameter-free LayerNorm without eps, :math:`\omega^2 = \lVert LN_0(u) -
    LN_0(v)\rVert^2 / d = 2 (1 - c)` (Chapter 1's identity), i.e. c = 1 - omega^2 / 2. With
    eps > 0, LN divides by sqrt(s^2 + eps) instead of s, which changes omega^2 by O(eps / s^2).

    Returns ``(bi, residual, (omega_sq, m_u, m_v))``: BI as a function of omega^2 and the two
    mean ratios, and the simplified residual BI - omega^2 / 2 at m_u = m_v = 0, which is 0:
    for centred streams block influence is exactly half the change.

    >>> bi, res, _ = derive_influence_identity(); res
    0
    """
    w, mu, mv = sp.symbols("omega_sq m_u m_v", real=True)
    c = 1 - w / 2
    bi = 1 - (c + mu * mv) / sp.sqrt((1 + mu**2) * (1 + mv**2))
    residual = sp.simplify(bi.subs({mu: 0, mv: 0}) - w / 2)
    return bi, residual, (w, mu, mv)
