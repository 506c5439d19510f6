"""The verdict model of the claims ledger: the four verdict words, a :class:`Verdict` (a word
and its computed one-line reason) and a :class:`Claim` (a sentence of the theory card, where its
evidence is, the evidence it needs and the rule that decides it).

A claim's rule sees only the evidence the claim declares (reading any other name raises
``KeyError``). A claim whose needed evidence the book lacks gets the reason :data:`MISSING`,
and the test suite fails on it (``tests/book/test_evidence.py``), so a mistyped name cannot pass for
an honest "open"; evidence that is NaN (a chapter could not compute it) gives ``open``, the data
cannot tell, when the rule's branch reads it. The rules are in :mod:`resdecay_lib.book.rules`, the claims in
:mod:`resdecay_lib.book.claims`; the chapters (Chapter 10, the verdict) read all of it through
:mod:`resdecay_lib.book.ledger`.
"""
from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping

from ..checks import ArgumentTypeError, Real, show
from .evidence import Evidence

__all__ = ["VERDICTS", "MISSING", "NOT_COMPUTED", "Verdict", "Claim", "EvidenceMissing", "NotComputed", "FiniteEvidence",
           "reads_finite_evidence"]

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
    #: the sentence of the theory card the rule decides, verbatim (tests/book/test_ledger.py checks it
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
        ``tests/book/test_evidence.py``: open is kept for what the data cannot tell). Needed
        evidence that is NaN (a chapter glues NaN when its data cannot give the value, e.g.
        fewer than three kept seeds) gives ``open``, "the data cannot tell", when the rule READS
        it: the rule runs on the evidence, and reading a NaN value stops it there
        (:class:`NotComputed`), so a verdict depends only on the values of the branch it takes; a
        NaN the taken branch does not read changes nothing."""
        if not isinstance(evidence, Mapping):
            raise ArgumentTypeError(f"evidence must be a mapping {{name: number}} (read_evidence's), "
                                    f"got {type(evidence).__name__} {show(evidence)}")
        for k in (*self.keys, *self.optional_keys):
            v = evidence.get(k, 0.0)
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise ArgumentTypeError(f"{self.id}'s evidence {str(k)!r} must be a real number, "
                                        f"got {type(v).__name__} {show(v)}")
        missing = self.missing(evidence)
        if missing:
            return Verdict("open", MISSING + _names(missing))
        allowed = set(self.keys) | set(self.optional_keys)
        try:
            return self.rule(_Allowed({k: v for k, v in evidence.items() if k in allowed}, self.id))
        except NotComputed as nan:     # the branch the rule took reads a value its chapter could not compute
            return Verdict("open", NOT_COMPUTED + str(nan.args[0]) + ")")


#: the reason's start for a claim whose needed evidence the book lacks
MISSING = "evidence missing from the book: "
#: the reason's start for a verdict whose rule read a value its chapter could not compute (NaN)
NOT_COMPUTED = "the data cannot tell (the chapter could not compute "


class NotComputed(Exception):
    """A rule on the ledger's path read a NaN value (its chapter could not compute it):
    :meth:`Claim.verdict` makes the verdict ``open``, naming the value. Not a ``KeyError``, so no
    rule's ``in`` or ``get`` can swallow it."""


def _expand(names) -> tuple[str, ...]:
    out = []
    for n in names:
        out.extend(n.keys() if isinstance(n, Evidence) else (str(n),))
    return tuple(out)


class EvidenceMissing(KeyError, ValueError):
    """A rule read a name its evidence lacks: a ``KeyError`` (what a mapping raises) and a
    ``ValueError`` (the library's one exception for a bad argument), with a one-line message."""

    def __str__(self):           # KeyError's str() is the repr of its argument; this is the message
        return " ".join(str(self.args[0]).split()) if self.args else ""


class _Allowed(dict):
    """The evidence a rule may read on the ledger's path (:meth:`Claim.verdict`); reading any
    other name is a bug in the claim's ``needs``/``optional`` (absent optional names read as
    absent, ``in`` is False) and raises :class:`EvidenceMissing`. Reading a NaN value raises
    :class:`NotComputed` (the verdict is then ``open``); every other value is read as it is, so
    every verdict of the book is the rule's own, on the values it read."""

    def __init__(self, data, claim_id):
        super().__init__(data)
        self.claim_id = claim_id

    def __getitem__(self, key):
        value = super().__getitem__(key)
        if isinstance(value, float) and math.isnan(value):
            raise NotComputed(str(key))
        return value

    def __missing__(self, key):
        raise EvidenceMissing(f"{self.claim_id}'s rule reads {str(key)!r}, which is neither available nor "
                              f"among the claim's needs and optional evidence")


class FiniteEvidence(Mapping):
    """The evidence of a rule called directly, checked as the rule reads it: ``ev[name]``
    returns the value only when it is there and a finite real number; an absent name raises
    :class:`EvidenceMissing`, None or another non-number :class:`~resdecay_lib.checks.ArgumentTypeError`,
    NaN or an infinity ``ValueError``, each in one line naming the rule and the evidence.
    ``name in ev``, ``ev.get``, iteration and ``len`` see the mapping as it is, so optional
    evidence (read only ``if name in ev``) stays optional. The rules read their keys branch by
    branch, so this checks exactly what a rule reads, when it reads it."""

    _FINITE = Real()

    def __init__(self, data: Mapping, rule: str):
        self._data, self._rule = data, rule

    def __getitem__(self, key):
        if key not in self._data:
            raise EvidenceMissing(f"{self._rule} reads the evidence {str(key)!r}, which the evidence "
                                  f"mapping lacks")
        value = self._data[key]
        self._FINITE.check(f"{self._rule}'s evidence {str(key)!r}", value)
        return value

    def __contains__(self, key) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def reads_finite_evidence(rule):
    """Decorator of a ledger rule: called directly with a mapping, the rule reads it through
    :class:`FiniteEvidence` (no verdict on a missing, non-number, NaN or infinite value it
    reads); called by the ledger (:meth:`Claim.verdict`, which passes ``_Allowed``), it reads
    the evidence as it always has, so the book's verdicts are unchanged. The wrapper keeps the
    rule's name and docstring and ``__wrapped__`` (the rule's fingerprint,
    :mod:`resdecay_lib.book.preregistration`, reads the rule itself)."""
    if not callable(rule) or not hasattr(rule, "__name__"):
        raise ArgumentTypeError(f"rule must be a function (a ledger rule), got {type(rule).__name__} {show(rule)}")
    name = rule.__name__

    @functools.wraps(rule)
    def checked(ev):
        if isinstance(ev, _Allowed):
            return rule(ev)
        if not isinstance(ev, Mapping):
            raise ArgumentTypeError(f"{name}: ev must be a mapping {{evidence name: number}}, "
                                    f"got {type(ev).__name__} {show(ev)}")
        return rule(FiniteEvidence(ev, name))
    return checked


def _names(keys) -> str:
    """``a, b, c, c_lo, c_hi`` -> ``a, b, c(_lo, _hi)``: missing names, shortly."""
    keys, out = list(keys), []
    for k in keys:
        if k.endswith(("_lo", "_hi")) and k[:-3] in keys and f"{k[:-3]}_lo" in keys and f"{k[:-3]}_hi" in keys:
            continue
        both = f"{k}_lo" in keys and f"{k}_hi" in keys
        out.append(f"{k}(_lo, _hi)" if both else k)
    return ", ".join(out)
