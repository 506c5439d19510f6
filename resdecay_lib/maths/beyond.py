"""Beyond the assumptions of Theorem 3.3 (Xie et al. 2023, "ResiDual", arXiv:2304.14802,
section 3.2), in SymPy: which departures from independent, equal-variance block outputs change
the exponent (Chapter 5 of the book).

* Unequal variances, still independent: w_k^2 = 2(1 - sqrt(S_k/S_{k+1}))
  (:func:`derive_omega_sq_hetero`, :func:`omega_sq_hetero`, :func:`rc_hetero`), and its limits
  for power-law and geometric variances (:func:`derive_power_law_limit`,
  :func:`derive_geometric_limit`, :func:`geometric_change`).
* Correlated updates: the exact change from the norm ratio r = |f|/|x| and the cosine
  c = cos(x, f) (:func:`derive_change_sq_rc`, :func:`change_sq_rc`, and its series in r
  :func:`change_sq_rc_series`; at width d, :mod:`.finite_d`).
* Feedback, blocks that write along the stream they read (:func:`feedback_fixed_point`,
  :func:`feedback_recursion`), and per block from any start (:func:`stream_writes_change`,
  the model of :mod:`resdecay_lib.analysis.front`).
* Block influence (Men et al. 2024) is half the change for centred streams
  (:func:`derive_influence_identity`, used by Chapter 9).

Imports :mod:`.theorem` and :mod:`.finite_d`. Returns SymPy expressions, and NumPy arrays or
floats where a function evaluates a derived formula on numbers (e.g. ``omega_sq_hetero``,
``change_sq_rc``). :mod:`resdecay_lib.maths.theory` re-exports its names.
"""
from __future__ import annotations

import functools
import math
import numbers
import sys

import numpy as np
import sympy as sp

from ..checks import ArgumentTypeError, check_real
from .finite_d import check_rc
from .theorem import omega_sq  # noqa: F401  (the doctest of omega_sq_hetero compares with it)

__all__ = ["MAX_SERIES_ORDER", "MAX_DEPTH", "derive_change_sq_rc", "change_sq_rc", "change_sq_rc_series",
           "derive_omega_sq_hetero", "omega_sq_hetero", "rc_hetero", "derive_power_law_limit",
           "derive_geometric_limit", "geometric_change", "MAX_GROWTH", "MAX_AB", "feedback_fixed_point", "feedback_recursion",
           "stream_writes_change", "derive_influence_identity"]

#: highest order of the series in r (:func:`change_sq_rc_series`)
MAX_SERIES_ORDER = 12
#: deepest numerical recursion (:func:`feedback_recursion`; one float per block)
MAX_DEPTH = 10**7
#: largest growth factor g of :func:`geometric_change`: the largest float whose square (q = g^2,
#: the variance ratio the limit is derived in) is finite; beyond it g^2 overflows
MAX_GROWTH = math.sqrt(sys.float_info.max)
#: largest |a| and |b| of :func:`feedback_fixed_point`: 4 a^2 and a^2 + b^2 stay finite up to it
MAX_AB = math.sqrt(sys.float_info.max) / 2
_MAX_FLOAT = sys.float_info.max


# --- correlated updates: norm ratio r and cosine c ---


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
    ra, ca = check_rc(r, c)
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


# --- independent blocks of unequal variances ---


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
        raise ArgumentTypeError(f"s2 must be a sequence of positive finite block variances, got {type(s2).__name__}") from None
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"s2 must be a 1-d sequence of at least 2 block variances s_1^2..s_N^2, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError("s2 must hold positive finite block variances (s_j^2 > 0)")
    return arr


def _cumulative(arr):
    """S_k, the running sums of the block variances; ValueError naming ``s2`` when they overflow."""
    with np.errstate(over="ignore"):
        S = np.cumsum(arr)
    if not np.isfinite(S[-1]):
        raise ValueError(f"s2 must sum to at most {_MAX_FLOAT:.4g} (the largest float): its running sum "
                         f"S_k overflows at block {int(np.argmin(np.isfinite(S))) + 1}")
    return S


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
    S = _cumulative(arr)            # S[i] = s_1^2 + ... + s_{i+1}^2 = S_{i+2}
    S_k, S_next, s2_k = S[:-1], S[1:], arr[1:]
    ratio = S_k / S_next
    return 2 * (s2_k / S_next) / (1 + np.sqrt(ratio))


def rc_hetero(s2):
    """(r_k, c_k) of independent heteroscedastic blocks, k = 2..N: r_k = s_k / sqrt(S_k), c_k = 0.

    Feeds :func:`change_sq_finite_d` for the finite-d prediction; ``s2`` as in :func:`omega_sq_hetero`.
    """
    arr = _check_variances(s2)
    S = _cumulative(arr)
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
    (block variances q^j with q = g^2, :func:`derive_geometric_limit`): 2(1 - 1/g).
    ``g`` in (1, :data:`MAX_GROWTH`]: past it g^2 overflows (ValueError naming the range)."""
    g = check_real("g", g, 1, lo_open=True, hi_open=True)
    if g > MAX_GROWTH:
        raise ValueError(f"g must be in (1, {MAX_GROWTH:.6g}]: past it g^2 overflows, got {g!r}")
    return float(_geometric_limit_fn()(g ** 2))


# --- feedback: blocks that write along the stream they read ---


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
                raise ArgumentTypeError(f"{name} must be a finite real number (a < 0, b != 0), got {val!r}")
        if not (a < 0 and b != 0):
            raise ValueError(f"a must be < 0 and b nonzero for a fixed point, got a={a!r}, b={b!r}")
        for name, val in (("a", a), ("b", b)):
            if abs(val) > MAX_AB:
                raise ValueError(f"{name} must be at most {MAX_AB:.4g} in size (4a^2 and a^2 + b^2 overflow past it), "
                                 f"got {name}={val!r}")
        if a**2 + b**2 == 0:
            raise ValueError(f"a and b must not both be so small that a^2 + b^2 underflows to 0, got a={a!r}, b={b!r}")
        v = -(a**2 + b**2) / (2 * a)
        if not math.isfinite(v):
            raise ValueError(f"a must be at least {(a**2 + b**2) / 2 / _MAX_FLOAT:.4g} in size for b={b!r}: "
                             f"the fixed point -(a^2 + b^2)/(2a) overflows, got a={a!r}")
        return v, 4 * a**2 / (a**2 + b**2)
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
            raise ArgumentTypeError(f"{name} must be a finite real number, got {val!r}")
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
    if not math.isfinite(v):
        # v_k grows by at most |a| + |b| per block: below this bound no block overflows
        bound = (_MAX_FLOAT / 2) / depth
        raise ValueError(f"a and b must be smaller for depth {depth}: the stream's scale v_k overflows "
                         f"(|a| + |b| <= {bound:.4g} keeps it finite), got a={a!r}, b={b!r}")
    return out


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
        raise ArgumentTypeError("a and b_sq must be 1-D sequences of finite real numbers") from None
    if a_arr.ndim != 1 or a_arr.shape != b_arr.shape or a_arr.size < 1 or a_arr.size > MAX_DEPTH:
        raise ValueError(f"a and b_sq must be 1-D of one length from 1 to {MAX_DEPTH}, got shapes "
                         f"{a_arr.shape} and {b_arr.shape}")
    if not (np.all(np.isfinite(a_arr)) and np.all(np.isfinite(b_arr)) and np.all(b_arr >= 0)):
        raise ValueError("a must be finite and b_sq finite and >= 0 (b_k^2 is a variance)")
    with np.errstate(over="ignore"):          # an overflow here is > 0; the loop refuses it below
        writes = a_arr ** 2 + b_arr
    if np.any(writes <= 0):
        raise ValueError("every block must write something: a_k^2 + b_k^2 > 0")
    out = np.empty(a_arr.size)
    v_sq = v0
    with np.errstate(over="ignore"):
        for i, (ak, bk) in enumerate(zip(a_arr, b_arr)):
            v = math.sqrt(v_sq)
            v_next_sq = (v + ak) ** 2 + bk
            if not math.isfinite(v_next_sq):
                raise ValueError(f"a and b_sq must be smaller: the stream's variance v_k^2 overflows at block "
                                 f"{i + 2} (it must stay at most {_MAX_FLOAT:.4g}; a_k^2 + b_k^2 summed over the "
                                 f"blocks, with v0_sq, bounds it)")
            out[i] = 2 * (1 - (v + ak) / math.sqrt(v_next_sq))
            v_sq = v_next_sq
    return out


# --- block influence ---


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
