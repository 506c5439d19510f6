"""The book's evidence: every value a verdict can read, declared once, here.

An :class:`Evidence` is the name a chapter glues (myst-nb ``glue``) and the ledger reads
(:func:`resdecay_lib.book.ledger.read_evidence`), with the chapter that computes it, what it is,
and its kind:

* ``"value"``: one number, glued under ``name``;
* ``"interval"``: the value and its interval, glued under ``name``, ``name_lo``, ``name_hi``
  (the interval the chapter states: a t interval over seeds in Chapters 7 and 8, a
  bootstrap elsewhere);
* ``"interval_se"``: the same and its standard error, ``name_se`` (for a TOST).

``Evidence`` is a ``str`` (its name), so a rule reads ``ev[TRAINED_EXP_PRE_LN]`` and
``ev[TRAINED_EXP_PRE_LN.lo]`` from the plain ``{name: float}`` dict of the stored outputs,
and a search for a name finds this declaration and the chapter's ``glue`` line (each name
is written out here, never assembled from parts). Chapters glue through :func:`glue`, which
refuses an undeclared name and a value of the wrong kind; ``tests/book/test_evidence.py`` checks
that every declared name is glued by its chapter, literally, and that every glued ``ev_``
name is declared.

Whether a claim may do without a piece of evidence is the claim's (``Claim.optional``), not
the evidence's: the same value can be needed by one claim and only reported by another.
"""
from __future__ import annotations

import math
import numbers
from ..checks import ArgumentTypeError

__all__ = ["Evidence", "KINDS", "DECLARED", "SEED_SETS", "EXPLORATORY_SEEDS", "CONFIRMATORY_SET", "declared", "UndeclaredEvidence", "VAR_EXP", "HALF_RATIO",
           "HALF_RATIO_REF", "glue", "glue_display",
           "INIT_EXP", "GRAD_RATIO", "VAL_LOSS_GAP", "PRETRAINED_EXP", "PRETRAINED_REF", "PRE_LN_FAMILIES", "CONFIRMATORY_MODELS",
           "PRETRAINED_DRIFT", "FITRANGE_SHIFT", "SKIP_TREND", "SKIP_BLOCK1", "METRIC_RHO_CHANGE",
           "METRIC_DIFF", "NORM_GROWTH", "GAP_BY_DEPTH", "FLATTENING",
           "HALF_RATIO_NO_LAST", "HALF_RATIO_REF_NO_LAST", "GRAD_RATIO2",
           "INTERVENTION_MODELS", "INTERVENTION_ALPHAS", "INTERVENTION_T", "INTERVENTION_MEASURED"]

#: the kinds of evidence and the suffixes each is glued under
KINDS = {"value": ("",), "interval": ("", "_lo", "_hi"), "interval_se": ("", "_lo", "_hi", "_se")}

#: every declared evidence, by name
DECLARED: dict[str, "Evidence"] = {}

#: the seed sets of the replication: the discovery set, seeds 0-2, on which the rules were
#: written; the held-out set, seeds 3-4; and the confirmatory round, seeds 5-7, trained only after
#: the registry that holds its rules was committed (configs/confirm.toml). Which of them is held
#: out in the strict sense (every run committed after the rules were registered) is computed from
#: the recorded history (``book.history.seeds_held_out``): seed 3's runs existed when the first
#: registry was committed. The ledger's own evidence (names without a tag) is every seed of the
#: exploratory rounds, 0-4 (:data:`EXPLORATORY_SEEDS`). A seed-set evidence (``by_seed_set``) is
#: glued on those seeds under its own names and on each set under ``<name>__<set>``; the ledger
#: evaluates every rule on each (``ledger.evaluate``).
SEED_SETS = {"s012": (0, 1, 2), "s34": (3, 4), "s567": (5, 6, 7)}
#: the seeds of the ledger's own (untagged) evidence: the rounds the rules were written on or
#: rewritten after
EXPLORATORY_SEEDS = (0, 1, 2, 3, 4)
#: the seed set whose every run was trained after its rules were registered
CONFIRMATORY_SET = "s567"


class Evidence(str):
    """One piece of evidence: a ``str`` (its glue name) with ``chapter`` (the notebook's stem,
    e.g. ``"07_training"``), ``what`` (one plain line: the statistic, its range, its units) and
    ``kind`` (a key of :data:`KINDS`)."""

    chapter: str
    what: str
    kind: str
    by_seed_set: bool

    def __new__(cls, name: str, chapter: str, what: str, kind: str = "value", by_seed_set: bool = False):
        if not (isinstance(name, str) and name.startswith("ev_") and name.isidentifier()):
            raise ValueError(f"an evidence name is an identifier starting with 'ev_', got {name!r}")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
        self = super().__new__(cls, name)
        self.chapter, self.what, self.kind = chapter, what, kind
        self.by_seed_set = bool(by_seed_set)
        return self

    @property
    def name(self) -> str:
        return str(self)

    @property
    def lo(self) -> str:
        """Glue name of the interval's lower end (an ``interval`` kind only)."""
        return self._part("_lo")

    @property
    def hi(self) -> str:
        return self._part("_hi")

    @property
    def se(self) -> str:
        """Glue name of the standard error (``interval_se`` only)."""
        return self._part("_se")

    def _part(self, suffix: str) -> str:
        if suffix not in KINDS[self.kind]:
            raise AttributeError(f"{self.name} is a {self.kind}: it has no {suffix} part")
        return self.name + suffix

    def keys(self) -> tuple[str, ...]:
        """Every name this evidence is glued under (on every seed, for a seed-set evidence)."""
        return tuple(self.name + s for s in KINDS[self.kind])

    def set_keys(self, seed_set: str) -> tuple[str, ...]:
        """The names it is glued under when computed on one seed set of :data:`SEED_SETS`
        (``<key>__<set>``); a seed-set evidence only."""
        if not self.by_seed_set:
            raise AttributeError(f"{self.name} is not computed per seed set")
        if seed_set not in SEED_SETS:
            raise ValueError(f"seed_set must be one of {sorted(SEED_SETS)}, got {seed_set!r}")
        return tuple(f"{k}__{seed_set}" for k in self.keys())

    def __repr__(self) -> str:
        return f"Evidence({self.name!r}, {self.chapter!r}, kind={self.kind!r})"

    def __reduce__(self):
        return (Evidence, (self.name, self.chapter, self.what, self.kind, self.by_seed_set))


def _declare(name: str, chapter: str, what: str, kind: str = "value", by_seed_set: bool = False) -> Evidence:
    ev = Evidence(name, chapter, what, kind, by_seed_set)
    clash = {k for k in ev.keys() if k in DECLARED or any(k in d.keys() for d in DECLARED.values())}
    if clash:
        raise ValueError(f"evidence {name!r} is declared twice (or clashes with {sorted(clash)})")
    DECLARED[name] = ev
    return ev


def value(name, chapter, what, by_seed_set: bool = False) -> Evidence:
    return _declare(name, chapter, what, "value", by_seed_set)


def interval(name, chapter, what, se: bool = False, by_seed_set: bool = False) -> Evidence:
    return _declare(name, chapter, what, "interval_se" if se else "interval", by_seed_set)


class UndeclaredEvidence(KeyError, ValueError):
    """A name that no :class:`Evidence` declares: a ``KeyError`` (what a lookup of a name
    raises) and a ``ValueError`` (the library's one exception for a bad argument), with a
    one-line message."""

    def __str__(self):           # KeyError's str() is the repr of its argument; this is the message
        return " ".join(str(self.args[0]).split()) if self.args else ""


def _undeclared(name: str, why: str = "") -> UndeclaredEvidence:
    import difflib
    names = [k for ev in DECLARED.values() for k in ev.keys()]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.8)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    shown = name if len(name) <= 80 else name[:77] + "..."
    return UndeclaredEvidence(f"{shown!r} is not declared in resdecay_lib.book.evidence{why}{hint}")


def declared(name: str) -> Evidence:
    """The declaration of ``name`` (a base name, or one of its ``_lo``/``_hi``/``_se`` parts; for a
    seed-set evidence, also any of those with a ``__<set>`` tag of :data:`SEED_SETS`). A name
    not declared raises :class:`UndeclaredEvidence` (a ``KeyError`` and a ``ValueError``)
    naming it and the declared names close to it; a name that is not a str,
    :class:`~resdecay_lib.checks.ArgumentTypeError`."""
    if not isinstance(name, str):
        raise ArgumentTypeError(f"name must be an evidence name (a str), got {type(name).__name__} {name!r}"[:200])
    if name in DECLARED:
        return DECLARED[name]
    base, sep, tag = name.rpartition("__")
    if sep and tag in SEED_SETS:
        try:
            ev = declared(base)
        except UndeclaredEvidence:
            raise _undeclared(name) from None
        if not ev.by_seed_set:
            raise UndeclaredEvidence(f"{name!r}: {ev.name} is not computed per seed set")
        return ev
    for ev in DECLARED.values():
        if name in ev.keys():
            return ev
    raise _undeclared(name, f" (a seed-set tag is one of {sorted(SEED_SETS)})" if sep else "")


def _number(name: str, x) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise ArgumentTypeError(f"evidence {name} must be a real number, got {type(x).__name__} {x!r}")
    return float(x)


def glue(name: str, value, lo=None, hi=None, se=None, *, digits: int | None = None,
         display: bool = False, seed_set: str | None = None) -> None:
    """Glue a declared evidence value from a chapter (myst-nb ``glue``, ``display=False``).

    ``name``: a declared name (or its :class:`Evidence`); ``value``: a real number, NaN when
    the chapter's data cannot give it (the ledger then says "the data cannot tell"); ``lo``,
    ``hi`` (an interval kind) and ``se`` (``interval_se``) exactly as the kind requires, with
    ``lo <= value <= hi`` unless one is NaN; ``digits``: round every part to that many
    decimals (the precision the chapter's evidence supports); ``seed_set``: a key of
    :data:`SEED_SETS` when the value was computed on that seed set alone (a ``by_seed_set``
    evidence only; glued as ``<key>__<set>``). Raises ``KeyError`` for an undeclared name and
    ``ValueError`` for parts the kind does not have or lacks.
    """
    from myst_nb import glue as _glue
    ev = declared(str(name))
    if ev.name != str(name):
        raise ValueError(f"glue the base name {ev.name!r} with lo=/hi=/se=, not the part {name!r}")
    given = {"_lo": lo, "_hi": hi, "_se": se}
    want = set(KINDS[ev.kind]) - {""}
    have = {s for s, v in given.items() if v is not None}
    if have != want:
        raise ValueError(f"{ev.name} is a {ev.kind}: glue it with "
                         f"{', '.join(s[1:] + '=' for s in sorted(want)) or 'the value alone'}; "
                         f"got {', '.join(s[1:] + '=' for s in sorted(have)) or 'the value alone'}")
    parts = {"": _number(ev.name, value), **{s: _number(ev.name + s, given[s]) for s in sorted(have)}}
    if digits is not None:
        parts = {s: round(v, digits) if math.isfinite(v) else v for s, v in parts.items()}
    if {"_lo", "_hi"} <= have:
        v, a, b = parts[""], parts["_lo"], parts["_hi"]
        if not any(math.isnan(x) for x in (v, a, b)) and not a <= v <= b:
            raise ValueError(f"{ev.name}: its interval [{a}, {b}] does not contain its value {v}")
    tag = ""
    if seed_set is not None:
        ev.set_keys(seed_set)             # checks the evidence and the set
        tag = f"__{seed_set}"
    for suffix in KINDS[ev.kind]:
        _glue(ev.name + suffix + tag, parts[suffix], display=display)


def glue_display(name: str, value, lo, hi, *, digits: int = 4) -> None:
    """Glue a number the prose shows but no ledger rule reads, with its interval: ``name``,
    ``name_lo``, ``name_hi``, each rounded to ``digits`` decimals (myst-nb ``glue``,
    ``display=False``).

    Display names may be built at run time (one per model or text); evidence names may not,
    so ``name`` must not start with ``ev_`` (those go through :func:`glue`, declared).
    """
    from myst_nb import glue as _glue
    if not isinstance(name, str) or not name or name.startswith("ev_"):
        raise ValueError(f"name must be a display name, not an evidence name (ev_...: glue it with "
                         f"evidence.glue, declared), got {name!r}")
    parts = {"": _number(name, value), "_lo": _number(name + "_lo", lo), "_hi": _number(name + "_hi", hi)}
    for suffix, v in parts.items():
        _glue(name + suffix, round(v, digits) if math.isfinite(v) else v, display=False)


# ------------------------------------------------------------------------ Chapter 1
LN_IDENTITY_MAX_ERR = value(
    "ev_ln_identity_max_err", "01_stream",
    "largest absolute error of |LN0(a) - LN0(b)|^2 / d = 2 (1 - cos(a_c, b_c)) over the numeric "
    "check (NumPy and torch, float64, eps = 0; one significant figure)")

# ------------------------------------------------------------------------ Chapter 2
THM33_SYMBOLIC_RESIDUAL = value(
    "ev_thm33_symbolic_residual", "02_theorem",
    "SymPy's simplified difference between the derived variance and 2/(sqrt(k)(sqrt(k-1)+sqrt(k))) (0: proved)")
THM33_Z_CRIT = value(
    "ev_thm33_z_crit", "02_theorem",
    "Bonferroni critical |z| of the Monte Carlo checks of Theorem 3.3 (over the values of k, per width)")
THM33_MAXZ_LARGE_D = value(
    "ev_thm33_maxz_large_d", "02_theorem", "max_k |z_k| of the theorem against the simulation at d = 4096")
THM33_MAXZ_RAW_SMALL_D = value(
    "ev_thm33_maxz_raw_small_d", "02_theorem", "max_k |z_k| of the theorem against the simulation at d = 16")
THM33_MAXZ_CORRECTED_SMALL_D = value(
    "ev_thm33_maxz_corrected_small_d", "02_theorem",
    "at d = 16, max_k (|simulated - p_k| - b_k) / se_k for the 1/d-corrected prediction p_k, "
    "b_k its exact remainder plus the eps bound")
THM33_REL_BIAS_D16 = value(
    "ev_thm33_rel_bias_d16", "02_theorem", "mean over k of simulated / omega_k^2 - 1 at d = 16")

# ------------------------------------------------------------------------ Chapter 3
COR34_SQRTK_LIMIT = value("ev_cor34_sqrtk_limit", "03_corollary_34", "lim_k sqrt(k) omega_k (SymPy)")
COR34_REMAINDER_C = value(
    "ev_cor34_remainder_C", "03_corollary_34", "proved C in 0 < omega_k - k^(-1/2) <= C k^(-3/2), k >= 2")
COR34_MAXZ = value(
    "ev_cor34_maxz", "03_corollary_34", "largest |z|, simulated E|.| against the finite-d prediction")
COR34_Z_CRIT = value("ev_cor34_z_crit", "03_corollary_34", "its Bonferroni critical value, alpha = 0.01")
FIFTH_RATIO_SEED = value(
    "ev_fifth_ratio_seed", "03_corollary_34", "omega_24 / omega_1, seed convention, the formula at k = 1")
FIFTH_RATIO_SEED_K2 = value("ev_fifth_ratio_seed_k2", "03_corollary_34", "omega_24 / omega_2, seed convention")
FIFTH_RATIO_EMBEDDING = value(
    "ev_fifth_ratio_embedding", "03_corollary_34", "omega_24 / omega_1, embedding-counted convention")
FIFTH_RATIO_APPROX = value("ev_fifth_ratio_approx", "03_corollary_34", "1 / sqrt(24)")
FIFTH_RATIO_SEED_LN0 = value(
    "ev_fifth_ratio_seed_ln0", "03_corollary_34", "omega_24 / 1: a real LayerNorm with LN(0) = 0 at k = 1")

# ------------------------------------------------------------------------ Chapter 4
COR35_CONST = value("ev_cor35_const", "04_corollary_35", "lim_N sqrt(N) sd(y_N - y_{N-1})_i (SymPy)")
COR35_MAXZ = value(
    "ev_cor35_maxz", "04_corollary_35",
    "largest |z|, simulated mean square output change against Corollary 3.5 at finite d")
COR35_Z_CRIT = value("ev_cor35_z_crit", "04_corollary_35", "its Bonferroni critical value, alpha = 0.01")

# ------------------------------------------------------------------------ Chapter 5
HETERO_BETA_CRIT = value(
    "ev_hetero_beta_crit", "05_beyond_independence",
    "beta at or below which power-law block variances j^beta change the exponent -1/2 of omega")
GEOMETRIC_LIMIT_Q2 = value(
    "ev_geometric_limit_q2", "05_beyond_independence",
    "limiting mean square change per coordinate for geometric block variances s_j^2 = 2^j")
HETERO_MAXZ = value(
    "ev_hetero_maxz", "05_beyond_independence",
    "largest |z|, heteroscedastic simulation against its closed form at finite d")
HETERO_Z_CRIT = value("ev_hetero_z_crit", "05_beyond_independence", "its Bonferroni critical value, alpha = 0.01")
RC_MAXZ = value(
    "ev_rc_maxz", "05_beyond_independence", "largest |z|, (r, c) simulation against its closed form at finite d")
RC_Z_CRIT = value("ev_rc_z_crit", "05_beyond_independence", "its Bonferroni critical value, alpha = 0.01")

# ------------------------------------------------------------------------ Chapter 6
#: exponent of omega_k^2 against k at initialisation, per placement (95 % t interval over seeds)
INIT_EXP = {
    "pre_ln": interval("ev_init_exp_pre_ln", "06_initialisation", "exponent of the per-layer change at init, Pre-LN"),
    "post_ln": interval("ev_init_exp_post_ln", "06_initialisation", "the same, Post-LN"),
    "peri_ln": interval("ev_init_exp_peri_ln", "06_initialisation", "the same, Peri-LN"),
    "resi_dual": interval("ev_init_exp_resi_dual", "06_initialisation",
                          "the same, ResiDual's Post-LN stream x_a"),
    "ln_scaling": interval("ev_init_exp_ln_scaling", "06_initialisation", "the same, LayerNorm-Scaling"),
    "deepnorm": interval("ev_init_exp_deepnorm", "06_initialisation", "the same, DeepNorm"),
    "mix_ln": interval("ev_init_exp_mix_ln", "06_initialisation", "the same, Mix-LN"),
}
INIT_EXP_THEORY = value(
    "ev_init_exp_theory", "06_initialisation",
    "the same fit applied to the exact w_k^2 (embedding-counted), k = 4..48")
COR35_RANDOM_EXP = interval(
    "ev_cor35_random_exp", "06_initialisation",
    "exponent of the mean square output change from one more block against N, random Pre-LN models, N = 4..48")
COR35_RANDOM_EXP_THEORY = value(
    "ev_cor35_random_exp_theory", "06_initialisation",
    "the same fit applied to the exact curve (theory.output_change_var, embedding-counted), N = 4..48")
#: gradient norm of the first block's parameters over the last block's at init: mean over
#: seeds and its t interval (97.5 %: Bonferroni over the two placements the card contrasts)
GRAD_RATIO = {
    "pre_ln": interval("ev_grad_ratio_pre_ln", "06_initialisation", "first/last block gradient norm at init, Pre-LN"),
    "post_ln": interval("ev_grad_ratio_post_ln", "06_initialisation", "the same, Post-LN"),
    "peri_ln": interval("ev_grad_ratio_peri_ln", "06_initialisation", "the same, Peri-LN"),
    "resi_dual": interval("ev_grad_ratio_resi_dual", "06_initialisation", "the same, ResiDual"),
    "ln_scaling": interval("ev_grad_ratio_ln_scaling", "06_initialisation", "the same, LayerNorm-Scaling"),
    "deepnorm": interval("ev_grad_ratio_deepnorm", "06_initialisation", "the same, DeepNorm"),
    "mix_ln": interval("ev_grad_ratio_mix_ln", "06_initialisation", "the same, Mix-LN"),
}

#: the same with the second block's parameters over the last block's: block 1 reads the raw
#: embedding in Post-LN (nothing normalises its input), so its gradient measures the embedding's
#: scale as much as the damping through depth; the second block is the first past it
GRAD_RATIO2 = {
    "pre_ln": interval("ev_grad_ratio2_pre_ln", "06_initialisation", "second/last block gradient norm at init, Pre-LN"),
    "post_ln": interval("ev_grad_ratio2_post_ln", "06_initialisation", "the same, Post-LN"),
}

# ------------------------------------------------------------------------ Chapter 7
UNIGRAM_LOSS = value("ev_unigram_loss", "07_training", "add-alpha unigram validation loss (nats/char)")
BIGRAM_LOSS = value("ev_bigram_loss", "07_training", "add-alpha bigram validation loss (nats/char)")
TRIGRAM_LOSS = value("ev_trigram_loss", "07_training", "add-alpha trigram validation loss (nats/char)")
FOURGRAM_LOSS = value("ev_fourgram_loss", "07_training", "add-alpha 4-gram validation loss (nats/char)")
PRE_LN_WORST_LOSS_DEEP = value(
    "ev_pre_ln_worst_loss_deep", "07_training", "worst Pre-LN validation loss at depth >= 8, flagged runs included (nats/char)",
    by_seed_set=True)
TRAINED_EXP_PRE_LN = interval(
    "ev_trained_exp_pre_ln", "07_training",
    "exponent of omega_k^2 in trained Pre-LN at L = 24, k = 2..L (t interval over the converged seeds)", se=True,
    by_seed_set=True)
TRAINED_REF_PRE_LN = value(
    "ev_trained_ref_pre_ln", "07_training", "the theorem's exponent over the same k range and convention",
    by_seed_set=True)
TRAINED_FITSTART_SHIFT_PRE_LN = value(
    "ev_trained_fitstart_shift_pre_ln", "07_training", "largest move of the trained exponent for k_min = 3, 4",
    by_seed_set=True)
TRAINED_BENT_PRE_LN = value(
    "ev_trained_bent_pre_ln", "07_training", "1 if the trained curve is bent (results.curvature), else 0")
INIT_EXP_TRAINEDRUNS_PRE_LN = interval(
    "ev_init_exp_trainedruns_pre_ln", "07_training", "the same runs' exponent at step 0", se=True,
    by_seed_set=True)
INIT_REF_PRE_LN = value(
    "ev_init_ref_pre_ln", "07_training", "the theorem's exponent at step 0, same range and convention",
    by_seed_set=True)
INIT_FITSTART_SHIFT_PRE_LN = value(
    "ev_init_fitstart_shift_pre_ln", "07_training", "largest move of the step-0 exponent for k_min = 3, 4",
    by_seed_set=True)
EXP_N_SEEDS = value("ev_exp_n_seeds", "07_training", "seeds behind each trained interval", by_seed_set=True)
EXP_T_DF = value("ev_exp_t_df", "07_training", "degrees of freedom of the trained t intervals", by_seed_set=True)
#: claim-independence's primary statistic: the order-free split of the exponent
#: shift from the theorem's curve to the exact (r, c) prediction (results.exponent_split)
SPLIT_CORR_SHARE = interval(
    "ev_split_corr_share", "07_training",
    "share of the exponent shift theorem -> exact (r, c) prediction that the correlations carry, "
    "symmetric (Shapley) split, trained Pre-LN L = 24, k = 2..L, rho's convention (95 % t interval over seeds)",
    by_seed_set=True)
SPLIT_EXP_THEOREM = value(
    "ev_split_exp_theorem", "07_training", "exponent of the theorem's curve over that range and convention",
    by_seed_set=True)
SPLIT_EXP_HETERO = value(
    "ev_split_exp_hetero", "07_training", "mean exponent with the measured variances, independent", by_seed_set=True)
SPLIT_EXP_CORR = value(
    "ev_split_exp_corr", "07_training", "mean exponent with the measured correlations, equal variances",
    by_seed_set=True)
SPLIT_EXP_FULL = value(
    "ev_split_exp_full", "07_training", "mean exponent of the exact (r, c) prediction (variances and correlations)",
    by_seed_set=True)
SPLIT_EXP_MEASURED = value(
    "ev_split_exp_measured", "07_training", "mean measured exponent over the same range", by_seed_set=True)
#: claim-compensation's toy reading: do later blocks' output scales grow with k?
VAR_EXP_TOY = interval(
    "ev_var_exp_toy", "07_training",
    "slope of log s_k^2 (block k's output variance) on log k over k = 4..L-1 (past the front, last block "
    "apart), trained Pre-LN L = 24 (t interval over seeds at 1 - 0.05/3)", by_seed_set=True)
#: claim-compensation's primary toy reading: does later blocks' scaling flatten the decay? The
#: exponent of omega_k^2 that the measured output variances of the blocks past the front give under
#: independence (Chapter 5's heteroscedastic curve, the front's summands given the variance of the
#: first block past it, so the front's offset does not count), minus the theorem's over the same
#: k and convention (training_analysis.flattening). By Chapter 5's limit, s_k^2 = k^beta leaves
#: the rate 1/k, so a power-law scale-up reads about 0 here; only a scaling that undoes the decay
#: reads above the exponent margin
FLATTENING_TOY = interval(
    "ev_flattening_toy", "07_training",
    "exponent shift that the measured block-output variances past the front make under independence, "
    "k = 4..L-1, trained Pre-LN L = 24 (t interval over seeds at 1 - 0.05/3)", by_seed_set=True)
BLOCK_CORR_MEAN_ABS = value(
    "ev_block_corr_mean_abs", "07_training", "mean |correlation| between block outputs, trained Pre-LN")
PRED_LOGERR_THEOREM = value(
    "ev_pred_logerr_theorem", "07_training", "mean log error of the theorem's prediction, trained Pre-LN")
PRED_LOGERR_HETERO = value("ev_pred_logerr_hetero", "07_training", "the same, heteroscedastic prediction")
PRED_LOGERR_RC = value("ev_pred_logerr_rc", "07_training", "the same, exact (r, c) prediction")
SHARE_VAR = interval(
    "ev_share_var", "07_training", "share of the theorem's log error removed by unequal variances")
SHARE_CORR = interval("ev_share_corr", "07_training", "share removed by the correlations on top")
TRAINED_R_EXP_PRE_LN = interval("ev_trained_r_exp_pre_ln", "07_training", "exponent of r_k, trained Pre-LN")
TRAINED_C_MEAN_PRE_LN = interval("ev_trained_c_mean_pre_ln", "07_training", "mean c_k, trained Pre-LN")
TRAINED_FEEDBACK_PRE_LN = value(
    "ev_trained_feedback_pre_ln", "07_training", "1 if trained Pre-LN is consistent with Chapter 5's feedback case")

# ------------------------------------------------------------------------ Chapter 7b (past the front)
#: the primary statistic of claim-front: each deep run's local slope of log omega_k^2 on log k
#: over k in [L/2, L] (resdecay_lib.analysis.front.WINDOWS["half_end"]), placed between the two
#: predictions of its depth (results/predictions/front.json): u = (slope - midpoint) /
#: half-separation, so u = -1 is the front model's predicted slope and u = +1 the level model's
FRONT_POSITION = interval(
    "ev_front_position", "07b_front",
    "mean over the deep Pre-LN runs (L = 48 and 96) of u = (measured slope over k in [L/2, L] - midpoint "
    "of the two predictions) / half their separation (97.5 % t interval over runs; NaN below three runs)",
    se=True)
FRONT_N_RUNS = value("ev_front_n_runs", "07b_front", "deep runs behind that interval")
FRONT_PRED_WIDTH = value(
    "ev_front_pred_width", "07b_front",
    "half-width, in units of u, of the front model's own 97.5 % interval over the depth-24 seeds "
    "(the larger of the two depths)")
#: the 10,800-step runs at depth 24: does the trained exponent settle?
#: (resdecay_lib.analysis.training_analysis.settling, declared before their data)
LONG_EXP_END = interval(
    "ev_long_exp_end", "07b_front",
    "exponent of omega_k^2 over 2 <= k <= 24 at step 10,800 of the 10,800-step Pre-LN runs "
    "(95 % t interval over runs; NaN below three runs)")
LONG_EXP_CHANGE = interval(
    "ev_long_exp_change", "07b_front",
    "change of that exponent from step 6,000 to step 10,800, paired per run (90 % t interval, "
    "the TOST reading of training_analysis.settling; NaN below three runs)")
LONG_SETTLE_MARGIN = value(
    "ev_long_settle_margin", "07b_front",
    "the settling margin: between-seed standard deviation of the exponent at the end of the "
    "3,600-step runs (NaN below three 10,800-step runs)")
LONG_N_RUNS = value("ev_long_n_runs", "07b_front", "10,800-step runs stored")

# ------------------------------------------------------------------------ Chapter 8
ABLATION_TREND_PRE_LN = interval(
    "ev_ablation_trend_pre_ln", "08_cost",
    "Spearman correlation of the loss increase from removing block k >= 2 with k, trained Pre-LN at "
    "its deepest depth, every run (95 % t interval over seeds; descriptive, read by no rule)")
ABLATION_TREND_LEVEL = value(
    "ev_ablation_trend_level", "08_cost", "level of the ablation trends' intervals (descriptive)")
ABLATION_BLOCK1_PRE_LN = value(
    "ev_ablation_block1_pre_ln", "08_cost", "loss increase from removing block 1 (nats/char)")
#: claim-idle-blocks' primary statistic: the later half against the earlier half
HALF_RATIO_TOY = interval(
    "ev_half_ratio_toy", "08_cost",
    "mean loss increase from removing blocks L/2+1..L over that of blocks 4..L/2, trained Pre-LN L = 24, "
    "every run (95 % t interval over seeds of the log ratio, exponentiated)", by_seed_set=True)
HALF_RATIO_REF_TOY = value(
    "ev_half_ratio_ref_toy", "08_cost",
    "the same ratio of the theorem's omega_k^2 (exact curve, the trained runs' convention)", by_seed_set=True)
#: claim-depth-cost's primary statistic: depth's effect over every run
DEPTH_SLOPE_PRE_LN = interval(
    "ev_depth_slope_pre_ln", "08_cost",
    "slope of the final validation loss on log2 depth, Pre-LN at depths >= 8 and the ladder's rate 0.006, "
    "every run (nats/char per doubling; t interval at 1 - 0.05/4)", se=True, by_seed_set=True)
DEPTH_SLOPE_DF = value("ev_depth_slope_df", "08_cost", "degrees of freedom of that slope", by_seed_set=True)
ABLATION_LATE_PRE_LN = value(
    "ev_ablation_late_pre_ln", "08_cost", "mean loss increase over the second half of the blocks")
DEPTH_STOPS_PAYING_PRE_LN = interval(
    "ev_depth_stops_paying_pre_ln", "08_cost",
    "Pre-LN's best depth at a fixed number of steps and the range of depths not worse than it "
    "(value inf: the top beats every lower depth, depth keeps paying; hi inf: the range "
    "reaches the top)")
DEPTH_BEST_AT_FLOPS_PRE_LN = value(
    "ev_depth_best_at_flops_pre_ln", "08_cost", "Pre-LN's best depth at a fixed compute")
DEPTH_ALPHA_PRE_LN = interval(
    "ev_depth_alpha_pre_ln", "08_cost", "alpha of the depth term of the loss, L(l) = c l^(-alpha) + L_inf")
#: a fix's final validation loss minus Pre-LN's, per seed the mean over every depth >= 8 both
#: have, every run (t interval over seeds at 1 - 0.05/4: claim-depth-cost's family of four);
#: each placement at its own pilot-chosen learning rate
VAL_LOSS_GAP = {
    "peri_ln": interval("ev_val_loss_gap_peri_ln", "08_cost",
                        "Peri-LN minus Pre-LN final loss at equal depths >= 8, every run", by_seed_set=True),
    "resi_dual": interval("ev_val_loss_gap_resi_dual", "08_cost", "ResiDual minus Pre-LN, the same",
                          by_seed_set=True),
    "ln_scaling": interval("ev_val_loss_gap_ln_scaling", "08_cost", "LayerNorm-Scaling minus Pre-LN, the same",
                           by_seed_set=True),
}

#: claim-depth-cost's primary statistics, declared before any ResiDual run at depth 24 existed:
#: Pre-LN's final validation loss minus ResiDual's at each depth both are trained at, paired by
#: seed, every run (> 0: Pre-LN is worse), and the growth of that gap with depth
GAP_BY_DEPTH = {
    4: interval("ev_gap_resi_dual_L4", "08_cost",
                "Pre-LN minus ResiDual final validation loss at depth 4, paired by seed, every run "
                "(nats/char; t interval over seeds at 1 - 0.05/5)", by_seed_set=True),
    8: interval("ev_gap_resi_dual_L8", "08_cost",
                "Pre-LN minus ResiDual final validation loss at depth 8, paired by seed, every run "
                "(nats/char; t interval over seeds at 1 - 0.05/5)", by_seed_set=True),
    16: interval("ev_gap_resi_dual_L16", "08_cost",
                 "Pre-LN minus ResiDual final validation loss at depth 16, paired by seed, every run "
                 "(nats/char; t interval over seeds at 1 - 0.05/5)", by_seed_set=True),
    24: interval("ev_gap_resi_dual_L24", "08_cost",
                 "Pre-LN minus ResiDual final validation loss at depth 24, paired by seed, every run "
                 "(nats/char; t interval over seeds at 1 - 0.05/5)", by_seed_set=True),
}
GAP_GROWTH = interval(
    "ev_gap_growth_resi_dual", "08_cost",
    "per seed the least-squares slope of that gap on log2 depth over the depths 4, 8, 16, 24 (nats/char per "
    "doubling; t interval over the seeds with all four depths, at 1 - 0.05/5)", by_seed_set=True)

# ------------------------------------------------------------------------ Chapter 9
#: exponent of the per-block change over k = 2..L (percentile bootstrap over sequences)
PRETRAINED_EXP = {
    "smollm2": interval("ev_pretrained_exp_smollm2", "09_pretrained",
                        "exponent of SmolLM2-135M's per-block change (Pre-LN), Shakespeare sample, k = 2..30"),
    "qwen": interval("ev_pretrained_exp_qwen", "09_pretrained",
                     "the same, Qwen2.5-Coder-0.5B (Pre-LN), k = 2..24"),
    "gemma3": interval("ev_pretrained_exp_gemma3", "09_pretrained", "the same, Gemma-3-270M (sandwich), k = 2..18"),
    "minilm": interval("ev_pretrained_exp_minilm", "09_pretrained", "the same, all-MiniLM-L6 (Post-LN), k = 2..6"),
    "qwen15": interval("ev_pretrained_exp_qwen15", "09_pretrained",
                       "the same, Qwen2.5-Coder-1.5B (Pre-LN), pydoc sample, k = 2..28: the confirmatory reading"),
}
#: the theorem's exponent over the model's own range, in the convention its rho picks
PRETRAINED_REF = {
    "smollm2": value("ev_pretrained_ref_smollm2", "09_pretrained",
                     "the theorem's exponent over SmolLM2's range and convention"),
    "qwen": value("ev_pretrained_ref_qwen", "09_pretrained", "the same for Qwen"),
    "qwen15": value("ev_pretrained_ref_qwen15", "09_pretrained", "the same for Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
}
#: the Pre-LN families of the exploratory reading, in order: SmolLM2-135M and Qwen2.5-Coder-0.5B on
#: the Shakespeare sample, whose records every pretrained rule was written after (Chapter 9). A
#: pretrained rule reads the models whose evidence its reading holds (``rules._families``), so
#: a model enters every pretrained rule by declaring its evidence, not by a name in a rule
PRE_LN_FAMILIES = ("smollm2", "qwen")
#: the Pre-LN models of the confirmatory reading of the pretrained rules: Qwen2.5-Coder-1.5B on the
#: pydoc sample (``results/pretrained_large/qwen2.5-coder-1.5b__pydoc.json``), a record measured
#: only after the rules that read it were registered. Its Shakespeare record had been read (Chapter
#: 9b) before any rule named it, so only its other text can be confirmatory. The confirmatory
#: reading of a claim (``book.claims.confirmatory_reading``) is its rule on these models' evidence
#: alone, at the same levels as the exploratory reading
CONFIRMATORY_MODELS = ("qwen15",)
#: the curvature test's drift of the local slope over k = 2..L (0 for a power law)
PRETRAINED_DRIFT = {
    "smollm2": interval("ev_pretrained_drift_smollm2", "09_pretrained", "curvature drift of SmolLM2's curve"),
    "qwen": interval("ev_pretrained_drift_qwen", "09_pretrained", "curvature drift of Qwen's curve"),
    "qwen15": interval("ev_pretrained_drift_qwen15", "09_pretrained", "curvature drift of the curve of Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
}
#: largest move of the exponent for k_min = 3, 4
FITRANGE_SHIFT = {
    "smollm2": value("ev_fitrange_shift_smollm2", "09_pretrained", "fit-start sensitivity of SmolLM2's exponent"),
    "qwen": value("ev_fitrange_shift_qwen", "09_pretrained", "fit-start sensitivity of Qwen's exponent"),
    "qwen15": value("ev_fitrange_shift_qwen15", "09_pretrained", "fit-start sensitivity of the exponent of Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
}
QUANT_SHIFT = value(
    "ev_quant_shift", "09_pretrained", "largest change of a fitted exponent caused by a Q4_1 round-trip")
#: stream growth factor per layer, |x_{k+1}| / |x_k| (t interval over sequences)
NORM_GROWTH = {
    "smollm2": interval("ev_norm_growth_smollm2", "09_pretrained",
                        "SmolLM2's stream norm growth factor per block (geometric mean over k >= 2)"),
    "qwen": interval("ev_norm_growth_qwen", "09_pretrained", "the same for Qwen"),
}
#: rank correlation of the skip cost with k, k >= 2 (percentile bootstrap over sequences)
SKIP_TREND = {
    "smollm2": interval("ev_skip_trend_smollm2", "09_pretrained", "rank correlation of SmolLM2's skip cost with k >= 2"),
    "qwen": interval("ev_skip_trend_qwen", "09_pretrained", "the same for Qwen"),
}
SKIP_BLOCK1 = {
    "smollm2": value("ev_skip_block1_smollm2", "09_pretrained", "SmolLM2's loss increase from skipping block 1"),
    "qwen": value("ev_skip_block1_qwen", "09_pretrained", "the same for Qwen"),
}
#: rank correlation of the change with the skip cost over blocks (paired bootstrap)
METRIC_RHO_CHANGE = {
    "smollm2": interval("ev_metric_rho_change_smollm2", "09_pretrained",
                        "Spearman correlation of the change with SmolLM2's skip cost"),
    "qwen": interval("ev_metric_rho_change_qwen", "09_pretrained", "the same for Qwen"),
    "qwen15": interval("ev_metric_rho_change_qwen15", "09_pretrained", "the same for Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
}
#: rho(change) - rho(competitor), per (competitor, model) (paired bootstrap at 1 - 0.05/6: Bonferroni over
#: 2 models x 3 competitors; influence, the change itself, is reported beside them, not counted)
METRIC_DIFF = {
    ("influence", "smollm2"): interval("ev_metric_diff_influence_smollm2", "09_pretrained",
                                       "rho(change) - rho(block influence), SmolLM2"),
    ("angular", "smollm2"): interval("ev_metric_diff_angular_smollm2", "09_pretrained",
                                     "rho(change) - rho(angular distance), SmolLM2"),
    ("relative", "smollm2"): interval("ev_metric_diff_relative_smollm2", "09_pretrained",
                                      "rho(change) - rho(relative contribution), SmolLM2"),
    ("deepest", "smollm2"): interval("ev_metric_diff_deepest_smollm2", "09_pretrained",
                                     "rho(change) - rho(deepest first), SmolLM2"),
    ("influence", "qwen"): interval("ev_metric_diff_influence_qwen", "09_pretrained", "the same, Qwen"),
    ("angular", "qwen"): interval("ev_metric_diff_angular_qwen", "09_pretrained", "the same, Qwen"),
    ("relative", "qwen"): interval("ev_metric_diff_relative_qwen", "09_pretrained", "the same, Qwen"),
    ("deepest", "qwen"): interval("ev_metric_diff_deepest_qwen", "09_pretrained", "the same, Qwen"),
    ("influence", "qwen15"): interval("ev_metric_diff_influence_qwen15", "09_pretrained", "the same, Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
    ("angular", "qwen15"): interval("ev_metric_diff_angular_qwen15", "09_pretrained", "the same, Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
    ("relative", "qwen15"): interval("ev_metric_diff_relative_qwen15", "09_pretrained", "the same, Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
    ("deepest", "qwen15"): interval("ev_metric_diff_deepest_qwen15", "09_pretrained", "the same, Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
}

#: claim-compensation's real-model readings: the slope of log s_k^2 on log k over
#: k = 4..L-1 (percentile bootstrap over sequences at 1 - 0.05/3)
VAR_EXP = {
    "smollm2": interval("ev_var_exp_smollm2", "09_pretrained",
                        "slope of log |f_k|^2 (block k's output) on log k, k = 4..L-1, SmolLM2, Shakespeare"),
    "qwen": interval("ev_var_exp_qwen", "09_pretrained", "the same for Qwen"),
}
#: claim-compensation's real-model readings: training_analysis.flattening of the mean block-output
#: scales |f_k|^2 past the front (percentile bootstrap over sequences at 1 - 0.05/3)
FLATTENING = {
    "smollm2": interval("ev_flattening_smollm2", "09_pretrained",
                        "exponent shift that SmolLM2's block-output scales past the front make under independence, "
                        "k = 4..L-1, Shakespeare"),
    "qwen": interval("ev_flattening_qwen", "09_pretrained", "the same for Qwen"),
    "qwen15": interval("ev_flattening_qwen15", "09_pretrained", "the same for Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
}
#: claim-pretrained-idle's primary statistic: mean skip cost of blocks L/2+1..L (the
#: last included) over that of blocks 4..L/2 (percentile bootstrap over sequences, 97.5 %)
HALF_RATIO = {
    "smollm2": interval("ev_half_ratio_smollm2", "09_pretrained",
                        "SmolLM2's mean skip cost of the later half over the earlier half past the front"),
    "qwen": interval("ev_half_ratio_qwen", "09_pretrained", "the same for Qwen"),
    "qwen15": interval("ev_half_ratio_qwen15", "09_pretrained", "the same for Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
}
HALF_RATIO_REF = {
    "smollm2": value("ev_half_ratio_ref_smollm2", "09_pretrained",
                     "the same ratio of the theorem's omega_k^2 over SmolLM2's blocks, in its convention"),
    "qwen": value("ev_half_ratio_ref_qwen", "09_pretrained", "the same for Qwen"),
    "qwen15": value("ev_half_ratio_ref_qwen15", "09_pretrained", "the same for Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
}
#: claim-pretrained-idle's reading declared beside it: the later half without the last block,
#: blocks L/2+1..L-1, over blocks 4..L/2 (the same bootstrap), and the theorem's ratio for those blocks
HALF_RATIO_NO_LAST = {
    "smollm2": interval("ev_half_ratio_no_last_smollm2", "09_pretrained",
                        "SmolLM2's mean skip cost of blocks L/2+1..L-1 (the last block apart) over blocks 4..L/2"),
    "qwen": interval("ev_half_ratio_no_last_qwen", "09_pretrained", "the same for Qwen"),
    "qwen15": interval("ev_half_ratio_no_last_qwen15", "09_pretrained", "the same for Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
}
HALF_RATIO_REF_NO_LAST = {
    "smollm2": value("ev_half_ratio_ref_no_last_smollm2", "09_pretrained",
                     "the same ratio of the theorem's omega_k^2 over SmolLM2's blocks, in its convention"),
    "qwen": value("ev_half_ratio_ref_no_last_qwen", "09_pretrained", "the same for Qwen"),
    "qwen15": value("ev_half_ratio_ref_no_last_qwen15", "09_pretrained", "the same for Qwen2.5-Coder-1.5B's pydoc record (the confirmatory reading)"),
}
INFLUENCE_IDENTITY_RESIDUAL = value(
    "ev_influence_identity_residual", "09_pretrained",
    "SymPy's residual of 1 - cos(u, v) = |LN0(u) - LN0(v)|^2 / (2d) for centred u, v with eps = 0 (0: proved)")

# ------------------------------------------------------------------------ Chapter 9b (the front intervention)
#: the models of claim-mechanism's family (keys of resdecay_lib.analysis.intervention.MODELS): the
#: Pre-LN models whose front-intervention forward had not run when the rule was written (the toy
#: seed 5's had run once in development, so it is reported beside them, outside the family)
INTERVENTION_MODELS = ("smollm2", "qwen", "qwen15", "toy_s6", "toy_s7")
#: the front scales the rule reads, by name: alpha = 1/4 and alpha = 2
INTERVENTION_ALPHAS = {"quarter": 0.25, "two": 2.0}
_INTERVENTION_WHAT = {"smollm2": "SmolLM2-135M", "qwen": "Qwen2.5-Coder-0.5B", "qwen15": "Qwen2.5-Coder-1.5B",
                      "toy_s6": "the trained toy Pre-LN at depth 24, seed 6",
                      "toy_s7": "the trained toy Pre-LN at depth 24, seed 7"}
#: claim-mechanism's primary statistic: T(alpha), the share of the arithmetic's change of
#: log omega_k^2 over the later blocks k = 4..L-1 that the real forward realises when the front's
#: sum is scaled by alpha (resdecay_lib.analysis.intervention), with its percentile bootstrap
#: interval over sequences at 1 - 0.05 / 10 (Bonferroni over the family of 5 models x 2 scales);
#: NaN for a model not measured
INTERVENTION_T = {
    ("smollm2", "quarter"): interval("ev_intervention_t_smollm2_quarter", "09b_intervention",
                            "T at alpha = 0.25 for SmolLM2-135M, front of 3 blocks "
                            "(percentile bootstrap over sequences, 99.5 %)"),
    ("smollm2", "two"): interval("ev_intervention_t_smollm2_two", "09b_intervention",
                            "T at alpha = 2 for SmolLM2-135M, front of 3 blocks "
                            "(percentile bootstrap over sequences, 99.5 %)"),
    ("qwen", "quarter"): interval("ev_intervention_t_qwen_quarter", "09b_intervention",
                            "T at alpha = 0.25 for Qwen2.5-Coder-0.5B, front of 3 blocks "
                            "(percentile bootstrap over sequences, 99.5 %)"),
    ("qwen", "two"): interval("ev_intervention_t_qwen_two", "09b_intervention",
                            "T at alpha = 2 for Qwen2.5-Coder-0.5B, front of 3 blocks "
                            "(percentile bootstrap over sequences, 99.5 %)"),
    ("qwen15", "quarter"): interval("ev_intervention_t_qwen15_quarter", "09b_intervention",
                            "T at alpha = 0.25 for Qwen2.5-Coder-1.5B, front of 3 blocks "
                            "(percentile bootstrap over sequences, 99.5 %)"),
    ("qwen15", "two"): interval("ev_intervention_t_qwen15_two", "09b_intervention",
                            "T at alpha = 2 for Qwen2.5-Coder-1.5B, front of 3 blocks "
                            "(percentile bootstrap over sequences, 99.5 %)"),
    ("toy_s6", "quarter"): interval("ev_intervention_t_toy_s6_quarter", "09b_intervention",
                            "T at alpha = 0.25 for the trained toy Pre-LN at depth 24, seed 6, front of 3 blocks "
                            "(percentile bootstrap over sequences, 99.5 %)"),
    ("toy_s6", "two"): interval("ev_intervention_t_toy_s6_two", "09b_intervention",
                            "T at alpha = 2 for the trained toy Pre-LN at depth 24, seed 6, front of 3 blocks "
                            "(percentile bootstrap over sequences, 99.5 %)"),
    ("toy_s7", "quarter"): interval("ev_intervention_t_toy_s7_quarter", "09b_intervention",
                            "T at alpha = 0.25 for the trained toy Pre-LN at depth 24, seed 7, front of 3 blocks "
                            "(percentile bootstrap over sequences, 99.5 %)"),
    ("toy_s7", "two"): interval("ev_intervention_t_toy_s7_two", "09b_intervention",
                            "T at alpha = 2 for the trained toy Pre-LN at depth 24, seed 7, front of 3 blocks "
                            "(percentile bootstrap over sequences, 99.5 %)"),
}
#: sequences behind each model's T (0: not measured yet)
INTERVENTION_MEASURED = {
    'smollm2': value("ev_intervention_n_seq_smollm2", "09b_intervention",
                 "sequences of SmolLM2-135M's measured intervention (0: not measured)"),
    'qwen': value("ev_intervention_n_seq_qwen", "09b_intervention",
                 "sequences of Qwen2.5-Coder-0.5B's measured intervention (0: not measured)"),
    'qwen15': value("ev_intervention_n_seq_qwen15", "09b_intervention",
                 "sequences of Qwen2.5-Coder-1.5B's measured intervention (0: not measured)"),
    'toy_s6': value("ev_intervention_n_seq_toy_s6", "09b_intervention",
                 "sequences of the trained toy Pre-LN at depth 24, seed 6's measured intervention (0: not measured)"),
    'toy_s7': value("ev_intervention_n_seq_toy_s7", "09b_intervention",
                 "sequences of the trained toy Pre-LN at depth 24, seed 7's measured intervention (0: not measured)"),
}
