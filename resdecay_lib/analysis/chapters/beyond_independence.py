"""Chapter 5, beyond independence: which departures from the theorem's model change the exponent.

Three departures, each derived in SymPy in the chapter (``theory.derive_change_sq_rc``,
``derive_omega_sq_hetero``, ``derive_power_law_limit``, ``derive_geometric_limit``, the feedback
recursion) and checked here by simulation with a real LayerNorm:

* blocks of unequal variance :math:`s_j^2` (``gaussian.simulate(..., sigma=s)``) against
  :math:`\\omega_k^2 = 2(1 - \\sqrt{S_k/S_{k+1}})` plus the finite-width term
  :math:`m_1(r_k, 0)/(d-1)`, :math:`r_k = s_k/\\sqrt{S_k}` (``theory.rc_hetero``);
* updates :math:`f = r(c\\,x + \\sqrt{1-c^2}\\,h)` on an :math:`(r, c)` grid
  (``gaussian.simulate_rc``): per sample the exact identity with LayerNorm's :math:`\\epsilon`,
  on average the finite-width prediction ``theory.change_sq_finite_d``;
* blocks that read the stream, :math:`x^f_k = a\\,\\mathrm{LN}(x^a_k) + b\\,z_k`
  (``gaussian.simulate_feedback``) against the large-width recursion ``theory.feedback_recursion``.

Each family of z statistics is one Bonferroni test at :data:`ALPHA` (``inference.z_check``).
:func:`chapter` also computes the SymPy constants the chapter glues (the critical exponent, the
geometric limit at q = 2, :math:`\\zeta(2)`) and the two figures' data. It reads no stored run:
``root`` is the book's folder only so that every chapter is called alike.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ...book.glues import EvidenceGlue
from ...book.notebooks import book_root
from ...maths import gaussian, theory
from ...stats import inference

__all__ = ["BeyondIndependenceResult", "chapter", "ALPHA", "HETERO_K", "HETERO_BETAS", "HETERO_CASES",
           "HETERO_SIM", "RC_R", "RC_C", "RC_SIM", "FEEDBACK_A", "FEEDBACK_B", "FEEDBACK_SIM", "FEEDBACK_K_FAR",
           "beta_crit", "geometric_limit", "zeta2", "hetero_profiles"]

#: family-wise level of every Bonferroni test in this chapter
ALPHA = 0.01
#: the exact curves of fig-hetero run to k = HETERO_K
HETERO_K = 100_000
#: the power-law exponents beta of fig-hetero (s_j^2 = j^beta)
HETERO_BETAS = (2.0, 1.0, 0.0, -0.5, -1.0, -2.0)
#: the four variance profiles simulated (name: how s_j^2 depends on j)
HETERO_CASES = ("beta = 1", "beta = -1", "beta = -2", "geometric q = 2")
#: depth, width d and number of samples of the heteroscedastic simulation
HETERO_SIM = (40, 256, 512)
#: the (r, c) grid of the aligned-update simulation, its width and number of samples
RC_R = (0.1, 0.5, 1.0, 2.0)
RC_C = (-0.8, -0.3, 0.0, 0.5, 0.9)
RC_SIM = (256, 1024)
#: the feedback blocks x^f_k = a LN(x^a_k) + b z_k: the values of a simulated, b, and
#: depth, width d, number of samples
FEEDBACK_A = (0.5, 0.0, -0.5)
FEEDBACK_B = 1.0
FEEDBACK_SIM = (64, 2048, 64)
#: how far the recursion is run to show k w_k approaching |b| / a for a = 0.5
FEEDBACK_K_FAR = 200_000


@dataclass(frozen=True)
class BeyondIndependenceResult:
    """What Chapter 5 shows (seed convention).

    beta_crit: the power-law exponent at and below which the -1/2 law stops (SymPy, -1.0);
    geometric_limit_q2: :math:`\\lim \\omega_k^2` for :math:`s_j^2 = 2^j`, :math:`2 - \\sqrt 2`;
    zeta2: :math:`\\zeta(2) = S_\\infty` at beta = -2. hetero_curves / hetero_geometric: the data
    of fig-hetero ({label: (k, sqrt(k) w_k, limit or None)}, {label: (k, sqrt(k) w_k)});
    hetero_b1_gap: :math:`|K\\,\\omega_K^2 - 2K(1 - \\sqrt{S_K/(S_K + K)})|` at beta = 1, K =
    HETERO_K, with the exact :math:`S_K = K(K-1)/2`.

    hetero: the z test of the heteroscedastic simulation (all four profiles); hetero_term_err:
    the largest relative difference between the finite-d prediction minus {eq}`eq-hetero` and
    :math:`m_1(r_k, 0)/(d-1)`; hetero_eps_ratio: the largest :math:`\\epsilon/S_2` over a
    hundredth of the smallest relative standard error (below 1: LayerNorm's eps biases the
    change by less than a hundredth of a standard error).

    rc: the z test over the (r, c) grid; rc_identity_worst: the largest per-sample
    |measured - exact identity| over its rounding bound :math:`64\\,d\\,2^{-52}`.

    feedback: the z test of the feedback simulation against the recursion; feedback_w2_star:
    :math:`\\omega^2` at the fixed point for a = -0.5, b = 1; feedback_kw_far: :math:`k\\,\\omega_k`
    of the recursion at k = FEEDBACK_K_FAR for a = 0.5; feedback_fixed_gap: how far the recursion
    for a = -0.5 is from the fixed point after 200 blocks; feedback_series: fig-feedback's data
    ({a: (k, mean square, its se, recursion)})."""
    beta_crit: float
    geometric_limit_q2: float
    zeta2: float
    hetero_curves: dict
    hetero_geometric: dict
    hetero_b1_gap: float
    hetero: inference.ZCheck
    hetero_term_err: float
    hetero_eps_ratio: float
    rc: inference.ZCheck
    rc_identity_worst: float
    feedback: inference.ZCheck
    feedback_w2_star: float
    feedback_kw_far: float
    feedback_fixed_gap: float
    feedback_series: dict

    def glues(self) -> dict[str, object]:
        """Every name Chapter 5 glues, with its value (rounded as the prose shows it)."""
        depth, d_het, _ = HETERO_SIM
        return {
            "ev_hetero_beta_crit": EvidenceGlue(self.beta_crit, digits=4),
            "ev_geometric_limit_q2": EvidenceGlue(self.geometric_limit_q2, digits=6),
            "hetero_zeta2": round(self.zeta2, 4),
            "hetero_K": HETERO_K,
            "ev_hetero_maxz": EvidenceGlue(self.hetero.max_abs, digits=3),
            "ev_hetero_z_crit": EvidenceGlue(self.hetero.z_crit, digits=3),
            "hetero_n_tests": self.hetero.n,
            "hetero_depth": depth,
            "hetero_d": d_het,
            "ev_rc_maxz": EvidenceGlue(self.rc.max_abs, digits=3),
            "ev_rc_z_crit": EvidenceGlue(self.rc.z_crit, digits=3),
            "rc_n_tests": self.rc.n,
            "feedback_w2_star": round(self.feedback_w2_star, 4),
            "feedback_k_w_limit": round(abs(FEEDBACK_B) / FEEDBACK_A[0], 4),
            "feedback_maxz": round(self.feedback.max_abs, 2),
            "feedback_z_crit": round(self.feedback.z_crit, 2),
            "feedback_d": FEEDBACK_SIM[1],
            "feedback_k_far": FEEDBACK_K_FAR,
            "feedback_kw_far": round(self.feedback_kw_far, 3),
        }


def beta_crit() -> float:
    """The power-law exponent beta where :math:`\\lim k\\,\\omega_k^2 = \\beta + 1`
    (``theory.derive_power_law_limit``) reaches 0: the one root, -1.0."""
    lim_power, beta = theory.derive_power_law_limit()
    (root,) = sp.solve(sp.Eq(lim_power, 0), beta)
    return float(root)


def geometric_limit(q: float = 2) -> float:
    """:math:`\\lim_k \\omega_k^2 = 2(1 - q^{-1/2})` for block variances :math:`q^j`
    (``theory.derive_geometric_limit``) at ``q``."""
    lim_geo, q_ = theory.derive_geometric_limit()
    return float(lim_geo.subs(q_, q))


def zeta2() -> float:
    """:math:`S_\\infty = \\sum_{j \\ge 1} j^{-2} = \\zeta(2)` (SymPy), the stream's limiting
    variance for :math:`s_j^2 = j^{-2}`."""
    j = sp.Symbol("j", positive=True, integer=True)
    return float(sp.summation(j**-2, (j, 1, sp.oo)))


def hetero_profiles(depth: int) -> dict[str, np.ndarray]:
    """The block variances :math:`s_j^2`, j = 1..depth, of :data:`HETERO_CASES`: shape (depth,) each."""
    j = np.arange(1, depth + 1, dtype=float)
    return dict(zip(HETERO_CASES, (j ** 1.0, j ** -1.0, j ** -2.0, 2.0 ** j)))


def _hetero_figure():
    """fig-hetero's curves: sqrt(k) w_k from eq-hetero for s_j^2 = j^beta, k = 2..HETERO_K, with
    the limit sqrt(beta + 1) where beta > -1; and geometric growth q = 2 to k = 60. Also the
    beta = 1 check against the exact S_K = K (K - 1) / 2."""
    K = HETERO_K
    ks = np.arange(2, K + 1)
    curves = {fr"$\beta = {b:g}$": (ks, np.sqrt(ks * theory.omega_sq_hetero(np.arange(1, K + 1, dtype=float) ** b)),
                                    math.sqrt(b + 1) if b > -1 else None)
              for b in HETERO_BETAS}
    w2_geo = theory.omega_sq_hetero(2.0 ** np.arange(1, 61))
    geometric = {"geometric, $q = 2$": (np.arange(2, 61), np.sqrt(np.arange(2, 61) * w2_geo))}
    w2_b1 = theory.omega_sq_hetero(np.arange(1, K + 1, dtype=float))
    S_K = K * (K - 1) / 2
    gap = abs(K * w2_b1[-1] - 2 * (1 - math.sqrt(S_K / (S_K + K))) * K)
    return curves, geometric, float(gap)


def _hetero_simulation():
    """The z test of the four variance profiles, the finite-d term's agreement with m1 / (d - 1),
    and LayerNorm eps's bias relative to a hundredth of the smallest relative standard error."""
    depth, d, n = HETERO_SIM
    _, m1, _, r, c = theory.finite_d_terms()
    m1_of_r = sp.lambdify(r, m1.subs(c, 0), "math")
    z, term_err, eps_ratio = [], 0.0, 0.0
    for i, (name, s2v) in enumerate(hetero_profiles(depth).items()):
        res = gaussian.simulate(depth, d, n, seed=50 + i, sigma=np.sqrt(s2v))
        r_k, c_k = theory.rc_hetero(s2v)
        pred = np.array([theory.change_sq_finite_d(rv, cv, d) for rv, cv in zip(r_k, c_k)])
        exact = theory.omega_sq_hetero(s2v)
        term = np.array([m1_of_r(float(rv)) / (d - 1) for rv in r_k])
        term_err = max(term_err, float(np.max(np.abs((pred - exact) - term) / np.abs(term))))
        # eps scales the change by lambda_k lambda_{k+1} >= 1 - eps / S_2
        eps_rel = gaussian.LN_EPS / np.cumsum(s2v)[0]
        eps_ratio = max(eps_ratio, float(eps_rel / (0.01 * np.min(res.stderr / res.mean_sq_change))))
        z.append((res.mean_sq_change - pred) / res.stderr)
    return inference.z_check(z, ALPHA), term_err, eps_ratio


def _rc_simulation():
    """The z test over the (r, c) grid against the finite-d prediction, and the per-sample
    identity :math:`\\lambda_x\\lambda_{x+f} F(r, c) + (\\lambda_x - \\lambda_{x+f})^2`
    (:math:`\\lambda = \\sqrt{V/(V + \\epsilon)}`) at the realised (r, c): the largest
    deviation over its rounding bound :math:`64\\,d\\,2^{-52}`."""
    d, n = RC_SIM
    bound = 64 * d * 2.0**-52
    z, worst = [], 0.0
    for i, rv in enumerate(RC_R):
        for jj, cv in enumerate(RC_C):
            res = gaussian.simulate_rc(rv, cv, d, n, seed=500 + 10 * i + jj)
            V_x = res.var_x
            V_xf = V_x * (1 + 2 * res.r_real * res.c_real + res.r_real**2)
            lam_x, lam_xf = np.sqrt(V_x / (V_x + gaussian.LN_EPS)), np.sqrt(V_xf / (V_xf + gaussian.LN_EPS))
            exact = lam_x * lam_xf * theory.change_sq_rc(res.r_real, res.c_real) + (lam_x - lam_xf) ** 2
            worst = max(worst, float(np.max(np.abs(res.per_sample - exact) / bound)))
            z.append((res.mean_sq_change - theory.change_sq_finite_d(rv, cv, d)) / res.stderr)
    return inference.z_check(np.array(z), ALPHA), worst


def _feedback_simulation():
    """The z test of the feedback stream against the large-d recursion, for each a of
    :data:`FEEDBACK_A`, and the figure's series."""
    depth, d, n = FEEDBACK_SIM
    series, z = {}, []
    for i, a in enumerate(FEEDBACK_A):
        res = gaussian.simulate_feedback(depth, d, n, a=a, b=FEEDBACK_B, seed=70 + i)
        pred = theory.feedback_recursion(a, FEEDBACK_B, depth)
        series[f"simulation, a = {a:g}"] = (res.k, res.mean_sq_change, 2 * res.stderr, pred)
        z.append((res.mean_sq_change - pred) / res.stderr)
    return inference.z_check(z, ALPHA), series


def chapter(root) -> BeyondIndependenceResult:
    """Chapter 5's result (``root``: the book's folder; nothing is read from it)."""
    book_root(root)
    curves, geometric, b1_gap = _hetero_figure()
    hetero, term_err, eps_ratio = _hetero_simulation()
    rc, worst = _rc_simulation()
    feedback, series = _feedback_simulation()
    w2_star = float(theory.feedback_fixed_point(-0.5, FEEDBACK_B)[1])
    long = theory.feedback_recursion(FEEDBACK_A[0], FEEDBACK_B, FEEDBACK_K_FAR)
    return BeyondIndependenceResult(
        beta_crit=beta_crit(), geometric_limit_q2=geometric_limit(2), zeta2=zeta2(),
        hetero_curves=curves, hetero_geometric=geometric, hetero_b1_gap=b1_gap,
        hetero=hetero, hetero_term_err=term_err, hetero_eps_ratio=eps_ratio,
        rc=rc, rc_identity_worst=worst,
        feedback=feedback, feedback_w2_star=w2_star,
        feedback_kw_far=FEEDBACK_K_FAR * math.sqrt(long[-1]),
        feedback_fixed_gap=float(abs(theory.feedback_recursion(-0.5, FEEDBACK_B, 200)[-1] - w2_star)),
        feedback_series=series)
