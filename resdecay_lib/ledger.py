"""The claims ledger: each claim of the theory card, and its verdict computed from the book.

The evidence is what the chapters glued under names starting with ``ev_`` (myst-nb
``glue``), read from the outputs STORED in ``chapters/*.ipynb`` -- the same outputs nbval
re-executes and compares, so a verdict can only change when the evidence does.

A :class:`Claim` is a sentence of the card (Xie et al. 2023, arXiv:2304.14802, §3.2, as the
theory card THEORY-096 states it), the chapter and label of its evidence, the evidence names
it needs, and a rule: a pure function of the evidence dict returning a :class:`Verdict`
(one of :data:`VERDICTS` and a one-line reason with the numbers it used). A claim whose
evidence is not (yet) in the book is ``"open"`` with the reason
``"evidence not in the book yet: <names>"``. Every threshold is in the rule's docstring.

Conventions used by the rules:

* exponents of the per-layer change are fitted to omega_k^2 (the variance), so the theorem
  predicts about -1 for large k. The trained exponents (Chapter 7) are compared with the
  theorem's exact exponent over the same k range and in the convention the measured rho
  chooses (``ev_*_ref_*``), by two one-sided t tests with margin :data:`EXP_MARGIN` over
  seeds; the pretrained fits (Chapter 9) still against -1, the exact exponent's large-k
  value;
* an interval ``[_lo, _hi]`` is the chapter's interval of the value (a t interval over
  seeds in Chapters 7 and 8, a bootstrap elsewhere, as each chapter states);
* a z statistic agrees when it is at most the chapter's own critical value ``*_z_crit``
  (Bonferroni-corrected over the chapter's grid, as each chapter states);
* a value the book says is exact (a symbolic residual or limit) is glued rounded to at least
  4 significant digits, so "equal" means within :data:`ROUNDING` (half a unit in the 4th
  significant digit, relative).
"""
from __future__ import annotations

import ast
import json
import math
import numbers
import pathlib
from dataclasses import dataclass, field
from typing import Callable, Mapping

__all__ = ["VERDICTS", "ROUNDING", "Verdict", "Claim", "CLAIMS", "PROMOTION", "read_evidence",
           "book_notebooks", "evaluate", "evidence_markdown", "markdown_table"]

#: the only verdict words
VERDICTS = ("holds", "holds with correction", "does not hold", "open")

#: relative tolerance of a glued exact value (rounded to >= 4 significant digits)
ROUNDING = 5e-4


@dataclass(frozen=True)
class Verdict:
    """A verdict word (one of :data:`VERDICTS`) and the one-line computed reason."""
    word: str
    reason: str

    def __post_init__(self):
        if self.word not in VERDICTS:
            raise ValueError(f"verdict word must be one of {VERDICTS}, got {self.word!r}")


@dataclass(frozen=True)
class Claim:
    """One claim of the card: ``id`` (a MyST target, ``claim-...``), a short plain-text
    ``title``, the ``sentence`` (MyST Markdown, math in ``$...$``), where its evidence is (``sources``: (chapter document, label) pairs; an
    empty label means the chapter's "Evidence for the ledger" section), the evidence names
    the rule needs (``keys``) and the ``rule`` (evidence dict -> :class:`Verdict`)."""
    id: str
    title: str
    sentence: str
    sources: tuple[tuple[str, str], ...]
    keys: tuple[str, ...]
    rule: Callable[[Mapping[str, float]], Verdict] = field(repr=False)

    def __post_init__(self):
        if not self.id.startswith("claim-"):
            raise ValueError(f"claim id must start with 'claim-', got {self.id!r}")

    def verdict(self, evidence: Mapping[str, float]) -> Verdict:
        """The rule's verdict; ``open`` when any of ``keys`` is missing from ``evidence``, or
        is NaN (a chapter glues NaN when its data cannot give the value, e.g. fewer than
        three kept seeds: the data cannot tell)."""
        missing = [k for k in self.keys if k not in evidence]
        if missing:
            return Verdict("open", "evidence not in the book yet: " + _names(missing))
        nan = [k for k in self.keys if isinstance(evidence[k], float) and math.isnan(evidence[k])]
        if nan:
            return Verdict("open", "the data cannot tell (the chapter could not compute "
                                   + _names(nan) + ")")
        return self.rule(evidence)


def _names(keys) -> str:
    """``a, b, c, c_lo, c_hi`` -> ``a, b, c(_lo, _hi)``: missing names, shortly."""
    keys, out = list(keys), []
    for k in keys:
        if k.endswith(("_lo", "_hi")) and k[:-3] in keys and f"{k[:-3]}_lo" in keys and f"{k[:-3]}_hi" in keys:
            continue
        both = f"{k}_lo" in keys and f"{k}_hi" in keys
        out.append(f"{k}(_lo, _hi)" if both else k)
    return ", ".join(out)


# --------------------------------------------------------------------------------------
# reading the evidence
# --------------------------------------------------------------------------------------

def _glued_float(text: str, name: str) -> float:
    text = text.strip()
    if text in ("inf", "-inf", "nan"):
        return float(text)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"glued evidence {name!r} is not a number: {text!r}") from exc
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"glued evidence {name!r} is not a number: {text!r}")
    return float(value)


def read_evidence(chapters="chapters", prefix: str = "ev_") -> dict[str, float]:
    """Glued values named ``prefix*`` in the stored outputs of ``chapters/*.ipynb``.

    ``chapters`` is a folder, or an iterable of notebook paths. myst-nb's ``glue`` stores a
    value as a display output whose metadata carries ``scrapbook: {name, mime_prefix}`` and
    whose data holds ``<mime_prefix>text/plain``: the repr of the value. Returns
    ``{name: float}``; a name glued by two notebooks, or a value that is not a number,
    raises ``ValueError`` naming it.
    """
    if not isinstance(prefix, str) or not prefix:
        raise ValueError(f"prefix must be a non-empty string (the evidence names' start), got {prefix!r}")
    if isinstance(chapters, (str, pathlib.Path)):
        folder = pathlib.Path(chapters)
        if not folder.is_dir():
            raise ValueError(f"chapters must be a folder of notebooks, got {str(folder)!r}")
        paths = sorted(folder.glob("*.ipynb"))
    else:
        if isinstance(chapters, bytes) or not hasattr(chapters, "__iter__"):
            raise ValueError(f"chapters must be a folder of notebooks or a list of notebook paths, "
                             f"got {type(chapters).__name__} {chapters!r}")
        chapters = list(chapters)
        for i, p in enumerate(chapters):
            if not isinstance(p, (str, pathlib.Path)) or not pathlib.Path(p).is_file():
                raise ValueError(f"chapters[{i}] must be the path of a notebook file, got {p!r}")
        paths = [pathlib.Path(p) for p in chapters]
    evidence, source = {}, {}
    for path in paths:
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"chapters: {path} is not a notebook (not JSON: {exc})") from exc
        if not isinstance(notebook, dict):
            raise ValueError(f"chapters: {path} is not a notebook (its JSON is not an object)")
        for cell in notebook.get("cells", []):
            for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
                scrap = output.get("metadata", {}).get("scrapbook")
                if not scrap or not str(scrap.get("name", "")).startswith(prefix):
                    continue
                name = scrap["name"]
                text = output.get("data", {}).get(scrap.get("mime_prefix", "") + "text/plain")
                if text is None:
                    raise ValueError(f"glued evidence {name!r} in {path.name} has no text/plain value")
                if name in evidence and source[name] != path.name:
                    raise ValueError(f"evidence {name!r} is glued by both {source[name]} and {path.name}")
                evidence[name] = _glued_float("".join(text) if isinstance(text, list) else text, name)
                source[name] = path.name
    return evidence


# --------------------------------------------------------------------------------------
# helpers for the rules
# --------------------------------------------------------------------------------------

def _g(x: float) -> str:
    return f"{x:.3g}"


def _interval(ev, name):
    return ev[name], ev[name + "_lo"], ev[name + "_hi"]


def _iv(ev, name) -> str:
    v, lo, hi = _interval(ev, name)
    return f"{_g(v)} [{_g(lo)}, {_g(hi)}]"


def _inside(x, ev, name) -> bool:
    _, lo, hi = _interval(ev, name)
    return lo <= x <= hi


def _exp_keys(name):
    return (name, name + "_lo", name + "_hi")


def _pretrained_reference(ev, model: str) -> tuple[float, str]:
    """The theorem's exponent of omega_k^2 over the model's own fit range, in the convention
    its measured rho picks (Chapter 9 glues ``ev_pretrained_ref_<model>``)."""
    ref = ev[f"ev_pretrained_ref_{model}"]
    return ref, f"theory {_g(ref)} (same range and convention)"


# --------------------------------------------------------------------------------------
# the rules, one per claim
# --------------------------------------------------------------------------------------

def rule_omega_formula(ev) -> Verdict:
    """Theorem 3.3. ``does not hold`` if SymPy's residual of the closed form is not 0
    (|residual| > ROUNDING) or the Monte Carlo at d = 4096 departs (max z > z_crit);
    ``holds`` if even at d = 16 the raw formula agrees (max z <= z_crit); ``holds with
    correction`` if at d = 16 only the formula with its 1/d correction agrees; else
    ``does not hold``."""
    z = ev["ev_thm33_z_crit"]
    if abs(ev["ev_thm33_symbolic_residual"]) > ROUNDING:
        return Verdict("does not hold", f"SymPy residual of the closed form {_g(ev['ev_thm33_symbolic_residual'])} != 0")
    if ev["ev_thm33_maxz_large_d"] > z:
        return Verdict("does not hold", f"Monte Carlo at d=4096 departs: max z {_g(ev['ev_thm33_maxz_large_d'])} > {_g(z)}")
    head = f"proved in SymPy; d=4096 max z {_g(ev['ev_thm33_maxz_large_d'])} <= {_g(z)}"
    raw, cor = ev["ev_thm33_maxz_raw_small_d"], ev["ev_thm33_maxz_corrected_small_d"]
    if raw <= z:
        return Verdict("holds", f"{head}; d=16 raw max z {_g(raw)} <= {_g(z)}")
    bias = f" (relative bias {_g(ev['ev_thm33_rel_bias_d16'])})" if "ev_thm33_rel_bias_d16" in ev else ""
    if cor <= z:
        return Verdict("holds with correction",
                       f"{head}; at d=16 the raw formula departs{bias} (max z {_g(raw)}), the 1/d-corrected one does not (max z {_g(cor)})")
    return Verdict("does not hold", f"{head}; at d=16 even the 1/d-corrected formula departs: max z {_g(cor)} > {_g(z)}")


def rule_mean_abs(ev) -> Verdict:
    """Corollary 3.4. ``holds`` if lim sqrt(k) w_k = 1 (within ROUNDING), the remainder
    constant C of |w_k - k^-1/2| <= C k^-3/2 is finite and positive, and the Monte Carlo of
    E|.| agrees (max z <= z_crit); ``does not hold`` otherwise."""
    lim, C = ev["ev_cor34_sqrtk_limit"], ev["ev_cor34_remainder_C"]
    z, zc = ev["ev_cor34_maxz"], ev["ev_cor34_z_crit"]
    if abs(lim - 1) > ROUNDING:
        return Verdict("does not hold", f"lim sqrt(k) w_k = {_g(lim)}, not 1")
    if not (0 < C < math.inf):
        return Verdict("does not hold", f"no finite remainder constant (C = {_g(C)})")
    if z > zc:
        return Verdict("does not hold", f"Monte Carlo of E|.| departs: max z {_g(z)} > {_g(zc)}")
    return Verdict("holds", f"lim sqrt(k) w_k = 1, |w_k - k^-1/2| <= {_g(C)} k^-3/2; Monte Carlo max z {_g(z)} <= {_g(zc)}")


def rule_output(ev) -> Verdict:
    """Corollary 3.5. ``does not hold`` if the Gaussian-model Monte Carlo departs (max z >
    z_crit) or the constant is not finite and positive; otherwise ``holds``, unless the
    random Pre-LN transformer of Chapter 6 is in the book and the interval of its fitted
    exponent of the mean square output change excludes the corollary's exponent over the
    same range of N (``ev_cor35_random_exp_theory``, the fit of the exact curve; -1, the
    large-N value, where that is not glued): then ``holds with correction``."""
    z, zc, const = ev["ev_cor35_maxz"], ev["ev_cor35_z_crit"], ev["ev_cor35_const"]
    if not (0 < const < math.inf):
        return Verdict("does not hold", f"constant of the O(1/sqrt N) rate is {_g(const)}")
    if z > zc:
        return Verdict("does not hold", f"Monte Carlo departs: max z {_g(z)} > {_g(zc)}")
    head = f"Gaussian model: constant {_g(const)}, max z {_g(z)} <= {_g(zc)}"
    if all(k in ev for k in _exp_keys("ev_cor35_random_exp")):
        ref = ev.get("ev_cor35_random_exp_theory", -1.0)
        what = f"the corollary's {_g(ref)}"
        random = f"a random Pre-LN transformer's exponent {_iv(ev, 'ev_cor35_random_exp')}"
        if not _inside(ref, ev, "ev_cor35_random_exp"):
            return Verdict("holds with correction", f"{head}; {random} excludes {what}")
        return Verdict("holds", f"{head}; {random} contains {what}")
    return Verdict("holds", head)


def _fifth(ratio: float) -> bool:
    """'About a fifth': 1/5 is the nearest unit fraction, i.e. 4.5 < 1/ratio < 5.5."""
    return ratio > 0 and 4.5 < 1 / ratio < 5.5


def rule_fifth(ev) -> Verdict:
    """'At k = 24 the per-layer change is about a fifth of its value at k = 1'. A ratio is
    "about a fifth" when 1/5 is its nearest unit fraction (4.5 < 1/ratio < 5.5, as
    Chapter 3 defines it). Readings within the theorem's model (Chapter 3): the formula's
    value at k = 1 in the seed convention (where k = 1 is not a valid index), the first valid
    index w_24/w_2, and the embedding-counted w_24/w_1. ``holds`` if one of them is about a
    fifth; ``holds with correction`` if only the first-term approximation 1/sqrt(24) (or a
    real LayerNorm's LN(0) = 0 reading, ``ev_fifth_ratio_seed_ln0``, when glued) is, and
    every in-model ratio is within a factor 2 of 1/5 (the card's point, "not a thousandth",
    survives); else ``does not hold``."""
    exact = {"formula at k=1": ev["ev_fifth_ratio_seed"], "w_24/w_2": ev["ev_fifth_ratio_seed_k2"],
             "embedding-counted w_24/w_1": ev["ev_fifth_ratio_embedding"]}
    listed = "; ".join(f"{k} {_g(v)}" + (f" (1/{1 / v:.2g})" if v > 0 else "") for k, v in exact.items())
    if any(_fifth(v) for v in exact.values()):
        return Verdict("holds", "in the theorem's model: " + listed)
    approx = {"1/sqrt(24)": ev["ev_fifth_ratio_approx"]}
    if "ev_fifth_ratio_seed_ln0" in ev:
        approx["real LayerNorm with LN(0)=0"] = ev["ev_fifth_ratio_seed_ln0"]
    fifths = [f"{k} = {_g(v)}" for k, v in approx.items() if _fifth(v)]
    if fifths and all(0.1 <= v <= 0.4 for v in exact.values()):
        return Verdict("holds with correction",
                       f"only {' and '.join(fifths)} give a fifth; in the theorem's model: {listed}")
    return Verdict("does not hold", f"no reading gives about 1/5: {listed}; 1/sqrt(24) = {_g(approx['1/sqrt(24)'])}")


#: margin of "agrees with the theorem" for an exponent: within 0.1 of the range- and
#: convention-matched reference (a tenth of the theorem's exponent; see results.EQUIV_MARGIN)
EXP_MARGIN = 0.1
#: a share of the theorem's error counts when it is at least a tenth of it
SHARE_MARGIN = 0.1
#: the theorem "predicts" a curve when its mean log error is below log(1.1): within 10%
LOGERR_OK = math.log(1.1)


def _tost(ev, name, ref, alpha, margin=EXP_MARGIN) -> tuple[bool, bool, str]:
    """Two one-sided t tests of ``ev[name]`` (with ``name_se`` and ``ev_exp_t_df``) against
    ``ref``: (equivalent within ``margin``, outside ``margin`` significantly, text)."""
    from .stats import t_quantile
    m, se, df = ev[name], ev[name + "_se"], ev["ev_exp_t_df"]
    t = t_quantile(1 - alpha, df)
    d = abs(m - ref)
    return (d + t * se <= margin, d - t * se > margin,
            f"{_g(m)} (se {_g(se)}) against {_g(ref)}")


def rule_independence(ev) -> Verdict:
    """'The independence assumption is doing the work.' Needs Chapter 5's generalisations
    verified (heteroscedastic and (r, c) Monte Carlo max z <= their z_crit; else ``open``).
    On trained Pre-LN (Chapter 7): if the theorem already predicts the change (mean log
    error < log 1.1, within 10%), ``does not hold`` (nothing fails). Otherwise the share of
    the theorem's log error that the correlations remove beyond the unequal variances
    decides, against :data:`SHARE_MARGIN`: interval wholly above it, ``holds`` (dropping
    independence is what fixes the prediction); wholly below it, ``does not hold`` (unequal
    variances, which keep independence, carry the error); else ``open`` (the data cannot
    tell)."""
    for name in ("hetero", "rc"):
        if ev[f"ev_{name}_maxz"] > ev[f"ev_{name}_z_crit"]:
            return Verdict("open", f"Chapter 5's {name} model is not verified: max z {_g(ev[f'ev_{name}_maxz'])} > {_g(ev[f'ev_{name}_z_crit'])}")
    t = ev["ev_pred_logerr_theorem"]
    tail = (f"mean log error: theorem {_g(t)}, heteroscedastic {_g(ev['ev_pred_logerr_hetero'])}, "
            f"(r, c) {_g(ev['ev_pred_logerr_rc'])}; of the theorem's error the variances remove "
            f"{_iv(ev, 'ev_share_var')}, the correlations {_iv(ev, 'ev_share_corr')} more; "
            f"mean |corr| between blocks {_g(ev['ev_block_corr_mean_abs'])}")
    if t < LOGERR_OK:
        return Verdict("does not hold", "the independent theorem predicts trained Pre-LN within 10%: " + tail)
    _, lo, hi = _interval(ev, "ev_share_corr")
    if lo > SHARE_MARGIN:
        return Verdict("holds", "the correlations carry the theorem's error: " + tail)
    if hi < SHARE_MARGIN:
        return Verdict("does not hold", "the correlations carry less than a tenth of the error: " + tail)
    return Verdict("open", "the data cannot tell whether the correlations carry a tenth of the error: " + tail)


def rule_init_vs_training(ev) -> Verdict:
    """'It describes initialisation better than training.' On the same Pre-LN runs
    (Chapter 7), each exponent against the theorem's exponent over its own range and
    convention (``ev_init_ref_pre_ln``, ``ev_trained_ref_pre_ln``), by TOST with margin
    :data:`EXP_MARGIN` at alpha 0.05 / 2 (two tests, Bonferroni). ``holds`` if the at-init
    exponent is equivalent and the trained one significantly outside the margin;
    ``does not hold`` if the trained one is equivalent too (the theory describes both), or
    the trained one is nearer its reference than the at-init one; ``holds with
    correction`` if neither is equivalent but the trained one is significantly outside and
    farther; else ``open`` (the data cannot tell)."""
    a = 0.05 / 2
    i_eq, i_out, itxt = _tost(ev, "ev_init_exp_trainedruns_pre_ln", ev["ev_init_ref_pre_ln"], a)
    t_eq, t_out, ttxt = _tost(ev, "ev_trained_exp_pre_ln", ev["ev_trained_ref_pre_ln"], a)
    line = f"margin {EXP_MARGIN}; at init {itxt}; trained {ttxt}"
    di = abs(ev["ev_init_exp_trainedruns_pre_ln"] - ev["ev_init_ref_pre_ln"])
    dt = abs(ev["ev_trained_exp_pre_ln"] - ev["ev_trained_ref_pre_ln"])
    if t_eq:
        return Verdict("does not hold", "training keeps the predicted exponent: " + line)
    if i_eq and t_out:
        return Verdict("holds", line)
    if dt < di:
        return Verdict("does not hold", "the trained exponent is nearer its reference: " + line)
    if t_out:
        return Verdict("holds with correction", "neither is equivalent; training departs farther: " + line)
    return Verdict("open", "the data cannot tell: " + line)


def rule_compensation(ev) -> Verdict:
    """'A model could learn to compensate by scaling later blocks' outputs up.' Compensation
    means later blocks' outputs keep pace with the stream: r_k = |f_k| / |x_k| falls slower
    than the theorem's k^(-1/2). On trained Pre-LN (Chapter 7, ``ev_trained_r_exp_pre_ln``,
    a 95% t interval of the exponent of r_k): ``holds`` if the interval lies wholly above
    -1/2; ``does not hold`` if wholly below (later blocks shrink faster than the theorem's,
    the opposite of compensation); ``open`` otherwise (the data cannot tell)."""
    _, lo, hi = _interval(ev, "ev_trained_r_exp_pre_ln")
    line = f"exponent of r_k in trained Pre-LN {_iv(ev, 'ev_trained_r_exp_pre_ln')}, theorem -0.5"
    if lo > -0.5:
        return Verdict("holds", "later blocks keep pace with the stream: " + line)
    if hi < -0.5:
        return Verdict("does not hold", "later blocks shrink faster than the theorem's: " + line)
    return Verdict("open", "the data cannot tell: " + line)


def rule_idle_blocks(ev) -> Verdict:
    """'Later blocks contribute a vanishing share.' The rank correlation of the loss increase
    from removing block k >= 2 with k, in trained Pre-LN at its deepest depth (Chapter 8;
    a t interval over seeds, Bonferroni over the five placements): ``holds`` if it lies
    below 0 (later blocks matter less); ``does not hold`` if above 0; ``open`` if it
    contains 0 (the data cannot tell)."""
    _, lo, hi = _interval(ev, "ev_ablation_trend_pre_ln")
    line = (f"rank correlation of the ablation loss with k {_iv(ev, 'ev_ablation_trend_pre_ln')}; "
            f"block 1 costs {_g(ev['ev_ablation_block1_pre_ln'])} nats")
    if hi < 0:
        return Verdict("holds", line)
    if lo > 0:
        return Verdict("does not hold", "later blocks matter more: " + line)
    return Verdict("open", "the data cannot tell (the interval contains 0): " + line)


#: a fix whose loss at equal depth is more than this above Pre-LN's is not comparably trained
TRAINED_GAP = 0.15
_GAPS = ("ev_val_loss_gap_peri_ln", "ev_val_loss_gap_resi_dual", "ev_val_loss_gap_ln_scaling")


def rule_depth_cost(ev) -> Verdict:
    """'Deep blocks cannot refine the representation', at the depth where it starts to cost
    accuracy (Chapter 8). Depth *keeps paying* when the set of depths not significantly
    worse than Pre-LN's best reaches the top of the ladder (``_hi`` infinite): ``does not
    hold``. Otherwise depth stops paying inside the ladder; the claim then needs the idle
    blocks as its mechanism (the ablation trend's interval below 0): without it, ``open``
    if the trend contains 0, ``does not hold`` if it is above 0. With it: ``holds`` if a fix
    beats Pre-LN at equal depth (some gap's Bonferroni interval below 0), ``holds with
    correction`` if none does (the cost is not the placement's). A fix more than
    :data:`TRAINED_GAP` nats behind Pre-LN is named in the reason as not comparably trained."""
    d, lo, hi = _interval(ev, "ev_depth_stops_paying_pre_ln")
    gaps = "; ".join(f"{k[len('ev_val_loss_gap_'):]} {_iv(ev, k)}" for k in _GAPS)
    line = f"best depth {_iv(ev, 'ev_depth_stops_paying_pre_ln')}; fix minus Pre-LN: {gaps}"
    behind = [k[len("ev_val_loss_gap_"):] for k in _GAPS if ev[k] > TRAINED_GAP]
    if behind:  # such a fix trains worse at equal depth: its gap is not the placement's alone
        line += f" ({', '.join(behind)} more than {TRAINED_GAP} nats behind Pre-LN: not comparably trained)"
    if not math.isfinite(hi) or not math.isfinite(d):
        return Verdict("does not hold", "depth keeps paying within the ladder: " + line)
    _, tlo, thi = _interval(ev, "ev_ablation_trend_pre_ln")
    if not thi < 0:
        word = "does not hold" if tlo > 0 else "open"
        return Verdict(word, f"depth stops paying, but later blocks are not shown idle (ablation trend "
                             f"{_iv(ev, 'ev_ablation_trend_pre_ln')}): " + line)
    if any(ev[k + "_hi"] < 0 for k in _GAPS):
        return Verdict("holds", line)
    return Verdict("holds with correction", "no fix is better at equal depth: " + line)


FIXES = ("peri_ln", "resi_dual")          # the card's "rearrangements": Peri-LN and ResiDual
OTHER_FIXES = ("ln_scaling", "deepnorm", "mix_ln")


def rule_fixes(ev) -> Verdict:
    """'The fixes are rearrangements that escape the decay.' At initialisation (Chapter 6) a
    placement escapes when its exponent interval lies wholly above Pre-LN's. ``holds`` if
    both rearrangements (Peri-LN, ResiDual) escape; ``holds with correction`` if one does;
    ``does not hold`` if neither. Other fixes (LN-Scaling, DeepNorm, Mix-LN) are reported
    when glued."""
    _, _, pre_hi = _interval(ev, "ev_init_exp_pre_ln")
    escapes = {a: ev[f"ev_init_exp_{a}_lo"] > pre_hi for a in FIXES}
    parts = [f"Pre-LN {_iv(ev, 'ev_init_exp_pre_ln')}"]
    for a in FIXES + OTHER_FIXES:
        if all(k in ev for k in _exp_keys(f"ev_init_exp_{a}")):
            esc = ev[f"ev_init_exp_{a}_lo"] > pre_hi
            parts.append(f"{a} {_iv(ev, f'ev_init_exp_{a}')}{' escapes' if esc else ''}")
    line = "; ".join(parts)
    n = sum(escapes.values())
    return Verdict(("does not hold", "holds with correction", "holds")[n], line)


def rule_gradients(ev) -> Verdict:
    """'Pre-LN gradients reach the early blocks undamped, and the gradient problem Post-LN
    has does not arise' (Chapter 6: ratio of the gradient norm of the first block's
    parameters to the last block's, at initialisation). A placement damps the gradient when
    the first block gets less than half the last block's (ratio < 1/2); a ratio above 1 is
    amplification, not damping. ``holds`` if Pre-LN is undamped and Post-LN damped;
    ``holds with correction`` if Pre-LN is undamped but Post-LN is not damped either (the
    contrast the card draws does not appear); ``does not hold`` if Pre-LN is damped."""
    pre, post = ev["ev_grad_ratio_pre_ln"], ev["ev_grad_ratio_post_ln"]
    line = f"first/last block gradient norm: Pre-LN {_g(pre)}, Post-LN {_g(post)}"
    if pre < 0.5:
        return Verdict("does not hold", "Pre-LN damps the gradient toward the first block: " + line)
    if post < 0.5:
        return Verdict("holds", line)
    # a ratio above 2 is worth naming: the early blocks get *more* gradient, not the same
    pre_word = "amplified toward the first block" if pre > 2 else "undamped"
    return Verdict("holds with correction",
                   f"Pre-LN is {pre_word}, but Post-LN is not damped here either: " + line)


def _pretrained_widening(ev) -> tuple[float, str]:
    """How far SmolLM2's exponent interval is widened: the quantisation bound
    (``ev_quant_shift``) plus, when glued, the fit-range sensitivity
    (``ev_fitrange_shift_smollm2``); both are exponent shifts that the bootstrap over
    sequences does not cover (Chapter 9)."""
    if "ev_fitrange_shift_smollm2" in ev:
        return _widening(ev, "smollm2")
    q = abs(ev["ev_quant_shift"])
    return q, f"+/- {_g(q)} quantisation"


def rule_pretrained(ev) -> Verdict:
    """Real pretrained models (Chapter 9). The Pre-LN model (SmolLM2) is the test; its
    interval is widened by :func:`_pretrained_widening`. ``holds`` if the theorem's exponent
    over the same range and convention (``ev_pretrained_ref_smollm2``) lies in the widened interval; ``holds with correction`` if the whole widened interval is
    below 0 (the change decays, at another rate); ``does not hold`` otherwise (no decay can
    be claimed). Gemma-3 (sandwich) and MiniLM (Post-LN) are reported beside it."""
    ref, what = _pretrained_reference(ev, "smollm2")
    _, lo, hi = _interval(ev, "ev_pretrained_exp_smollm2")
    w, wtext = _pretrained_widening(ev)
    line = (f"{what}; SmolLM2 {_iv(ev, 'ev_pretrained_exp_smollm2')} ({wtext}), "
            f"Gemma-3 {_iv(ev, 'ev_pretrained_exp_gemma3')}, MiniLM {_iv(ev, 'ev_pretrained_exp_minilm')}")
    if lo - w <= ref <= hi + w:
        return Verdict("holds", line)
    if hi + w < 0:
        return Verdict("holds with correction", "the Pre-LN model decays at another rate: " + line)
    return Verdict("does not hold", "the Pre-LN model's change does not decay like 1/k: " + line)


def rule_promote(ev) -> Verdict:
    """promote_when: the cheap measurement nobody published -- the per-layer change of
    trained Pre-LN networks -- settles it. ``holds`` (promote) if the trained Pre-LN
    exponent is equivalent to its range- and convention-matched reference (Chapter 7, TOST
    with margin :data:`EXP_MARGIN`) and SmolLM2's matched reference lies inside its interval
    (Chapter 9, widened by :func:`_pretrained_widening`); ``holds with correction`` (promote with the measured
    rate) if both decay (upper ends < 0) but not both at the predicted rate; ``does not
    hold`` (do not promote) if either does not decay."""
    ref, what = _pretrained_reference(ev, "smollm2")
    w, wtext = _pretrained_widening(ev)
    _, tlo, thi = _interval(ev, "ev_trained_exp_pre_ln")
    _, plo, phi = _interval(ev, "ev_pretrained_exp_smollm2")
    t_eq, _, ttxt = _tost(ev, "ev_trained_exp_pre_ln", ev["ev_trained_ref_pre_ln"], 0.05)
    line = (f"trained Pre-LN {ttxt} (TOST, margin {EXP_MARGIN}); SmolLM2 "
            f"{_iv(ev, 'ev_pretrained_exp_smollm2')} ({wtext}) against {what}")
    if t_eq and plo - w <= ref <= phi + w:
        return Verdict("holds", "promote: " + line)
    if thi < 0 and phi + w < 0:
        return Verdict("holds with correction", "promote with the measured rate: " + line)
    return Verdict("does not hold", "do not promote: " + line)


#: Chapter 9's two Pre-LN families, by evidence suffix
PRE_LN_FAMILIES = ("smollm2", "qwen")


def _widening(ev, model: str) -> tuple[float, str]:
    """The quantisation bound plus the model's fit-range sensitivity (both exponent shifts
    the bootstrap over sequences does not cover)."""
    q, f = abs(ev["ev_quant_shift"]), abs(ev[f"ev_fitrange_shift_{model}"])
    return q + f, f"+/- {_g(q)} quantisation, +/- {_g(f)} fit range"


def rule_two_families(ev) -> Verdict:
    """'The Pre-LN law holds in trained Pre-LN models', read in two families (SmolLM2 and
    Qwen2.5, Chapter 9). Per model: the exponent's bootstrap interval (Bonferroni over the two
    models: 97.5 % each), widened by :func:`_widening`, against the theorem's exponent over
    the same range and convention. ``holds`` if both widened intervals lie within
    :data:`EXP_MARGIN` of their references and neither curve is bent (the curvature test's
    drift interval, ``ev_pretrained_drift_<model>``, excludes 0 for a bent curve); ``does not
    hold`` if either widened interval lies wholly outside its margin (an equivalence that
    fails significantly); ``open`` otherwise, the data cannot tell."""
    parts, inside, outside = [], [], []
    for m in PRE_LN_FAMILIES:
        _, lo, hi = _interval(ev, f"ev_pretrained_exp_{m}")
        ref = ev[f"ev_pretrained_ref_{m}"]
        w, wtext = _widening(ev, m)
        _, dlo, dhi = _interval(ev, f"ev_pretrained_drift_{m}")
        bent = dlo > 0 or dhi < 0
        inside.append(ref - EXP_MARGIN <= lo - w and hi + w <= ref + EXP_MARGIN and not bent)
        outside.append(hi + w < ref - EXP_MARGIN or lo - w > ref + EXP_MARGIN)
        parts.append(f"{m} {_iv(ev, f'ev_pretrained_exp_{m}')} ({wtext}) against {_g(ref)}"
                     f"{', bent' if bent else ''}")
    line = f"margin {EXP_MARGIN}; " + "; ".join(parts)
    if all(inside):
        return Verdict("holds", line)
    if any(outside):
        return Verdict("does not hold", "a trained Pre-LN family departs beyond the margin: " + line)
    return Verdict("open", "the data cannot tell: " + line)


def rule_pretrained_idle(ev) -> Verdict:
    """'Later blocks of real Pre-LN models are idle', read as for the toy models
    (:func:`rule_idle_blocks`): the rank correlation of the loss increase from skipping block
    k >= 2 with k (Chapter 9, ``ev_skip_trend_<model>``, a percentile bootstrap over
    sequences, 97.5 % each: Bonferroni over the two families). ``holds`` if both intervals lie
    below 0 (later blocks cost less to skip); ``does not hold`` if either lies above 0;
    ``open`` otherwise (the data cannot tell)."""
    line = "; ".join(f"{m} {_iv(ev, f'ev_skip_trend_{m}')} (block 1 costs {_g(ev[f'ev_skip_block1_{m}'])})"
                     for m in PRE_LN_FAMILIES)
    his = [ev[f"ev_skip_trend_{m}_hi"] for m in PRE_LN_FAMILIES]
    los = [ev[f"ev_skip_trend_{m}_lo"] for m in PRE_LN_FAMILIES]
    if all(h < 0 for h in his):
        return Verdict("holds", "rank correlation of the skip cost with k: " + line)
    if any(lo > 0 for lo in los):
        return Verdict("does not hold", "later blocks cost more to skip: " + line)
    return Verdict("open", "the data cannot tell (an interval contains 0): " + line)


#: rankings the book's change is compared with (depthcost.RANKINGS without itself)
COMPETITORS = ("influence", "angular", "relative", "deepest")
#: "as good as" for two rank correlations: within 0.1 (a tenth of the distance between a
#: perfect ranking and none), fixed before the measurement
RHO_MARGIN = 0.1


def rule_metric(ev) -> Verdict:
    """'The per-layer change, the theorem's quantity, tells which blocks can be skipped at
    least as well as the published redundancy metrics' (Chapter 9). Per Pre-LN family and
    competitor c, the paired bootstrap interval of rho(change) - rho(c) (rho: rank
    correlation of the score with the skip cost over blocks; Bonferroni over 2 models x 4
    competitors) in ``ev_metric_diff_<c>_<model>``. ``holds`` if every difference interval
    lies above -:data:`RHO_MARGIN` and the change's own correlation
    (``ev_metric_rho_change_<model>``) lies above 0 in both; ``does not hold`` if some
    competitor is better beyond the margin (a difference interval wholly below
    -RHO_MARGIN); ``open`` otherwise."""
    parts, ok, worse = [], [], []
    for m in PRE_LN_FAMILIES:
        diffs = {c: _interval(ev, f"ev_metric_diff_{c}_{m}") for c in COMPETITORS}
        ok.append(ev[f"ev_metric_rho_change_{m}_lo"] > 0 and all(lo > -RHO_MARGIN for _, lo, _ in diffs.values()))
        worse += [f"{c} in {m}" for c, (_, _, hi) in diffs.items() if hi < -RHO_MARGIN]
        parts.append(f"{m}: change {_iv(ev, f'ev_metric_rho_change_{m}')}, minus "
                     + ", ".join(f"{c} {_iv(ev, f'ev_metric_diff_{c}_{m}')}" for c in COMPETITORS))
    line = f"margin {RHO_MARGIN}; " + "; ".join(parts)
    if worse:
        return Verdict("does not hold", f"better than the change: {', '.join(worse)}: " + line)
    if all(ok):
        return Verdict("holds", line)
    return Verdict("open", "the data cannot tell: " + line)


CLAIMS: list[Claim] = [
    Claim("claim-omega-formula", "Theorem 3.3: the variance of the change",
          r"If the block outputs are independent, $x^f_k \sim N(0, \sigma^2 I)$, then "
          r"$\mathrm{LN}(x^a_{k+1}) - \mathrm{LN}(x^a_k) \sim N(0, \omega_k^2 I)$ with "
          r"$\omega_k^2 = 2 / (\sqrt{k}\,(\sqrt{k-1} + \sqrt{k}))$.",
          (("chapters/02_theorem", "thm-omega"),),
          ("ev_thm33_symbolic_residual", "ev_thm33_z_crit", "ev_thm33_maxz_large_d",
                "ev_thm33_maxz_raw_small_d", "ev_thm33_maxz_corrected_small_d"), rule_omega_formula),
    Claim("claim-mean-abs-rate", "Corollary 3.4: O(1/√k) per coordinate",
          r"Per coordinate, $E|\mathrm{LN}(x^a_{k+1}) - \mathrm{LN}(x^a_k)| = O(1/\sqrt{k})$.",
          (("chapters/03_corollary_34", "cor-mean-abs"),),
          ("ev_cor34_sqrtk_limit", "ev_cor34_remainder_C", "ev_cor34_maxz", "ev_cor34_z_crit"), rule_mean_abs),
    Claim("claim-output-rate", "Corollary 3.5: O(1/√N) at the output",
          r"Adding a block to an $N-1$ block model changes the normalised output by $O(1/\sqrt{N})$.",
          (("chapters/04_corollary_35", "cor-output"), ("chapters/06_initialisation", "")),
          ("ev_cor35_const", "ev_cor35_maxz", "ev_cor35_z_crit"), rule_output),
    Claim("claim-fifth-at-24", "About a fifth at k = 24",
          "At $k = 24$ the per-layer change is about a fifth of its value at $k = 1$, not a thousandth.",
          (("chapters/03_corollary_34", "tbl-fifth"),),
          ("ev_fifth_ratio_seed", "ev_fifth_ratio_seed_k2", "ev_fifth_ratio_embedding",
                "ev_fifth_ratio_approx"), rule_fifth),
    Claim("claim-independence", "The independence assumption does the work",
          "The independence assumption is doing the work: in a trained network block outputs are "
          "neither Gaussian nor independent, and that correlation is what most likely changes the exponent.",
          (("chapters/05_beyond_independence", "tbl-departures"), ("chapters/07_training", "fig-trained-predictions")),
          ("ev_hetero_maxz", "ev_hetero_z_crit", "ev_rc_maxz", "ev_rc_z_crit", "ev_block_corr_mean_abs",
                "ev_pred_logerr_theorem", "ev_pred_logerr_hetero", "ev_pred_logerr_rc",
                *_exp_keys("ev_share_var"), *_exp_keys("ev_share_corr")), rule_independence),
    Claim("claim-init-not-training", "Initialisation better than training",
          "The theory describes a freshly initialised network better than a trained one.",
          (("chapters/07_training", "fig-exponent-training"), ("chapters/06_initialisation", "fig-init-curves")),
          ("ev_trained_exp_pre_ln", "ev_trained_exp_pre_ln_se", "ev_trained_ref_pre_ln",
           "ev_init_exp_trainedruns_pre_ln", "ev_init_exp_trainedruns_pre_ln_se", "ev_init_ref_pre_ln",
           "ev_exp_t_df"),
          rule_init_vs_training),
    Claim("claim-compensation", "Training could compensate",
          "A model could learn to compensate by scaling later blocks' outputs up.",
          (("chapters/07_training", "fig-trained-predictions"),),
          _exp_keys("ev_trained_r_exp_pre_ln"),
          rule_compensation),
    Claim("claim-idle-blocks", "Later blocks contribute a vanishing share",
          "Later Pre-LN blocks contribute a vanishing share of the stream, so deep blocks idle.",
          (("chapters/08_cost", "fig-ablation"),),
          (*_exp_keys("ev_ablation_trend_pre_ln"), "ev_ablation_block1_pre_ln"), rule_idle_blocks),
    Claim("claim-depth-cost", "The depth at which it costs accuracy",
          "Deep Pre-LN blocks cannot refine the representation; the depth at which this starts to cost "
          "accuracy is the practical question the card leaves open.",
          (("chapters/08_cost", "fig-depth"),),
          (*_exp_keys("ev_depth_stops_paying_pre_ln"), *_exp_keys("ev_ablation_trend_pre_ln"),
           *(k for g in _GAPS for k in _exp_keys(g))), rule_depth_cost),
    Claim("claim-fixes-escape", "The fixes are rearrangements that escape the decay",
          "The fixes in the literature are rearrangements, not removals (Peri-LN, this paper's two streams), "
          "and they escape the decay.",
          (("chapters/06_initialisation", "tbl-init-exponents"),),
          tuple(k for a in ("pre_ln",) + FIXES for k in _exp_keys(f"ev_init_exp_{a}")), rule_fixes),
    Claim("claim-gradients-undamped", "Pre-LN gradients are undamped",
          "Because the residual path is never renormalised, gradients reach Pre-LN's early blocks undamped; "
          "the gradient problem of Post-LN does not arise.",
          (("chapters/06_initialisation", "fig-init-grads"),),
          ("ev_grad_ratio_pre_ln", "ev_grad_ratio_post_ln"), rule_gradients),
    Claim("claim-pretrained", "Real pretrained models",
          "A real pretrained Pre-LN model's per-layer change decays at the theorem's rate.",
          (("chapters/09_pretrained", "tbl-pretrained-exponents"),),
          (*_exp_keys("ev_pretrained_exp_smollm2"), *_exp_keys("ev_pretrained_exp_gemma3"),
                *_exp_keys("ev_pretrained_exp_minilm"), "ev_quant_shift", "ev_pretrained_ref_smollm2"),
          rule_pretrained),
    Claim("claim-two-families", "The Pre-LN law in two trained families",
          "Trained Pre-LN language models of two families (SmolLM2, Qwen2.5) show the theorem's "
          "per-layer decay.",
          (("chapters/09_pretrained", "tbl-pretrained-exponents"),),
          (*_exp_keys("ev_pretrained_exp_smollm2"), "ev_pretrained_ref_smollm2", "ev_fitrange_shift_smollm2",
           *_exp_keys("ev_pretrained_drift_smollm2"),
           *_exp_keys("ev_pretrained_exp_qwen"), "ev_pretrained_ref_qwen", "ev_fitrange_shift_qwen",
           *_exp_keys("ev_pretrained_drift_qwen"), "ev_quant_shift"),
          rule_two_families),
    Claim("claim-pretrained-idle", "Later blocks of real Pre-LN models idle",
          "In real Pre-LN models the later blocks are idle: skipping one costs less the deeper it is.",
          (("chapters/09_pretrained", "fig-skip-cost"),),
          (*_exp_keys("ev_skip_trend_smollm2"), "ev_skip_block1_smollm2",
           *_exp_keys("ev_skip_trend_qwen"), "ev_skip_block1_qwen"),
          rule_pretrained_idle),
    Claim("claim-redundancy-metric", "The change predicts which blocks can go",
          "The per-layer change, the theorem's quantity, tells which blocks of a real Pre-LN model "
          "can be skipped at least as well as the published redundancy metrics.",
          (("chapters/09_pretrained", "tbl-metric-rho"),),
          (*_exp_keys("ev_metric_rho_change_smollm2"),
           *_exp_keys("ev_metric_diff_influence_smollm2"), *_exp_keys("ev_metric_diff_angular_smollm2"),
           *_exp_keys("ev_metric_diff_relative_smollm2"), *_exp_keys("ev_metric_diff_deepest_smollm2"),
           *_exp_keys("ev_metric_rho_change_qwen"),
           *_exp_keys("ev_metric_diff_influence_qwen"), *_exp_keys("ev_metric_diff_angular_qwen"),
           *_exp_keys("ev_metric_diff_relative_qwen"), *_exp_keys("ev_metric_diff_deepest_qwen")),
          rule_metric),
    Claim("claim-promote", "promote_when: the cheap measurement",
          "Promote the theory when the cheap, unpublished measurement -- the per-layer change of trained "
          "Pre-LN networks -- follows the predicted rate.",
          (("chapters/07_training", "fig-exponent-training"), ("chapters/09_pretrained", "tbl-pretrained-exponents")),
          (*_exp_keys("ev_trained_exp_pre_ln"), "ev_trained_exp_pre_ln_se", "ev_trained_ref_pre_ln",
           "ev_exp_t_df", *_exp_keys("ev_pretrained_exp_smollm2"), "ev_quant_shift",
           "ev_pretrained_ref_smollm2"),
          rule_promote),
]


def evaluate(evidence: Mapping[str, float], claims=None) -> list[tuple[Claim, Verdict]]:
    """Each claim with its verdict on ``evidence`` (default: :data:`CLAIMS`)."""
    if not isinstance(evidence, Mapping):
        raise TypeError(f"evidence must be a dict {{name: number}} (read_evidence's), got {type(evidence).__name__}")
    for k, v in evidence.items():
        if not isinstance(k, str) or not isinstance(v, numbers.Real):
            raise TypeError(f"evidence must map names (str) to numbers, got {k!r}: {v!r}"[:200])
    if claims is not None:
        if isinstance(claims, (str, bytes, Claim)) or not hasattr(claims, "__iter__"):
            raise TypeError(f"claims must be a list of Claim, got {type(claims).__name__}")
        claims = list(claims)
        for i, c in enumerate(claims):
            if not isinstance(c, Claim):
                raise TypeError(f"claims[{i}] must be a Claim, got {type(c).__name__}")
    return [(c, c.verdict(evidence)) for c in (CLAIMS if claims is None else claims)]


#: what a verdict of ``claim-promote`` says about the card's status (Proposed)
PROMOTION = {
    "holds": "The measurements support promoting the theory from Proposed: trained and pretrained "
             "Pre-LN networks follow the predicted rate.",
    "holds with correction": "Promote the theory with a correction: the per-layer change of trained and "
                             "pretrained Pre-LN networks decays, but at the measured rate, not the theorem's.",
    "does not hold": "Do not promote the theory: a trained or pretrained Pre-LN network's per-layer "
                     "change does not decay as predicted.",
    "open": "The theory stays Proposed: the measurement promote_when asks for is not in the book yet.",
}

_REF_ROLE = {"thm": "prf:ref", "cor": "prf:ref", "lem": "prf:ref", "def": "prf:ref", "prop": "prf:ref",
             "fig": "numref", "tbl": "numref", "eq": "eq"}


def _toc_documents(root: pathlib.Path) -> set[str]:
    import yaml
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    docs = {toc["root"]}
    for part in toc.get("parts", []):
        docs.update(c["file"] for c in part.get("chapters", []))
    docs.update(c["file"] for c in toc.get("chapters", []))
    return docs


def book_notebooks(root) -> list[pathlib.Path]:
    """The notebooks of the book: the ``.ipynb`` documents of ``root``'s ``_toc.yml``, in
    order (a chapter that exists but is not in the table of contents is not in the book)."""
    root = pathlib.Path(root)
    toc = sorted(_toc_documents(root))
    return [root / f"{doc}.ipynb" for doc in toc if (root / f"{doc}.ipynb").exists()]


def _defines(root: pathlib.Path, doc: str, label: str) -> bool:
    """Whether the source of ``doc`` defines ``label`` (a :label:, :name:, (target)= or (eq))."""
    text = "".join(p.read_text(encoding="utf-8") for p in (root / f"{doc}.ipynb", root / f"{doc}.md") if p.exists())
    return any(pat in text for pat in (f":label: {label}", f":name: {label}", f"({label})=", f"$$ ({label})"))


def evidence_markdown(claim: Claim, root) -> str:
    """MyST Markdown naming where ``claim``'s evidence is, with a cross-reference for each
    chapter that is in ``root``'s ``_toc.yml`` and each label that chapter defines, and
    plain text for the rest (so the book never links to what is not there yet)."""
    root = pathlib.Path(root)
    docs = _toc_documents(root)
    parts = []
    for doc, label in claim.sources:
        if doc not in docs:
            parts.append(f"`{doc}` (not in the book yet)")
            continue
        where = f"{{doc}}`/{doc}`"
        if label and _defines(root, doc, label):
            role = _REF_ROLE.get(label.split("-")[0], "ref")
            where = f"{{{role}}}`{label}` in " + where
        elif label:
            where = f"`{label}` (not in the chapter yet) in " + where
        parts.append(where)
    return "; ".join(parts)


def markdown_table(rows, link: bool = True) -> str:
    """A MyST Markdown table of ``evaluate(...)`` rows: claim, verdict, computed reason.

    With ``link`` the claim cell is a ``{ref}`` to the claim's target (the ``claim-...``
    label the verdict chapter defines); the evidence chapter follows in parentheses."""
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    lines = ["| claim | verdict | reason |", "| --- | --- | --- |"]
    for claim, verdict in rows:
        where = ", ".join(dict.fromkeys(doc.split("/")[-1] for doc, _ in claim.sources))
        name = f"{{ref}}`{esc(claim.title)} <{claim.id}>`" if link else f"`{claim.id}` {esc(claim.title)}"
        lines.append(f"| {name} ({esc(where)}) | **{verdict.word}** | {esc(verdict.reason)} |")
    return "\n".join(lines)
