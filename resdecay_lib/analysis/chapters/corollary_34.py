"""Chapter 3 (``chapters/03_corollary_34.ipynb``): Corollary 3.4 with constants, the card's "a
fifth at k = 24", and a Monte Carlo of the mean absolute change.

In the theorem's model (seed convention) each coordinate of LN(x^a_{k+1}) - LN(x^a_k) is
N(0, omega_k^2), so E|.| = sqrt(2/pi) omega_k with

    omega_k = sqrt(1 + u) - sqrt(1 - u),  u = k^(-1/2),
    1/8 k^(-3/2) < omega_k - k^(-1/2) <= C k^(-3/2),  C = 2^(3/2) (omega_2 - 2^(-1/2)).

The chapter derives these in SymPy; this module holds what it glues and checks numerically:
the limits and C (SymPy), the scaled remainder g(u) = (omega_k - u) / u^3 in its
cancellation-free form 2 / ((1 + sqrt(1 - u^2)) (2 + S) S), S = sqrt(1 + u) + sqrt(1 - u),
over k = 2..:data:`K_CHECK` (:func:`scaled_remainder`), the ratio omega_24 / omega_ref under
each reading of the card (:data:`READINGS`), and ``gaussian.simulate`` at the widths of
:data:`WIDTHS` against the finite-d prediction ``theory.mean_abs_finite_d`` (z-scores, one
Bonferroni family at level :data:`ALPHA`). Nothing is read from the stored runs: ``root`` is
accepted for the common signature and not used.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ...book.glues import EvidenceGlue, Table
from ...maths import gaussian, theory
from ...stats import inference

__all__ = ["K_CHECK", "K_PLOT", "DEPTH", "WIDTHS", "ELEMENTS", "ALPHA", "READINGS", "IN_MODEL",
           "scaled_remainder", "fifth_ratios", "Corollary34Result", "chapter"]

#: the bound is evaluated numerically over k = 2..K_CHECK
K_CHECK = 100_000
#: the remainder figure shows k = 2..K_PLOT
K_PLOT = 2000
#: the Monte Carlo reports k = 2..DEPTH
DEPTH = 48
#: simulated widths
WIDTHS = (64, 256, 1024)
#: n_samples * d per width: equal cost per width
ELEMENTS = 2**18
#: family-wise level of the whole Monte Carlo test
ALPHA = 0.01
#: the readings of "a fifth at k = 24", and the short key of each glue name ``fifth_n_<key>``
READINGS = {"seed, formula at k = 1": "seed", "seed, first valid index k = 2": "seed_k2",
            "embedding-counted, k = 1": "embedding", "real LayerNorm, LN(0) = 0 at k = 1": "ln0",
            "first term 1/sqrt(k)": "approx"}
#: the readings inside the theorem's model
IN_MODEL = ("seed, formula at k = 1", "seed, first valid index k = 2", "embedding-counted, k = 1")


def scaled_remainder(ks) -> np.ndarray:
    """g = (omega_k - k^(-1/2)) k^(3/2) at the integers ``ks`` (shape (n,)), evaluated without
    cancellation: 2 / ((1 + sqrt(1 - u^2)) (2 + S) S), u = k^(-1/2), S = sqrt(1 + u) + sqrt(1 - u)."""
    u = np.asarray(ks) ** -0.5
    s = np.sqrt(1 + u) + np.sqrt(1 - u)
    return 2 / ((1 + np.sqrt(1 - u**2)) * (2 + s) * s)


def fifth_ratios() -> dict:
    """omega_24 / omega_ref (SymPy) under each reading of :data:`READINGS`: the formula's
    value omega_1 = sqrt(2) at k = 1; the first valid index omega_2; the embedding-counted
    convention's omega_1 (= omega_2 seed); a real LayerNorm's reference 1 (LN(0) = 0, so the
    change at k = 1 is LN(x^a_2), of mean square ~1); the first term 1/sqrt(24)."""
    k = sp.Symbol("k", positive=True)
    w = {n: theory.omega(n) for n in (2, 24)}
    return {
        "seed, formula at k = 1": w[24] / sp.sqrt(theory.omega_sq(k).subs(k, 1)),
        "seed, first valid index k = 2": w[24] / w[2],
        "embedding-counted, k = 1": theory.omega(24, embedding_counted=True) / theory.omega(1, embedding_counted=True),
        "real LayerNorm, LN(0) = 0 at k = 1": w[24] / 1,
        "first term 1/sqrt(k)": 1 / sp.sqrt(24),
    }


@dataclass(frozen=True)
class Corollary34Result:
    """Chapter 3's numbers.

    sqrtk_limit, mean_abs_limit : lim sqrt(k) omega_k and lim sqrt(k) E|.| (SymPy)
    remainder_C : C (SymPy)
    remainder_g : :func:`scaled_remainder` over k = 2..K_CHECK
    fifth : {reading: ratio (SymPy)} (:func:`fifth_ratios`)
    ms_ln_k2 : mean square of a real LayerNorm of N(0, I_4096) (64 samples): the reference ~1
    sims : {d: ``gaussian.SimResult``} (k = 2..DEPTH)
    z : {d: (simulated E|.| - finite-d prediction) / se, shape (DEPTH - 1,)}
    bias_se : {d: (finite-d prediction - sqrt(2/pi) omega_k) / se, shape (DEPTH - 1,)}
    z_limit_1024 : (simulated - sqrt(2/pi) omega_k) / se at d = 1024
    check : ``inference.ZCheck`` of every z at level ALPHA
    """
    sqrtk_limit: sp.Expr
    mean_abs_limit: sp.Expr
    remainder_C: sp.Expr
    remainder_g: np.ndarray
    fifth: dict
    ms_ln_k2: float
    sims: dict
    z: dict
    bias_se: dict
    z_limit_1024: np.ndarray
    check: inference.ZCheck

    @property
    def denominators(self) -> dict:
        """{reading: n}: the ratio is "about 1/n" (``theory.unit_fraction_denominator``)."""
        return {name: theory.unit_fraction_denominator(float(v)) for name, v in self.fifth.items()}

    @property
    def about_a_fifth(self) -> dict:
        """{reading: whether the ratio is about 1/5}, by the float rounding of the denominators."""
        return {name: n == 5 for name, n in self.denominators.items()}

    @property
    def about_a_fifth_exact(self) -> dict:
        """The same decided exactly: 4.5 <= 1/ratio < 5.5, i.e. 2/11 < ratio <= 2/9 in SymPy's rationals."""
        return {name: bool(sp.Rational(2, 11) < v <= sp.Rational(2, 9)) for name, v in self.fifth.items()}

    @property
    def var_ratio(self) -> float:
        """omega_24^2 / omega_2^2: the decay measured as a variance."""
        return float(theory.omega_sq(24) / theory.omega_sq(2))

    @property
    def max_bias_se(self) -> dict:
        """{d: max_k bias_se}: how far the finite-d term lifts the prediction, in standard errors."""
        return {d: float(np.max(b)) for d, b in self.bias_se.items()}

    @property
    def min_bias_se(self) -> dict:
        """{d: min_k bias_se}."""
        return {d: float(np.min(b)) for d, b in self.bias_se.items()}

    def mc_table(self) -> Table:
        """Per width: samples, max |z| against the finite-d prediction, and the range over k of
        (limit - finite-d prediction) in standard errors."""
        rows = [(d, sim.n_samples, f"{np.max(np.abs(self.z[d])):.1f}",
                 f"{-np.max(self.bias_se[d]):.2f} .. {-np.min(self.bias_se[d]):.2f}") for d, sim in self.sims.items()]
        return Table.of(["$d$", "samples", r"$\max_k \lvert z_k\rvert$ vs finite $d$",
                         r"$\sqrt{2/\pi}\,\omega_k$ - finite-$d$ prediction, in standard errors"], rows)

    def remainder_figure(self) -> tuple:
        """``plots.remainder_panels``' arguments over k = 2..K_PLOT: (k, {label: E|.| exact, its
        first term}, the scaled remainder, {"$C$": C, "$1/8$": 1/8})."""
        ks = np.arange(2, K_PLOT + 1)
        g = self.remainder_g[: len(ks)]
        omega = ks ** -0.5 + g * (ks ** -0.5) ** 3
        return (ks, {r"$E|\cdot| = \sqrt{2/\pi}\,\omega_k$": np.sqrt(2 / np.pi) * omega,
                     r"$\sqrt{2/\pi}\,k^{-1/2}$": np.sqrt(2 / np.pi) / np.sqrt(ks)},
                g, {"$C$": float(self.remainder_C), "$1/8$": 1 / 8})

    def mc_figure(self) -> dict:
        """``plots.scaled_simulation``'s arguments: sqrt(k) E|.| simulated per width (+- 2 se)
        and in the large-d limit, and the limit sqrt(2/pi)."""
        ks = np.arange(2, DEPTH + 1)
        exact = np.array([float(theory.mean_abs_change(int(k))) for k in ks])
        return dict(points={d: (s.k, np.sqrt(s.k) * s.mean_abs_change, 2 * np.sqrt(s.k) * s.stderr_abs)
                            for d, s in self.sims.items()},
                    line=(ks, np.sqrt(ks) * exact, r"$\sqrt{k}\,\sqrt{2/\pi}\,\omega_k$ (large $d$)"),
                    limit=(math.sqrt(2 / math.pi), r"limit $\sqrt{2/\pi}$"),
                    xlabel="block index $k$ (seed convention)", ylabel=r"$\sqrt{k}\;E|\cdot|$ per coordinate")

    def glues(self) -> dict:
        n = self.denominators
        return {
            "ev_cor34_sqrtk_limit": EvidenceGlue(float(self.sqrtk_limit), digits=6),
            "cor34_meanabs_limit": round(float(self.mean_abs_limit), 4),
            "ev_cor34_remainder_C": EvidenceGlue(float(self.remainder_C), digits=6),
            "cor34_C_meanabs": round(float(sp.sqrt(2 / sp.pi) * self.remainder_C), 4),
            "ev_fifth_ratio_seed": EvidenceGlue(float(self.fifth["seed, formula at k = 1"]), digits=5),
            "ev_fifth_ratio_seed_k2": EvidenceGlue(float(self.fifth["seed, first valid index k = 2"]), digits=5),
            "ev_fifth_ratio_embedding": EvidenceGlue(float(self.fifth["embedding-counted, k = 1"]), digits=5),
            "ev_fifth_ratio_approx": EvidenceGlue(float(self.fifth["first term 1/sqrt(k)"]), digits=5),
            "ev_fifth_ratio_seed_ln0": EvidenceGlue(float(self.fifth["real LayerNorm, LN(0) = 0 at k = 1"]), digits=5),
            "fifth_n_seed": n["seed, formula at k = 1"],
            "fifth_n_seed_k2": n["seed, first valid index k = 2"],
            "fifth_n_embedding": n["embedding-counted, k = 1"],
            "fifth_n_approx": n["first term 1/sqrt(k)"],
            "fifth_n_ln0": n["real LayerNorm, LN(0) = 0 at k = 1"],
            "fifth_var_ratio_k2": round(self.var_ratio, 4),
            "fifth_var_n_k2": theory.unit_fraction_denominator(self.var_ratio),
            "cor34_alpha": self.check.alpha,
            "cor34_coverage": 1 - self.check.alpha,
            "ev_cor34_maxz": EvidenceGlue(self.check.max_abs, digits=3),
            "ev_cor34_z_crit": EvidenceGlue(self.check.z_crit, digits=3),
            "cor34_n_tests": self.check.n,
            "cor34_depth": DEPTH,
            "cor34_d_small": WIDTHS[0],
            "cor34_d_large": WIDTHS[-1],
            "cor34_bias_se_64": round(self.max_bias_se[64], 1),
            "cor34_bias_se_1024": round(self.max_bias_se[1024], 2),
            "cor34_maxz_limit_1024": round(float(np.max(np.abs(self.z_limit_1024))), 2),
            "cor34_mc_table": self.mc_table(),
        }


def _limit_abs(sim) -> np.ndarray:
    return np.array([float(theory.mean_abs_change(int(k))) for k in sim.k])


def chapter(root=None) -> Corollary34Result:
    """Chapter 3's limits, constant, ratios and Monte Carlo (``root`` is not read). Width
    ``WIDTHS[i]`` is simulated with ELEMENTS // d streams and seed 34 + i."""
    k = sp.Symbol("k", positive=True)
    sims = {d: gaussian.simulate(DEPTH, d, ELEMENTS // d, seed=34 + i) for i, d in enumerate(WIDTHS)}
    z, bias = {}, {}
    for d, sim in sims.items():
        limit = _limit_abs(sim)
        finite = np.array([theory.mean_abs_finite_d(1 / math.sqrt(k_ - 1), 0.0, d) for k_ in sim.k])
        z[d] = (sim.mean_abs_change - finite) / sim.stderr_abs
        bias[d] = (finite - limit) / sim.stderr_abs
    s1024 = sims[1024]
    x2 = np.random.default_rng(0).standard_normal((64, 4096))
    return Corollary34Result(
        sqrtk_limit=sp.limit(sp.sqrt(k) * sp.sqrt(theory.omega_sq(k)), k, sp.oo),
        mean_abs_limit=sp.limit(sp.sqrt(k) * theory.mean_abs_change(k), k, sp.oo),
        remainder_C=theory.remainder_constant(),
        remainder_g=scaled_remainder(np.arange(2, K_CHECK + 1)),
        fifth=fifth_ratios(),
        ms_ln_k2=float(np.mean(gaussian.layer_norm(x2) ** 2)),
        sims=sims, z=z, bias_se=bias,
        z_limit_1024=(s1024.mean_abs_change - _limit_abs(s1024)) / s1024.stderr_abs,
        check=inference.z_check(list(z.values()), ALPHA))
