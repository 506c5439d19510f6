"""Corollaries 3.4 and 3.5 of Xie et al. (2023), "ResiDual", arXiv:2304.14802, section 3.2, in
SymPy: how fast the change shrinks with depth (Chapters 3 and 4 of the book).

* Corollary 3.4 (Chapter 3): each coordinate of the stream's change is N(0, omega_k^2) in the
  theorem's model, so its mean absolute value is sqrt(2/pi) omega_k = O(k^(-1/2))
  (:func:`mean_abs_change`, with E|Z| derived by :func:`derive_mean_abs_gaussian`); omega_k
  as a difference of square roots (:func:`omega_closed_form`), its series in k^(-1/2)
  (:func:`omega_series`, :func:`omega_series_coefficient`) and the sharp constant of its
  remainder (:func:`remainder_constant`, with the positivity step
  :func:`remainder_coefficient_ratio`); the n of the prose's "about 1/n"
  (:func:`unit_fraction_denominator`).
* Corollary 3.5 (Chapter 4): adding block N changes the output LN(sum_{j<=N} x^f_j) with
  variance omega_N^2 = O(1/N) per coordinate (:func:`derive_output_change_var`,
  :func:`output_change_var`), and at width d through :mod:`.finite_d`
  (:func:`output_change_sq_finite_d`).

Index conventions as in :mod:`.theorem`. Imports :mod:`.theorem` and :mod:`.finite_d`; returns
SymPy expressions, and floats where a function evaluates a formula on numbers.
:mod:`resdecay_lib.maths.theory` re-exports its names.
"""
from __future__ import annotations

import math
import numbers

import sympy as sp

from .finite_d import change_sq_finite_d
from .theorem import check_k, check_symbolic, omega_sq
from ..checks import ArgumentTypeError

__all__ = ["MAX_SERIES_TERMS", "omega", "derive_mean_abs_gaussian", "mean_abs_change", "omega_closed_form",
           "omega_series_coefficient", "omega_series", "remainder_coefficient_ratio", "remainder_constant",
           "unit_fraction_denominator", "derive_output_change_var", "output_change_var",
           "output_change_sq_finite_d"]

#: most terms of a series in k^(-1/2) (:func:`omega_series`; 200 terms take about a second)
MAX_SERIES_TERMS = 200


# --- Corollary 3.4 (Chapter 3): E|.| per coordinate, series in 1/k, remainder bound ---


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
    k = check_k(k, embedding_counted)
    n = k + 1 if embedding_counted else k
    u = 1 / sp.sqrt(n)
    return sp.sqrt(1 + u) - sp.sqrt(1 - u)


def omega_series_coefficient(m) -> sp.Expr:
    r"""Coefficient :math:`a_m` of :math:`k^{-m/2}` in :math:`\omega_k = \sum_m a_m k^{-m/2}` (seed convention).

    :math:`a_m = 2\binom{1/2}{m}` for odd m (the even terms of the two binomial series
    cancel) and 0 for even m. ``m`` is a positive integer or a SymPy symbol.
    """
    if isinstance(m, sp.Basic) and not m.is_Integer:
        return 2 * sp.binomial(sp.Rational(1, 2), check_symbolic("m", m, "a positive integer or a SymPy symbol"))
    if isinstance(m, bool) or not isinstance(m, (numbers.Integral, sp.Integer)):
        raise ArgumentTypeError(f"m must be a positive integer or a SymPy symbol, got {type(m).__name__} {m!r}")
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
        k = check_k(k, False)
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
        raise ArgumentTypeError(f"ratio must be a real number in (0, 1], got {type(ratio).__name__} {ratio!r}")
    ratio = float(ratio)
    if not (0 < ratio <= 1):
        raise ValueError(f"ratio must be in (0, 1], got {ratio}")
    return math.floor(1 / ratio + 0.5)


# --- Corollary 3.5 (Chapter 4): the output change from one more block ---


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
            raise ArgumentTypeError(f"M must be a positive integer or a SymPy symbol, got {type(M).__name__} {M!r}")
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
        raise ArgumentTypeError(f"embedding_counted must be True or False, got {embedding_counted!r}")
    N = check_k(N, embedding_counted, name="N")
    return omega_sq(N, embedding_counted)


def output_change_sq_finite_d(N: int, d: int, embedding_counted: bool = False) -> float:
    """Mean square per coordinate of y_N - y_{N-1} with a real LayerNorm in width d, to O(1/d^2).

    The theorem's model at finite d: :func:`change_sq_finite_d` with r^2 = 1/(N - 1)
    (seed convention) or 1/N (embedding-counted) and c = 0.
    """
    N = int(check_k(N, embedding_counted, name="N"))
    prior = N if embedding_counted else N - 1     # summands before block N
    return change_sq_finite_d(1 / math.sqrt(prior), 0.0, d)
