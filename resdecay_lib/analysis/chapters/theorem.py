"""Chapter 2 (``chapters/02_theorem.ipynb``): Theorem 3.3 against a Monte Carlo of the stream.

The chapter derives Theorem 3.3 in SymPy, omega_k^2 = 2 / (sqrt(k) (sqrt(k-1) + sqrt(k))) (seed
convention, ``theory.derive_omega_sq``), and its finite-width correction
omega_{k,d}^2 = omega_k^2 + rho_k (1 - rho_k^2) / (d - 1) + O(d^-2), rho_k = sqrt((k-1)/k)
(``theory.omega_sq_finite_d``). This module runs ``gaussian.simulate`` (the Gaussian stream
through a real LayerNorm, eps = 1e-5) for k = 2..:data:`DEPTH` at each width of :data:`WIDTHS`
and tests three predictions per width with Bonferroni's critical value z* (family-wise level
:data:`ALPHA` per width over the :data:`DEPTH` - 1 values of k):

* the theorem, z_k = (simulated_k - omega_k^2) / se_k;
* the first-order prediction p_k, allowing b_k = |its exact remainder| + the eps bound:
  max_k (|simulated_k - p_k| - b_k) / se_k;
* the exact finite-d mean (eps = 0), allowing the eps bound alone.

Nothing is read from the stored runs: ``root`` is accepted for the common signature and not used.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...book.glues import EvidenceGlue, Table, Words
from ...maths import gaussian, theory

__all__ = ["DEPTH", "WIDTHS", "ALPHA", "WidthTest", "TheoremResult", "first_plain_words", "chapter"]

#: k = 2..DEPTH: DEPTH - 1 values of k per width
DEPTH = 64
#: width d -> number of simulated streams (fewer at larger d: the per-stream noise falls like 1/sqrt(d))
WIDTHS = {16: 20_000, 64: 8_000, 512: 2_000, 4096: 500}
#: family-wise level of the test, per width
ALPHA = 0.01


def first_plain_words(max_z: float, z_crit: float) -> Words:
    """The verdict on the first-order prediction tested without the allowance for its
    remainder: rejected when its largest z (``max_z``) is above ``z_crit``."""
    if max_z > z_crit:
        return Words("above the critical value: the first-order prediction alone, without its remainder, "
                     "is rejected there")
    return Words("below the critical value even without the allowance")


@dataclass(frozen=True)
class WidthTest:
    """The tests at one width d; every array has shape (DEPTH - 1,), over k = 2..DEPTH.

    sim : ``gaussian.SimResult`` of the width
    raw : max_k |z_k| of the theorem
    first_plain : max_k |simulated - p_k| / se_k, p_k the first-order prediction, no allowance
    first : max_k (|simulated - p_k| - |R_k| - eps_k) / se_k, R_k its exact remainder
    exact : max_k (|simulated - exact_k| - eps_k) / se_k
    remainder_se, eps_se : max_k |R_k| / se_k and max_k eps_k / se_k
    first_pred, second_pred, exact_pred : the predictions (first order, second order, exact)
    """
    sim: gaussian.SimResult
    raw: float
    first_plain: float
    first: float
    exact: float
    remainder_se: float
    eps_se: float
    first_pred: np.ndarray
    second_pred: np.ndarray
    exact_pred: np.ndarray


def _width_test(sim: gaussian.SimResult, omega: np.ndarray) -> WidthTest:
    first, second, exact, eps_b = theory.finite_d_predictions(sim.k, sim.d, eps=gaussian.LN_EPS)
    mc, se = sim.mean_sq_change, sim.stderr
    remainder = np.abs(exact - first)
    return WidthTest(
        sim=sim,
        raw=float(np.max(np.abs((mc - omega) / se))),
        first_plain=float(np.max(np.abs(mc - first) / se)),
        first=float(np.max((np.abs(mc - first) - remainder - eps_b) / se)),
        exact=float(np.max((np.abs(mc - exact) - eps_b) / se)),
        remainder_se=float(np.max(remainder / se)),
        eps_se=float(np.max(eps_b / se)),
        first_pred=first, second_pred=second, exact_pred=exact)


@dataclass(frozen=True)
class TheoremResult:
    """Chapter 2's numbers.

    symbolic_residual : ``theory.derive_omega_sq().residual`` (a SymPy expression; 0: proved)
    z_crit, n_tests, alpha : Bonferroni's critical |z| for ``n_tests`` values of k at level ``alpha``
    ks, omega : k = 2..DEPTH and omega_k^2 there (float)
    tests : {d: :class:`WidthTest`}
    """
    symbolic_residual: object
    z_crit: float
    n_tests: int
    alpha: float
    ks: np.ndarray
    omega: np.ndarray
    tests: dict

    def mean_excess(self, d: int, of: str = "sim") -> float:
        """Mean over k of x / omega_k^2 - 1 at width ``d``, x the simulation (``of="sim"``) or a
        prediction (``"first"``, ``"second"``, ``"exact"``)."""
        t = self.tests[d]
        x = t.sim.mean_sq_change if of == "sim" else getattr(t, f"{of}_pred")
        return float(np.mean(x / self.omega - 1))

    def mc_table(self) -> Table:
        """Per width: streams, max |z| of the theorem, mean excess of the simulation over omega_k^2."""
        return Table.of(["$d$", "streams", r"$\max_k \lvert z_k\rvert$ vs the theorem", r"mean excess over $\omega_k^2$"],
                        [(d, t.sim.n_samples, f"{t.raw:.2f}", f"{self.mean_excess(d):.2%}")
                         for d, t in self.tests.items()])

    def tests_table(self) -> Table:
        """Per width: the largest z of each prediction (first order and exact after their
        allowances) and the largest remainder and eps allowance in standard errors."""
        return Table.of(["$d$", "theorem", "first order, no allowance", "first order", "exact",
                         r"$\max \lvert R\rvert/\mathrm{se}$", r"$\max \epsilon/\mathrm{se}$"],
                        [(d, f"{t.raw:.2f}", f"{t.first_plain:.2f}", f"{t.first:.2f}", f"{t.exact:.2f}",
                          f"{t.remainder_se:.3g}", f"{t.eps_se:.2g}") for d, t in self.tests.items()])

    def figure_shown(self) -> dict:
        """``plots.theorem_simulation``'s ``shown``: {d: (k, mean square change, z* se)}, d = 16 and 4096."""
        return {d: (self.tests[d].sim.k, self.tests[d].sim.mean_sq_change, self.z_crit * self.tests[d].sim.stderr)
                for d in (16, 4096)}

    def figure_rel(self) -> dict:
        """``plots.theorem_simulation``'s ``rel``: {d: (k, sim / omega - 1, z* se / omega,
        first-order / omega - 1, exact / omega - 1)}, every width."""
        return {d: (t.sim.k, t.sim.mean_sq_change / self.omega - 1, self.z_crit * t.sim.stderr / self.omega,
                    t.first_pred / self.omega - 1, t.exact_pred / self.omega - 1) for d, t in self.tests.items()}

    def glues(self) -> dict:
        t16, t64, t4096 = self.tests[16], self.tests[64], self.tests[4096]
        return {
            "ev_thm33_symbolic_residual": EvidenceGlue(float(self.symbolic_residual)),
            "ev_thm33_z_crit": EvidenceGlue(self.z_crit, digits=4),
            "thm_alpha": self.alpha,
            "thm_n_tests": self.n_tests,
            "ev_thm33_maxz_large_d": EvidenceGlue(t4096.raw, digits=4),
            "ev_thm33_maxz_raw_small_d": EvidenceGlue(t16.raw, digits=4),
            "ev_thm33_maxz_corrected_small_d": EvidenceGlue(t16.first, digits=4),
            "ev_thm33_rel_bias_d16": EvidenceGlue(self.mean_excess(16), digits=4),
            "thm_pred_rel_d16": round(self.mean_excess(16, "first"), 4),
            "thm_pred2_rel_d16": round(self.mean_excess(16, "second"), 4),
            "thm_exact_rel_d16": round(self.mean_excess(16, "exact"), 4),
            "thm_first_plain_d16": round(t16.first_plain, 2),
            "thm_first_plain_verdict": first_plain_words(t16.first_plain, self.z_crit),
            "thm_maxz_exact_d16": round(t16.exact, 2),
            "thm_remainder_se_d16": round(t16.remainder_se, 2),
            "thm_remainder_se_d64": round(t64.remainder_se, 2),
            "thm_eps_se_max": float(f"{max(t.eps_se for t in self.tests.values()):.1g}"),
            "thm_raw_d64": round(t64.raw, 2),
            "thm_mc_table": self.mc_table(),
            "thm_tests_table": self.tests_table(),
        }


def chapter(root=None) -> TheoremResult:
    """Chapter 2's derivation residual and Monte Carlo tests (``root`` is not read). Each width
    is simulated with seed d."""
    n_tests = DEPTH - 1
    sims = {d: gaussian.simulate(depth=DEPTH, d=d, n_samples=n, seed=d) for d, n in WIDTHS.items()}
    ks = sims[16].k
    omega = np.array([float(theory.omega_sq(int(k))) for k in ks])
    return TheoremResult(
        symbolic_residual=theory.derive_omega_sq().residual,
        z_crit=gaussian.bonferroni_z_crit(n_tests, alpha=ALPHA),
        n_tests=n_tests, alpha=ALPHA, ks=ks, omega=omega,
        tests={d: _width_test(sim, omega) for d, sim in sims.items()})
