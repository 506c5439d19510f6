"""The book's findings in a few sentences, written from the stored evidence.

One place writes them: the Preface glues them, the README's findings block and the PDF's
abstract are generated from them (``tools/findings.py``; a test fails when the README is
stale). Every number comes from the evidence the chapters glued (``ledger.read_evidence``)
and every verdict from the ledger's rules, so the findings change exactly when the evidence does.

:func:`findings_list` writes them as a short list, one finding a line, each with its number and
interval, for three readers (``links``): ``"book"`` (MyST roles to the book's definitions and
claims: the Preface), ``"readme"`` (Markdown links to the README's Terms and to the chapters'
notebooks) and ``"plain"`` (no links: the PDF's abstract). Each sentence is one small wording
function below, tested on each of its branches (``tests/book/test_findings.py``).
"""
from __future__ import annotations

import math
import pathlib
import re
from collections import Counter
from collections.abc import Mapping

from . import evidence as E
from . import history, ledger, preregistration
from .rules import TRACKING_MARGIN, tracking_counts

__all__ = ["headline", "findings_list", "mechanism_finding", "replication_finding", "abstract", "verdict_counts", "read_findings_evidence",
           "LINK_STYLES", "interval_level", "verdict_note", "count_phrase", "book_labels"]

#: the three readers of the findings (:func:`findings_list`)
LINK_STYLES = ("book", "readme", "plain")

#: the level each chapter glues for its intervals where the evidence declarations do not state
#: one (Chapter 9: Bonferroni over the two Pre-LN families); read by :func:`read_findings_evidence`
CHAPTER_LEVEL = {"09_pretrained": "pt_level"}

#: the degrees of freedom of a t interval whose declaration states no level (its level is then
#: recovered from the interval, its standard error and these degrees of freedom)
_T_DF = {E.TRAINED_EXP_PRE_LN: E.EXP_T_DF, E.INIT_EXP_TRAINEDRUNS_PRE_LN: E.EXP_T_DF}

#: the two kinds of interval the findings quote, by the chapter that computes them: the toy
#: models trained here (t over their seeds) and the pretrained models (bootstrap over sequences);
#: each group's level is that of its headline exponent (:func:`interval_level`)
_GROUPS = {"toy": (E.TRAINED_EXP_PRE_LN, "t over seeds for the toy models trained here"),
           "pretrained": (E.PRETRAINED_EXP["smollm2"],
                          "percentile bootstrap over text sequences for the pretrained ones")}


def read_findings_evidence(chapters) -> dict[str, float]:
    """The evidence the findings read: every ``ev_`` value stored in ``chapters`` (a folder or
    the notebooks, as :func:`ledger.read_evidence` takes) and the levels of :data:`CHAPTER_LEVEL`."""
    if isinstance(chapters, (str, pathlib.Path)):
        chapters = sorted(pathlib.Path(chapters).glob("*.ipynb"))
    chapters = list(chapters)
    ev = ledger.read_evidence(chapters)
    for name in CHAPTER_LEVEL.values():
        ev.update({k: v for k, v in ledger.read_evidence(chapters, prefix=name).items() if k == name})
    return ev


def _iv(ev, e, digits=2) -> str:
    return f"{ev[e]:.{digits}f} [{ev[e.lo]:.{digits}f}, {ev[e.hi]:.{digits}f}]"


def _pct(level: float) -> str:
    return f"{100 * level:g}%"


def interval_level(ev, e) -> float | None:
    """The level of evidence ``e``'s interval: the one its declaration states ("95 %", "1 -
    0.05/3"); else, for a t interval with a standard error, the level its half-width gives
    (``_T_DF``); else the level its chapter glues (:data:`CHAPTER_LEVEL`); else None. Rounded
    to half a percent."""
    m = re.search(r"(\d+(?:\.\d+)?) ?%", e.what)
    if m:
        return float(m.group(1)) / 100
    m = re.search(r"1 - (0\.\d+) ?/ ?(\d+)", e.what)
    if m:
        return 1 - float(m.group(1)) / int(m.group(2))
    if e in _T_DF and e.kind == "interval_se" and all(k in ev for k in (e.lo, e.hi, e.se, _T_DF[e])):
        from scipy import stats
        se, df = ev[e.se], ev[_T_DF[e]]
        if se > 0 and df >= 1:
            level = 2 * stats.t.cdf((ev[e.hi] - ev[e.lo]) / 2 / se, df) - 1
            return round(level * 200) / 200
    name = CHAPTER_LEVEL.get(e.chapter)
    if name and name in ev and math.isfinite(ev[name]):
        return round(ev[name] * 200) / 200
    return None


def _group(e) -> str:
    return "pretrained" if e.chapter == "09_pretrained" else "toy"


def _bracket(ev, e, digits=2) -> str:
    """``value [lo, hi]``, and its level when it is not its group's (the one :func:`_intervals_line` states)."""
    level, usual = interval_level(ev, e), interval_level(ev, _GROUPS[_group(e)][0])
    mark = f" ({_pct(level)})" if level is not None and level != usual else ""
    return _iv(ev, e, digits) + mark


def _intervals_line(ev) -> str:
    """What a bracket is, said once: each group's kind and level."""
    parts = []
    for e, kind in _GROUPS.values():
        level = interval_level(ev, e)
        parts.append(f"{_pct(level)} {kind}" if level is not None else kind)
    return f"Brackets are intervals: {parts[0]}, {parts[1]}; other levels are marked."


# ------------------------------------------------------------------------ links

#: where each term is defined: (the book's MyST, the README's Markdown); None: no link there
_TERMS = {"ledger": ("{{doc}}`{t} </chapters/10_verdict>`", "[{t}](#terms)"),
          "card": ("{{doc}}`{t} </chapters/10_verdict>`", "[{t}](#terms)"),
          "convention": ("{{prf:ref}}`{t} <def-seed-convention>`", "[{t}](#terms)"),
          "theorem": ("{{prf:ref}}`{t} <thm-omega>`", None),
          "front": ("{{doc}}`{t} </chapters/07b_front>`", "[{t}](chapters/07b_front.ipynb)")}


def _check_links(links: str) -> None:
    if links not in LINK_STYLES:
        raise ValueError(f"links must be one of {LINK_STYLES}, got {links!r}")


def _term(links: str, text: str, term: str) -> str:
    """``text`` linked to the definition of ``term`` (a key of ``_TERMS``) for the reader ``links``."""
    _check_links(links)
    if links == "plain":
        return text
    form = _TERMS[term][0 if links == "book" else 1]
    return text if form is None else form.format(t=text)


def _claim(links: str, cid: str) -> str:
    """A claim's id, linked to its verdict: the book's label, or Chapter 10's notebook from the README."""
    _check_links(links)
    return {"book": f"{{ref}}`{cid} <{cid}>`", "readme": f"[{cid}](chapters/10_verdict.ipynb)",
            "plain": cid}[links]


def _omega(links: str) -> str:
    return r"$\omega_k^2$" if links == "book" else "ω_k²"


def verdict_note(links: str, cid: str, verdicts: Mapping) -> str:
    """``(claim: verdict; label)``: the claim's verdict word and its label, confirmatory,
    exploratory or derived (:mod:`resdecay_lib.book.history`), from ``verdicts`` {claim id:
    (word, label)}."""
    if not isinstance(verdicts, Mapping) or cid not in verdicts:
        raise ValueError(f"verdicts must hold {cid}'s (word, label), got {sorted(verdicts) if isinstance(verdicts, Mapping) else verdicts!r}")
    word, label = verdicts[cid]
    if label not in history.LABELS:
        raise ValueError(f"verdicts[{cid!r}]'s label must be one of {', '.join(history.LABELS)}, got {label!r}")
    return f"({_claim(links, cid)}: {word}; {label})"


def _against(lo: float, hi: float, ref: float) -> str:
    """Where an interval lies against a reference: containing it, above it or below it."""
    return "above it" if lo > ref else "below it" if hi < ref else "the interval contains it"


def _against_one(lo: float, hi: float) -> str:
    """A cost ratio's interval against 1 (the later half costing as much as the earlier)."""
    return "more than 1" if lo > 1 else "less than 1" if hi < 1 else "an interval that contains 1"


def _exponent(ev, e, ref, where: bool = True) -> str:
    """``-0.16 [-0.34, 0.02] against -1.05 (above it)``; without ``where``, no parenthesis."""
    tail = f" ({_against(ev[e.lo], ev[e.hi], ev[ref])})" if where else ""
    return f"{_bracket(ev, e)} against {ev[ref]:.2f}{tail}"


# ------------------------------------------------------------------------ the findings

def init_finding(ev, verdicts: Mapping, links: str = "plain") -> str:
    """At initialisation against after training (claim-init-not-training); ``verdicts`` {claim id:
    (word, label)}, as in every finding below."""
    word = verdicts["claim-init-not-training"][0]
    what = {"holds": "the theorem describes initialisation, not training",
            "holds with correction": "the theorem describes initialisation better than training, with a correction",
            "does not hold": "training does not move the exponent away from the theorem",
            "open": "whether training moves the exponent away from the theorem is not settled"}.get(word, word)
    return (f"At initialisation toy Pre-LN models of 24 blocks have the exponent "
            f"{_exponent(ev, E.INIT_EXP_TRAINEDRUNS_PRE_LN, E.INIT_REF_PRE_LN)}; after training "
            f"{_exponent(ev, E.TRAINED_EXP_PRE_LN, E.TRAINED_REF_PRE_LN)}: {what} "
            f"{verdict_note(links, 'claim-init-not-training', verdicts)}.")


def split_finding(ev, verdicts: Mapping, links: str = "plain") -> str:
    """Which departure moves the trained exponent (claim-independence): the correlations'
    share of the shift against one half (``ledger.SPLIT_BOUNDARY``)."""
    s, b = E.SPLIT_CORR_SHARE, ledger.SPLIT_BOUNDARY
    what = ("comes mostly from the unequal size of the blocks' outputs" if ev[s.hi] < b else
            "comes mostly from the correlations between blocks" if ev[s.lo] > b else
            "comes from the correlations between blocks and the unequal size of their outputs in a split "
            "the data cannot settle")
    return (f"Training's shift of the exponent {what}: the correlations carry a share {_bracket(ev, s)} of it "
            f"{verdict_note(links, 'claim-independence', verdicts)}.")


def pretrained_finding(ev, verdicts: Mapping, links: str = "plain") -> str:
    """The two pretrained Pre-LN families against the theorem (claim-two-families)."""
    word = verdicts["claim-two-families"][0]
    what = {"holds": "show the theorem's decay",
            "holds with correction": "decay, at another rate than the theorem's",
            "does not hold": "do not show the theorem's decay",
            "open": "are not shown to follow or to depart from the theorem's decay"}.get(word, word)
    return (f"Two pretrained Pre-LN models {what}: SmolLM2-135M "
            f"{_exponent(ev, E.PRETRAINED_EXP['smollm2'], E.PRETRAINED_REF['smollm2'], False)}, Qwen2.5-Coder-0.5B "
            f"{_exponent(ev, E.PRETRAINED_EXP['qwen'], E.PRETRAINED_REF['qwen'], False)} "
            f"{verdict_note(links, 'claim-two-families', verdicts)}.")


#: what an idle-blocks verdict says of the later blocks (rules._half_verdict)
_IDLE = {"holds": "idle at the theorem's rate",
         "holds with correction": "cost less, but not at the theorem's rate",
         "does not hold": "are not idle",
         "open": "are not shown to idle or not"}


def idle_finding(ev, verdicts: Mapping, links: str = "plain") -> str:
    """Do later blocks idle (claim-pretrained-idle, claim-idle-blocks)? The cost of the later
    half of the blocks over the earlier half, against the theorem's ratio and against 1."""
    word_pretrained = verdicts["claim-pretrained-idle"][0]
    s, q, t = E.HALF_RATIO["smollm2"], E.HALF_RATIO["qwen"], E.HALF_RATIO_TOY
    ns, nq = E.HALF_RATIO_NO_LAST["smollm2"], E.HALF_RATIO_NO_LAST["qwen"]
    head = ("Whether their later blocks idle is not settled" if word_pretrained == "open"
            else f"Their later blocks {_IDLE.get(word_pretrained, word_pretrained)}")
    return (f"{head}: skipping a block of the later "
            f"half costs {_bracket(ev, s)} (SmolLM2) and {_bracket(ev, q)} (Qwen) times what skipping one of "
            f"the earlier half does, against the theorem's {ev[E.HALF_RATIO_REF['smollm2']]:.2f} and "
            f"{ev[E.HALF_RATIO_REF['qwen']]:.2f}; without the last block, {_bracket(ev, ns)} and {_bracket(ev, nq)} "
            f"{verdict_note(links, 'claim-pretrained-idle', verdicts)}; "
            f"in the toy models the same ratio is {_bracket(ev, t)}, {_against_one(ev[t.lo], ev[t.hi])} "
            f"{verdict_note(links, 'claim-idle-blocks', verdicts)}.")


#: what a compensation verdict says (rules.rule_compensation)
_COMPENSATION = {"holds": "flatten the decay by more than the exponent margin",
                 "does not hold": "do not flatten the decay by the exponent margin",
                 "open": "are not shown to flatten the decay or not"}


def compensation_finding(ev, verdicts: Mapping, links: str = "plain") -> str:
    """claim-compensation: how much the growth of the blocks' outputs past the front flattens the
    exponent (training_analysis.flattening), toy and pretrained, against the exponent margin."""
    word = verdicts["claim-compensation"][0]
    return (f"Scaled-up outputs of the blocks past {_term(links, 'the first blocks', 'front')} "
            f"{_COMPENSATION.get(word, word)} ({ledger.EXP_MARGIN:g}), in exponent units: by "
            f"{_iv(ev, E.FLATTENING_TOY)} in the toy models, {_iv(ev, E.FLATTENING['smollm2'])} in "
            f"SmolLM2 and {_iv(ev, E.FLATTENING['qwen'])} in Qwen (each interval at 1 - 0.05/3: one family "
            f"of three) "
            f"{verdict_note(links, 'claim-compensation', verdicts)}.")


def depth_cost_finding(ev, verdicts: Mapping, links: str = "plain") -> str:
    """claim-depth-cost: Pre-LN's gap to ResiDual by depth (the card's "depth at which it starts
    to cost accuracy"), the depths without an interval named."""
    word = verdicts["claim-depth-cost"][0]
    parts, missing = [], []
    for L in sorted(E.GAP_BY_DEPTH):
        e = E.GAP_BY_DEPTH[L]
        if all(math.isfinite(ev[k]) for k in (e, e.lo, e.hi)):
            parts.append(f"{_iv(ev, e)} at depth {L}")
        else:
            missing.append(str(L))
    what = {"holds": "costs accuracy from a depth the runs name, more the deeper",
            "holds with correction": "costs accuracy from a depth the runs name, not more the deeper",
            "does not hold": "costs no accuracy that counts at any depth up to 24",
            "open": "is not shown to cost accuracy from any depth yet"}.get(word, word)
    tail = f"; depth {', '.join(missing)} not yet trained for both" if missing else ""
    return (f"Against ResiDual, which escapes the decay, Pre-LN {what}: its final loss minus ResiDual's is "
            f"{', '.join(parts) or 'no interval yet'} nats/char (99%, margin {ledger.DEPTH_GAP_MARGIN:g}){tail} "
            f"{verdict_note(links, 'claim-depth-cost', verdicts)}.")


def _position(lo: float, hi: float) -> str:
    """Which of the two predictions (-1 and +1) an interval of the deep runs' position contains."""
    return {(True, True): "an interval that contains both", (True, False): "an interval that contains only -1",
            (False, True): "an interval that contains only +1",
            (False, False): "an interval that contains neither"}[(lo <= -1 <= hi, lo <= 1 <= hi)]


def front_finding(ev, verdicts: Mapping, links: str = "plain") -> str:
    """claim-front: past the first blocks, does the trained decay resume at depths 48 and 96?
    Once three deep runs are in: the runs' mean position between the two committed predictions,
    which of them its interval contains, and the runs' spread against the prediction's own."""
    word = verdicts["claim-front"][0]
    n = ev[E.FRONT_N_RUNS]
    first = _term(links, "the first blocks", "front")
    if not n >= 3:
        return (f"Whether the decay resumes past {first} at depths 48 and 96 is tested against two predictions "
                f"committed before those runs; {int(n)} deep run{'' if n == 1 else 's'} "
                f"{'is' if n == 1 else 'are'} stored so far {verdict_note(links, 'claim-front', verdicts)}.")
    what = {"holds": "is answered: it resumes, at the predicted rate",
            "holds with correction": "is answered: it resumes, at another rate than predicted",
            "does not hold": "is answered: it does not, the change stays flat",
            "open": "is not settled: the runs vary too much to tell the two committed predictions apart"
            }.get(word, word)
    sd, w = ev[E.FRONT_POSITION.se] * math.sqrt(n), ev[E.FRONT_PRED_WIDTH]
    return (f"In deeper models (depths 48 and 96), whether the decay resumes past {first} {what}. Scored so "
            f"that -1 is the prediction \"it resumes\" and +1 \"it stays flat\", the later-half slopes of "
            f"{int(n)} runs average {_bracket(ev, E.FRONT_POSITION, 1)}, {_position(ev[E.FRONT_POSITION.lo], ev[E.FRONT_POSITION.hi])}, "
            f"and single runs spread by {sd:.1f} (standard deviation), {'more' if sd > w else 'less'} than the "
            f"±{w:.1f} the first prediction allows {verdict_note(links, 'claim-front', verdicts)}.")


#: what a mechanism verdict says of the later blocks (rules.rule_mechanism)
_MECHANISM = {"holds": "follows the arithmetic of the unnormalised sum, as the card's mechanism says",
              "holds with correction": "follows the arithmetic of the unnormalised sum, and more steeply",
              "does not hold": "does not follow the arithmetic of the sum: later blocks make up for the front's size",
              "open": "is not yet shown to follow the arithmetic of the unnormalised sum or not"}
#: the models of claim-mechanism's family as the findings name them
_MECHANISM_NAMES = {"smollm2": "SmolLM2-135M", "qwen": "Qwen2.5-Coder-0.5B", "qwen15": "Qwen2.5-Coder-1.5B",
                    "toy_s6": "the toy of seed 6", "toy_s7": "the toy of seed 7"}


def mechanism_finding(ev, verdicts: Mapping, links: str = "plain") -> str:
    """claim-mechanism: the card's mechanism tested by intervention (Chapter 9b): the range of T
    over the measured models of the family at alpha = 1/4 and at 2, how many tests lie within the
    margin, and the models still to measure."""
    word = verdicts["claim-mechanism"][0]
    done = [m for m in E.INTERVENTION_MODELS if ev[E.INTERVENTION_MEASURED[m]] > 0]
    waiting = [_MECHANISM_NAMES[m] for m in E.INTERVENTION_MODELS if m not in done]
    tests = [E.INTERVENTION_T[m, a] for m in done for a in E.INTERVENTION_ALPHAS]
    counts = tracking_counts((ev[t.lo], ev[t.hi]) for t in tests)
    below, within = counts["below"], counts["within"]
    what = _MECHANISM.get(word, word)
    if word == "open" and not waiting and not below:
        what = "moves as the arithmetic of the unnormalised sum says in every model, not always within the margin"
    ranges = []
    for a, shown in (("quarter", "1/4"), ("two", "2")):
        vals = [ev[E.INTERVENTION_T[m, a]] for m in done]
        if vals:
            ranges.append(f"{min(vals):.2f} to {max(vals):.2f} at alpha {shown}")
    measured = (f"T (the share of the arithmetic the real forward realises; margin {TRACKING_MARGIN:g}) runs from {' and from '.join(ranges)} over {len(done)} models, {within} of "
                f"{len(tests)} tests within the margin and {below} below it" if done else "no model is measured yet")
    tail = f"; {', '.join(waiting)} not measured yet" if done and waiting else ""
    return (f"Scaling the summed output of the first three blocks by 1/4 or 2, the later blocks' change "
            f"{what}: {measured}{tail} {verdict_note(links, 'claim-mechanism', verdicts)}.")

def _replication_parts(rows, what: str, where: str, links: str, explored: str = "on seeds 0-4") -> list[str]:
    yes = [r for r in rows if r["replicated"] == "yes"]
    no = [r for r in rows if r["replicated"] == "no"]
    wait = [r["claim"].id for r in rows if r["replicated"] == "not yet"]
    parts = [f"{len(yes)} of the {len(rows)} claims {what} repeat their exploratory verdict"]
    if no:
        parts.append(f"{len(no)} {'does' if len(no) == 1 else 'do'} not: " + "; ".join(
            f"{_claim(links, r['claim'].id)} {r['all'].word} {explored}, {r['confirmatory'].word} {where}"
            for r in no))
    if wait:
        parts.append(f"{len(wait)} cannot be read {where} yet ({', '.join(_claim(links, c) for c in wait)})")
    return parts


def replication_finding(ev, labels: Mapping, links: str = "plain", confirmatory_labels: Mapping | None = None) -> str:
    """The confirmatory round (seeds 5-7) and the pretrained claims' confirmatory reading (the
    1.5B's pydoc record, measured after their rules): how many claims repeat their exploratory
    verdict on it, and which do not or cannot yet (:func:`resdecay_lib.book.ledger.replication`).
    ``confirmatory_labels``: {claim id: label on the confirmatory set} (:func:`book_labels` with
    ``confirmatory=True``); a toy claim labelled exploratory there (its rule registered again after
    the round) is named apart, not counted as a confirmation."""
    rows = ledger.replication(ev, derived=frozenset(k for k, v in labels.items() if v == "derived"),
                              confirmatory=frozenset(k for k, v in labels.items() if v == "confirmatory"))
    conf = confirmatory_labels or {}
    read = [r for r in rows if r["replicated"] in ("yes", "no", "not yet")]
    late = [r for r in read if r["claim"].id not in ledger.CONFIRMATORY_NEEDS and conf.get(r["claim"].id) == "exploratory"]
    toy = [r for r in read if r["claim"].id not in ledger.CONFIRMATORY_NEEDS and r not in late]
    pre = [r for r in read if r["claim"].id in ledger.CONFIRMATORY_NEEDS]
    out = ("On the confirmatory seeds 5-7, trained after the rules that read them, "
           + "; ".join(_replication_parts(toy, "read from the toy runs", "on seeds 5-7", links)) + ".")
    if late:
        out += (" Not counted: " + ", ".join(f"{_claim(links, r['claim'].id)} ({r['confirmatory'].word} on seeds 5-7)"
                                             for r in late)
                + f", {'whose rule was' if len(late) == 1 else 'whose rules were'} registered again after those runs.")
    if pre:
        (m,) = E.CONFIRMATORY_MODELS
        measured = all(math.isfinite(ev.get(k, math.nan)) for k in (*E.PRETRAINED_EXP[m].keys(), E.PRETRAINED_REF[m]))
        exp = (f" (its exponent {_exponent(ev, E.PRETRAINED_EXP[m], E.PRETRAINED_REF[m], False)})" if measured
               else "")
        out += (f" On the pretrained claims' confirmatory reading, Qwen2.5-Coder-1.5B on pydoc{exp}, measured after "
                "their rules, " + "; ".join(_replication_parts(pre, "read there", "there", links,
                                                                "on SmolLM2 and the 0.5B")) + ".")
    return out


def count_phrase(n: int, word: str) -> str:
    """``4 hold``, ``1 holds``, ``2 are open``: a verdict count as a reader says it."""
    one = n == 1
    return f"{n} " + {"holds": "holds" if one else "hold",
                      "holds with correction": "holds with a correction" if one else "hold with a correction",
                      "does not hold": "does not hold" if one else "do not hold",
                      "open": "is open" if one else "are open"}.get(word, word)


def verdicts_line(ev, labels: Mapping, links: str = "plain") -> str:
    """The ledger's counts and the card's promotion rule, in plain words, with its answer and
    its label (``labels``: {claim id: label}, :func:`book_labels`)."""
    rows = ledger.evaluate(ev)
    n = Counter(v.word for _, v in rows)
    counts = [count_phrase(n[w], w) for w in ledger.VERDICTS if n[w]]
    counts = ", ".join(counts[:-1]) + " and " + counts[-1] if len(counts) > 1 else "".join(counts)
    word = next(v.word for c, v in rows if c.id == "claim-promote")
    return (f"Of the {len(rows)} claims of the {_term(links, 'ledger', 'ledger')}, one per sentence of the "
            f"{_term(links, 'theory card', 'card')}, {counts}. "
            f"The card's promotion rule, its test for promoting the theory from Proposed "
            f"{verdict_note(links, 'claim-promote', {'claim-promote': (word, labels['claim-promote'])})}, says: "
            f"{ledger.PROMOTION[word]}")


def book_labels(root=".", confirmatory: bool = False) -> dict[str, str]:
    """{claim id: confirmatory, exploratory or derived} of every claim of the ledger, on every
    seed (with ``confirmatory``: on the confirmatory set, each claim in its confirmatory reading),
    from the history ``root`` records (``results/history.json``) and its registry
    (:func:`resdecay_lib.book.history.labels`)."""
    found = history.labels(history.read_history(root), preregistration.read_registry(root),
                           seed_set=E.CONFIRMATORY_SET if confirmatory else None)
    return {k: v.word for k, v in found.items()}


def findings_list(ev, labels: Mapping, links: str = "book", confirmatory_labels: Mapping | None = None) -> str:
    """The findings as Markdown: what an exponent and a bracket are, one finding a bullet, and
    the verdicts; every number from ``ev`` (:func:`read_findings_evidence`), every verdict's
    label from ``labels`` ({claim id: label}, :func:`book_labels`; ``confirmatory_labels``: on the
    confirmatory set, ``book_labels(root, confirmatory=True)``), linked for ``links`` (one of
    :data:`LINK_STYLES`)."""
    _check_links(links)
    if not isinstance(labels, Mapping):
        raise ValueError(f"labels must be a dict {{claim id: label}} (book_labels'), got {labels!r}")
    missing = [c.id for c in ledger.CLAIMS if c.id not in labels]
    if missing:
        raise ValueError(f"labels has no label for {', '.join(missing)}")
    v = {c.id: (w.word, labels[c.id]) for c, w in ledger.evaluate(ev)}
    lead = (f"An exponent is the slope of log {_omega(links)} (the per-layer change) on log k (the block "
            f"index), set beside the exponent of the {_term(links, 'theorem', 'theorem')} over the same blocks "
            f"and {_term(links, 'convention', 'convention')}. " + _intervals_line(ev))
    # seven findings: the confirmatory ones first, then the card's two questions (does the decay
    # hold in trained networks: at initialisation and after training, why training departs, the
    # pretrained models and why they depart; does it cost accuracy: idle blocks, depth) and the
    # deep runs' front; a finding and the claim that explains it share one bullet
    items = [mechanism_finding(ev, v, links), replication_finding(ev, labels, links, confirmatory_labels),
             f"{init_finding(ev, v, links)} {split_finding(ev, v, links)}",
             f"{pretrained_finding(ev, v, links)} {compensation_finding(ev, v, links)}",
             idle_finding(ev, v, links), depth_cost_finding(ev, v, links), front_finding(ev, v, links)]
    return "\n".join([lead, ""] + [f"- {s}" for s in items] + ["", verdicts_line(ev, labels, links)])


def verdict_counts(ev) -> Counter:
    """How many claims each verdict word has, on all seeds."""
    return Counter(v.word for _, v in ledger.evaluate(ev))


def headline(ev) -> list[dict]:
    """The headline table's rows: the exponent of omega_k^2 at initialisation, after training
    and in each pretrained Pre-LN family, each with its interval, its matched reference (the
    theorem's exponent over the same k range and convention) and the claim it supports."""
    rows = [{"what": "toy Pre-LN, L = 24, at initialisation", "exp": E.INIT_EXP_TRAINEDRUNS_PRE_LN,
             "ref": E.INIT_REF_PRE_LN, "claim": "claim-init-not-training"},
            {"what": "toy Pre-LN, L = 24, trained 3,600 steps", "exp": E.TRAINED_EXP_PRE_LN,
             "ref": E.TRAINED_REF_PRE_LN, "claim": "claim-init-not-training"},
            {"what": "SmolLM2-135M (pretrained)", "exp": E.PRETRAINED_EXP["smollm2"],
             "ref": E.PRETRAINED_REF["smollm2"], "claim": "claim-pretrained"},
            {"what": "Qwen2.5-Coder-0.5B (pretrained)", "exp": E.PRETRAINED_EXP["qwen"],
             "ref": E.PRETRAINED_REF["qwen"], "claim": "claim-two-families"}]
    verdicts = {c.id: v for c, v in ledger.evaluate(ev)}
    return [{**r, "value": ev[r["exp"]], "lo": ev[r["exp"].lo], "hi": ev[r["exp"].hi],
             "reference": ev[r["ref"]], "verdict": verdicts[r["claim"]].word} for r in rows]


def abstract(root=".", links: str = "plain") -> str:
    """:func:`findings_list` of the evidence stored in ``root``'s chapters: the PDF's abstract
    (``links="plain"``) and the README's findings block (``links="readme"``, ``tools/findings.py``)."""
    return findings_list(read_findings_evidence(pathlib.Path(root) / "chapters"), book_labels(root), links,
                         book_labels(root, confirmatory=True))
