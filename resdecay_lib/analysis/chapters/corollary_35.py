"""Chapter 4, Corollary 3.5: one more block changes the output by O(1/sqrt(N)).

The output of an N-block Pre-LN model is :math:`y_N = \\mathrm{LN}(\\sum_{j \\le N} x^f_j)`
(seed convention, :data:`resdecay_lib.maths.theory.CONVENTIONS`). In the theorem's model each
coordinate of :math:`y_N - y_{N-1}` is :math:`N(0, \\omega_N^2)` with

.. math:: \\omega_N^2 = 2\\Big(1 - \\sqrt{\\tfrac{N-1}{N}}\\Big), \\qquad
          \\lim_N \\sqrt N\\,\\omega_N = 1

(``theory.derive_output_change_var``). :func:`chapter` computes what the chapter shows beside
its visible SymPy steps: the constant (SymPy), the remainder constant and the relative change
at N = 24, and the Monte Carlo check with a real LayerNorm (``gaussian.simulate``) against
Corollary 3.5 plus its leading finite-width term (``theory.output_change_sq_finite_d``), with
a Bonferroni z test over every N and both widths, and the figure's data. It reads no stored
run: ``root`` is the book's folder only so that every chapter is called alike.
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

__all__ = ["Corollary35Result", "chapter", "N_MAX", "WIDTHS", "ELEMENTS", "ALPHA", "SEED"]

#: the deepest model simulated: N = 2..N_MAX
N_MAX = 128
#: the two widths d simulated: a narrow one, where the finite-width term matters, and a wide one
WIDTHS = (32, 1024)
#: n_samples * d per width (the same number of Gaussian coordinates at each width)
ELEMENTS = 2**17
#: family-wise level of the Bonferroni z test over all N and both widths
ALPHA = 0.01
#: the first width's seed; the i-th width uses SEED + i
SEED = 35


@dataclass(frozen=True)
class Corollary35Result:
    """What Chapter 4 shows (seed convention; sd per coordinate).

    const: :math:`\\lim_N \\sqrt N\\,\\omega_N` (SymPy), 1.0; remainder_C: C in
    :math:`0 < \\omega_N - N^{-1/2} \\le C N^{-3/2}`; rel_24: :math:`\\omega_{24}`, the
    relative change of the output from block 24. mc: the z test of the simulated mean square
    output change against :math:`\\omega_N^2 + m_1/(d-1)` over N = 2..n_max at each width;
    bias_se: per width, the largest finite-width term :math:`(m_1/(d-1))` in standard errors of
    the simulation; sqrtN_sd_sim / sqrtN_sd_se / sqrtN_sd_exact: :math:`\\sqrt{N}` times the
    simulated sd (its delta-method standard error) and the exact :math:`\\sqrt N\\,\\omega_N`
    at N = n_max, width widths[-1]. points: {d: (N, sqrt(N) sd, 2 se of it)}, the figure's
    points; line: (N, sqrt(N) omega_N, label), its large-width curve."""
    const: float
    remainder_C: float
    rel_24: float
    n_max: int
    widths: tuple
    mc: inference.ZCheck
    bias_se: dict
    sqrtN_sd_sim: float
    sqrtN_sd_se: float
    sqrtN_sd_exact: float
    points: dict
    line: tuple

    def glues(self) -> dict[str, object]:
        """Every name Chapter 4 glues, with its value (rounded as the prose shows it)."""
        return {
            "ev_cor35_const": EvidenceGlue(self.const, digits=6),
            "cor35_C": round(self.remainder_C, 4),
            "cor35_rel_24": round(self.rel_24, 4),
            "ev_cor35_maxz": EvidenceGlue(self.mc.max_abs, digits=3),
            "ev_cor35_z_crit": EvidenceGlue(self.mc.z_crit, digits=3),
            "cor35_n_tests": self.mc.n,
            "cor35_N_max": self.n_max,
            "cor35_d_small": self.widths[0],
            "cor35_d_large": self.widths[1],
            "cor35_bias_se_32": round(self.bias_se[32], 1),
            "cor35_bias_se_1024": round(self.bias_se[1024], 1),
            "cor35_sqrtN_sd_sim": round(self.sqrtN_sd_sim, 3),
            "cor35_sqrtN_sd_se": round(self.sqrtN_sd_se, 3),
            "cor35_sqrtN_sd_exact": round(self.sqrtN_sd_exact, 4),
        }


def output_constant() -> float:
    """:math:`\\lim_{N\\to\\infty} \\sqrt N\\,\\sqrt{\\mathrm{var}(y_N - y_{N-1})_i}` from the
    derived variance (SymPy), as a float."""
    var_1, N = theory.derive_output_change_var(1)
    return float(sp.limit(sp.sqrt(N) * sp.sqrt(var_1), N, sp.oo))


def chapter(root) -> Corollary35Result:
    """Chapter 4's result (``root``: the book's folder; nothing is read from it).

    Monte Carlo: for each width d of :data:`WIDTHS`, ``gaussian.simulate(N_MAX, d,
    ELEMENTS // d)``; z = (simulated mean square - predicted) / se with the prediction
    ``output_change_sq_finite_d(N, d)``, all widths one Bonferroni family at :data:`ALPHA`."""
    book_root(root)
    sims = {d: gaussian.simulate(N_MAX, d, ELEMENTS // d, seed=SEED + i) for i, d in enumerate(WIDTHS)}
    z_all, bias_se = [], {}
    for d, res in sims.items():
        limit = np.array([float(theory.output_change_var(int(n))) for n in res.k])
        pred = np.array([theory.output_change_sq_finite_d(int(n), d) for n in res.k])
        z_all.append((res.mean_sq_change - pred) / res.stderr)
        bias_se[d] = float(np.max((pred - limit) / res.stderr))
    mc = inference.z_check(z_all, alpha=ALPHA)

    wide = sims[WIDTHS[-1]]
    sd_sim = math.sqrt(float(wide.mean_sq_change[-1]))
    sd_se = float(wide.stderr[-1]) / (2 * sd_sim)      # delta method: se(sqrt(m)) = se(m) / (2 sqrt(m))

    sd = {d: np.sqrt(res.mean_sq_change) for d, res in sims.items()}
    points = {d: (res.k, np.sqrt(res.k) * sd[d], 2 * np.sqrt(res.k) * res.stderr / (2 * sd[d]))
              for d, res in sims.items()}
    Ns = np.arange(2, N_MAX + 1)
    line = (Ns, np.sqrt(Ns) * np.array([float(theory.omega(int(n))) for n in Ns]), r"$\sqrt{N}\,\omega_N$ (large $d$)")
    return Corollary35Result(
        const=output_constant(), remainder_C=float(theory.remainder_constant()), rel_24=float(theory.omega(24)),
        n_max=N_MAX, widths=WIDTHS, mc=mc, bias_se=bias_se,
        sqrtN_sd_sim=math.sqrt(N_MAX) * sd_sim, sqrtN_sd_se=math.sqrt(N_MAX) * sd_se,
        sqrtN_sd_exact=math.sqrt(N_MAX) * float(theory.omega(N_MAX)), points=points, line=line)
