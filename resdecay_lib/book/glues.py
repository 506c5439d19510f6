"""What a chapter's typed result hands the book: every name the chapter glues, with its value.

A chapter computes nothing. It calls its analysis (``analysis.chapters.<name>.chapter(root)``),
which returns a frozen dataclass holding every number, sentence, table and figure's data the
chapter shows; the result's ``glues()`` maps each glue name to what is glued under it, and
:func:`glue_all` glues them all in one call:

* a declared evidence name (``ev_...``, :mod:`resdecay_lib.book.evidence`) maps to an
  :class:`EvidenceGlue` (its value and the parts its kind requires), glued through
  :func:`evidence.glue`, which checks the declaration;
* :class:`Words` (a sentence or clause written from the evidence by a wording function) and
  :class:`Table` (a MyST Markdown table, which the chapter places inside a ``{table}``
  directive) are glued as Markdown (``{glue:md}``);
* any other value (a number, a short string) is glued as it is (``{glue:text}``).

Figures are not glued here: the chapter draws each with one call of :mod:`~resdecay_lib.book.plots`
from the result's data (``plots.glue_figure``).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from ..checks import ArgumentTypeError, show
from . import evidence

__all__ = ["Words", "Table", "EvidenceGlue", "glue_all", "glue_names"]


class Words(str):
    """A sentence or clause that depends on the evidence, written by a wording function and
    glued as Markdown."""


class Table(str):
    """A MyST Markdown table (header, rule, rows), glued as Markdown."""

    @classmethod
    def of(cls, header, rows) -> "Table":
        """The table with column titles ``header`` (a sequence of str) and ``rows`` (each a
        sequence of cells, already formatted as str, one per column)."""
        header = [str(h) for h in header]
        lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
        for i, row in enumerate(rows):
            row = [str(c) for c in row]
            if len(row) != len(header):
                raise ValueError(f"rows[{i}] has {len(row)} cells, the header {len(header)}: {show(row, 80)}")
            lines.append("| " + " | ".join(row) + " |")
        return cls("\n".join(lines))


@dataclass(frozen=True)
class EvidenceGlue:
    """A declared evidence value and the parts its kind requires (:data:`evidence.KINDS`):
    ``lo``, ``hi`` for an interval, ``se`` too for ``interval_se``; ``digits``: rounded to that
    many decimals; ``seed_set``: a key of :data:`evidence.SEED_SETS` for a value of one seed set."""
    value: float
    lo: float | None = None
    hi: float | None = None
    se: float | None = None
    digits: int | None = None
    seed_set: str | None = None

    @classmethod
    def nan(cls, kind: str = "value") -> "EvidenceGlue":
        """The evidence when the data cannot give it: NaN in every part ``kind`` has."""
        parts = evidence.KINDS[kind]
        n = float("nan")
        return cls(n, lo=n if "_lo" in parts else None, hi=n if "_hi" in parts else None,
                   se=n if "_se" in parts else None)


def glue_names(result) -> list[str]:
    """The names ``result.glues()`` glues, in order (what a test of a chapter reads)."""
    return list(_glues_of(result))


def _glues_of(result) -> dict:
    glues = getattr(result, "glues", None)
    if not callable(glues):
        raise ArgumentTypeError(f"result must be a chapter's result (with a glues() method), got "
                                f"{type(result).__name__} {show(result, 60)}")
    out = glues()
    if not isinstance(out, dict) or not all(isinstance(k, str) and k for k in out):
        raise ValueError(f"{type(result).__name__}.glues() must return a dict of glue names, got {show(out, 80)}")
    return out


def _evidence_base(name: str, v: "EvidenceGlue", owner: str) -> str:
    """The declared evidence a glue name stands for: ``name`` itself, or, for a value of one
    seed set (``v.seed_set``), ``name`` is ``<declared name>__<seed set>`` (what
    :func:`evidence.glue` writes with ``seed_set=``), so one dict holds a seed-set evidence on
    every set; or ``name`` is the declared name itself (a dict of one set's glues)."""
    if v.seed_set is None:
        evidence.declared(name)
        return name
    suffix = f"__{v.seed_set}"
    base = name[:-len(suffix)] if name.endswith(suffix) else name
    if "__" in base:
        raise ValueError(f"{owner}.glues()[{name!r}]: a value of seed set {v.seed_set!r} is keyed by its "
                         f"declared name or '<name>{suffix}', got {name!r}")
    evidence.declared(base)
    return base


def glue_all(result) -> None:
    """Glue every name of ``result.glues()`` (myst-nb ``glue``, never displayed): evidence
    through :func:`evidence.glue`, :class:`Words` and :class:`Table` as Markdown, anything
    else as it is. A value of one seed set (``seed_set`` set) is keyed ``<name>__<set>``, or by
    its declared name when ``result`` holds that set's glues alone. Raises before gluing
    anything when a value does not fit its name: an
    ``ev_`` name without an :class:`EvidenceGlue`, or an :class:`EvidenceGlue` under a name
    that is not evidence."""
    from IPython.display import Markdown
    from myst_nb import glue

    items = _glues_of(result)
    for name, v in items.items():
        is_ev = name.startswith("ev_")
        if is_ev != isinstance(v, EvidenceGlue):
            raise ValueError(f"{type(result).__name__}.glues()[{name!r}]: "
                             + ("an evidence name needs an EvidenceGlue" if is_ev else
                                "an EvidenceGlue needs a declared evidence name (ev_...)")
                             + f", got {type(v).__name__} {show(v, 60)}")
        if is_ev:
            base = _evidence_base(name, v, type(result).__name__)   # an undeclared name fails before any glue
        elif isinstance(v, numbers.Real) and not isinstance(v, bool) and not math.isfinite(float(v)) \
                and not math.isnan(float(v)):
            raise ValueError(f"{type(result).__name__}.glues()[{name!r}] is infinite: {v!r}")
    for name, v in items.items():
        if isinstance(v, EvidenceGlue):
            evidence.glue(_evidence_base(name, v, type(result).__name__), v.value, lo=v.lo, hi=v.hi, se=v.se,
                          digits=v.digits, seed_set=v.seed_set)
        elif isinstance(v, (Words, Table)):
            glue(name, Markdown(str(v)), display=False)
        else:
            glue(name, v, display=False)
