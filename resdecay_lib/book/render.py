"""The ledger's verdicts in MyST Markdown, for the verdict chapter (Chapter 10) and the Preface.

:func:`markdown_table` writes ``evaluate(...)`` rows as a table of claim, verdict and computed
reason; :func:`short_reason` and :func:`deciding_numbers` shorten a verdict for the chapter's
table; :func:`evidence_markdown` names where a claim's evidence is, linking only what the book
has; :data:`PROMOTION` says what ``claim-promote``'s verdict means for the card's status. The
chapters use them through :mod:`resdecay_lib.book.ledger`. Nothing here decides a verdict.
"""
from __future__ import annotations

import numbers
import pathlib
from typing import Mapping

from ..checks import ArgumentTypeError, Flag, Instance, Int, accepts, show
from .notebooks import book_root, toc_documents
from .rules import short_number as _g
from .verdicts import Claim, Verdict

__all__ = ["PROMOTION", "deciding_numbers", "short_reason", "evidence_markdown", "markdown_table"]


_CLAIM = Instance(Claim, "a Claim")


@accepts(claim=_CLAIM)
def deciding_numbers(claim: Claim, evidence: Mapping[str, float]) -> str:
    """The numbers of ``claim.deciding``, each with its interval where it has one.
    ``evidence``: a mapping {name: number} (read_evidence's)."""
    if not isinstance(evidence, Mapping):
        raise ArgumentTypeError(f"evidence must be a mapping {{name: number}} (read_evidence's), "
                                f"got {type(evidence).__name__} {show(evidence)}")
    for e in claim.deciding:
        for k in (e, *((e.lo, e.hi) if e.kind != "value" else ())):
            v = evidence.get(k, 0.0)
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise ArgumentTypeError(f"evidence[{str(k)!r}] must be a real number, got {type(v).__name__} {show(v)}")
    out = []
    for e in claim.deciding:
        if e not in evidence:
            continue
        v = evidence[e]
        if e.kind != "value" and e.lo in evidence and e.hi in evidence:
            out.append(f"{_g(v)} [{_g(evidence[e.lo])}, {_g(evidence[e.hi])}]")
        else:
            out.append(_g(v))
    return ", ".join(out)


@accepts(verdict=Instance(Verdict, "a Verdict"), limit=Int(1))
def short_reason(verdict: Verdict, limit: int = 160) -> str:
    """The verdict's reason in one short sentence, for the ledger's table: the words before the
    reason's first ": " (every rule writes "what it found: the numbers"), else its first
    "; "-separated part; cut at ``limit`` characters. The full reason stays in the verdict."""
    r = str(verdict.reason)
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


def _defines(root: pathlib.Path, doc: str, label: str) -> bool:
    """Whether the source of ``doc`` defines ``label`` (a :label:, :name:, (target)= or (eq))."""
    text = "".join(p.read_text(encoding="utf-8") for p in (root / f"{doc}.ipynb", root / f"{doc}.md") if p.exists())
    return any(pat in text for pat in (f":label: {label}", f":name: {label}", f"({label})=", f"$$ ({label})"))


@accepts(claim=_CLAIM)
def evidence_markdown(claim: Claim, root) -> str:
    """MyST Markdown naming where ``claim``'s evidence is, with a cross-reference for each
    chapter that is in ``root``'s ``_toc.yml`` and each label that chapter defines, and
    plain text for the rest (so the book never links to what is not there yet). ``root``:
    the book's folder (:func:`~resdecay_lib.book.notebooks.book_root`)."""
    root = book_root(root)
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


def _rows(rows) -> list:
    """``rows`` as a list of (Claim, Verdict) pairs; ArgumentTypeError naming the first bad row."""
    if isinstance(rows, (str, bytes, dict)) or not hasattr(rows, "__iter__"):
        raise ArgumentTypeError(f"rows must be a list of (Claim, Verdict) pairs (evaluate's), "
                                f"got {type(rows).__name__} {show(rows)}")
    rows = list(rows)
    for i, row in enumerate(rows):
        if not (isinstance(row, (tuple, list)) and len(row) == 2 and isinstance(row[0], Claim)
                and isinstance(row[1], Verdict)):
            raise ArgumentTypeError(f"rows[{i}] must be a (Claim, Verdict) pair, got {type(row).__name__} {show(row)}")
    return rows


@accepts(link=Flag())
def markdown_table(rows, link: bool = True) -> str:
    """A MyST Markdown table of ``evaluate(...)`` rows: claim, verdict, computed reason.

    ``rows``: (Claim, Verdict) pairs. With ``link`` the claim cell is a ``{ref}`` to the
    claim's target (the ``claim-...`` label the verdict chapter defines); the evidence
    chapter follows in parentheses."""
    rows = _rows(rows)
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    lines = ["| claim | verdict | reason |", "| --- | --- | --- |"]
    for claim, verdict in rows:
        where = ", ".join(dict.fromkeys(doc.split("/")[-1] for doc, _ in claim.sources))
        name = f"{{ref}}`{esc(claim.title)} <{claim.id}>`" if link else f"`{claim.id}` {esc(claim.title)}"
        lines.append(f"| {name} ({esc(where)}) | **{verdict.word}** | {esc(verdict.reason)} |")
    return "\n".join(lines)
