r"""The LayerNorm change identity on the raw quantities a measurement records.

:func:`resdecay_lib.maths.beyond.change_sq_rc` gives the change
:math:`\frac1D\lVert LN(x+f) - LN(x)\rVert^2 = 2\big(1 - (1+rc)/\sqrt{1+2rc+r^2}\big)` for
*centred* x, f and a LayerNorm without eps. The measurement (:mod:`resdecay_lib.nn.metrics`)
records per token the *raw* ratio r = |f|/|x| (``rel_update``), the raw cosine c = cos(x, f)
(``alignment``) and the change through

.. math:: LN_0(y) = \frac{y - \bar y\,\mathbf 1}{\sqrt{\mathrm{var}(y) + \epsilon}},\qquad
          \mathrm{var}(y) = \tfrac1D\lVert y - \bar y\mathbf 1\rVert^2,\quad
          \epsilon = \text{LN\_EPS} = 10^{-5},

which centres and adds eps. This module states the change exactly in the raw quantities
(D, eps, |x|, r, c and the token means :math:`\bar x`, :math:`\bar f`):

* :func:`derive_change_sq_raw` (SymPy) and :func:`change_sq_raw` (NumPy, exact, broadcasting);
* :func:`centred_rc`, the centred ratio and cosine (r~, c~) from the raw ones, so that with
  eps = 0 the change is ``change_sq_rc(r~, c~)``;
* the leading order :math:`\omega^2 = \tilde r^2(1 - \tilde c^2) + O(\tilde r^3)`, i.e.
  :math:`\omega = \tilde r\,\lvert\sin\tilde\theta\rvert` (:func:`leading_order_change_sq`), and
  a proven bound on its remainder for r <= 1/2 (:func:`leading_order_bound`,
  :data:`REMAINDER_CONSTANT`, :func:`derive_remainder_constant`);
* the size of eps's correction (:func:`eps_relative_correction`).

The centring uses, with :math:`\tilde x = x - \bar x\mathbf 1` and :math:`\tilde f = f - \bar f\mathbf 1`,

.. math:: \lVert\tilde x\rVert^2 = \lVert x\rVert^2 - D\bar x^2,\quad
          \lVert\tilde f\rVert^2 = r^2\lVert x\rVert^2 - D\bar f^2,\quad
          \langle\tilde x, \tilde f\rangle = rc\lVert x\rVert^2 - D\bar x\bar f.

Knows nothing of torch: numpy and sympy only (the ``maths`` layer). Source: the identity of
:mod:`.theorem` (``layer_norm_identity_residual``, ``layer_norm_eps_error``) and
:mod:`.beyond` (``derive_change_sq_rc``, ``change_sq_rc_series``).
"""
from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from ..checks import ArgumentTypeError, check_int, check_real
from .beyond import change_sq_rc_series
from .finite_d import MAX_R
from .gaussian import LN_EPS

__all__ = ["R_MAX_LEADING", "derive_change_sq_raw", "change_sq_raw", "centred_rc", "leading_order_change_sq",
           "derive_remainder_constant", "REMAINDER_CONSTANT", "leading_order_bound", "eps_relative_correction"]

#: largest r for which :func:`leading_order_bound` is proven
R_MAX_LEADING = 0.5
#: relative rounding allowed when the raw quantities are checked for consistency
#: (|x~|^2 = |x|^2 - D xbar^2 >= 0 and the centred Cauchy-Schwarz inequality): the raw sums
#: of a float64 measurement carry a few ulp each, so a centred square of -1e-12 |x|^2 is
#: rounding, not an impossible token; it is clamped to 0
_ROUNDING = 1e-12


# ----------------------------------------------------------------------------- argument checks

def _real_array(name, value, what):
    """``value`` as a float array (any shape), finite, or ArgumentTypeError/ValueError naming ``name``."""
    if isinstance(value, (bool, str, bytes)) or value is None or isinstance(value, sp.Basic):
        raise ArgumentTypeError(f"{name} must be a real number or array ({what}), got {type(value).__name__} {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{name} must be a real number or array ({what}), got {type(value).__name__}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite ({what}), got NaN or an infinity")
    return arr


def _check_raw(r, c, x_norm, mean_x, mean_f, D):
    """The raw per-token quantities, checked and broadcast: (r, c, X, mx, mf, D) as arrays and an int."""
    D = check_int("D", D, 2)
    ra = _real_array("r", r, "r = |f|/|x|, finite and >= 0")
    ca = _real_array("c", c, "c = cos(x, f), in [-1, 1]")
    xa = _real_array("x_norm", x_norm, "|x| > 0")
    mxa = _real_array("mean_x", mean_x, "the token mean of x")
    mfa = _real_array("mean_f", mean_f, "the token mean of f")
    if np.any(ra < 0) or np.any(ra > MAX_R):
        raise ValueError(f"r must be in [0, {MAX_R:.4g}] (r = |f|/|x|; past the bound r^2 |x|^2 overflows), got {r!r}")
    if np.any(np.abs(ca) > 1):
        raise ValueError(f"c must be in [-1, 1] (c = cos(x, f)), got {c!r}")
    if np.any(xa <= 0):
        raise ValueError(f"x_norm must be > 0 (|x|; the ratio r = |f|/|x| needs it), got {x_norm!r}")
    try:
        ra, ca, xa, mxa, mfa = np.broadcast_arrays(ra, ca, xa, mxa, mfa)
    except ValueError:
        raise ValueError(f"r, c, x_norm, mean_x and mean_f must broadcast to one shape, got shapes "
                         f"{[np.shape(v) for v in (r, c, x_norm, mean_x, mean_f)]}") from None
    return ra, ca, xa, mxa, mfa, D


def _centred_sums(ra, ca, xa, mxa, mfa, D):
    """|x~|^2, |f~|^2, <x~, f~> and the Gram determinant |x~|^2 |f~|^2 - <x~, f~>^2 from the raw
    quantities; ValueError naming the parameter that makes them impossible (beyond rounding).

    The checks are those of a positive semi-definite Gram matrix of (x, f, 1): both centred
    squares and the determinant >= 0. For D >= 3 they are also sufficient (vectors with these
    raw quantities exist); in D = 2 the centred vectors must be collinear besides, which is
    not checked: the determinant is set to 0 there."""
    X2 = xa * xa
    xx = X2 - D * mxa * mxa                       # |x~|^2
    ff = ra * ra * X2 - D * mfa * mfa             # |f~|^2
    xf = ra * ca * X2 - D * mxa * mfa             # <x~, f~>
    if np.any(xx < -_ROUNDING * X2):
        raise ValueError("mean_x must satisfy D mean_x^2 <= x_norm^2 (|x - mean_x|^2 >= 0): no vector has "
                         "these raw quantities")
    if np.any(ff < -_ROUNDING * ra * ra * X2):
        raise ValueError("mean_f must satisfy D mean_f^2 <= (r x_norm)^2 (|f - mean_f|^2 >= 0): no vector has "
                         "these raw quantities")
    xx, ff = np.maximum(xx, 0.0), np.maximum(ff, 0.0)
    # The Gram determinant without the cancellation of xx ff - xf^2 (expanded by hand; the
    # terms are each >= 0 up to rounding): |x|^2 [(1 - c^2) r^2 |x~|^2 - D (mean_f - r c mean_x)^2]
    det = X2 * ((1 - ca) * (1 + ca) * ra * ra * xx - D * (mfa - ra * ca * mxa) ** 2)
    # each of the two terms is at most 4 r^2 |x|^4 (D mean_f^2 <= r^2 |x|^2, D mean_x^2 <= |x|^2),
    # so rounding moves det by a few ulp of that
    if np.any(det < -_ROUNDING * 4 * ra * ra * X2 * X2):
        raise ValueError("c must be consistent with mean_x and mean_f: the centred vectors would break "
                         "Cauchy-Schwarz (<x~, f~>^2 > |x~|^2 |f~|^2)")
    if D == 2:
        # the centred vectors lie on one line (the complement of (1, 1)): their Gram determinant
        # is 0 exactly, and what the raw sums give is rounding only
        det = np.zeros_like(det)
    return xx, ff, xf, np.maximum(det, 0.0)


# ----------------------------------------------------------------------------- the exact change

def derive_change_sq_raw() -> tuple[sp.Expr, dict]:
    r"""SymPy: the change :math:`\frac1D\lVert LN_0(x+f) - LN_0(x)\rVert^2` in the raw per-token quantities.

    With :math:`v_a = \lVert\tilde x\rVert^2/D`, :math:`v_b = \lVert\tilde x + \tilde f\rVert^2/D`
    and :math:`\gamma = \langle\tilde x, \tilde x + \tilde f\rangle/D`,

    .. math:: \omega^2 = \frac{v_a}{v_a+\epsilon} + \frac{v_b}{v_b+\epsilon}
              - \frac{2\gamma}{\sqrt{(v_a+\epsilon)(v_b+\epsilon)}},

    and the centred sums from the raw ones (module docstring). Returns ``(expr, symbols)``,
    ``symbols`` a dict of the SymPy symbols by name: ``D, eps, x_norm, r, c, mean_x, mean_f``.
    The expression equals :func:`resdecay_lib.maths.beyond.derive_change_sq_rc`'s when
    mean_x = mean_f = eps = 0 (``tests/maths/test_identity.py``).
    """
    D = sp.Symbol("D", positive=True, integer=True)
    eps = sp.Symbol("epsilon", nonnegative=True)
    X = sp.Symbol("x_norm", positive=True)
    r = sp.Symbol("r", nonnegative=True)
    c = sp.Symbol("c", real=True)
    mx, mf = sp.symbols("mean_x mean_f", real=True)
    xx = X**2 - D * mx**2                          # |x~|^2
    ff = r**2 * X**2 - D * mf**2                   # |f~|^2
    xf = r * c * X**2 - D * mx * mf                # <x~, f~>
    va, vb, cov = xx / D, (xx + 2 * xf + ff) / D, (xx + xf) / D
    expr = va / (va + eps) + vb / (vb + eps) - 2 * cov / sp.sqrt((va + eps) * (vb + eps))
    return expr, {"D": D, "eps": eps, "x_norm": X, "r": r, "c": c, "mean_x": mx, "mean_f": mf}


def change_sq_raw(r, c, x_norm, mean_x, mean_f, D: int, eps: float = LN_EPS):
    r"""Exact :math:`\frac1D\lVert LN_0(x+f) - LN_0(x)\rVert^2` from the raw per-token quantities.

    ``r`` = |f|/|x|, ``c`` = cos(x, f), ``x_norm`` = |x|, ``mean_x`` and ``mean_f`` the means
    over the D coordinates (numbers or arrays that broadcast to one shape); ``D`` the width
    (integer >= 2); ``eps`` LayerNorm's eps (>= 0; :data:`~resdecay_lib.maths.gaussian.LN_EPS`
    by default, the measurement's). Returns a float, or an array of the broadcast shape.

    The formula of :func:`derive_change_sq_raw`, evaluated in the form of
    :func:`resdecay_lib.maths.theorem.layer_norm_eps_error`,

    .. math:: \omega^2 = (\lambda_a - \lambda_b)^2 + 2\lambda_a\lambda_b(1 - \tilde c_{ab}),\qquad
              \lambda = \sqrt{v/(v+\epsilon)},

    :math:`\tilde c_{ab} = \cos(\tilde x, \tilde x + \tilde f)`, with
    :math:`1 - \tilde c_{ab} = \det/(\sqrt{v_a v_b}(\sqrt{v_a v_b} + \gamma)) / D^2` (the Gram determinant
    :math:`\det = \lVert\tilde x\rVert^2\lVert\tilde f\rVert^2 - \langle\tilde x,\tilde f\rangle^2`)
    and :math:`\lambda_a - \lambda_b` from :math:`\lambda_a^2 - \lambda_b^2 = \epsilon(v_a - v_b)/((v_a+\epsilon)(v_b+\epsilon))`:
    both terms are >= 0 and free of cancellation, so a change of order r^2 keeps its relative
    precision (the subtraction of the defining formula would lose it as 1e-16 / r^2).

    With mean_x = mean_f = 0 and eps = 0 it is :func:`~resdecay_lib.maths.beyond.change_sq_rc`.
    Raw quantities that no vectors can have (D mean_x^2 > |x|^2, D mean_f^2 > |f|^2, or a
    cosine that breaks Cauchy-Schwarz for the centred vectors) raise ``ValueError`` naming
    the parameter; so does a centred stream of zero variance with eps = 0 (LN_0 undefined).

    >>> round(change_sq_raw(1.0, 0.0, 1.0, 0.0, 0.0, 8, eps=0.0), 12) == round(2 - 2 ** 0.5, 12)
    True
    """
    eps = check_real("eps", eps, 0.0)
    ra, ca, xa, mxa, mfa, D = _check_raw(r, c, x_norm, mean_x, mean_f, D)
    xx, ff, xf, det = _centred_sums(ra, ca, xa, mxa, mfa, D)
    yy = np.maximum(xx + 2 * xf + ff, 0.0)            # |x~ + f~|^2
    va, vb = xx / D, yy / D
    if eps == 0 and (np.any(va == 0) or np.any(vb == 0)):
        raise ValueError("eps must be > 0 when x or x + f is constant over its coordinates (zero variance: "
                         "LN_0 divides by sqrt(var + eps) = 0)")
    A, B = va + eps, vb + eps
    lam_a, lam_b = np.sqrt(va / A), np.sqrt(vb / B)
    with np.errstate(divide="ignore", invalid="ignore"):
        # lambda_a - lambda_b = (lambda_a^2 - lambda_b^2) / (lambda_a + lambda_b)
        diff = eps * (va - vb) / (A * B) / (lam_a + lam_b)
        diff = np.where(lam_a + lam_b > 0, diff, 0.0)
        g = np.sqrt(va * vb)                          # sqrt(v_a v_b)
        cov = (xx + xf) / D                           # <x~, x~ + f~> / D
        # det / D^2 = v_a v_b - cov^2; the stable form where cov >= 0, the direct one where the
        # cosine is negative (then 1 - cos >= 1 and nothing cancels)
        one_minus_cos = np.where(cov >= 0, (det / D**2) / (g * (g + cov)), 1 - cov / g)
        one_minus_cos = np.where(g > 0, one_minus_cos, 0.0)   # a zero-variance state: lambda = 0 there
    out = diff**2 + 2 * lam_a * lam_b * np.clip(one_minus_cos, 0.0, 2.0)
    return float(out) if out.ndim == 0 else out


def centred_rc(r, c, x_norm, mean_x, mean_f, D: int):
    r"""The centred ratio and cosine (r~, c~) from the raw ones: the (r, c) that
    :func:`~resdecay_lib.maths.beyond.change_sq_rc` needs.

    .. math:: \tilde r = \frac{\lVert\tilde f\rVert}{\lVert\tilde x\rVert},\qquad
              \tilde c = \frac{\langle\tilde x, \tilde f\rangle}{\lVert\tilde x\rVert\,\lVert\tilde f\rVert}

    with the centred sums of the module docstring. Arguments as :func:`change_sq_raw`'s;
    returns ``(r_tilde, c_tilde)``, floats or arrays of the broadcast shape. Where
    :math:`\tilde f = 0` (f constant over its coordinates) r~ = 0 and c~ is returned as 0: the
    cosine has no meaning there and the change does not depend on it. A constant x
    (:math:`\tilde x = 0`) raises ``ValueError`` naming ``mean_x``: r~ is infinite.
    """
    ra, ca, xa, mxa, mfa, D = _check_raw(r, c, x_norm, mean_x, mean_f, D)
    xx, ff, xf, _ = _centred_sums(ra, ca, xa, mxa, mfa, D)
    if np.any(xx == 0):
        raise ValueError("mean_x must satisfy D mean_x^2 < x_norm^2 strictly: a constant x has no centred "
                         "direction (r~ = |f~|/|x~| is infinite)")
    r_t = np.sqrt(ff / xx)
    with np.errstate(divide="ignore", invalid="ignore"):
        c_t = np.where(ff > 0, xf / np.sqrt(xx * ff), 0.0)
    c_t = np.clip(c_t, -1.0, 1.0)
    if r_t.ndim == 0:
        return float(r_t), float(c_t)
    return r_t, c_t


# ----------------------------------------------------------------------------- the leading order

def leading_order_change_sq(r, c):
    r"""The leading order of the change, :math:`r^2(1 - c^2) = (r\sin\theta)^2`: the squared
    component of f/|x| orthogonal to x. For the measured change use the centred (r~, c~)
    (:func:`centred_rc`). ``r`` >= 0 finite, ``c`` in [-1, 1]; numbers or arrays.
    The remainder is bounded by :func:`leading_order_bound` for r <= 1/2."""
    ra = _real_array("r", r, "r = |f|/|x|, finite and >= 0")
    ca = _real_array("c", c, "c = cos(x, f), in [-1, 1]")
    if np.any(ra < 0) or np.any(ra > MAX_R):
        raise ValueError(f"r must be in [0, {MAX_R:.4g}], got {r!r}")
    if np.any(np.abs(ca) > 1):
        raise ValueError(f"c must be in [-1, 1], got {c!r}")
    out = ra * ra * (1 - ca) * (1 + ca)
    return float(out) if out.ndim == 0 else out


@functools.lru_cache(maxsize=1)
def derive_remainder_constant() -> dict:
    r"""The constant K of :math:`\lvert g(r,c) - r^2(1-c^2)\rvert \le K r^3` for r <= 1/2 and every
    c in [-1, 1], g = :func:`~resdecay_lib.maths.beyond.change_sq_rc`, with its proof.

    Proof. Put u = 1 + rc > 0 and :math:`s = \sqrt{1 + 2rc + r^2}`; :math:`s^2 - u^2 = r^2(1-c^2) = w^2`,
    so s >= u and

    .. math:: g = 2(1 - u/s) = \frac{w^2}{h},\qquad h = \tfrac12 s(s + u) \in [u^2, s^2],
              \qquad g - w^2 = w^2(1/h - 1).

    * c >= 0: 1/h - 1 lies in [1/s^2 - 1, 0], so
      :math:`\lvert g - w^2\rvert \le w^2(2rc + r^2) \le r^3(1-c^2)(2c + \tfrac12)`, whose largest
      value over c is 9/8 r^3 (at c = 1/2).
    * c = -a < 0: :math:`\lvert 1/h - 1\rvert \le \max(\lvert 1/s^2 - 1\rvert, 1/u^2 - 1)`.
      :math:`1/u^2 - 1 = ra(2 - ra)/(1 - ra)^2`, increasing in r, at most
      :math:`r\cdot 2a(4-a)/(2-a)^2` for r <= 1/2. :math:`\lvert 1/s^2 - 1\rvert = r\lvert r - 2a\rvert/(1 - 2ra + r^2)`:
      for a >= r/2 it is at most :math:`r(2a - r)/(1-ra)^2 \le r(2a - ra^2)/(1-ra)^2 = 1/u^2 - 1`
      (since 1 - 2ra + r^2 >= (1 - ra)^2), and for a < r/2 at most r <= 1/2. So
      :math:`\lvert g - w^2\rvert \le r^3 \max(F(a), 1/2)` with :math:`F(a) = 2a(1-a^2)(4-a)/(2-a)^2`.

    K = max(9/8, 1/2, max over a in [0, 1] of F) = F(a*), a* the root in [0, 1] of
    F'(a) = 0, i.e. of :math:`a^4 - 6a^3 + 12a^2 - 4` (found exactly by SymPy here): K = 1.39458...

    The sharp constant as r -> 0 is the cubic coefficient's largest size: the series of
    :func:`~resdecay_lib.maths.beyond.change_sq_rc_series` has r^3 coefficient
    :math:`-2c(1 - c^2)`, of largest size :math:`4/(3\sqrt3) = 0.7698` (at c = 1/sqrt 3); so K is
    at most K / 0.7698 = 1.81 times the smallest constant that can hold, and half of K fails
    (``tests/maths/test_identity.py`` checks both on a dense grid).

    Returns a dict: ``K`` (float), ``K_exact`` (SymPy), ``a_star`` (SymPy root),
    ``positive_side`` (9/8), ``cubic_coefficient`` (SymPy, in ``c``), ``sharp_small_r``
    (4/(3 sqrt 3)), and the symbols ``a`` and ``c``.
    """
    a = sp.Symbol("a", nonnegative=True)
    F = 2 * a * (1 - a**2) * (4 - a) / (2 - a) ** 2
    num = sp.numer(sp.together(sp.diff(F, a)))
    roots = [x for x in sp.Poly(num, a).real_roots() if 0 <= x <= 1]
    candidates = [sp.Integer(0), sp.Integer(1)] + roots
    a_star = max(candidates, key=lambda x: float(F.subs(a, x)))
    K_exact = F.subs(a, a_star)
    cc = sp.Symbol("c", real=True)
    c_pos = sp.Rational(1, 2)                     # argmax of (1 - c^2)(2c + 1/2) on [0, 1]
    positive_side = (1 - c_pos**2) * (2 * c_pos + sp.Rational(1, 2))
    series, r, c = change_sq_rc_series(4)
    cubic = sp.factor(series.coeff(r, 3)).subs(c, cc)
    K = max(float(K_exact), float(positive_side), 0.5)
    return {"K": K, "K_exact": K_exact, "a_star": a_star, "positive_side": positive_side,
            "cubic_coefficient": cubic, "sharp_small_r": 4 / (3 * sp.sqrt(3)), "a": a, "c": cc}


#: K of :func:`leading_order_bound`: |change_sq_rc(r, c) - r^2 (1 - c^2)| <= K r^3 for r <= 1/2
#: (:func:`derive_remainder_constant` proves it)
REMAINDER_CONSTANT = derive_remainder_constant()["K"]


def leading_order_bound(r):
    r"""Bound on the remainder of the leading order: for 0 <= r <= 1/2 and every c in [-1, 1],

    .. math:: \lvert\, 2\big(1 - (1+rc)/\sqrt{1+2rc+r^2}\big) - r^2(1-c^2)\,\rvert \le K r^3,
              \qquad K = 1.39458\ldots

    (:data:`REMAINDER_CONSTANT`, proven in :func:`derive_remainder_constant`). Relative to the
    leading order :math:`r^2(1-c^2)` the remainder is at most :math:`K r/(1-c^2)`. ``r``: a
    number or array in [0, 1/2]; past 1/2 the bound is not proven: use :func:`change_sq_raw`,
    the exact form, elsewhere. Returns K r^3, a float or an array.
    """
    ra = _real_array("r", r, "r = |f|/|x| in [0, 1/2]")
    if np.any(ra < 0) or np.any(ra > R_MAX_LEADING):
        raise ValueError(f"r must be in [0, {R_MAX_LEADING}] for the leading-order bound, got {r!r}: "
                         "use change_sq_raw, the exact form, elsewhere")
    out = REMAINDER_CONSTANT * ra**3
    return float(out) if out.ndim == 0 else out


def eps_relative_correction(var_x, var_y, eps: float = LN_EPS):
    r"""First-order relative size of eps's correction to the change:

    .. math:: \frac{\omega^2(\epsilon) - \omega^2(0)}{\omega^2(0)}
              = -\frac{\epsilon}{2}\Big(\frac{1}{\mathrm{var}(x)} + \frac{1}{\mathrm{var}(x+f)}\Big) + O(\epsilon^2),

    exact to first order (``tests/maths/test_identity.py`` differentiates
    :func:`derive_change_sq_raw` in eps). For a stream whose summands are the embedding and
    k - 1 blocks of variance :math:`\sigma^2` each, :math:`\mathrm{var}(x_k) \approx k\sigma^2`,
    so the correction is about :math:`\epsilon/(k\sigma^2)`; from a record,
    :math:`\mathrm{var}(x_k) = \lVert x_k\rVert^2/D - \bar x_k^2 \approx` ``norm**2 / D``, and
    with LN_EPS = 1e-5 it is below 1e-5 whenever the stream's per-coordinate scale is at
    least 1. ``var_x``, ``var_y``: the biased variances of x and x + f over the coordinates,
    > 0 (numbers or arrays); ``eps`` >= 0. Returns the (negative) relative correction.
    """
    eps = check_real("eps", eps, 0.0)
    vx = _real_array("var_x", var_x, "var(x) > 0")
    vy = _real_array("var_y", var_y, "var(x + f) > 0")
    if np.any(vx <= 0):
        raise ValueError(f"var_x must be > 0, got {var_x!r}")
    if np.any(vy <= 0):
        raise ValueError(f"var_y must be > 0, got {var_y!r}")
    out = -eps / 2 * (1 / vx + 1 / vy)
    return float(out) if np.ndim(out) == 0 else out

