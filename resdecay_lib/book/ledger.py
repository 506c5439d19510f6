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
it (``tests/book/test_evidence.py``), so a mistyped name cannot pass for an honest "open".

The ledger is split by job; this module evaluates the claims and is the one face the chapters,
tools and tests import (it re-exports the names they use):

* :mod:`resdecay_lib.book.verdicts`: the verdict words, :class:`Verdict`, :class:`Claim`,
  :data:`MISSING`;
* :mod:`resdecay_lib.book.notebooks`: :func:`read_evidence` and the table of contents;
* :mod:`resdecay_lib.book.rules`: the rules, their helpers and their margins (the conventions
  the rules follow are in its docstring);
* :mod:`resdecay_lib.book.claims`: the catalogue :data:`CLAIMS`;
* :mod:`resdecay_lib.book.render`: the verdicts in MyST Markdown;
* here: :func:`evaluate`, per seed set (:func:`on_seed_set`), and :func:`replication`.
"""
from __future__ import annotations

import numbers
from typing import Mapping

from ..checks import ArgumentTypeError, check_items
from . import evidence as E
from .claims import CLAIMS, CONFIRMATORY_NEEDS, confirmatory_reading
from .evidence import Evidence
from .notebooks import book_notebooks, read_evidence, toc_documents
from .render import PROMOTION, deciding_numbers, evidence_markdown, markdown_table, short_reason
from .rules import (COMPETITORS, DEPTH_GAP_MARGIN, DEPTH_SLOPE_MARGIN, EXP_MARGIN, GAP_FIXES, PRE_LN_FAMILIES, ROUNDING,
                    SPLIT_BOUNDARY, TRAINED_GAP, rule_front)
from .verdicts import MISSING, NOT_COMPUTED, VERDICTS, Claim, Verdict

__all__ = ["VERDICTS", "ROUNDING", "MISSING", "Verdict", "Claim", "CLAIMS", "PROMOTION", "read_evidence",
           "on_seed_set", "seed_based", "confirmatory_reading", "CONFIRMATORY_NEEDS", "replication", "NO_POWER", "REPLICATED", "short_reason", "deciding_numbers",
           "book_notebooks", "toc_documents", "evaluate", "evidence_markdown", "markdown_table",
           "EXP_MARGIN", "PRE_LN_FAMILIES", "SPLIT_BOUNDARY", "DEPTH_SLOPE_MARGIN", "DEPTH_GAP_MARGIN", "TRAINED_GAP", "GAP_FIXES",
           "COMPETITORS", "rule_front"]


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
    on that seed set's evidence (:func:`on_seed_set`); on the confirmatory set
    (``evidence.CONFIRMATORY_SET``) each claim is read as :func:`~resdecay_lib.book.claims.confirmatory_reading`
    reads it (the pretrained claims on the confirmatory models' evidence)."""
    if not isinstance(evidence, Mapping):
        raise ArgumentTypeError(f"evidence must be a dict {{name: number}} (read_evidence's), got {type(evidence).__name__}")
    for k, v in evidence.items():
        if not isinstance(k, str) or not isinstance(v, numbers.Real):
            raise ArgumentTypeError(f"evidence must map names (str) to numbers, got {k!r}: {v!r}"[:200])
    if claims is not None:
        claims = check_items("claims", claims, Claim, "a Claim")
    if seed_set is not None:
        evidence = on_seed_set(evidence, seed_set)
    reading = confirmatory_reading if seed_set == E.CONFIRMATORY_SET else (lambda c: c)
    return [(c, reading(c).verdict(evidence)) for c in (CLAIMS if claims is None else claims)]


def seed_based(claim: Claim) -> bool:
    """Whether ``claim``'s rule reads evidence computed per seed set (the training runs)."""
    if not isinstance(claim, Claim):
        raise ArgumentTypeError(f"claim must be a Claim, got {type(claim).__name__}")
    return any(isinstance(n, Evidence) and n.by_seed_set for n in (*claim.needs, *claim.optional))


#: a seed-set verdict that is "open" because its rule read a value the set could not give (two
#: seeds give no t interval over seeds; a round not yet trained gives none at all)
NO_POWER = NOT_COMPUTED.rstrip(" ")

#: what the replication column can say, per claim
REPLICATED = ("yes", "no", "not yet", "no confirmatory data", "derived", "confirmatory itself")


def replication(evidence: Mapping[str, float], claims=None, derived=frozenset(), confirmatory=frozenset()) -> list[dict]:
    """Per claim: its verdict on the discovery seeds (s012), on the held-out seeds (s34), on the
    exploratory seeds 0-4 (the ledger's own evidence), on the confirmatory seeds (s567, every run
    trained after the registry), and whether it replicated, one of :data:`REPLICATED`: ``"yes"``
    when the confirmatory verdict is the exploratory one, ``"no"`` when it differs, ``"not yet"``
    when the confirmatory set cannot give the values its rule reads (its runs are not all in, or
    the pretrained claims' confirmatory record is not measured yet: a pretrained claim with a
    confirmatory reading, :data:`~resdecay_lib.book.claims.CONFIRMATORY_NEEDS`, is read on it),
    ``"no confirmatory data"`` for a claim read from no training run and without a confirmatory
    reading (the deep runs have no confirmatory round yet), ``"confirmatory itself"`` for such a claim in
    ``confirmatory`` (ids of claims every datum of which was committed after their rule: their
    verdict is the confirmatory one, with no exploratory verdict to replicate), ``"derived"`` for
    the claims in ``derived`` (ids of claims whose evidence reads no stored data: nothing to replicate)."""
    claims = CLAIMS if claims is None else list(claims)
    rows = []
    verdicts = {s: dict((c.id, v) for c, v in evaluate(evidence, claims, s)) for s in E.SEED_SETS}
    for c, v in evaluate(evidence, claims):
        d, h, k = verdicts["s012"][c.id], verdicts["s34"][c.id], verdicts[E.CONFIRMATORY_SET][c.id]
        if c.id in derived:
            rep = "derived"
        elif not seed_based(c) and c.id not in CONFIRMATORY_NEEDS:
            rep = "confirmatory itself" if c.id in confirmatory else "no confirmatory data"
        elif k.reason.startswith(NO_POWER) or k.reason.startswith(MISSING):
            rep = "not yet"          # NaN, or (in a book that fails its tests) not glued: no verdict to compare
        else:
            rep = "yes" if k.word == v.word else "no"
        rows.append({"claim": c, "discovery": d, "heldout": h, "all": v, "confirmatory": k, "replicated": rep})
    return rows
