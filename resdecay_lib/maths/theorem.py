"""Theorem 3.3 of Xie et al. (2023), "ResiDual", arXiv:2304.14802, section 3.2, in SymPy: the
variance of the change a block makes to the normalised stream (Chapters 1 and 2 of the book).

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

Derived here: the closed form :func:`omega_sq` and its derivation from the assumptions
(:func:`derive_omega_sq`, Chapter 2); the LayerNorm identity ||LN(a) - LN(b)||^2 / d =
2 (1 - cos(a_c, b_c)) on which the later formulas rest, proved symbolically, and its error
for eps > 0 (:func:`layer_norm_identity_residual`, :func:`layer_norm_eps_error`, Chapter 1).
The argument checks :func:`check_k` and :func:`check_symbolic` are shared with the later
modules (:mod:`.finite_d`, :mod:`.corollaries`); they are not in ``__all__``. This module
knows nothing of torch and imports no other module of the library; it returns SymPy
expressions. :mod:`resdecay_lib.maths.theory` re-exports its names.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import sympy as sp
from ..checks import ArgumentTypeError

__all__ = ["CONVENTIONS", "first_valid_k", "omega_sq", "Derivation", "derive_omega_sq",
           "layer_norm_identity_residual", "layer_norm_eps_error"]

#: name of each index convention, keyed by ``embedding_counted``
CONVENTIONS = {False: "seed convention (var(x^a_k) = (k-1) sigma^2)",
               True: "embedding-counted convention (var(x^a_k) = k sigma^2)"}


def first_valid_k(embedding_counted: bool = False) -> int:
    """Smallest k at which the stream entering block k has non-zero variance."""
    return 1 if embedding_counted else 2


def check_symbolic(name, value, what):
    """A SymPy number that is not an Integer (1/2, 2.0, I, oo, nan) is not a valid ``name``."""
    if value.is_number:
        raise ArgumentTypeError(f"{name} must be {what}, got the SymPy number {value!r}")
    return value


def check_k(k, embedding_counted, name="k"):
    """Validate ``k``: a SymPy expression passes through; an integer must be >= first_valid_k.

    Returns ``k`` as a SymPy object.
    """
    if not isinstance(embedding_counted, bool):
        raise ArgumentTypeError(f"embedding_counted must be True or False, got {embedding_counted!r}")
    if isinstance(k, sp.Basic) and not k.is_Integer:
        return check_symbolic(name, k, "an integer or a SymPy symbol")
    if isinstance(k, bool) or not isinstance(k, (numbers.Integral, sp.Integer)):
        raise ArgumentTypeError(f"{name} must be an integer or a SymPy symbol, got {type(k).__name__} {k!r}")
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
    k = check_k(k, embedding_counted)
    n = k + 1 if embedding_counted else k
    return 2 / (sp.sqrt(n) * (sp.sqrt(n - 1) + sp.sqrt(n)))


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
        raise ArgumentTypeError(f"embedding_counted must be True or False, got {embedding_counted!r}")
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
