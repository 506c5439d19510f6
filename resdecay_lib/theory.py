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

This module knows nothing of torch or numpy; it returns SymPy expressions.
"""
from __future__ import annotations

import numbers

import sympy as sp

__all__ = ["CONVENTIONS", "first_valid_k", "omega_sq"]

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
        return k
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
# (insert Chapter 2 code below this line; extend __all__ with `__all__ += [...]`)
# ======================================================================================


# ======================================================================================
# Chapter 3: Corollary 3.4 (E|.| per coordinate, series in 1/k, remainder bound).
# (insert Chapter 3 code below this line; extend __all__ with `__all__ += [...]`)
# ======================================================================================


# ======================================================================================
# Chapter 4: Corollary 3.5 (the output change from one more block).
# (insert Chapter 4 code below this line; extend __all__ with `__all__ += [...]`)
# ======================================================================================


# ======================================================================================
# Chapter 5: beyond independence (heteroscedastic and correlated block outputs).
# (insert Chapter 5 code below this line; extend __all__ with `__all__ += [...]`)
# ======================================================================================
