"""The verdict model of the claims ledger: the four verdict words, a :class:`Verdict` (a word
and its computed one-line reason) and a :class:`Claim` (a sentence of the theory card, where its
evidence is, the evidence it needs and the rule that decides it).

A claim's rule sees only the evidence the claim declares (reading any other name raises
``KeyError``). A claim whose needed evidence the book lacks gets the reason :data:`MISSING`,
and the test suite fails on it (``tests/test_evidence.py``), so a mistyped name cannot pass for
an honest "open"; needed evidence that is NaN (a chapter could not compute it) gives ``open``,
the data cannot tell. The rules are in :mod:`resdecay_lib.book.rules`, the claims in
:mod:`resdecay_lib.book.claims`; the chapters (Chapter 10, the verdict) read all of it through
:mod:`resdecay_lib.book.ledger`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

from .evidence import Evidence

__all__ = ["VERDICTS", "MISSING", "Verdict", "Claim"]

#: the only verdict words
VERDICTS = ("holds", "holds with correction", "does not hold", "open")


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
