"""The book's findings in a few sentences, written from the stored evidence (issue 22).

One place writes them: the Preface glues them, the README's first paragraph and the PDF's
abstract are generated from them (``tools/findings.py``; a test fails when the README is
stale). Every number comes from the evidence the chapters glued (``ledger.read_evidence``)
and every verdict from the ledger's rules, so the findings change exactly when the evidence does.
"""
from __future__ import annotations

import pathlib
from collections import Counter

from . import evidence as E
from . import ledger

__all__ = ["headline", "findings_markdown", "abstract", "verdict_counts"]


def _iv(ev, e, digits=2) -> str:
    return f"{ev[e]:.{digits}f} [{ev[e.lo]:.{digits}f}, {ev[e.hi]:.{digits}f}]"


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


def _front_sentence(ev, word: str) -> str:
    """claim-front's finding: the deep runs' position between the two predictions, once three are in."""
    n = ev[E.FRONT_N_RUNS]
    head = ("Whether the trained decay resumes past the first blocks is tested at depths 48 and 96 "
            "against predictions committed before those runs")
    if not n >= 3:
        return f"{head} ({int(n)} deep run{'' if n == 1 else 's'} stored so far; claim-front: {word})."
    what = {"holds": "it resumes, at the front model's rate",
            "holds with correction": "it resumes, at another rate than the front model's",
            "does not hold": "it does not resume",
            "open": "the runs cannot tell the two predictions apart"}.get(word, word)
    return (f"{head}: {what}; the deep runs' slopes sit at {_iv(ev, E.FRONT_POSITION, 1)} on a scale "
            f"where -1 is the decay's prediction and +1 the flat one ({int(n)} runs; claim-front: {word}).")


def _long_sentence(ev) -> str:
    """The 10,800-step runs' finding: where the depth-24 exponent ends, and how much it still
    moves late in training against the seeds' own spread (training_analysis.settling)."""
    n = ev[E.LONG_N_RUNS]
    if not n >= 3:
        return (f"Trained three times longer at depth 24 (10,800 steps), {int(n)} of the three runs are "
                f"stored so far.")
    return (f"Trained three times longer at depth 24 (10,800 steps), its exponent ends at "
            f"{_iv(ev, E.LONG_EXP_END)} and moves by {_iv(ev, E.LONG_EXP_CHANGE)} between steps 6,000 "
            f"and 10,800, against a seed-to-seed spread of {ev[E.LONG_SETTLE_MARGIN]:.2f}.")


def findings_markdown(ev) -> str:
    """About five sentences of findings, every number from ``ev`` (the stored evidence)."""
    v = {c.id: w for c, w in ledger.evaluate(ev)}
    n = verdict_counts(ev)
    counts = ", ".join(f"{n[w]} {w}" for w in ledger.VERDICTS if n[w])
    s = [f"At initialisation a Pre-LN transformer's per-layer change follows the theorem: its exponent, "
         f"{_iv(ev, E.INIT_EXP_TRAINEDRUNS_PRE_LN)} over 24 blocks, is within 0.1 of the theorem's "
         f"{ev[E.INIT_REF_PRE_LN]:.2f} over the same range."
         if v["claim-init-not-training"].word == "holds" else
         f"At initialisation a Pre-LN transformer's per-layer change has the exponent "
         f"{_iv(ev, E.INIT_EXP_TRAINEDRUNS_PRE_LN)} over 24 blocks, against the theorem's "
         f"{ev[E.INIT_REF_PRE_LN]:.2f} over the same range.",
         f"After training its exponent is {_iv(ev, E.TRAINED_EXP_PRE_LN)} against "
         f"{ev[E.TRAINED_REF_PRE_LN]:.2f} (claim-init-not-training: {v['claim-init-not-training'].word}); "
         + {"holds": "the correlations between blocks move the exponent more than the unequal block variances do",
            "does not hold": "what moves the exponent is the unequal size of the blocks' outputs, not the "
                             "correlations the card suspected",
            "open": "whether the correlations or the unequal block variances move it more is not settled"
            }.get(v["claim-independence"].word, "the split between correlations and variances is "
                  + v["claim-independence"].word)
         + f" (claim-independence: {v['claim-independence'].word}).",
         f"Two pretrained Pre-LN families, SmolLM2-135M and Qwen2.5-Coder-0.5B, have exponents "
         f"{_iv(ev, E.PRETRAINED_EXP['smollm2'])} and {_iv(ev, E.PRETRAINED_EXP['qwen'])} against "
         f"{ev[E.PRETRAINED_REF['smollm2']]:.2f} and {ev[E.PRETRAINED_REF['qwen']]:.2f} "
         f"(claim-two-families: {v['claim-two-families'].word}); whether later blocks' outputs are scaled "
         f"up with depth: {v['claim-compensation'].word} (claim-compensation); whether later blocks' share "
         f"of the cost vanishes: {v['claim-idle-blocks'].word} in the toy models, "
         f"{v['claim-pretrained-idle'].word} in the pretrained ones.",
         _front_sentence(ev, v["claim-front"].word),
         _long_sentence(ev),
         f"Of the ledger's {len(ledger.CLAIMS)} claims: {counts}; the card's promotion rule says "
         f"'{v['claim-promote'].word}'."]
    return " ".join(s)


def abstract(root=".") -> str:
    """:func:`findings_markdown` of the evidence stored in ``root``'s chapters (the PDF's and
    the README's abstract)."""
    ev = ledger.read_evidence(pathlib.Path(root) / "chapters")
    return findings_markdown(ev)
