"""Chapter 1 (``chapters/01_stream.ipynb``): the numerical checks of the LayerNorm identity.

The chapter derives, in SymPy, that a parameter-free LayerNorm turns the change between two
vectors into an angle (``theory.layer_norm_identity_residual``, ``theory.layer_norm_eps_error``):

    ||LN_0(a) - LN_0(b)||^2 / d = 2 (1 - cos(a_c, b_c)),
    |E_eps| <= 2 eps (1/v_a + 1/v_b)                 (eps > 0, v = ||x_c||^2 / d).

This module checks both numerically (:func:`identity_check`) with NumPy
(``gaussian.layer_norm``) and torch (``torch.nn.functional.layer_norm``, float64) on pairs of
every kind the book meets (:func:`pairs`), against the rounding tolerance
16 (d + 4) u (1 + rho_a + rho_b)^2 (u = 2^-53, rho = |mean| / sqrt(v)), and checks that the
change depends on a pair only through the ratio r = |f_c| / |x_c| and the cosine c = cos(x_c, f_c)
(:func:`ratio_angle_check`). Nothing is read from the stored runs: ``root`` is accepted for
the common signature ``chapter(root)`` and not used.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ...book.glues import EvidenceGlue, Table
from ...maths import gaussian, theory

__all__ = ["UNIT_ROUNDOFF", "RC_CASES", "RC_WIDTHS", "StreamResult", "pairs", "rounding_tolerance",
           "identity_check", "pair_with", "ratio_angle_check", "conventions_table", "chapter"]

#: u = 2^-53, the unit roundoff of float64
UNIT_ROUNDOFF = 2.0**-53
#: (r, c) pairs of the ratio-and-angle check
RC_CASES = ((0.3, 0.0), (1.0, -0.5), (0.05, 0.9))
#: (width d, scale) at which each (r, c) pair is built
RC_WIDTHS = ((16, 1e-1), (64, 1.0), (512, 3.0), (4096, 10.0))


def pairs(rng):
    """Yield ``(scale, a, b)``, ``a`` and ``b`` of shape (16, d), covering widths d = 2..4096,
    scales 1e-2..1e2, non-zero means and three angles: independent, nearly aligned
    (b = a + a small step) and nearly opposite (b = -a + a small step)."""
    for d in (2, 3, 16, 512, 4096):
        for scale in (1e-2, 1.0, 1e2):
            a = scale * (rng.standard_normal((16, d)) + rng.standard_normal((16, 1)))
            yield scale, a, scale * (rng.standard_normal((16, d)) + rng.standard_normal((16, 1)))
            yield scale, a, a + 0.05 * scale * rng.standard_normal((16, d))     # nearly aligned
            yield scale, a, -a + 0.05 * scale * rng.standard_normal((16, d))    # nearly opposite


def _centred(x):
    return x - x.mean(axis=-1, keepdims=True)


def _torch_ln(x, eps):
    import torch
    t = torch.from_numpy(x)
    return torch.nn.functional.layer_norm(t, t.shape[-1:], eps=eps).numpy()


def rounding_tolerance(d: int, rho_a, rho_b):
    """The float64 rounding tolerance of the identity, 16 (d + 4) u (1 + rho_a + rho_b)^2, to
    first order in u (Higham 2002: gamma_d over the mean, the centring, the variance and the
    final sum of each side); ``rho = |mean(x)| / sqrt(v)`` (arrays of shape (n,))."""
    return 16 * (d + 4) * UNIT_ROUNDOFF * (1 + rho_a + rho_b) ** 2


@dataclass(frozen=True)
class IdentityCheck:
    """The identity over every pair of :func:`pairs`, NumPy and torch (float64).

    n_pairs : pairs checked (each with both implementations)
    max_err0, max_ratio0 : eps = 0: largest |error| and largest error / rounding tolerance
    max_err_eps, max_err_eps_v1 : eps = 1e-5: largest |error| over all pairs, and over pairs
        whose variances are both >= 1
    max_ratio_eps : eps = 1e-5: largest error / (bound (eq-eps-bound) + rounding tolerance)
    """
    n_pairs: int
    max_err0: float
    max_ratio0: float
    max_err_eps: float
    max_err_eps_v1: float
    max_ratio_eps: float

    def __str__(self) -> str:
        return "\n".join([
            f"pairs checked: {self.n_pairs} (each with NumPy and torch)",
            f"eps = 0:    max |error| = {self.max_err0:.1g}, at most {self.max_ratio0:.1g} of the rounding tolerance",
            f"eps = 1e-5: max |error| = {self.max_err_eps:.1g} over all pairs, {self.max_err_eps_v1:.1g} where both "
            "variances are >= 1",
            f"eps = 1e-5: every error at most {self.max_ratio_eps:.2f} of the bound (eq-eps-bound)"])


def identity_check(seed: int = 20260101) -> IdentityCheck:
    """Check ||LN(a) - LN(b)||^2 / d against 2 (1 - cos(a_c, b_c)) on :func:`pairs`, with
    eps = 0 (tolerance: :func:`rounding_tolerance`) and eps = ``gaussian.LN_EPS`` (tolerance:
    the bound 2 eps (1/v_a + 1/v_b) of ``theory.layer_norm_eps_error`` plus rounding).
    Raises ``AssertionError`` if a pair exceeds its tolerance; returns the largest errors."""
    eps = gaussian.LN_EPS
    eps_error = theory.layer_norm_eps_error()
    bound_eps = sp.lambdify(eps_error["symbols"][:3], eps_error["bound"], "numpy")
    max_err0, max_ratio0, max_ratio_eps, n_pairs = 0.0, 0.0, 0.0, 0
    max_err_eps, max_err_eps_v1 = 0.0, 0.0   # all pairs; pairs with both variances >= 1
    for _scale, a, b in pairs(np.random.default_rng(seed)):
        d = a.shape[-1]
        ac, bc = _centred(a), _centred(b)
        va, vb = np.mean(ac**2, axis=-1), np.mean(bc**2, axis=-1)
        cos = np.sum(ac * bc, axis=-1) / np.sqrt(np.sum(ac**2, axis=-1) * np.sum(bc**2, axis=-1))
        rhs = 2 * (1 - cos)
        tol_round = rounding_tolerance(d, np.abs(a.mean(axis=-1)) / np.sqrt(va), np.abs(b.mean(axis=-1)) / np.sqrt(vb))
        for ln in (gaussian.layer_norm, _torch_ln):
            err0 = np.abs(np.mean((ln(a, 0.0) - ln(b, 0.0)) ** 2, axis=-1) - rhs)
            err_eps = np.abs(np.mean((ln(a, eps) - ln(b, eps)) ** 2, axis=-1) - rhs)
            tol_eps = bound_eps(eps, va, vb) + tol_round
            assert np.all(err0 <= tol_round), "eps = 0: the identity fails beyond rounding"
            assert np.all(err_eps <= tol_eps), "eps > 0: the error exceeds its bound"
            max_err0 = max(max_err0, float(err0.max()))
            max_ratio0 = max(max_ratio0, float((err0 / tol_round).max()))
            max_err_eps = max(max_err_eps, float(err_eps.max()))
            unit = np.minimum(va, vb) >= 1.0
            if unit.any():
                max_err_eps_v1 = max(max_err_eps_v1, float(err_eps[unit].max()))
            max_ratio_eps = max(max_ratio_eps, float((err_eps / tol_eps).max()))
        n_pairs += len(a)
    return IdentityCheck(n_pairs, max_err0, max_ratio0, max_err_eps, max_err_eps_v1, max_ratio_eps)


def pair_with(r: float, c: float, d: int, scale: float, rng):
    """A centred pair (x, f) in R^d, shapes (d,), with |f|/|x| = r and cos(x, f) = c, in a
    random direction: x = scale q_0, f = scale r (c q_0 + sqrt(1 - c^2) q_1) for orthonormal
    centred q_0, q_1."""
    q, _ = np.linalg.qr(_centred(rng.standard_normal((2, d))).T)   # (d, 2), orthonormal, centred
    x = scale * q[:, 0]
    f = scale * r * (c * q[:, 0] + math.sqrt(1 - c * c) * q[:, 1])
    return x, f


def ratio_angle_check(seed: int = 7) -> dict:
    """The change ||LN_0(x + f) - LN_0(x)||^2 / d of pairs built by :func:`pair_with` for each
    (r, c) of :data:`RC_CASES` at each (width, scale) of :data:`RC_WIDTHS`: ``{(r, c): (change
    per width, ...)}``, one generator drawn in that order."""
    rng = np.random.default_rng(seed)
    out = {}
    for r, c in RC_CASES:
        changes = []
        for d, scale in RC_WIDTHS:
            x, f = pair_with(r, c, d, scale, rng)
            changes.append(float(np.mean((gaussian.layer_norm(x + f, 0.0) - gaussian.layer_norm(x, 0.0)) ** 2)))
        out[(r, c)] = tuple(changes)
    return out


def conventions_table(k_max: int = 6) -> Table:
    """omega_k^2 (Theorem 3.3) for k = 1..``k_max`` in both index conventions, four decimals
    ("-" where the seed convention has no valid index)."""
    rows = [(k, f"{float(theory.omega_sq(k)):.4f}" if k >= theory.first_valid_k(False) else "-",
             f"{float(theory.omega_sq(k, embedding_counted=True)):.4f}") for k in range(1, k_max + 1)]
    return Table.of(["$k$", r"seed convention, $\omega_k^2$", r"embedding-counted, $\omega_{k+1}^2$"], rows)


@dataclass(frozen=True)
class StreamResult:
    """Chapter 1's numbers.

    identity : :class:`IdentityCheck` of the LayerNorm identity
    rc_changes : {(r, c): change at each width of :data:`RC_WIDTHS`} (:func:`ratio_angle_check`)
    rc_tolerance : the rounding tolerance at the largest width, 16 (4096 + 4) u 4, that the
        spread of each (r, c) row must stay below
    conventions : :func:`conventions_table`
    """
    identity: IdentityCheck
    rc_changes: dict
    rc_tolerance: float
    conventions: Table

    @property
    def rc_spread(self) -> float:
        """Largest spread (max - min) over widths of the change at one (r, c)."""
        return max(max(v) - min(v) for v in self.rc_changes.values())

    def rc_table(self) -> Table:
        """The change at each (r, c) and width of :data:`RC_WIDTHS`, six decimals."""
        rows = [(r, c, *(f"{v:.6f}" for v in ch)) for (r, c), ch in self.rc_changes.items()]
        return Table.of(["$r$", "$c$", *(f"$d = {d}$" for d, _ in RC_WIDTHS)], rows)

    def glues(self) -> dict:
        ic = self.identity
        return {
            "ev_ln_identity_max_err": EvidenceGlue(float(f"{ic.max_err0:.1g}")),
            "ln_n_pairs": ic.n_pairs,
            "ln_eps_max_err": float(f"{ic.max_err_eps:.1g}"),
            "ln_eps_max_err_v1": float(f"{ic.max_err_eps_v1:.1g}"),
            "ln_eps_ratio": round(ic.max_ratio_eps, 2),
            # the range of |LN(a) - LN(b)|^2 / d = 2 (1 - c): its largest value, at c = -1
            "ln_full_range": 2 * (1 - (-1)),
            "stream_conventions_table": self.conventions,
            "stream_rc_table": self.rc_table(),
        }


def chapter(root=None) -> StreamResult:
    """Chapter 1's checks (``root`` is not read: nothing here depends on stored runs). torch
    runs on one thread meanwhile, so the outputs do not depend on the machine's core count."""
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        identity = identity_check()
    finally:
        torch.set_num_threads(threads)
    return StreamResult(identity=identity, rc_changes=ratio_angle_check(),
                        rc_tolerance=16 * (4096 + 4) * UNIT_ROUNDOFF * 4, conventions=conventions_table())
