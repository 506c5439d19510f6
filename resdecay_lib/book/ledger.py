"""The claims ledger: each claim of the theory card, and its verdict computed from the book.

The evidence is what the chapters glued under names starting with ``ev_`` (myst-nb
``glue``), read from the outputs STORED in ``chapters/*.ipynb`` -- the same outputs nbval
re-executes and compares, so a verdict can only change when the evidence does.

A :class:`Claim` is a sentence of the card (Xie et al. 2023, arXiv:2304.14802, §3.2, as the
theory card THEORY-096 states it), the chapter and label of its evidence, the evidence it
needs (declared once, in :mod:`resdecay_lib.book.evidence`; the ledger never spells a name), and a
rule: a pure function of the evidence dict returning a :class:`Verdict` (one of
:data:`VERDICTS` and a one-line reason with the numbers it used). Every threshold is in the
rule's docstring. ``open`` means one thing: the data cannot tell (an interval straddles a
margin, or a chapter glued NaN because its data could not give the value). A claim whose
needed evidence the book lacks gets the reason :data:`MISSING`, and the test suite fails on
it (``tests/test_evidence.py``), so a mistyped name cannot pass for an honest "open".

Conventions used by the rules:

* exponents of the per-layer change are fitted to omega_k^2 (the variance), so the theorem
  predicts about -1 for large k. Every exponent is compared with the theorem's exact
  exponent over the same k range and in the convention the measured rho chooses (the
  ``*_ref_*`` evidence), never with a bare -1;
* "agrees" is an equivalence test with margin :data:`EXP_MARGIN`: two one-sided t tests over
  seeds (Chapter 7), or an interval wholly within the margin (Chapters 6 and 9, whose
  intervals are Bonferroni-corrected over the chapter's family, as each chapter states);
  "departs" is an interval wholly outside the margin; anything between is ``open``;
* an interval ``[_lo, _hi]`` is the chapter's interval of the value (a t interval over
  seeds in Chapters 7 and 8, a bootstrap elsewhere, as each chapter states);
* a z statistic of a Monte Carlo check of an exact formula agrees when it is at most the
  chapter's own critical value ``*_z_crit`` (Bonferroni-corrected over the chapter's grid);
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

from ..checks import check_items
from . import evidence as E
from ..stats import inference as stats
from .evidence import Evidence

__all__ = ["VERDICTS", "ROUNDING", "MISSING", "Verdict", "Claim", "CLAIMS", "PROMOTION", "read_evidence",
           "on_seed_set", "seed_based", "replication", "NO_POWER", "short_reason", "deciding_numbers",
           "book_notebooks", "toc_documents", "evaluate", "evidence_markdown", "markdown_table"]

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
    ``title``, the ``sentence`` (MyST Markdown, math in ``$...$``), where its evidence is
    (``sources``: (chapter document, label) pairs; an empty label means the chapter's
    "Evidence for the ledger" section), the evidence the rule needs (``needs``: declared
    :class:`~resdecay_lib.book.evidence.Evidence`, each standing for all its glue names, or plain
    names), the evidence it reads only when the book has it (``optional``), and the ``rule``
    (evidence dict -> :class:`Verdict`). The rule sees only ``needs`` and ``optional``: reading
    any other name raises ``KeyError``."""
    id: str
    title: str
    sentence: str
    sources: tuple[tuple[str, str], ...]
    needs: tuple[str, ...]
    rule: Callable[[Mapping[str, float]], Verdict] = field(repr=False)
    optional: tuple[str, ...] = ()
    #: the sentence of the theory card the rule decides, verbatim (tests/test_ledger.py checks it
    #: against the card), the primary statistic, the margin with its reason, and the family of
    #: tests the rule reads together (its multiplicity correction): the declaration
    #: results/preregistration.json records with the rule's fingerprint
    card: str = ""
    primary: str = ""
    margin: str = ""
    family: str = ""
    #: the evidence whose number the ledger's table shows beside the short reason
    deciding: tuple = ()

    def __post_init__(self):
        if not self.id.startswith("claim-"):
            raise ValueError(f"claim id must start with 'claim-', got {self.id!r}")

    @property
    def keys(self) -> tuple[str, ...]:
        """Every glue name the claim needs (an interval stands for its value, ``_lo``, ``_hi``)."""
        return _expand(self.needs)

    @property
    def optional_keys(self) -> tuple[str, ...]:
        return _expand(self.optional)

    def missing(self, evidence: Mapping[str, float]) -> list[str]:
        """The needed names the evidence lacks (a mistyped or unglued name, never "open")."""
        return [k for k in self.keys if k not in evidence]

    def verdict(self, evidence: Mapping[str, float]) -> Verdict:
        """The rule's verdict. Needed evidence absent from the book: ``open`` with the reason
        "evidence missing from the book: <names>" (the test suite fails on it in the book,
        ``tests/test_evidence.py``: open is kept for what the data cannot tell). Needed
        evidence that is NaN (a chapter glues NaN when its data cannot give the value, e.g.
        fewer than three kept seeds): ``open``, "the data cannot tell"."""
        missing = self.missing(evidence)
        if missing:
            return Verdict("open", MISSING + _names(missing))
        nan = [k for k in self.keys if isinstance(evidence[k], float) and math.isnan(evidence[k])]
        if nan:
            return Verdict("open", "the data cannot tell (the chapter could not compute "
                                   + _names(nan) + ")")
        allowed = set(self.keys) | set(self.optional_keys)
        return self.rule(_Allowed({k: v for k, v in evidence.items() if k in allowed}, self.id))


#: the reason's start for a claim whose needed evidence the book lacks
MISSING = "evidence missing from the book: "


def _expand(names) -> tuple[str, ...]:
    out = []
    for n in names:
        out.extend(n.keys() if isinstance(n, Evidence) else (str(n),))
    return tuple(out)


class _Allowed(dict):
    """The evidence a rule may read; reading any other name is a bug in the claim's
    ``needs``/``optional`` (absent optional names read as absent, ``in`` is False)."""

    def __init__(self, data, claim_id):
        super().__init__(data)
        self.claim_id = claim_id

    def __missing__(self, key):
        raise KeyError(f"{self.claim_id}'s rule reads {str(key)!r}, which is neither available nor "
                       f"among the claim's needs and optional evidence")


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


def _interval(ev, e: Evidence):
    return ev[e], ev[e.lo], ev[e.hi]


def _iv(ev, e: Evidence) -> str:
    v, lo, hi = _interval(ev, e)
    return f"{_g(v)} [{_g(lo)}, {_g(hi)}]"


#: margin of "agrees with the theorem" for an exponent of omega_k^2: within 0.1 of the
#: range- and convention-matched reference. The exponent's scale is the theorem's -1, so 0.1
#: is a tenth of it; it is also about the spread of the exact curve's fitted exponent when the
#: fit start moves from k = 2 to k = 4 (Chapter 6), so a smaller margin would test the fit
#: range, not the law. Fixed before any measurement; the one
#: margin of every exponent equivalence in the book (chapters import it from here).
EXP_MARGIN = 0.1


def _equivalent(lo, hi, ref, margin=EXP_MARGIN) -> bool:
    """An interval wholly within ``margin`` of ``ref`` (stats.within_margin)."""
    return stats.within_margin(lo, hi, ref, margin)


def _departs(lo, hi, ref, margin=EXP_MARGIN) -> bool:
    """An interval wholly outside ``margin`` of ``ref``: significantly not equivalent."""
    return stats.outside_margin(lo, hi, ref, margin)


def _tost(ev, e: Evidence, ref, alpha, df: Evidence, margin=EXP_MARGIN, widen: float = 0.0) -> tuple[bool, bool, str]:
    """Two one-sided t tests of ``ev[e]`` (with its ``_se`` and ``df`` degrees of freedom)
    against ``ref`` at level ``alpha``, the interval widened on each side by ``widen`` (a shift
    the standard error does not cover, such as the fit start's): (equivalent within
    ``margin``, outside ``margin`` significantly, text).

    The library's one TOST is ``stats.inference.within_margin`` / ``outside_margin`` on an
    interval; this helper says the same in the arithmetic the registered rules were declared
    with (its code is in their fingerprints, so it stays as declared), and
    ``tests/test_ledger.py`` checks by property that it decides exactly as they do."""
    from ..stats.inference import t_quantile
    m, se = ev[e], ev[e.se]
    t = t_quantile(1 - alpha, ev[df])
    d = abs(m - ref)
    w = abs(widen)
    return (d + t * se + w <= margin, d - t * se - w > margin,
            f"{_g(m)} (se {_g(se)}{f', +/- {_g(w)} fit start' if w else ''}) against {_g(ref)}")


#: Chapter 9's two Pre-LN families, by evidence key
PRE_LN_FAMILIES = ("smollm2", "qwen")


def _widening(ev, model: str) -> tuple[float, str]:
    """The quantisation bound plus the model's fit-range sensitivity: both exponent shifts
    that the bootstrap over sequences does not cover (Chapter 9)."""
    q, f = abs(ev[E.QUANT_SHIFT]), abs(ev[E.FITRANGE_SHIFT[model]])
    return q + f, f"+/- {_g(q)} quantisation, +/- {_g(f)} fit range"


def _family_reading(ev, m: str) -> tuple[bool, bool, bool, str]:
    """A Pre-LN family's exponent against its matched reference, widened by
    :func:`_widening`: (equivalent, departs, bent, text)."""
    e = E.PRETRAINED_EXP[m]
    _, lo, hi = _interval(ev, e)
    ref = ev[E.PRETRAINED_REF[m]]
    w, wtext = _widening(ev, m)
    _, dlo, dhi = _interval(ev, E.PRETRAINED_DRIFT[m])
    bent = dlo > 0 or dhi < 0
    return (_equivalent(lo - w, hi + w, ref), _departs(lo - w, hi + w, ref), bent,
            f"{m} {_iv(ev, e)} ({wtext}) against {_g(ref)}{', bent' if bent else ''}")


# --------------------------------------------------------------------------------------
# the rules, one per claim
# --------------------------------------------------------------------------------------

def rule_omega_formula(ev) -> Verdict:
    """Theorem 3.3. ``does not hold`` if SymPy's residual of the closed form is not 0
    (|residual| > ROUNDING) or the Monte Carlo at d = 4096 departs (max z > z_crit);
    ``holds`` if even at d = 16 the raw formula agrees (max z <= z_crit); ``holds with
    correction`` if at d = 16 only the formula with its 1/d correction agrees; else
    ``does not hold``."""
    z = ev[E.THM33_Z_CRIT]
    if abs(ev[E.THM33_SYMBOLIC_RESIDUAL]) > ROUNDING:
        return Verdict("does not hold", f"SymPy residual of the closed form {_g(ev[E.THM33_SYMBOLIC_RESIDUAL])} != 0")
    if ev[E.THM33_MAXZ_LARGE_D] > z:
        return Verdict("does not hold", f"Monte Carlo at d=4096 departs: max z {_g(ev[E.THM33_MAXZ_LARGE_D])} > {_g(z)}")
    head = f"proved in SymPy; d=4096 max z {_g(ev[E.THM33_MAXZ_LARGE_D])} <= {_g(z)}"
    raw, cor = ev[E.THM33_MAXZ_RAW_SMALL_D], ev[E.THM33_MAXZ_CORRECTED_SMALL_D]
    if raw <= z:
        return Verdict("holds", f"{head}; d=16 raw max z {_g(raw)} <= {_g(z)}")
    bias = f" (relative bias {_g(ev[E.THM33_REL_BIAS_D16])})" if E.THM33_REL_BIAS_D16 in ev else ""
    if cor <= z:
        return Verdict("holds with correction",
                       f"{head}; at d=16 the raw formula departs{bias} (max z {_g(raw)}), the 1/d-corrected one does not (max z {_g(cor)})")
    return Verdict("does not hold", f"{head}; at d=16 even the 1/d-corrected formula departs: max z {_g(cor)} > {_g(z)}")


def rule_mean_abs(ev) -> Verdict:
    """Corollary 3.4. ``holds`` if lim sqrt(k) w_k = 1 (within ROUNDING), the remainder
    constant C of |w_k - k^-1/2| <= C k^-3/2 is finite and positive, and the Monte Carlo of
    E|.| agrees (max z <= z_crit); ``does not hold`` otherwise."""
    lim, C = ev[E.COR34_SQRTK_LIMIT], ev[E.COR34_REMAINDER_C]
    z, zc = ev[E.COR34_MAXZ], ev[E.COR34_Z_CRIT]
    if abs(lim - 1) > ROUNDING:
        return Verdict("does not hold", f"lim sqrt(k) w_k = {_g(lim)}, not 1")
    if not (0 < C < math.inf):
        return Verdict("does not hold", f"no finite remainder constant (C = {_g(C)})")
    if z > zc:
        return Verdict("does not hold", f"Monte Carlo of E|.| departs: max z {_g(z)} > {_g(zc)}")
    return Verdict("holds", f"lim sqrt(k) w_k = 1, |w_k - k^-1/2| <= {_g(C)} k^-3/2; Monte Carlo max z {_g(z)} <= {_g(zc)}")


def rule_output(ev) -> Verdict:
    """Corollary 3.5. ``does not hold`` if the Gaussian-model Monte Carlo departs (max z >
    z_crit) or the constant is not finite and positive. Otherwise, when the random Pre-LN
    transformer of Chapter 6 is in the book, its fitted exponent of the mean square output
    change is read against the corollary's exponent over the same range of N (the fit of the
    exact curve, ``ev_cor35_random_exp_theory``; -1, the large-N value, where that is not
    glued) with :data:`EXP_MARGIN`: ``holds`` if the interval is equivalent (wholly within the
    margin), ``holds with correction`` if it departs (wholly outside: the network decays at
    another rate), ``open`` if it straddles a margin end (the data cannot tell). Without the
    random transformer, ``holds`` on the Gaussian model alone."""
    z, zc, const = ev[E.COR35_MAXZ], ev[E.COR35_Z_CRIT], ev[E.COR35_CONST]
    if not (0 < const < math.inf):
        return Verdict("does not hold", f"constant of the O(1/sqrt N) rate is {_g(const)}")
    if z > zc:
        return Verdict("does not hold", f"Monte Carlo departs: max z {_g(z)} > {_g(zc)}")
    head = f"Gaussian model: constant {_g(const)}, max z {_g(z)} <= {_g(zc)}"
    if all(k in ev for k in E.COR35_RANDOM_EXP.keys()):
        ref = ev[E.COR35_RANDOM_EXP_THEORY] if E.COR35_RANDOM_EXP_THEORY in ev else -1.0
        _, lo, hi = _interval(ev, E.COR35_RANDOM_EXP)
        random = (f"a random Pre-LN transformer's exponent {_iv(ev, E.COR35_RANDOM_EXP)} against the "
                  f"corollary's {_g(ref)}, margin {EXP_MARGIN}")
        if _equivalent(lo, hi, ref):
            return Verdict("holds", f"{head}; {random}: equivalent")
        if _departs(lo, hi, ref):
            return Verdict("holds with correction", f"{head}; {random}: departs")
        return Verdict("open", f"{head}; the data cannot tell: {random}")
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
    exact = {"formula at k=1": ev[E.FIFTH_RATIO_SEED], "w_24/w_2": ev[E.FIFTH_RATIO_SEED_K2],
             "embedding-counted w_24/w_1": ev[E.FIFTH_RATIO_EMBEDDING]}
    listed = "; ".join(f"{k} {_g(v)}" + (f" (1/{1 / v:.2g})" if v > 0 else "") for k, v in exact.items())
    if any(_fifth(v) for v in exact.values()):
        return Verdict("holds", "in the theorem's model: " + listed)
    approx = {"1/sqrt(24)": ev[E.FIFTH_RATIO_APPROX]}
    if E.FIFTH_RATIO_SEED_LN0 in ev:
        approx["real LayerNorm with LN(0)=0"] = ev[E.FIFTH_RATIO_SEED_LN0]
    fifths = [f"{k} = {_g(v)}" for k, v in approx.items() if _fifth(v)]
    if fifths and all(0.1 <= v <= 0.4 for v in exact.values()):
        return Verdict("holds with correction",
                       f"only {' and '.join(fifths)} give a fifth; in the theorem's model: {listed}")
    return Verdict("does not hold", f"no reading gives about 1/5: {listed}; 1/sqrt(24) = {_g(approx['1/sqrt(24)'])}")


#: claim-independence's boundary: the correlations "do the work" when they carry more than half
#: of the exponent's shift, i.e. more than the unequal variances do (the only other departure)
SPLIT_BOUNDARY = 0.5


def rule_independence(ev) -> Verdict:
    """'The independence assumption is doing the work ... the correlation most likely to change
    the exponent.' Needs Chapter 5's generalisations verified (heteroscedastic and (r, c)
    Monte Carlo max z <= their z_crit; else ``open``). On trained Pre-LN at L = 24 (Chapter 7),
    in exponents, in the convention rho chooses: if the theorem's exponent is already within
    :data:`EXP_MARGIN` of the measured one, ``does not hold`` (nothing for the correlations to
    do); if the exact (r, c) prediction is not nearer the measured exponent than the theorem,
    ``open`` (the Gram does not explain the shift it would split). Otherwise the share of the
    shift that the correlations carry, split symmetrically between them and the unequal
    variances (``results.exponent_split``, 95 % t interval over seeds), decides against
    :data:`SPLIT_BOUNDARY`: wholly above, ``holds``; wholly below, ``does not hold`` (the
    variance profile, which keeps independence, moves the exponent); else ``open``."""
    for name, maxz, crit in (("hetero", E.HETERO_MAXZ, E.HETERO_Z_CRIT), ("rc", E.RC_MAXZ, E.RC_Z_CRIT)):
        if ev[maxz] > ev[crit]:
            return Verdict("open", f"Chapter 5's {name} model is not verified: max z {_g(ev[maxz])} > {_g(ev[crit])}")
    t, m, f = ev[E.SPLIT_EXP_THEOREM], ev[E.SPLIT_EXP_MEASURED], ev[E.SPLIT_EXP_FULL]
    tail = (f"exponents: theorem {_g(t)}, measured variances {_g(ev[E.SPLIT_EXP_HETERO])}, measured correlations "
            f"{_g(ev[E.SPLIT_EXP_CORR])}, both {_g(f)}, measured {_g(m)}; the correlations' share of the shift "
            f"{_iv(ev, E.SPLIT_CORR_SHARE)}")
    if abs(m - t) <= EXP_MARGIN:
        return Verdict("does not hold", "the independent theorem already gives the trained exponent: " + tail)
    if not abs(f - m) < abs(t - m):
        return Verdict("open", "the Gram matrix does not explain the measured exponent: " + tail)
    _, lo, hi = _interval(ev, E.SPLIT_CORR_SHARE)
    if lo > SPLIT_BOUNDARY:
        return Verdict("holds", "the correlations move the exponent more than the variances: " + tail)
    if hi < SPLIT_BOUNDARY:
        return Verdict("does not hold", "the unequal variances, not the correlations, move the exponent: " + tail)
    return Verdict("open", "the data cannot tell which moves the exponent more: " + tail)


def rule_init_vs_training(ev) -> Verdict:
    """'It describes initialisation better than training.' On the same Pre-LN runs
    (Chapter 7), each exponent against the theorem's exponent over its own range and
    convention (``ev_init_ref_pre_ln``, ``ev_trained_ref_pre_ln``), by TOST with margin
    :data:`EXP_MARGIN` at alpha 0.05 / 2 (two tests, Bonferroni), each interval widened by its
    fit-start shift (the largest move for k_min = 3, 4). ``holds`` if the at-init
    exponent is equivalent and the trained one significantly outside the margin;
    ``does not hold`` if the trained one is equivalent too (the theory describes both), or
    the trained one is nearer its reference than the at-init one; ``holds with
    correction`` if neither is equivalent but the trained one is significantly outside and
    farther; else ``open`` (the data cannot tell). Before any of this, the runs must be
    trained: a deep Pre-LN run (depth >= 8) that does not beat the trigram baseline makes
    the verdict ``open``, whatever the exponents say."""
    a = 0.05 / 2
    init, trained = E.INIT_EXP_TRAINEDRUNS_PRE_LN, E.TRAINED_EXP_PRE_LN
    i_eq, i_out, itxt = _tost(ev, init, ev[E.INIT_REF_PRE_LN], a, E.EXP_T_DF, widen=ev[E.INIT_FITSTART_SHIFT_PRE_LN])
    t_eq, t_out, ttxt = _tost(ev, trained, ev[E.TRAINED_REF_PRE_LN], a, E.EXP_T_DF,
                              widen=ev[E.TRAINED_FITSTART_SHIFT_PRE_LN])
    line = f"margin {EXP_MARGIN}; at init {itxt}; trained {ttxt}"
    worst, tri = ev[E.PRE_LN_WORST_LOSS_DEEP], ev[E.TRIGRAM_LOSS]
    if not worst < tri:   # a snapshot of early training says nothing about trained networks
        return Verdict("open", f"the runs are not trained: a deep Pre-LN run ends at {_g(worst)} "
                               f"nats/char, not below the trigram's {_g(tri)}: " + line)
    line += f"; every deep Pre-LN run below the trigram ({_g(worst)} < {_g(tri)} nats/char)"
    di = abs(ev[init] - ev[E.INIT_REF_PRE_LN])
    dt = abs(ev[trained] - ev[E.TRAINED_REF_PRE_LN])
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
    """'A model could in principle learn to compensate by scaling later blocks' outputs up.' A
    claim of possibility: one trained model that does it is enough. One reading per family,
    the same statistic in each: the slope of log s_k^2 (block k's output variance) on log k
    over the blocks past the front and before the last, k = 4..L-1 (``front.FRONT_BLOCKS``;
    the last block apart, as it jumps), for the toy Pre-LN runs at L = 24 (Chapter 7, t interval
    over seeds) and the two real Pre-LN families (Chapter 9, bootstrap over sequences), each at
    1 - 0.05/3 (one family of three). ``holds`` if some interval lies wholly above 0 (later
    blocks' outputs are scaled up); ``does not hold`` if every interval lies wholly below
    :data:`EXP_MARGIN` (no family scales them up by more than the book's exponent margin);
    ``open`` otherwise."""
    readings = {"toy Pre-LN": E.VAR_EXP_TOY, **{m: E.VAR_EXP[m] for m in PRE_LN_FAMILIES}}
    line = "slope of log s_k^2 on log k, k = 4..L-1: " + "; ".join(f"{n} {_iv(ev, e)}" for n, e in readings.items())
    up = [n for n, e in readings.items() if ev[e.lo] > 0]
    if up:
        return Verdict("holds", f"later blocks' outputs are scaled up in {', '.join(up)}: " + line)
    if all(ev[e.hi] < EXP_MARGIN for e in readings.values()):
        return Verdict("does not hold", "no family scales later blocks' outputs up: " + line)
    return Verdict("open", "the data cannot tell: " + line)


def _half_verdict(ratios: dict, refs: dict, what: str) -> Verdict:
    """The idle-block contrast read for one or more models: ``ratios`` {name: (value, lo, hi)},
    ``refs`` {name: the theorem's ratio}. ``holds`` if every interval lies wholly below its
    theorem ratio; ``holds with correction`` if every one lies wholly below 1 but not all below
    the theorem's; ``does not hold`` if some interval lies wholly above 1; else ``open``."""
    line = f"{what}: " + "; ".join(f"{n} {_g(v)} [{_g(lo)}, {_g(hi)}] (theorem {_g(refs[n])})"
                                    for n, (v, lo, hi) in ratios.items())
    if all(hi < refs[n] for n, (_, _, hi) in ratios.items()):
        return Verdict("holds", "later blocks' share vanishes at least at the theorem's rate: " + line)
    if all(hi < 1 for _, _, hi in ratios.values()):
        return Verdict("holds with correction", "later blocks cost less, but not at the theorem's rate: " + line)
    if any(lo > 1 for _, lo, _ in ratios.values()):
        return Verdict("does not hold", "the later half costs more than the earlier: " + line)
    return Verdict("open", "the data cannot tell (an interval contains 1): " + line)


def rule_idle_blocks(ev) -> Verdict:
    """'Later blocks' contributions a vanishing share.' The loss increase from removing each
    block of trained Pre-LN at L = 24 (Chapter 8, every run): the mean over the later half,
    blocks 13..24 (the last included), over the mean over the earlier half past the front,
    blocks 4..12 (``results.half_ratio``), a 95 % t interval over seeds of its logarithm. The
    theorem's own ratio for omega_k^2 over the same blocks, in the runs' convention, is what
    "vanishing" means at the card's rate. Read by :func:`_half_verdict`."""
    return _half_verdict({"toy Pre-LN": _interval(ev, E.HALF_RATIO_TOY)},
                         {"toy Pre-LN": ev[E.HALF_RATIO_REF_TOY]},
                         "removal cost of blocks 13..24 over blocks 4..12")


#: "depth stops paying": a gain per doubling of depth smaller than this (nats/char) is
#: negligible: it is under the seed-to-seed spread of one run's final loss (about 0.01-0.02
#: nats/char, Chapter 7), so no single comparison of two depths could see it
DEPTH_SLOPE_MARGIN = 0.01
#: Chapter 7 names a placement more than this many nats/char behind Pre-LN at the same depth as
#: not comparably trained (a report, read by no rule)
TRAINED_GAP = 0.15
#: the fixes Chapter 8 compares with Pre-LN at equal depth
GAP_FIXES = ("peri_ln", "resi_dual", "ln_scaling")


def rule_depth_cost(ev) -> Verdict:
    """'Deep blocks cannot refine the representation; the depth at which it starts to cost
    accuracy is not answered' (Chapter 8). One family of four tests, each at 1 - 0.05/4.
    Primary: the slope of the final validation loss on log2 depth over every Pre-LN run at
    depths >= 8 trained at the ladder's rate (0.006; rungs at another rate do not enter), in
    nats/char per doubling. Its interval wholly below -:data:`DEPTH_SLOPE_MARGIN`: depth keeps
    paying up to the deepest rung, so deep blocks do refine: ``does not hold``. Wholly above
    -DEPTH_SLOPE_MARGIN: depth has stopped paying; then the fixes, each at its own pilot-chosen
    rate, against Pre-LN at equal depths >= 8 (every run, per seed the mean gap over the
    depths both have): ``holds`` if some fix's gap lies wholly below 0 (the cost is the
    placement's), ``holds with correction`` if none does. Otherwise ``open``."""
    slope, lo, hi = _interval(ev, E.DEPTH_SLOPE_PRE_LN)
    gaps = "; ".join(f"{a} {_iv(ev, E.VAL_LOSS_GAP[a])}" for a in GAP_FIXES)
    line = (f"loss slope per doubling of depth {_iv(ev, E.DEPTH_SLOPE_PRE_LN)} (df {_g(ev[E.DEPTH_SLOPE_DF])}), "
            f"margin {DEPTH_SLOPE_MARGIN}; fix minus Pre-LN at equal depths: {gaps}")
    if hi < -DEPTH_SLOPE_MARGIN:
        return Verdict("does not hold", "depth keeps paying up to the deepest rung: " + line)
    if lo > -DEPTH_SLOPE_MARGIN:
        if any(ev[E.VAL_LOSS_GAP[a].hi] < 0 for a in GAP_FIXES):
            return Verdict("holds", "depth has stopped paying, and a fix does better at equal depth: " + line)
        return Verdict("holds with correction", "depth has stopped paying, but no fix does better: " + line)
    return Verdict("open", "the data cannot tell whether depth still pays: " + line)


FIXES = ("peri_ln", "resi_dual")          # the card's "rearrangements": Peri-LN and ResiDual
OTHER_FIXES = ("ln_scaling", "deepnorm", "mix_ln")


def rule_fixes(ev) -> Verdict:
    """'The fixes are rearrangements that escape the decay.' At initialisation (Chapter 6) a
    placement escapes when its exponent interval lies wholly above Pre-LN's. ``holds`` if
    both rearrangements (Peri-LN, ResiDual) escape; ``holds with correction`` if one does;
    ``does not hold`` if neither. Other fixes (LN-Scaling, DeepNorm, Mix-LN) are reported
    when glued."""
    _, _, pre_hi = _interval(ev, E.INIT_EXP["pre_ln"])
    escapes = {a: ev[E.INIT_EXP[a].lo] > pre_hi for a in FIXES}
    parts = [f"Pre-LN {_iv(ev, E.INIT_EXP['pre_ln'])}"]
    for a in FIXES + OTHER_FIXES:
        if all(k in ev for k in E.INIT_EXP[a].keys()):
            esc = ev[E.INIT_EXP[a].lo] > pre_hi
            parts.append(f"{a} {_iv(ev, E.INIT_EXP[a])}{' escapes' if esc else ''}")
    line = "; ".join(parts)
    n = sum(escapes.values())
    return Verdict(("does not hold", "holds with correction", "holds")[n], line)


def rule_gradients(ev) -> Verdict:
    """'Pre-LN gradients reach the early blocks undamped, and the gradient problem Post-LN
    has does not arise' (Chapter 6: the ratio of the gradient norm of the first block's
    parameters to the last block's, at initialisation, with its t interval over seeds,
    97.5 % each: Bonferroni over the two placements). A placement *damps* the gradient when
    the interval lies wholly below 1 (the first block gets significantly less than the
    last); it is *undamped* when the interval lies wholly at or above 1. ``holds`` if Pre-LN
    is undamped and Post-LN damped; ``holds with correction`` if Pre-LN is undamped and
    Post-LN is not damped (the contrast the card draws does not appear); ``does not hold``
    if Pre-LN is damped; ``open`` if Pre-LN's interval contains 1 (the data cannot tell).
    No threshold but 1, the ratio of no damping."""
    pre, post = E.GRAD_RATIO["pre_ln"], E.GRAD_RATIO["post_ln"]
    line = f"first/last block gradient norm: Pre-LN {_iv(ev, pre)}, Post-LN {_iv(ev, post)}"
    if ev[pre.hi] < 1:
        return Verdict("does not hold", "Pre-LN damps the gradient toward the first block: " + line)
    if ev[pre.lo] < 1:
        return Verdict("open", "the data cannot tell whether Pre-LN damps the gradient: " + line)
    if ev[post.hi] < 1:
        return Verdict("holds", line)
    # wholly above 1 is worth naming: the early blocks get *more* gradient, not the same
    pre_word = "amplified toward the first block" if ev[pre.lo] > 1 else "undamped"
    return Verdict("holds with correction",
                   f"Pre-LN is {pre_word}, but Post-LN is not damped here either: " + line)


def rule_pretrained(ev) -> Verdict:
    """Real pretrained models (Chapter 9). The Pre-LN model (SmolLM2) is the test: its
    exponent interval, widened by :func:`_widening`, against the theorem's exponent over the
    same range and convention (``ev_pretrained_ref_smollm2``) with :data:`EXP_MARGIN`.
    ``holds`` if it is equivalent (wholly within the margin) and the curve is not bent;
    ``holds with correction`` if it is not equivalent but the whole widened interval is
    below 0 (the change decays, at another rate); ``does not hold`` if the change is not
    shown to decay (the widened interval reaches 0). Gemma-3 (sandwich) and MiniLM
    (Post-LN) are reported beside it."""
    eq, _, bent, text = _family_reading(ev, "smollm2")
    _, _, hi = _interval(ev, E.PRETRAINED_EXP["smollm2"])
    w, _ = _widening(ev, "smollm2")
    line = (f"margin {EXP_MARGIN}; {text}; Gemma-3 {_iv(ev, E.PRETRAINED_EXP['gemma3'])}, "
            f"MiniLM {_iv(ev, E.PRETRAINED_EXP['minilm'])}")
    if eq and not bent:
        return Verdict("holds", line)
    if hi + w < 0:
        return Verdict("holds with correction", "the Pre-LN model decays at another rate: " + line)
    return Verdict("does not hold", "the Pre-LN model's change is not shown to decay: " + line)


def rule_promote(ev) -> Verdict:
    """promote_when: the cheap measurement nobody published -- the per-layer change of
    trained Pre-LN networks -- settles it. ``holds`` (promote) if the trained Pre-LN
    exponent is equivalent to its range- and convention-matched reference (Chapter 7, TOST
    with margin :data:`EXP_MARGIN`, alpha 0.05 / 2, widened by its fit-start shift) and SmolLM2's widened interval is
    equivalent to its matched reference (Chapter 9, as in :func:`rule_pretrained`);
    ``holds with correction`` (promote with the measured rate) if both decay (upper ends
    < 0) but not both at the predicted rate; ``does not hold`` (do not promote) if either
    does not decay."""
    s_eq, _, bent, stext = _family_reading(ev, "smollm2")
    w, _ = _widening(ev, "smollm2")
    _, tlo, thi = _interval(ev, E.TRAINED_EXP_PRE_LN)
    _, plo, phi = _interval(ev, E.PRETRAINED_EXP["smollm2"])
    t_eq, _, ttxt = _tost(ev, E.TRAINED_EXP_PRE_LN, ev[E.TRAINED_REF_PRE_LN], 0.05 / 2, E.EXP_T_DF,
                          widen=ev[E.TRAINED_FITSTART_SHIFT_PRE_LN])
    line = f"margin {EXP_MARGIN}; trained Pre-LN {ttxt} (TOST); SmolLM2 {stext}"
    if t_eq and s_eq and not bent:
        return Verdict("holds", "promote: " + line)
    if thi < 0 and phi + w < 0:
        return Verdict("holds with correction", "promote with the measured rate: " + line)
    return Verdict("does not hold", "do not promote: " + line)


def rule_two_families(ev) -> Verdict:
    """'The Pre-LN law holds in trained Pre-LN models', read in two families (SmolLM2 and
    Qwen2.5, Chapter 9). Per model: the exponent's bootstrap interval (Bonferroni over the two
    models: 97.5 % each), widened by :func:`_widening`, against the theorem's exponent over
    the same range and convention. ``holds`` if both widened intervals lie within
    :data:`EXP_MARGIN` of their references and neither curve is bent (the curvature test's
    drift interval, ``ev_pretrained_drift_<model>``, excludes 0 for a bent curve); ``does not
    hold`` if either widened interval lies wholly outside its margin (an equivalence that
    fails significantly); ``open`` otherwise, the data cannot tell."""
    readings = [_family_reading(ev, m) for m in PRE_LN_FAMILIES]
    line = f"margin {EXP_MARGIN}; " + "; ".join(r[3] for r in readings)
    if all(eq and not bent for eq, _, bent, _ in readings):
        return Verdict("holds", line)
    if any(dep for _, dep, _, _ in readings):
        return Verdict("does not hold", "a trained Pre-LN family departs beyond the margin: " + line)
    return Verdict("open", "the data cannot tell: " + line)


def rule_pretrained_idle(ev) -> Verdict:
    """'Later blocks' contributions a vanishing share', in real Pre-LN models (Chapter 9): per
    family the mean cost of skipping each block of the later half, blocks L/2+1..L (the last
    included: pretrained models jump there), over that of the earlier half past the front,
    blocks 4..L/2 (percentile bootstrap over sequences, 97.5 % each: one family of two), read
    by :func:`_half_verdict` against the theorem's ratio for the same blocks in the model's
    convention."""
    return _half_verdict({m: _interval(ev, E.HALF_RATIO[m]) for m in PRE_LN_FAMILIES},
                         {m: ev[E.HALF_RATIO_REF[m]] for m in PRE_LN_FAMILIES},
                         "skip cost of the later half over the earlier half past the front")


#: rankings the book's change is compared with (depthcost.RANKINGS without itself and without
#: ShortGPT's block influence, which is the change itself up to the stream's mean and eps:
#: 1 - cos(u, v) = |LN0(u) - LN0(v)|^2 / (2d) for centred u, v; Chapter 9 derives it)
COMPETITORS = ("angular", "relative", "deepest")
#: "as good as" for two rank correlations: within 0.1 (a tenth of the distance between a
#: perfect ranking and none), fixed before the measurement
RHO_MARGIN = 0.1


def rule_metric(ev) -> Verdict:
    """'The per-layer change, the theorem's quantity, tells which blocks can be skipped at
    least as well as the published redundancy metrics' (Chapter 9). Per Pre-LN family and
    competitor c, the paired bootstrap interval of rho(change) - rho(c) (rho: rank
    correlation of the score with the skip cost over blocks; Bonferroni over 2 models x 3
    competitors: block influence is not one, being the change up to the mean and eps terms)
    in ``ev_metric_diff_<c>_<model>``. ``holds`` if every difference interval
    lies above -:data:`RHO_MARGIN` and the change's own correlation
    (``ev_metric_rho_change_<model>``) lies above 0 in both; ``does not hold`` if some
    competitor is better beyond the margin (a difference interval wholly below
    -RHO_MARGIN); ``open`` otherwise."""
    parts, ok, worse = [], [], []
    for m in PRE_LN_FAMILIES:
        diffs = {c: _interval(ev, E.METRIC_DIFF[c, m]) for c in COMPETITORS}
        ok.append(ev[E.METRIC_RHO_CHANGE[m].lo] > 0 and all(lo > -RHO_MARGIN for _, lo, _ in diffs.values()))
        worse += [f"{c} in {m}" for c, (_, _, hi) in diffs.items() if hi < -RHO_MARGIN]
        parts.append(f"{m}: change {_iv(ev, E.METRIC_RHO_CHANGE[m])}, minus "
                     + ", ".join(f"{c} {_iv(ev, E.METRIC_DIFF[c, m])}" for c in COMPETITORS))
    line = f"margin {RHO_MARGIN}; " + "; ".join(parts)
    if worse:
        return Verdict("does not hold", f"better than the change: {', '.join(worse)}: " + line)
    if all(ok):
        return Verdict("holds", line)
    return Verdict("open", "the data cannot tell: " + line)


def rule_front(ev) -> Verdict:
    """'Whether training reduces, preserves or amplifies the decay is open', past depth 24
    (Chapter 7b; issue 23; this rule and the predictions were committed before any deep run).
    Two predictions from the depth-24 runs (``results/predictions/front.json``): the front
    model (independent blocks past a measured front: the decay resumes, offset) and the level
    model (later blocks keep writing the bulk's share of the stream: the change levels off).
    Primary statistic: each deep run's local slope of log omega_k^2 on log k over k in
    [L/2, L], placed between its depth's two predicted slopes, u = (slope - midpoint) / half
    the separation (u = -1: the front's prediction, u = +1: the level's); the mean of u over
    the deep runs (L = 48 and 96) with its t interval. One family of two tests, each at
    0.05 / 2: (1) the side of 0; (2) whether the interval meets the front model's own
    interval around -1 (half-width ``ev_front_pred_width``). ``holds`` (the decay resumes past
    the front, at the front model's rate): the interval wholly below 0 and meeting
    [-1 - w, -1 + w]; ``holds with correction`` (it resumes, at another rate): wholly below 0,
    not meeting it; ``does not hold`` (the change levels off): wholly above 0; ``open``:
    the interval contains 0 (or fewer than three deep runs: NaN, the data cannot tell)."""
    _, lo, hi = _interval(ev, E.FRONT_POSITION)
    w = ev[E.FRONT_PRED_WIDTH]
    line = (f"position between the predictions (-1 front, +1 level) over {int(ev[E.FRONT_N_RUNS])} deep runs "
            f"{_iv(ev, E.FRONT_POSITION)} (97.5 %); the front model's own interval -1 +/- {_g(w)}")
    if hi < 0:
        if lo <= -1 + w and hi >= -1 - w:
            return Verdict("holds", "the decay resumes past the front, at the front model's rate: " + line)
        return Verdict("holds with correction", "the decay resumes past the front, at another rate: " + line)
    if lo > 0:
        return Verdict("does not hold", "the change levels off past the front: " + line)
    return Verdict("open", "the data cannot tell (the interval contains 0): " + line)


_FAMILY_READING = tuple(x for m in PRE_LN_FAMILIES
                        for x in (E.PRETRAINED_EXP[m], E.PRETRAINED_REF[m], E.FITRANGE_SHIFT[m],
                                  E.PRETRAINED_DRIFT[m])) + (E.QUANT_SHIFT,)
_SMOLLM2_READING = (E.PRETRAINED_EXP["smollm2"], E.PRETRAINED_REF["smollm2"], E.FITRANGE_SHIFT["smollm2"],
                    E.PRETRAINED_DRIFT["smollm2"], E.QUANT_SHIFT)

_TWO = "one family of two (Bonferroni, 0.05 / 2 each)"

CLAIMS: list[Claim] = [
    Claim("claim-omega-formula", "Theorem 3.3: the variance of the change",
          r"If the block outputs are independent, $x^f_k \sim N(0, \sigma^2 I)$, then "
          r"$\mathrm{LN}(x^a_{k+1}) - \mathrm{LN}(x^a_k) \sim N(0, \omega_k^2 I)$ with "
          r"$\omega_k^2 = 2 / (\sqrt{k}\,(\sqrt{k-1} + \sqrt{k}))$.",
          (("chapters/02_theorem", "thm-omega"),),
          (E.THM33_SYMBOLIC_RESIDUAL, E.THM33_Z_CRIT, E.THM33_MAXZ_LARGE_D, E.THM33_MAXZ_RAW_SMALL_D,
           E.THM33_MAXZ_CORRECTED_SMALL_D), rule_omega_formula, optional=(E.THM33_REL_BIAS_D16,),
          card="Theorem 3.3 gives ω_k² under the independence assumption",
          primary="SymPy's residual of the closed form; the largest |z| of the Monte Carlo over k at d = 4096 and d = 16",
          margin="a z statistic beyond the Bonferroni critical value over the chapter's grid (alpha 0.01)",
          family="Chapter 2's Monte Carlo grid, Bonferroni over k",
          deciding=(E.THM33_MAXZ_RAW_SMALL_D, E.THM33_MAXZ_CORRECTED_SMALL_D)),
    Claim("claim-mean-abs-rate", "Corollary 3.4: O(1/√k) per coordinate",
          r"Per coordinate, $E|\mathrm{LN}(x^a_{k+1}) - \mathrm{LN}(x^a_k)| = O(1/\sqrt{k})$.",
          (("chapters/03_corollary_34", "cor-mean-abs"),),
          (E.COR34_SQRTK_LIMIT, E.COR34_REMAINDER_C, E.COR34_MAXZ, E.COR34_Z_CRIT), rule_mean_abs,
          card="per coordinate E[|·|] ~ O(1/√k)",
          primary="lim sqrt(k) w_k (SymPy), the remainder constant, the Monte Carlo's largest |z|",
          margin="ROUNDING for exact values; the Bonferroni critical z (alpha 0.01)",
          family="Chapter 3's Monte Carlo grid, Bonferroni over k",
          deciding=(E.COR34_SQRTK_LIMIT, E.COR34_MAXZ)),
    Claim("claim-output-rate", "Corollary 3.5: O(1/√N) at the output",
          r"Adding a block to an $N-1$ block model changes the normalised output by $O(1/\sqrt{N})$.",
          (("chapters/04_corollary_35", "cor-output"), ("chapters/06_initialisation", "")),
          (E.COR35_CONST, E.COR35_MAXZ, E.COR35_Z_CRIT), rule_output,
          optional=(E.COR35_RANDOM_EXP, E.COR35_RANDOM_EXP_THEORY),
          card="The same argument at the output gives O(1/√N) for the effect of adding a block to an N−1 block model.",
          primary="the random Pre-LN transformer's exponent of the output change against the exact curve's, N = 4..48",
          margin="EXP_MARGIN = 0.1 (the book's one exponent margin: a tenth of the theorem's -1)",
          family="Chapter 6's family of 23 claims",
          deciding=(E.COR35_RANDOM_EXP,)),
    Claim("claim-fifth-at-24", "About a fifth at k = 24",
          "At $k = 24$ the per-layer change is about a fifth of its value at $k = 1$, not a thousandth.",
          (("chapters/03_corollary_34", "tbl-fifth"),),
          (E.FIFTH_RATIO_SEED, E.FIFTH_RATIO_SEED_K2, E.FIFTH_RATIO_EMBEDDING, E.FIFTH_RATIO_APPROX),
          rule_fifth, optional=(E.FIFTH_RATIO_SEED_LN0,),
          card="At k = 24 the per-layer change is about a fifth of its value at k = 1, not a thousandth.",
          primary="the exact ratios omega_24 / omega_1 in each convention",
          margin="'about a fifth': 1/5 is the nearest unit fraction (4.5 < 1/ratio < 5.5)",
          family="exact values: no test",
          deciding=(E.FIFTH_RATIO_SEED_K2, E.FIFTH_RATIO_APPROX)),
    Claim("claim-independence", "The independence assumption does the work",
          "The independence assumption is doing the work: in a trained network block outputs are "
          "neither Gaussian nor independent, and that correlation is what most likely changes the exponent.",
          (("chapters/05_beyond_independence", "tbl-departures"), ("chapters/07_training", "fig-trained-predictions")),
          (E.HETERO_MAXZ, E.HETERO_Z_CRIT, E.RC_MAXZ, E.RC_Z_CRIT, E.SPLIT_CORR_SHARE, E.SPLIT_EXP_THEOREM,
           E.SPLIT_EXP_HETERO, E.SPLIT_EXP_CORR, E.SPLIT_EXP_FULL, E.SPLIT_EXP_MEASURED),
          rule_independence,
          card="later blocks read the stream the earlier ones wrote, which is the correlation most likely to change the exponent.",
          primary="the correlations' share of the exponent shift from the theorem's curve to the exact (r, c) "
                  "prediction, symmetric (Shapley) split against the unequal variances, trained Pre-LN L = 24, "
                  "k = 2..L, rho's convention; 95 % t interval over seeds",
          margin="SPLIT_BOUNDARY = 1/2: 'most likely to change the exponent' means carrying more of the shift "
                 "than the one other departure, the unequal variances",
          family="one test",
          deciding=(E.SPLIT_CORR_SHARE,)),
    Claim("claim-init-not-training", "Initialisation better than training",
          "The theory describes a freshly initialised network better than a trained one.",
          (("chapters/07_training", "fig-exponent-training"), ("chapters/06_initialisation", "fig-init-curves")),
          (E.TRAINED_EXP_PRE_LN, E.TRAINED_REF_PRE_LN, E.TRAINED_FITSTART_SHIFT_PRE_LN, E.INIT_EXP_TRAINEDRUNS_PRE_LN,
           E.INIT_REF_PRE_LN, E.INIT_FITSTART_SHIFT_PRE_LN, E.EXP_T_DF, E.PRE_LN_WORST_LOSS_DEEP, E.TRIGRAM_LOSS),
          rule_init_vs_training,
          card="It describes initialisation better than training.",
          primary="the exponent of omega_k^2 over k = 2..24 of the same Pre-LN runs at step 0 and at the end, each "
                  "against the theorem's over the same range and convention, TOST widened by its fit-start shift",
          margin="EXP_MARGIN = 0.1",
          family=_TWO,
          deciding=(E.INIT_EXP_TRAINEDRUNS_PRE_LN, E.TRAINED_EXP_PRE_LN)),
    Claim("claim-compensation", "Training could compensate",
          "A model could learn to compensate by scaling later blocks' outputs up.",
          (("chapters/07_training", "fig-trained-predictions"), ("chapters/09_pretrained", "fig-pretrained-growth")),
          (E.VAR_EXP_TOY, *(E.VAR_EXP[m] for m in PRE_LN_FAMILIES)),
          rule_compensation,
          card="a model could in principle learn to compensate by scaling later blocks’ outputs up.",
          primary="the slope of log s_k^2 (block k's output variance) on log k over k = 4..L-1 (past the "
                  "three-block front, the last block apart), in toy Pre-LN L = 24, SmolLM2 and Qwen",
          margin="0 (scaled up) and EXP_MARGIN = 0.1 (not scaled up by more than the exponent margin)",
          family="one family of three readings (Bonferroni, 1 - 0.05/3 each)",
          deciding=(E.VAR_EXP_TOY, E.VAR_EXP['smollm2'], E.VAR_EXP['qwen'])),
    Claim("claim-idle-blocks", "Later blocks contribute a vanishing share",
          "Later Pre-LN blocks contribute a vanishing share of the stream, so deep blocks idle.",
          (("chapters/08_cost", "fig-ablation"),),
          (E.HALF_RATIO_TOY, E.HALF_RATIO_REF_TOY), rule_idle_blocks,
          card="it is the same thing that makes later blocks’ contributions a vanishing share of it",
          primary="the mean loss increase from removing blocks 13..24 over that of blocks 4..12, trained Pre-LN "
                  "L = 24, every run; 95 % t interval over seeds of its logarithm",
          margin="1 (later blocks cost less) and the theorem's own ratio of omega_k^2 over the same blocks "
                 "('vanishing' at the card's rate)",
          family="one test",
          deciding=(E.HALF_RATIO_TOY,)),
    Claim("claim-depth-cost", "The depth at which it costs accuracy",
          "Deep Pre-LN blocks cannot refine the representation; the depth at which this starts to cost "
          "accuracy is the practical question the card leaves open.",
          (("chapters/08_cost", "fig-depth"),),
          (E.DEPTH_SLOPE_PRE_LN, E.DEPTH_SLOPE_DF, *(E.VAL_LOSS_GAP[a] for a in GAP_FIXES)),
          rule_depth_cost,
          card="the practical question — the depth at which it starts to cost accuracy — is not answered here.",
          primary="the slope of the final validation loss on log2 depth over every Pre-LN run at depths >= 8 "
                  "at the ladder's rate; then each fix minus Pre-LN at equal depths >= 8, every run",
          margin="DEPTH_SLOPE_MARGIN = 0.01 nats/char per doubling: under the seed-to-seed spread of one "
                 "run's final loss",
          family="one family of four (the slope and three gaps; 1 - 0.05/4 each)",
          deciding=(E.DEPTH_SLOPE_PRE_LN,)),
    Claim("claim-fixes-escape", "The fixes are rearrangements that escape the decay",
          "The fixes in the literature are rearrangements, not removals (Peri-LN, this paper's two streams), "
          "and they escape the decay.",
          (("chapters/06_initialisation", "tbl-init-exponents"),),
          tuple(E.INIT_EXP[a] for a in ("pre_ln",) + FIXES), rule_fixes,
          optional=tuple(E.INIT_EXP[a] for a in OTHER_FIXES),
          card="the fixes in the literature are rearrangements rather than removals — sandwich and "
               "peri-layernorm placements, and this paper’s own two streams",
          primary="each placement's exponent at initialisation against Pre-LN's (t intervals over seeds)",
          margin="non-overlap of the intervals",
          family="Chapter 6's family of 23 claims",
          deciding=(E.INIT_EXP['peri_ln'], E.INIT_EXP['resi_dual'])),
    Claim("claim-gradients-undamped", "Pre-LN gradients are undamped",
          "Because the residual path is never renormalised, gradients reach Pre-LN's early blocks undamped; "
          "the gradient problem of Post-LN does not arise.",
          (("chapters/06_initialisation", "fig-init-grads"),),
          (E.GRAD_RATIO["pre_ln"], E.GRAD_RATIO["post_ln"]), rule_gradients,
          card="so gradients reach the early blocks undamped",
          primary="the first/last block gradient-norm ratio at initialisation, Pre-LN and Post-LN",
          margin="1, the ratio of no damping",
          family=_TWO,
          deciding=(E.GRAD_RATIO['pre_ln'], E.GRAD_RATIO['post_ln'])),
    Claim("claim-pretrained", "Real pretrained models",
          "A real pretrained Pre-LN model's per-layer change decays at the theorem's rate.",
          (("chapters/09_pretrained", "tbl-pretrained-exponents"),),
          (*_SMOLLM2_READING, E.PRETRAINED_EXP["gemma3"], E.PRETRAINED_EXP["minilm"]),
          rule_pretrained,
          card="The measurement that would settle it is cheap and nobody has published it, which is what the "
               "promote_when asks for.",
          primary="SmolLM2's exponent of omega_k^2 over k = 2..30, widened by the quantisation bound and the "
                  "fit-start shift, against the theorem's over the same range and convention",
          margin="EXP_MARGIN = 0.1",
          family="Chapter 9's two Pre-LN families (Bonferroni, 97.5 % each)",
          deciding=(E.PRETRAINED_EXP['smollm2'],)),
    Claim("claim-two-families", "The Pre-LN law in two trained families",
          "Trained Pre-LN language models of two families (SmolLM2, Qwen2.5) show the theorem's "
          "per-layer decay.",
          (("chapters/09_pretrained", "tbl-pretrained-exponents"),),
          _FAMILY_READING, rule_two_families,
          card="The measurement that would settle it is cheap and nobody has published it, which is what the "
               "promote_when asks for.",
          primary="each family's widened exponent against its matched reference, and its curvature drift",
          margin="EXP_MARGIN = 0.1",
          family=_TWO,
          deciding=(E.PRETRAINED_EXP['smollm2'], E.PRETRAINED_EXP['qwen'])),
    Claim("claim-pretrained-idle", "Later blocks of real Pre-LN models idle",
          "In real Pre-LN models the later blocks are idle: skipping one costs less the deeper it is.",
          (("chapters/09_pretrained", "fig-skip-cost"),),
          tuple(x for m in PRE_LN_FAMILIES for x in (E.HALF_RATIO[m], E.HALF_RATIO_REF[m])),
          rule_pretrained_idle,
          card="What makes deep Pre-LN blocks idle is that the residual path is never renormalised, so the "
               "stream outgrows any single block’s contribution.",
          primary="per family the mean skip cost of blocks L/2+1..L (the last included) over that of blocks "
                  "4..L/2; percentile bootstrap over sequences",
          margin="1 and the theorem's own ratio over the same blocks",
          family=_TWO,
          deciding=(E.HALF_RATIO['smollm2'], E.HALF_RATIO['qwen'])),
    Claim("claim-redundancy-metric", "The change predicts which blocks can go",
          "The per-layer change, the theorem's quantity, tells which blocks of a real Pre-LN model "
          "can be skipped at least as well as the published redundancy metrics.",
          (("chapters/09_pretrained", "tbl-metric-rho"),),
          tuple(x for m in PRE_LN_FAMILIES
                for x in (E.METRIC_RHO_CHANGE[m], *(E.METRIC_DIFF[c, m] for c in COMPETITORS))),
          rule_metric,
          card="So the inputs the later blocks see become increasingly alike",
          primary="rho(change, skip cost) minus rho(competitor, skip cost), paired bootstrap over sequences, "
                  "for angular distance, relative contribution and deepest-first (block influence is the change "
                  "itself up to the mean and eps terms, and is not counted)",
          margin="RHO_MARGIN = 0.1, a tenth of the distance between a perfect ranking and none",
          family="one family of six (2 models x 3 competitors)",
          deciding=(E.METRIC_RHO_CHANGE['smollm2'], E.METRIC_RHO_CHANGE['qwen'])),
    Claim("claim-front", "Past the front: does the decay resume?",
          "Whether training reduces, preserves or amplifies the decay is open. Past a front of its first "
          "blocks, trained Pre-LN's per-layer change resumes the theorem's decay, offset by the front "
          r"($\omega_k^2 \approx 1/(k + k_0)$), rather than levelling off.",
          (("chapters/07b_front", "fig-front-predictions"),),
          (E.FRONT_POSITION, E.FRONT_N_RUNS, E.FRONT_PRED_WIDTH),
          rule_front,
          card="Whether training reduces, preserves or amplifies the decay is open",
          primary="each deep run's local slope over k in [L/2, L] placed between its depth's two predicted slopes "
                  "(results/predictions/front.json), u = -1 front, +1 level; mean over the deep runs",
          margin="0, the midpoint between the two predictions; the front model's own interval for its rate",
          family=_TWO,
          deciding=(E.FRONT_POSITION,)),
    Claim("claim-promote", "promote_when: the cheap measurement",
          "Promote the theory when the cheap, unpublished measurement -- the per-layer change of trained "
          "Pre-LN networks -- follows the predicted rate.",
          (("chapters/07_training", "fig-exponent-training"), ("chapters/09_pretrained", "tbl-pretrained-exponents")),
          (E.TRAINED_EXP_PRE_LN, E.TRAINED_REF_PRE_LN, E.TRAINED_FITSTART_SHIFT_PRE_LN, E.EXP_T_DF, *_SMOLLM2_READING),
          rule_promote,
          card="The measurement that would settle it is cheap and nobody has published it, which is what the "
               "promote_when asks for.",
          primary="the trained Pre-LN exponent (TOST, widened by its fit-start shift) and SmolLM2's widened interval",
          margin="EXP_MARGIN = 0.1",
          family=_TWO,
          deciding=(E.TRAINED_EXP_PRE_LN, E.PRETRAINED_EXP['smollm2'])),
]


def on_seed_set(evidence: Mapping[str, float], seed_set: str) -> dict[str, float]:
    """The evidence as it reads on one seed set of :data:`resdecay_lib.book.evidence.SEED_SETS`:
    every seed-set evidence's names take the values glued for that set (``<key>__<set>``), the
    rest stay as they are. A rule evaluated on it is the same rule on the set's evidence."""
    if seed_set not in E.SEED_SETS:
        raise ValueError(f"seed_set must be one of {sorted(E.SEED_SETS)}, got {seed_set!r}")
    out = dict(evidence)
    for ev in E.DECLARED.values():
        if ev.by_seed_set:
            for key, tagged in zip(ev.keys(), ev.set_keys(seed_set)):
                if tagged in evidence:
                    out[key] = evidence[tagged]
                else:
                    out.pop(key, None)       # not glued for this set: the rule says "missing"
    return out


def evaluate(evidence: Mapping[str, float], claims=None, seed_set: str | None = None) -> list[tuple[Claim, Verdict]]:
    """Each claim with its verdict on ``evidence`` (default: :data:`CLAIMS`); with ``seed_set``,
    on that seed set's evidence (:func:`on_seed_set`)."""
    if not isinstance(evidence, Mapping):
        raise TypeError(f"evidence must be a dict {{name: number}} (read_evidence's), got {type(evidence).__name__}")
    for k, v in evidence.items():
        if not isinstance(k, str) or not isinstance(v, numbers.Real):
            raise TypeError(f"evidence must map names (str) to numbers, got {k!r}: {v!r}"[:200])
    if claims is not None:
        claims = check_items("claims", claims, Claim, "a Claim")
    if seed_set is not None:
        evidence = on_seed_set(evidence, seed_set)
    return [(c, c.verdict(evidence)) for c in (CLAIMS if claims is None else claims)]


def seed_based(claim: Claim) -> bool:
    """Whether ``claim``'s rule reads evidence computed per seed set (the training runs)."""
    return any(isinstance(n, Evidence) and n.by_seed_set for n in (*claim.needs, *claim.optional))


#: a held-out verdict that is "open" because its statistic could not be computed (two seeds
#: give no t interval over seeds): the held-out set has no power for it
NO_POWER = "the data cannot tell (the chapter could not compute"


def replication(evidence: Mapping[str, float], claims=None) -> list[dict]:
    """Per claim: its verdict on the discovery seeds (s012), on the held-out seeds (s34), on
    all seeds (the ledger's), and whether it replicated: ``"yes"`` when the held-out verdict
    is the discovery verdict, ``"no"`` when it differs, ``"no power"`` when the held-out set
    cannot compute the statistic, ``"not seed-based"`` for a claim read from no training run."""
    claims = CLAIMS if claims is None else list(claims)
    rows = []
    verdicts = {s: dict((c.id, v) for c, v in evaluate(evidence, claims, s)) for s in E.SEED_SETS}
    for c, v in evaluate(evidence, claims):
        d, h = verdicts["s012"][c.id], verdicts["s34"][c.id]
        if not seed_based(c):
            rep = "not seed-based"
        elif h.reason.startswith(NO_POWER):
            rep = "no power"
        else:
            rep = "yes" if h.word == d.word else "no"
        rows.append({"claim": c, "discovery": d, "heldout": h, "all": v, "replicated": rep})
    return rows


def deciding_numbers(claim: Claim, evidence: Mapping[str, float]) -> str:
    """The numbers of ``claim.deciding``, each with its interval where it has one."""
    out = []
    for e in claim.deciding:
        if e not in evidence:
            continue
        v = evidence[e]
        if e.kind != "value" and e.lo in evidence:
            out.append(f"{_g(v)} [{_g(evidence[e.lo])}, {_g(evidence[e.hi])}]")
        else:
            out.append(_g(v))
    return ", ".join(out)


def short_reason(verdict: Verdict, limit: int = 160) -> str:
    """The verdict's reason in one short sentence, for the ledger's table: the words before the
    reason's first ": " (every rule writes "what it found: the numbers"), else its first
    "; "-separated part; cut at ``limit`` characters. The full reason stays in the verdict."""
    r = verdict.reason
    head = r.split(": ", 1)[0] if ": " in r else r.split("; ", 1)[0]
    if ": " in r and len(head) < 25:          # a bare label ("margin 0.1"): keep the numbers after it
        head = r.split("; ", 1)[0]
    return head if len(head) <= limit else head[:limit - 1].rstrip() + "…"


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


def toc_documents(root) -> list[str]:
    """The documents of ``root``'s ``_toc.yml``, in the book's order: its root, then each
    part's chapters, then top-level chapters (the one reader of the table of contents;
    ``tools/labels.py`` uses it too)."""
    import yaml
    toc = yaml.safe_load((pathlib.Path(root) / "_toc.yml").read_text())
    docs = [toc["root"]]
    for part in toc.get("parts", []):
        docs += [c["file"] for c in part.get("chapters", [])]
    docs += [c["file"] for c in toc.get("chapters", [])]
    return docs


def book_notebooks(root) -> list[pathlib.Path]:
    """The notebooks of the book: the ``.ipynb`` documents of ``root``'s ``_toc.yml``, in
    order (a chapter that exists but is not in the table of contents is not in the book)."""
    root = pathlib.Path(root)
    toc = sorted(toc_documents(root))
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
    docs = set(toc_documents(root))
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
