"""Write labels.md: every stable label of the book on one page, each with its chapter, its
number as the rendered book prints it, and a link to its target.

Usage: python tools/labels.py [--check]

Scans the documents of ``_toc.yml`` (markdown cells of notebooks, and .md files) for the
labels a reviewer cites: sphinx-proof ``:label:`` (theorems, corollaries, definitions, ...),
``:name:`` (figures, tables), MyST targets ``(claim-...)=`` and equation labels
``$$ (eq-...)``. With ``--check`` it writes nothing and exits 1 when labels.md is out of date
(``tests/documents/test_labels.py`` checks the same). Run it after adding or removing a label.

Numbers (:func:`numbers`) follow Sphinx's ``numfig`` as this book configures it (Jupyter Book
turns it on; the table of contents has no section numbers): one counter per kind for the whole
book, in the order of ``_toc.yml``, over the items Sphinx numbers -- a figure or table that
has a name and a caption, a labelled display equation, and every ``{prf:...}`` with a title
that is not ``:nonumber:``. ``tests/documents/test_browser.py`` checks each number against the built HTML.
"""
from __future__ import annotations

import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))
import generated  # noqa: E402  (tools/generated.py: write, or --check)
from resdecay_lib.book import ledger  # noqa: E402  (the one reader of _toc.yml)
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
#: each kind's heading on the page (English plurals, not kind + "s")
PLURALS = {"theorem": "Theorems", "corollary": "Corollaries", "lemma": "Lemmas",
           "proposition": "Propositions", "definition": "Definitions", "assumption": "Assumptions",
           "remark": "Remarks", "conjecture": "Conjectures", "example": "Examples",
           "algorithm": "Algorithms", "property": "Properties", "observation": "Observations",
           "equation": "Equations", "figure": "Figures", "table": "Tables",
           "claim": "Claims (verdicts)", "section": "Sections", "other": "Other"}
#: how the rendered book prints a number of each kind (Sphinx's numfig_format; sphinx-proof's titles)
NUMBER_FORMAT = {"figure": "Fig. {}", "table": "Table {}", "equation": "({})"}

_FENCE = re.compile(r"^(`{3,}|:{3,})\{([\w:-]+)\}[ \t]*([^\n]*)$", re.M)
_EQ_BLOCK = re.compile(r"\$\$(?:(?!\$\$).)*\$\$[ \t]*\(([A-Za-z][\w-]*)\)", re.S)


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


def _blocks(text: str):
    """(position, directive, argument, options, body) of every fenced directive in ``text``,
    nested ones included, in order of appearance."""
    for m in _FENCE.finditer(text):
        fence, rest = m.group(1), text[m.end():]
        close = re.search(r"^%s%s*[ \t]*$" % (re.escape(fence), re.escape(fence[0])), rest, re.M)
        inner = rest[:close.start()] if close else rest
        opts = re.match(r"\n?((?::[\w-]+:[^\n]*\n?)*)", inner)
        options = dict(re.findall(r"^:([\w-]+):[ \t]*(.*?)[ \t]*$", opts.group(1), re.M))
        yield m.start(), m.group(2), m.group(3).strip(), options, inner[opts.end():].strip()


def numbered_items(text: str) -> list[tuple[str, str | None]]:
    """(kind, label or None) of every item Sphinx numbers in MyST ``text``, in order: named
    figures and tables with a caption, labelled display equations, titled ``{prf:...}``."""
    found = []
    for pos, directive, arg, options, body in _blocks(text):
        kind = KINDS.get(directive)
        name = options.get("name") or options.get("label")
        if directive in ("figure", "glue:figure"):
            if name and body:                       # numfig skips a figure without a caption
                found.append((pos, "figure", name))
        elif kind == "table":
            if name and arg:                        # ... or a table without a title
                found.append((pos, "table", name))
        elif directive in ("math", "glue:math"):
            if options.get("label"):
                found.append((pos, "equation", options["label"]))
        elif directive.startswith("prf:") and kind and kind != "other":
            if arg and "nonumber" not in options:    # an untitled proof node has no numfig title
                found.append((pos, kind, options.get("label")))
    found += [(m.start(), "equation", m.group(1)) for m in _EQ_BLOCK.finditer(text)]
    return [(kind, label) for _, kind, label in sorted(found, key=lambda f: f[0])]


def numbers(root: pathlib.Path = ROOT) -> dict[str, str]:
    """{label: its number as the rendered book prints it} ("Fig. 18", "Table 2", "(7)",
    "Theorem 1"): one counter per kind over the whole book, in ``_toc.yml``'s order."""
    counters, out = {}, {}
    for doc in ledger.toc_documents(root):
        for kind, label in numbered_items(markdown_of(doc, root)):
            counters[kind] = counters.get(kind, 0) + 1
            if label:
                out[label] = NUMBER_FORMAT.get(kind, kind.capitalize() + " {}").format(counters[kind])
    return out


def chapter_titles(root: pathlib.Path = ROOT) -> dict[str, str]:
    """{document: its title (the first level-1 heading)} for the book's documents."""
    out = {}
    for doc in ledger.toc_documents(root):
        m = re.search(r"^# (.+?)\s*$", markdown_of(doc, root), re.M)
        out[doc] = m.group(1) if m else doc
    return out


def section_titles(text: str) -> dict[str, str]:
    """{target label: the heading that follows it} for MyST targets ``(label)=`` in ``text``."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^\(([A-Za-z][\w-]*)\)=\s*\n+#+ (.+?)\s*$", text, re.M)}


def _link(label: str, kind: str) -> str:
    if kind in ("equation",):
        return f"{{eq}}`{label}`"
    if kind in ORDER[:12]:
        return f"{{prf:ref}}`{label}`"
    return f"{{ref}}`{label} <{label}>`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(labels, numbering: dict | None = None, titles: dict | None = None, sections: dict | None = None) -> str:
    """The labels page: per kind a table of label, number (as the book prints it; a claim's or
    section's heading), chapter (its title) and link."""
    numbering, titles, sections = numbering or {}, titles or {}, sections or {}
    lines = ["# Labels", "",
             "Every stable label of the book: theorems, corollaries, equations, figures, tables and",
             "the verdicts of the claims ledger, each with the number the book prints beside it and",
             "the chapter it is in. A label is also the anchor of its target in the rendered book, so",
             "a reviewer can link one directly, e.g. `chapters/10_verdict.html#claim-fifth-at-24`;",
             "numbers can change when a chapter gains a figure, labels do not. This page is written by",
             "`python tools/labels.py` from the chapters; a test fails when it is out of date.", ""]
    by_kind = {}
    for label, kind, doc in labels:
        by_kind.setdefault(kind, []).append((label, doc))
    for kind in ORDER:
        if kind not in by_kind:
            continue
        head = "heading" if kind in ("claim", "section") else "number"
        lines += [f"## {PLURALS[kind]}", "", f"| label | {head} | chapter | link |", "| --- | --- | --- | --- |"]
        for label, doc in by_kind[kind]:
            number = sections.get(label, "") if kind in ("claim", "section") else numbering.get(label, "")
            lines.append(f"| `{label}` | {_cell(number)} | {_cell(titles.get(doc, doc))} | {_link(label, kind)} |")
        lines.append("")
    if not labels:
        lines += ["No labels yet.", ""]
    return "\n".join(lines)


def page(root: pathlib.Path = ROOT) -> str:
    """The labels page of the book at ``root``."""
    sections = {}
    for doc in toc_documents(root):
        sections.update(section_titles(markdown_of(doc, root)))
    return render(book_labels(root), numbers(root), chapter_titles(root), sections)


def numbers_in_html(html_root) -> dict[str, str]:
    """{label: the number the built HTML prints beside it} for every numbered target of the
    pages under ``html_root`` (figures, tables and proofs: their ``caption-number``; equations,
    whose id is ``equation-LABEL``: their ``eqno``). What :func:`numbers` is checked against."""
    found = {}
    pattern = re.compile(r'\bid="(?:equation-)?([A-Za-z][\w-]*)"[^>]*>((?:(?!\bid=").){0,3000}?)'
                         r'(?:class="caption-number">([^<]+?)\s*<|class="eqno">(\([^<]*?\)))', re.S)
    for page in pathlib.Path(html_root).rglob("*.html"):
        for m in pattern.finditer(page.read_text(encoding="utf-8")):
            found.setdefault(m.group(1), (m.group(3) or m.group(4)).strip())
    return found


def labels_on_page(text: str) -> set[str]:
    """The labels listed on a written labels page (first column of its tables)."""
    return set(re.findall(r"^\| `([^`]+)` \|", text, re.M))


def main(argv=None) -> int:
    check = generated.wants_check(argv, __doc__)
    path, text = ROOT / f"{PAGE}.md", page()
    return generated.write_or_check(path, text, check=check,
                                    wrote=f"wrote {path} ({len(labels_on_page(text))} labels)",
                                    stale=f"{path.name} is out of date: run python tools/labels.py")


if __name__ == "__main__":
    sys.exit(main())
