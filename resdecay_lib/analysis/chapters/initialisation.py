"""Chapter 6, at initialisation: every placement against the theory, as one typed result.

``chapter(root) -> InitialisationResult``. Unlike the chapters that read stored runs, this one
measures freshly built models (:mod:`resdecay_lib.analysis.init_analysis`, which builds them with
:func:`resdecay_lib.nn.models.build` and measures them with :mod:`resdecay_lib.nn.probe`): seven
placements at depth L = 48, width d = 64, three initialisation seeds, each reading the same
random windows [B, T] = [8, 32] per seed. From those profiles it computes

* the exponent p of the per-layer change omega_k^2 ~ k^p, fitted over k = K_MIN..L (blocks) and
  2 K_MIN..2L (sublayers), with percentile bootstrap intervals over seeds, then sequences
  (:func:`resdecay_lib.stats.fit.power_law`), beside the exact w_k^2 fitted over the same range
  (:func:`resdecay_lib.maths.theory.omega_sq`, embedding-counted and seed conventions);
* the theorem with the measured variances of the summands, independence kept
  (:func:`resdecay_lib.maths.theory.omega_sq_hetero`, w_k^2 = 2 (1 - sqrt(S_k / S_{k+1})));
* rho, the embedding's variance over a block increment's (which convention fits);
* Corollary 3.5 at initialisation (:func:`~resdecay_lib.analysis.init_analysis.output_change_at_init`);
* the blocks' gradient norms (first/last and second/last block ratios, t intervals over seeds);
* the same exponents and ratios at fan-in scale (every weight N(0, 1/d)) for Pre-LN and Post-LN;
* the chapter's claims as one Bonferroni family (:func:`resdecay_lib.stats.inference.run_family`).

Every value the chapter glues is :meth:`InitialisationResult.glues`; the sentences that depend
on the evidence are the wording functions (``*_words``); the printed listings of the old
chapter are the tables (``*_table``).
"""
from __future__ import annotations

import math
import types
from dataclasses import dataclass

import numpy as np
import torch

from ...book.glues import EvidenceGlue, Table, Words
from ...book.ledger import EXP_MARGIN
from ...book.notebooks import book_path_arg
from ...maths import theory
from ...nn.hooks import steps_by_kind
from ...nn.models import ARCHS
from ...stats import inference
from ...stats.fit import PowerLawFit, power_law
from ..init_analysis import output_change_at_init, profile_at_init

__all__ = ["L", "D", "N_HEAD", "VOCAB", "T", "B", "SEEDS", "INIT_STD", "K_MIN", "N_BOOT", "N_BOOT_FAMILY",
           "NS", "SHAPE", "ADDITIVE", "FAN_IN", "GRAD_FLAT", "NAMES", "rnd", "sig", "tokens",
           "names_words", "rho_table", "exponents_table", "drop_table", "grad_table",
           "InitialisationResult", "chapter"]

L, D, N_HEAD, VOCAB, T, B = 48, 64, 4, 256, 32, 8   # depth 48, width 64: runs on 2 cores
SEEDS = (0, 1, 2)                                    # initialisation seeds (and token draws)
INIT_STD = 0.02                                      # GPT-2's init, the zoo's default
K_MIN = 4                                            # fit range k = 4..48 (blocks), 8..96 (sublayers)
N_BOOT = 1000                                        # the 95% intervals of the tables
N_BOOT_FAMILY = 10_000                               # the corrected intervals of the tests (tails of 0.1%)
NS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48)             # Corollary 3.5: one fresh N-block model per N
#: the model shape every placement is built with (``models.build(arch, **SHAPE, ...)``)
SHAPE = types.MappingProxyType(dict(n_layer=L, d_model=D, n_head=N_HEAD, vocab_size=VOCAB, block_size=T))
#: the placements that add to an un-normalised stream: the only ones with a meaningful rho
ADDITIVE = ("pre_ln", "peri_ln", "ln_scaling")
#: the two placements the card contrasts, measured again at fan-in scale
FAN_IN = ("pre_ln", "post_ln")
#: "flat": a gradient ratio within 10% of 1, on the log scale
GRAD_FLAT = math.log(1.1)
#: the placements' names in the prose (Pre-LN is the reference, never listed)
NAMES = types.MappingProxyType({"post_ln": "Post-LN", "peri_ln": "Peri-LN", "resi_dual": "ResiDual",
                                "ln_scaling": "LayerNorm-Scaling", "deepnorm": "DeepNorm", "mix_ln": "Mix-LN"})


def rnd(x, n: int = 3) -> float:
    """``x`` rounded to ``n`` decimal places, as a plain Python float (for glue): exponents and
    ratios to 0.001, a tenth of their intervals' half-widths or less, and far above the last bits
    of float32 arithmetic that differ between CPUs (4 significant digits of a value near 0 did
    not survive another CPU: ).

    >>> rnd(np.float64(-0.93149)), rnd(315.4876, 2)
    (-0.931, 315.49)
    """
    return round(float(x), n)


def sig(x, n: int) -> float:
    """``x`` rounded to ``n`` significant digits (a ratio or a spread, not an exponent near 0).

    >>> sig(0.000412, 2), sig(0.7849, 2), sig(5.2549, 3)
    (0.00041, 0.78, 5.25)
    """
    return float(f"{float(x):.{n}g}")


def tokens(seeds=SEEDS) -> dict:
    """``{seed: uniform random token ids [B, T]}`` (int64), drawn from a generator seeded with
    1000 + seed: the same windows for every placement at a given seed."""
    return {seed: torch.randint(0, VOCAB, (B, T), generator=torch.Generator().manual_seed(1000 + seed))
            for seed in seeds}


# ----------------------------------------------------------------------------- wording

def names_words(names) -> Words:
    """The placements ``names`` (a sequence of str) as the prose lists them: comma-separated
    in the given order, "none" when there is none.

    >>> names_words(["Post-LN", "ResiDual"]), names_words([])
    ('Post-LN, ResiDual', 'none')
    """
    names = [str(n) for n in names]
    return Words(", ".join(names) if names else "none")


# ----------------------------------------------------------------------------- tables

def rho_table(rho: dict) -> Table:
    """The embedding against a block's output, one row per placement: ``rho`` is
    ``{arch: (var_emb, var_inc, rho)}``, the embedding's variance per coordinate, the mean
    variance of a block's increment x_{k+1} - x_k and rho, their ratio (means over seeds), each
    to 2 significant digits as the prose shows them (:func:`sig`)."""
    return Table.of(["placement", "var(embedding)", "mean var(block increment)", r"$\rho$"],
                    [[f"`{a}`", str(sig(e, 2)), str(sig(i, 2)), str(sig(r, 2))] for a, (e, i, r) in rho.items()])


def _iv(lo: float, hi: float) -> str:
    return f"[{lo:.3f}, {hi:.3f}]"


def exponents_table(theory_row, rows: dict) -> Table:
    """Fitted exponents of omega_k^2 at initialisation. ``theory_row``: (block, sublayer) exponents
    of the exact w_k^2 (embedding-counted); ``rows``: ``{label: (block, (lo, hi), hetero,
    sublayer, (lo, hi) or None, hetero_sub)}``, exponents and 95% intervals (None: not
    measured), and the measured-variance theory's exponents (None: not an additive placement).
    Numbers to 3 decimals; a missing cell is left blank."""
    def num(x):
        return "" if x is None else f"{x:.3f}"

    out = [["theory $w_k^2$ (embedding-counted)", num(theory_row[0]), "exact", "", num(theory_row[1]), "exact", ""]]
    for label, (blk, blk_iv, het, sub, sub_iv, het_sub) in rows.items():
        out.append([label, num(blk), _iv(*blk_iv), num(het), num(sub),
                    "" if sub_iv is None else _iv(*sub_iv), num(het_sub)])
    return Table.of(["placement", "block exponent", "95% interval", "measured-variance theory",
                     "sublayer exponent", "95% interval", "measured-variance theory"], out)


def drop_table(rows: dict, drop_theory: float) -> Table:
    """How far each placement escapes: ``rows`` ``{arch: (exponent minus Pre-LN's,
    omega^2(L) / omega^2(K_MIN))}`` and the theory's drop, to 2 significant digits as the prose
    shows them (:func:`sig`)."""
    return Table.of(["placement", "exponent minus Pre-LN's", rf"$\omega^2_{{{L}}} / \omega^2_{{{K_MIN}}}$"],
                    [[f"`{a}`", str(sig(d, 2)), str(sig(r, 2))] for a, (d, r) in rows.items()]
                    + [["theory $w_k^2$", "", str(sig(drop_theory, 2))]])


def grad_table(rows: dict, level: float) -> Table:
    """Gradient norms at initialisation: ``rows`` ``{arch: (first/last (mean, lo, hi),
    second/last mean)}``, means over seeds with the first/last ratio's t interval at ``level``,
    each to 3 significant digits as the prose shows them (:func:`sig`)."""
    return Table.of(["placement", "first / last block", f"{level:.1%} $t$ interval", "second / last block"],
                    [[f"`{a}`", str(sig(m, 3)), f"[{sig(lo, 3)}, {sig(hi, 3)}]", str(sig(r2, 3))]
                     for a, ((m, lo, hi), r2) in rows.items()])


# ----------------------------------------------------------------------------- the result

@dataclass(frozen=True)
class InitialisationResult:
    """Everything Chapter 6 shows, measured on fresh models (see the module docstring).

    Per-placement dicts are keyed by the zoo's names (:data:`resdecay_lib.nn.models.ARCHS`, in
    its order). Curves over k are arrays [L] (blocks) or [2L] (sublayers); a ``profiles`` entry
    is :func:`~resdecay_lib.analysis.init_analysis.profile_at_init`'s dict (``blk`` [S*B, L],
    ``sub`` [S*B, 2L], ``dual``, ``grad`` [S, L], ``emb_var`` [S], ``inc_var`` [S, 2L],
    ``blk_inc_var`` [S, L]).
    """
    profiles: dict            # {arch: profile at GPT-2 initialisation}
    profiles_fan_in: dict     # {arch: profile at fan-in scale}, FAN_IN only
    w_emb: np.ndarray         # [L]  exact w_k^2, embedding-counted
    w_seed: np.ndarray        # [L]  the seed convention (NaN at k = 1)
    w_emb_sub: np.ndarray     # [2L] sublayer w_k^2, embedding-counted
    fits: dict                # {arch: PowerLawFit} blocks, N_BOOT replicates
    fits_sub: dict            # {arch: PowerLawFit} sublayers
    fit_dual: PowerLawFit     # ResiDual's x_d, blocks
    wide: dict                # the same fits with N_BOOT_FAMILY replicates (the tests' intervals)
    wide_sub: dict            # ADDITIVE only
    wide_dual: PowerLawFit
    theory_fit: PowerLawFit         # w_emb over K_MIN..L
    theory_fit_seed: PowerLawFit    # w_seed over K_MIN..L
    theory_fit_sub: PowerLawFit     # w_emb_sub over 2 K_MIN..2L
    hetero: dict              # {arch: PowerLawFit of omega_sq_hetero(measured variances)}, ADDITIVE
    hetero_sub: dict
    rho: dict                 # {arch: [S] rho per seed}, ADDITIVE
    emb_var_init: float       # 2 INIT_STD^2 (1 - 1/D): the embedding's variance per coordinate at init
    att_mlp: float            # Pre-LN: mean variance of an attention output over an MLP output
    drop: dict                # {arch: omega^2(L) / omega^2(K_MIN)} of the mean curve
    drop_theory: float        # the same of w_emb
    level_pre_over_post: float    # Pre-LN's change over Post-LN's at k = K_MIN
    out_change: np.ndarray    # [S*B, len(NS)] Corollary 3.5's output change
    cor35: PowerLawFit
    wide_cor35: PowerLawFit
    cor35_theory: PowerLawFit
    ratio: dict               # {arch: [S] first/last block gradient norm}
    ratio2: dict              # {arch: [S] second/last}
    ratio_intervals: dict     # {arch: TInterval of ratio at grad_level}
    ratio2_intervals: dict    # {"pre_ln", "post_ln": TInterval of ratio2 at grad_level}
    grad_level: float         # 1 - 0.05/2: the two placements the card contrasts
    fits_fan_in: dict         # {arch: PowerLawFit} fan-in scale, N_BOOT
    wide_fan_in: dict         # N_BOOT_FAMILY
    rho_fan_in: float         # Pre-LN's rho at fan-in scale (mean over seeds)
    tests: dict               # {claim key: HypothesisResult}, one Bonferroni family
    escapers: tuple           # the placements whose escape is claimed (they renormalise)
    faster: tuple             # the additive placements whose faster decay is claimed

    # ---- what the figures draw
    @property
    def mean_blk(self) -> dict:
        """{arch: mean omega_k^2 over seeds and sequences, [L]}."""
        return {a: r["blk"].mean(0) for a, r in self.profiles.items()}

    @property
    def mean_sub(self) -> dict:
        """{arch: mean sublayer omega_k^2, [2L]}."""
        return {a: r["sub"].mean(0) for a, r in self.profiles.items()}

    @property
    def mean_dual(self) -> np.ndarray:
        """ResiDual's x_d: mean omega_k^2, [L]."""
        return self.profiles["resi_dual"]["dual"].mean(0)

    @property
    def theory_curves(self) -> dict:
        """The exact curves ``plots.init_curves`` draws: blocks, seed convention, sublayers."""
        return {"blk": self.w_emb, "seed": self.w_seed, "sub": self.w_emb_sub}

    @property
    def mean_grad(self) -> dict:
        """{arch: mean gradient norm of block k's parameters over seeds, [L]}."""
        return {a: r["grad"].mean(0) for a, r in self.profiles.items()}

    @property
    def n_dropped(self) -> int:
        """Bootstrap replicates dropped (a non-positive mean curve) over the exponent fits."""
        return sum(f.n_dropped for f in [*self.fits.values(), *self.fits_sub.values(), self.fit_dual,
                                         *self.wide.values(), *self.wide_sub.values(), self.wide_dual])

    # ---- the glued values
    def _exp(self, arch) -> EvidenceGlue:
        f = self.fits[arch]
        return EvidenceGlue(rnd(f.exponent), lo=rnd(f.lo), hi=rnd(f.hi))

    def _grad(self, arch) -> EvidenceGlue:
        iv = self.ratio_intervals[arch]
        return EvidenceGlue(rnd(self.ratio[arch].mean()), lo=rnd(iv.lo), hi=rnd(iv.hi))

    def _grad2(self, arch) -> EvidenceGlue:
        iv = self.ratio2_intervals[arch]
        return EvidenceGlue(rnd(self.ratio2[arch].mean()), lo=rnd(iv.lo), hi=rnd(iv.hi))

    def glues(self) -> dict:
        """Every name Chapter 6 glues, with its value (rounded as the chapter shows it)."""
        pre = self.fits["pre_ln"]
        out = {
            "rho_pre_ln": sig(self.rho["pre_ln"].mean(), 2),
            "init_std": INIT_STD,
            "rho_peri_ln": sig(self.rho["peri_ln"].mean(), 2),
            "init-rho-table": rho_table({a: (self.profiles[a]["emb_var"].mean(),
                                             self.profiles[a]["blk_inc_var"].mean(), self.rho[a].mean())
                                         for a in ADDITIVE}),
            "ev_init_exp_theory": EvidenceGlue(rnd(self.theory_fit.exponent)),
            "init_exp_theory_seed": rnd(self.theory_fit_seed.exponent),
            "init_exp_theory_sub": rnd(self.theory_fit_sub.exponent),
        }
        for a, fs in self.fits_sub.items():
            out[f"init_sub_exp_{a}"] = rnd(fs.exponent)
            out[f"init_sub_exp_{a}_lo"] = rnd(fs.lo)
            out[f"init_sub_exp_{a}_hi"] = rnd(fs.hi)
        out.update({
            "ev_init_exp_pre_ln": self._exp("pre_ln"),
            "ev_init_exp_post_ln": self._exp("post_ln"),
            "ev_init_exp_peri_ln": self._exp("peri_ln"),
            "ev_init_exp_resi_dual": self._exp("resi_dual"),
            "ev_init_exp_ln_scaling": self._exp("ln_scaling"),
            "ev_init_exp_deepnorm": self._exp("deepnorm"),
            "ev_init_exp_mix_ln": self._exp("mix_ln"),
            "init_exp_dual": rnd(self.fit_dual.exponent),
            "init_exp_dual_lo": rnd(self.fit_dual.lo),
            "init_exp_dual_hi": rnd(self.fit_dual.hi),
            "init_k_min": K_MIN,
            "init_depth": L,
            "init_width": D,
            "init_n_seeds": len(SEEDS),
            "att_mlp_ratio": sig(self.att_mlp, 2),
        })
        for a in ADDITIVE:
            out[f"hetero_exp_{a}"] = rnd(self.hetero[a].exponent)
            out[f"hetero_sub_exp_{a}"] = rnd(self.hetero_sub[a].exponent)
        out["init-exponents-table"] = self._exponents_table()
        for a in self.fits:
            out[f"init_drop_{a}"] = sig(self.drop[a], 2)
            out[f"init_exp_minus_pre_{a}"] = sig(self.fits[a].exponent - pre.exponent, 2)
        out["init_drop_theory"] = sig(self.drop_theory, 2)
        out["init_level_pre_over_post"] = rnd(self.level_pre_over_post, 2)
        out["init-drop-table"] = drop_table({a: (self.fits[a].exponent - pre.exponent, self.drop[a])
                                             for a in self.fits}, self.drop_theory)
        out.update({
            "ev_cor35_random_exp": EvidenceGlue(rnd(self.cor35.exponent), lo=rnd(self.cor35.lo),
                                                hi=rnd(self.cor35.hi)),
            "ev_cor35_random_exp_theory": EvidenceGlue(rnd(self.cor35_theory.exponent)),
        })
        for a in self.ratio2:
            out[f"grad_ratio2_{a}"] = sig(self.ratio2[a].mean(), 3)
        out.update({
            "ev_grad_ratio2_pre_ln": self._grad2("pre_ln"),
            "ev_grad_ratio2_post_ln": self._grad2("post_ln"),
            "ev_grad_ratio_pre_ln": self._grad("pre_ln"),
            "ev_grad_ratio_post_ln": self._grad("post_ln"),
            "ev_grad_ratio_peri_ln": self._grad("peri_ln"),
            "ev_grad_ratio_resi_dual": self._grad("resi_dual"),
            "ev_grad_ratio_ln_scaling": self._grad("ln_scaling"),
            "ev_grad_ratio_deepnorm": self._grad("deepnorm"),
            "ev_grad_ratio_mix_ln": self._grad("mix_ln"),
            "grad_level": self.grad_level,
            "init-grad-table": grad_table({a: ((self.ratio[a].mean(), iv.lo, iv.hi), self.ratio2[a].mean())
                                           for a, iv in self.ratio_intervals.items()}, self.grad_level),
        })
        for a, f in self.fits_fan_in.items():
            g = self.profiles_fan_in[a]["grad"]
            for name, v in (("exp", f.exponent), ("lo", f.lo), ("hi", f.hi),
                            ("grad1", (g[:, 0] / g[:, -1]).mean()), ("grad2", (g[:, 1] / g[:, -1]).mean())):
                out[f"fi_{name}_{a}"] = sig(v, 3)
        out["fi_rho_pre_ln"] = sig(self.rho_fan_in, 2)
        for key, r in self.tests.items():
            out[key] = Words(r.word)
        out.update({
            "init-tests-table": Table(inference.family_markdown(self.tests.values())),
            "init_margin": EXP_MARGIN,
            "init_n_boot_family": N_BOOT_FAMILY,
            "init_n_tests": len(self.tests),
            "init_escapers": names_words([NAMES[a] for a in self.escapers if self.tests[f"t_escape_{a}"].shown]),
            "init_faster": names_words([NAMES[a] for a in self.faster if self.tests[f"t_faster_{a}"].shown]),
        })
        return out

    def _exponents_table(self) -> Table:
        def row(a, label):
            f, fs = self.fits[a], self.fits_sub[a]
            het = self.hetero.get(a)
            het_sub = self.hetero_sub.get(a)
            return label, (rnd(f.exponent), (rnd(f.lo), rnd(f.hi)), None if het is None else rnd(het.exponent),
                           rnd(fs.exponent), (rnd(fs.lo), rnd(fs.hi)),
                           None if het_sub is None else rnd(het_sub.exponent))

        d = self.fit_dual
        rows = {}
        for a in self.fits:
            rows.update([row(a, f"`{a}`" + (" ($x_a$)" if a == "resi_dual" else ""))])
            if a == "resi_dual":          # its dual stream x_d, at block granularity only
                rows["`resi_dual` ($x_d$)"] = (rnd(d.exponent), (rnd(d.lo), rnd(d.hi)), None, None, None, None)
        return exponents_table((rnd(self.theory_fit.exponent), rnd(self.theory_fit_sub.exponent)), rows)


# ----------------------------------------------------------------------------- the computation

def _omega_sq_curve(ks, embedding_counted: bool) -> np.ndarray:
    """Theorem 3.3's exact w_k^2 at each k of ``ks`` (the seed convention is NaN at k = 1,
    where the stream holds no summand yet)."""
    return np.array([float(theory.omega_sq(int(k), embedding_counted=True)) if embedding_counted
                     else (np.nan if k == 1 else float(theory.omega_sq(int(k)))) for k in ks])


def _fits(k, curves: dict, k_min: int, k_max: int, groups, n_boot: int) -> dict:
    return {a: power_law(k, y, k_min=k_min, k_max=k_max, groups=groups, n_boot=n_boot) for a, y in curves.items()}


def _measured_variance_fit(k, emb_var, inc_var, k_min, k_max) -> PowerLawFit:
    """The theorem with the measured variances, independence kept: S_k the summed variance
    before addition k, s2 = [var(embedding), var(increment_1), ...] (means over seeds),
    w_k^2 = 2 (1 - sqrt(S_k / S_{k+1})) (:func:`theory.omega_sq_hetero`), fitted over k_min..k_max."""
    s2 = np.concatenate([[emb_var.mean()], inc_var.mean(0)])
    return power_law(k, theory.omega_sq_hetero(s2), k_min=k_min, k_max=k_max)


def chapter(root) -> InitialisationResult:
    """Chapter 6's result. ``root``: the book's folder (:func:`~resdecay_lib.book.notebooks.find_book_root`);
    this chapter reads nothing stored under it: it builds and measures every model itself
    (2-3 minutes of CPU time on 2 cores), deterministically (seeded weights, tokens and bootstrap)."""
    root = book_path_arg(root, "root")
    if not root.is_dir():
        raise ValueError(f"root must be the book's folder, got {str(root)!r}, which is not a folder")
    toks = tokens(SEEDS)
    groups = np.repeat(np.arange(len(SEEDS)), B)                 # bootstrap: seeds, then sequences
    K, K_SUB = np.arange(1, L + 1), np.arange(1, 2 * L + 1)
    profiles = {a: profile_at_init(a, SEEDS, toks, init_std=INIT_STD, **SHAPE) for a in ARCHS}

    rho = {a: profiles[a]["emb_var"] / profiles[a]["blk_inc_var"].mean(1) for a in ADDITIVE}   # one per seed
    w_emb, w_seed, w_emb_sub = _omega_sq_curve(K, True), _omega_sq_curve(K, False), _omega_sq_curve(K_SUB, True)

    blk = {a: r["blk"] for a, r in profiles.items()}
    sub = {a: r["sub"] for a, r in profiles.items()}
    dual = profiles["resi_dual"]["dual"]
    fits = _fits(K, blk, K_MIN, L, groups, N_BOOT)
    fits_sub = _fits(K_SUB, sub, 2 * K_MIN, 2 * L, groups, N_BOOT)
    fit_dual = power_law(K, dual, k_min=K_MIN, k_max=L, groups=groups, n_boot=N_BOOT)
    wide = _fits(K, blk, K_MIN, L, groups, N_BOOT_FAMILY)
    wide_sub = _fits(K_SUB, {a: sub[a] for a in ADDITIVE}, 2 * K_MIN, 2 * L, groups, N_BOOT_FAMILY)
    wide_dual = power_law(K, dual, k_min=K_MIN, k_max=L, groups=groups, n_boot=N_BOOT_FAMILY)
    theory_fit = power_law(K, w_emb, k_min=K_MIN, k_max=L)
    theory_fit_seed = power_law(K, w_seed, k_min=K_MIN, k_max=L)
    theory_fit_sub = power_law(K_SUB, w_emb_sub, k_min=2 * K_MIN, k_max=2 * L)

    hetero = {a: _measured_variance_fit(K, profiles[a]["emb_var"], profiles[a]["blk_inc_var"], K_MIN, L)
              for a in ADDITIVE}
    hetero_sub = {a: _measured_variance_fit(K_SUB, profiles[a]["emb_var"], profiles[a]["inc_var"], 2 * K_MIN, 2 * L)
                  for a in ADDITIVE}
    inc = profiles["pre_ln"]["inc_var"].mean(0)
    by_kind = steps_by_kind(inc)
    att_mlp = float(by_kind["attention"].mean() / by_kind["mlp"].mean())

    mean_blk = {a: y.mean(0) for a, y in blk.items()}
    drop = {a: mean_blk[a][L - 1] / mean_blk[a][K_MIN - 1] for a in ARCHS}
    drop_theory = float(w_emb[L - 1] / w_emb[K_MIN - 1])
    level_pre_over_post = float(mean_blk["pre_ln"][K_MIN - 1] / mean_blk["post_ln"][K_MIN - 1])

    ns = np.array(NS)
    out_change = output_change_at_init(ns, SEEDS, toks, D, N_HEAD, VOCAB, T)   # seed 100 + s per model
    cor35 = power_law(ns, out_change, k_min=K_MIN, groups=groups, n_boot=N_BOOT)
    wide_cor35 = power_law(ns, out_change, k_min=K_MIN, groups=groups, n_boot=N_BOOT_FAMILY)
    w_out = np.array([float(theory.output_change_var(int(n), embedding_counted=True)) for n in ns])
    cor35_theory = power_law(ns, w_out, k_min=K_MIN)

    ratio = {a: profiles[a]["grad"][:, 0] / profiles[a]["grad"][:, -1] for a in ARCHS}    # one per seed
    ratio2 = {a: profiles[a]["grad"][:, 1] / profiles[a]["grad"][:, -1] for a in ARCHS}
    grad_level = 1 - inference.bonferroni(0.05, 2)
    ratio_intervals = {a: inference.t_interval(ratio[a], grad_level) for a in ARCHS}
    ratio2_intervals = {a: inference.t_interval(ratio2[a], grad_level) for a in ("pre_ln", "post_ln")}

    profiles_fan_in = {a: profile_at_init(a, SEEDS, toks, init_std=D ** -0.5, **SHAPE) for a in FAN_IN}
    blk_fi = {a: r["blk"] for a, r in profiles_fan_in.items()}
    fits_fan_in = _fits(K, blk_fi, K_MIN, L, groups, N_BOOT)
    wide_fan_in = _fits(K, blk_fi, K_MIN, L, groups, N_BOOT_FAMILY)
    pre_fi = profiles_fan_in["pre_ln"]
    rho_fan_in = float((pre_fi["emb_var"] / pre_fi["blk_inc_var"].mean(1)).mean())

    escapers = tuple(a for a in ARCHS if ARCHS[a].renormalises)              # from the equations
    faster = tuple(a for a in ADDITIVE if a != "pre_ln" and hetero[a].exponent < hetero["pre_ln"].exponent)
    tests = _tests(wide, wide_sub, wide_dual, theory_fit, theory_fit_seed, theory_fit_sub, hetero, hetero_sub,
                   escapers, faster, wide_cor35, cor35_theory, ratio, ratio2, wide_fan_in)

    return InitialisationResult(
        profiles=profiles, profiles_fan_in=profiles_fan_in, w_emb=w_emb, w_seed=w_seed, w_emb_sub=w_emb_sub,
        fits=fits, fits_sub=fits_sub, fit_dual=fit_dual, wide=wide, wide_sub=wide_sub, wide_dual=wide_dual,
        theory_fit=theory_fit, theory_fit_seed=theory_fit_seed, theory_fit_sub=theory_fit_sub,
        hetero=hetero, hetero_sub=hetero_sub, rho=rho, emb_var_init=2 * INIT_STD ** 2 * (1 - 1 / D),
        att_mlp=att_mlp, drop=drop, drop_theory=drop_theory, level_pre_over_post=level_pre_over_post,
        out_change=out_change, cor35=cor35, wide_cor35=wide_cor35, cor35_theory=cor35_theory,
        ratio=ratio, ratio2=ratio2, ratio_intervals=ratio_intervals, ratio2_intervals=ratio2_intervals,
        grad_level=grad_level,
        fits_fan_in=fits_fan_in, wide_fan_in=wide_fan_in, rho_fan_in=rho_fan_in,
        tests=tests, escapers=escapers, faster=faster)


def _tests(wide, wide_sub, wide_dual, theory_fit, theory_fit_seed, theory_fit_sub, hetero, hetero_sub,
           escapers, faster, wide_cor35, cor35_theory, ratio, ratio2, wide_fan_in) -> dict:
    """Every agreement and difference the prose states, one Bonferroni family at family-wise 5%
    (:func:`inference.run_family`): {key: HypothesisResult}, in the order of the chapter's table.
    Which claims are made is fixed before any fit: the theorem for Pre-LN and ResiDual's x_d,
    the measured variances for the additive placements, an escape for every placement that
    renormalises its stream, a faster decay where the measured-variance theory predicts one."""
    M = EXP_MARGIN
    H = inference.Hypothesis
    log_ratio_pre = inference.Replicates(np.log(ratio["pre_ln"]))
    log_ratio2 = {a: inference.Replicates(np.log(ratio2[a])) for a in ("pre_ln", "post_ln")}
    claims = {
        "t_pre": H("Pre-LN's block exponent is the theorem's (embedding-counted)", "equivalent",
                   wide["pre_ln"], theory_fit.exponent, M),
        "t_dual": H("ResiDual's dual stream x_d decays as the theorem says", "equivalent",
                    wide_dual, theory_fit.exponent, M),
        "t_het_blk_pre": H("measured variances predict Pre-LN's block exponent", "equivalent",
                           wide["pre_ln"], hetero["pre_ln"].exponent, M),
        "t_het_sub_pre": H("measured variances predict Pre-LN's sublayer exponent", "equivalent",
                           wide_sub["pre_ln"], hetero_sub["pre_ln"].exponent, M),
        "t_het_blk_peri": H("measured variances predict Peri-LN's block exponent", "equivalent",
                            wide["peri_ln"], hetero["peri_ln"].exponent, M),
        "t_het_sub_peri": H("measured variances predict Peri-LN's sublayer exponent", "equivalent",
                            wide_sub["peri_ln"], hetero_sub["peri_ln"].exponent, M),
        "t_het_blk_lns": H("measured variances predict LayerNorm-Scaling's block exponent", "equivalent",
                           wide["ln_scaling"], hetero["ln_scaling"].exponent, M),
        "t_het_sub_lns": H("measured variances predict LayerNorm-Scaling's sublayer exponent", "equivalent",
                           wide_sub["ln_scaling"], hetero_sub["ln_scaling"].exponent, M),
        "t_peri_seed": H("Peri-LN follows the seed convention", "equivalent",
                         wide["peri_ln"], theory_fit_seed.exponent, M),
        "t_sub_eqvar": H("Pre-LN's sublayer exponent is not the equal-variance theory's", "differs",
                         wide_sub["pre_ln"], theory_fit_sub.exponent),
        **{f"t_escape_{a}": H(f"{NAMES[a]} escapes: its exponent lies above Pre-LN's", "above",
                              wide[a], wide["pre_ln"]) for a in escapers},
        **{f"t_faster_{a}": H(f"{NAMES[a]} decays faster than Pre-LN", "below", wide[a], wide["pre_ln"])
           for a in faster},
        "t_cor35": H("the output change decays as Corollary 3.5's exact curve", "equivalent",
                     wide_cor35, cor35_theory.exponent, M),
        "t_cor35_not_1": H("over N = 4..48 the output exponent is not -1", "differs", wide_cor35, -1.0),
        "t_grad_pre": H("Pre-LN's first block gets a larger gradient than its last (log ratio)", "above",
                        log_ratio_pre, 0.0),
        "t_grad2_pre": H("Pre-LN's second block gets a larger gradient than its last (log ratio)", "above",
                         log_ratio2["pre_ln"], 0.0),
        "t_grad_flat_post": H("Post-LN's gradient is flat from its second block (log ratio)", "equivalent",
                              log_ratio2["post_ln"], 0.0, GRAD_FLAT),
        "t_fi_seed": H("fan-in scale: Pre-LN follows the seed convention", "equivalent",
                       wide_fan_in["pre_ln"], theory_fit_seed.exponent, M),
        "t_fi_escape": H("fan-in scale: Post-LN escapes", "above", wide_fan_in["post_ln"], wide_fan_in["pre_ln"]),
    }
    return dict(zip(claims, inference.run_family(claims.values())))
