"""Write labels.md: every stable label of the book on one page, each linked to its target.

Usage: python tools/labels.py [--check]

Scans the documents of ``_toc.yml`` (markdown cells of notebooks, and .md files) for the
labels a reviewer cites: sphinx-proof ``:label:`` (theorems, corollaries, definitions, ...),
``:name:`` (figures, tables), MyST targets ``(claim-...)=`` and equation labels
``$$ (eq-...)``. With ``--check`` it writes nothing and exits 1 when labels.md is out of date
(``tests/test_labels.py`` checks the same). Run it after adding or removing a label.
"""
from __future__ import annotations

import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from resdecay_lib import ledger  # noqa: E402  (the one reader of _toc.yml)
PAGE = "labels"

_DIRECTIVE = re.compile(r"^(?:```+|:::+)\{([\w:-]+)\}[^\n]*\n((?::[\w-]+:[^\n]*\n)*)", re.M)
_TARGET = re.compile(r"^\(([A-Za-z][\w-]*)\)=\s*$", re.M)
_EQUATION = re.compile(r"\$\$\s*\(([A-Za-z][\w-]*)\)")

KINDS = {"prf:theorem": "theorem", "prf:corollary": "corollary", "prf:lemma": "lemma",
         "prf:proposition": "proposition", "prf:definition": "definition", "prf:remark": "remark",
         "prf:conjecture": "conjecture", "prf:example": "example", "prf:assumption": "assumption",
         "prf:algorithm": "algorithm", "prf:property": "property", "prf:observation": "observation",
         "glue:figure": "figure", "figure": "figure", "table": "table", "list-table": "table",
         "math": "equation", "glue:math": "equation"}
ORDER = ["theorem", "corollary", "lemma", "proposition", "definition", "assumption", "remark",
         "conjecture", "example", "algorithm", "property", "observation", "equation", "figure",
         "table", "claim", "section", "other"]


def toc_documents(root: pathlib.Path = ROOT) -> list[str]:
    """The book's documents in order (``ledger.toc_documents``), without this page."""
    return [d for d in ledger.toc_documents(root) if d != PAGE]


def markdown_of(doc: str, root: pathlib.Path = ROOT) -> str:
    nb = root / f"{doc}.ipynb"
    if nb.exists():
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    md = root / f"{doc}.md"
    return md.read_text(encoding="utf-8") if md.exists() else ""


def labels_in(text: str) -> list[tuple[str, str]]:
    """(label, kind) for every label defined in MyST ``text``, in order of appearance."""
    found = []
    for m in _DIRECTIVE.finditer(text):
        directive, options = m.group(1), m.group(2)
        for opt in re.finditer(r"^:(label|name):\s*(\S+)\s*$", options, re.M):
            kind = KINDS.get(directive, "other")
            if kind == "other" and opt.group(2).startswith("fig-"):
                kind = "figure"
            found.append((m.start(), opt.group(2), kind))
    for m in _TARGET.finditer(text):
        label = m.group(1)
        found.append((m.start(), label, "claim" if label.startswith("claim-") else "section"))
    for m in _EQUATION.finditer(text):
        found.append((m.start(), m.group(1), "equation"))
    return [(label, kind) for _, label, kind in sorted(found)]


def book_labels(root: pathlib.Path = ROOT) -> list[tuple[str, str, str]]:
    """(label, kind, document) for every label of the book's documents."""
    return [(label, kind, doc) for doc in toc_documents(root) for label, kind in labels_in(markdown_of(doc, root))]


def _link(label: str, kind: str) -> str:
    if kind in ("equation",):
        return f"{{eq}}`{label}`"
    if kind in ORDER[:12]:
        return f"{{prf:ref}}`{label}`"
    return f"{{ref}}`{label} <{label}>`"


def render(labels) -> str:
    lines = ["# Labels", "",
             "Every stable label of the book: theorems, corollaries, equations, figures, tables and",
             "the verdicts of the claims ledger. A label is also the anchor of its target in the",
             "rendered book, so a reviewer can link one directly, e.g.",
             "`chapters/10_verdict.html#claim-fifth-at-24`. This page is written by",
             "`python tools/labels.py` from the chapters; a test fails when it is out of date.", ""]
    by_kind = {}
    for label, kind, doc in labels:
        by_kind.setdefault(kind, []).append((label, doc))
    for kind in ORDER:
        if kind not in by_kind:
            continue
        title = {"claim": "Claims (verdicts)", "section": "Sections", "other": "Other"}.get(kind, kind.capitalize() + "s")
        lines += [f"## {title}", "", "| label | where | link |", "| --- | --- | --- |"]
        lines += [f"| `{label}` | `{doc}` | {_link(label, kind)} |" for label, doc in by_kind[kind]]
        lines.append("")
    if not labels:
        lines += ["No labels yet.", ""]
    return "\n".join(lines)


def labels_on_page(text: str) -> set[str]:
    """The labels listed on a written labels page (first column of its tables)."""
    return set(re.findall(r"^\| `([^`]+)` \|", text, re.M))


def main(argv) -> int:
    page = ROOT / f"{PAGE}.md"
    text = render(book_labels())
    if "--check" in argv:
        current = page.read_text(encoding="utf-8") if page.exists() else ""
        if current != text:
            print(f"{page.name} is out of date: run python tools/labels.py", file=sys.stderr)
            return 1
        return 0
    page.write_text(text, encoding="utf-8")
    print(f"wrote {page} ({len(labels_on_page(text))} labels)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
