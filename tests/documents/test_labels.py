"""Citing the book: stable labels listed on one page, claim targets, bibliography, CITATION.cff."""
from __future__ import annotations

import collections
import pathlib
import json
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import labels  # noqa: E402  (tools/labels.py)

from resdecay_lib.book.ledger import CLAIMS  # noqa: E402


def test_labels_in_finds_every_kind_of_label():
    text = ("```{prf:theorem} T\n:label: thm-x\n\nbody\n```\n\n"
            "```{glue:figure} fig-a\n:name: fig-a\n\ncaption\n```\n\n"
            "$$\nx\n$$ (eq-y)\n\n(claim-z)=\n### Z\n\n:::{prf:corollary}\n:label: cor-w\n:::\n")
    assert labels.labels_in(text) == [("thm-x", "theorem"), ("fig-a", "figure"), ("eq-y", "equation"),
                                      ("claim-z", "claim"), ("cor-w", "corollary")]


def test_labels_page_lists_exactly_the_labels_of_the_chapters():
    """Fails when a chapter gains a label the page lacks, or the page lists one no chapter has.
    Fix: python tools/labels.py"""
    in_book = {label for label, _, _ in labels.book_labels()}
    page = ROOT / "labels.md"
    on_page = labels.labels_on_page(page.read_text(encoding="utf-8"))
    assert in_book - on_page == set(), f"labels missing from labels.md (run python tools/labels.py): {sorted(in_book - on_page)}"
    assert on_page - in_book == set(), f"labels.md lists labels no chapter defines (run python tools/labels.py): {sorted(on_page - in_book)}"


def test_labels_page_is_up_to_date():
    """The page is exactly what tools/labels.py writes now (labels, numbers, chapter titles).
    Fix: python tools/labels.py"""
    assert labels.main(["--check"]) == 0, "labels.md is out of date: run python tools/labels.py"


def test_kind_headings_are_english_plurals():
    page = labels.render([("cor-a", "corollary", "d"), ("prop-b", "property", "d"), ("x", "theorem", "d")])
    assert "## Corollaries" in page and "## Properties" in page and "## Theorems" in page
    assert "Corollarys" not in page and "Propertys" not in page
    assert set(labels.PLURALS) == set(labels.ORDER)


def _book(tmp_path, docs: dict):
    toc = {"format": "jb-book", "root": "intro",
           "parts": [{"caption": "A", "chapters": [{"file": d} for d in docs if d != "intro"]}]}
    (tmp_path / "_toc.yml").write_text(yaml.safe_dump(toc))
    for doc, text in docs.items():
        (tmp_path / f"{doc}.md").parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f"{doc}.md").write_text(text)
    return tmp_path


def test_numbers_follow_the_book_order_with_one_counter_per_kind(tmp_path):
    """As Sphinx's numfig numbers them here: across chapters in _toc.yml's order; a figure
    needs a name and a caption, a table a name and a title, an equation a label; a titled
    {prf:...} is numbered with or without a label, unless :nonumber:."""
    root = _book(tmp_path, {
        "intro": "# Preface\n\n$$\nx\n$$ (eq-a)\n",
        "ch/one": ("# One\n\n```{glue:figure} fig-a\n:name: fig-a\n\nA caption.\n```\n\n"
                   "```{glue:figure} fig-nocap\n:name: fig-nocap\n```\n\n"
                   "```{prf:theorem} Unlabelled\nbody\n```\n\n"
                   "```{prf:theorem} Second\n:label: thm-b\n\nbody\n```\n\n"
                   "```{prf:theorem} Not numbered\n:label: thm-n\n:nonumber:\n\nbody\n```\n\n"
                   "```{list-table} A title\n:name: tbl-a\n\n* - x\n```\n"),
        "ch/two": ("# Two: $O(1/\\sqrt{k})$\n\n:::{figure} img.png\n:name: fig-b\n\nCaption.\n:::\n\n"
                   "```{math}\n:label: eq-b\n\ny\n```\n\n$$\nz\n$$\n\n$$\nw\n$$ (eq-c)\n\n"
                   "(claim-x)=\n### The claim's heading\n"),
    })
    assert labels.numbers(root) == {"eq-a": "(1)", "fig-a": "Fig. 1", "thm-b": "Theorem 2", "tbl-a": "Table 1",
                                    "fig-b": "Fig. 2", "eq-b": "(2)", "eq-c": "(3)"}
    assert labels.chapter_titles(root)["ch/two"] == "Two: $O(1/\\sqrt{k})$"
    assert labels.section_titles(labels.markdown_of("ch/two", root)) == {"claim-x": "The claim's heading"}


def test_the_page_shows_number_and_chapter_title():
    page = (ROOT / "labels.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([^`]+)` \| (.*)$", page, re.M)}
    numbering, titles = labels.numbers(), labels.chapter_titles()
    checked = 0
    for label, kind, doc in labels.book_labels():
        if label in numbering:
            assert rows[label].startswith(numbering[label] + " | " + titles[doc].replace("|", "\\|")), (label, rows[label])
            checked += 1
    assert checked >= 10


def test_labels_page_is_in_the_book():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]
    assert labels.PAGE in files, f"{labels.PAGE} is not in _toc.yml"


def test_labels_are_unique_across_the_book():
    counts = collections.Counter(label for label, _, _ in labels.book_labels())
    assert not [label for label, n in counts.items() if n > 1]


def test_every_theorem_and_corollary_and_figure_has_a_label():
    """A {prf:theorem}, {prf:corollary} or figure without :label:/:name: cannot be cited."""
    unlabelled = []
    for doc in labels.toc_documents():
        text = labels.markdown_of(doc)
        for m in re.finditer(r"^(?:```+|:::+)\{(prf:theorem|prf:corollary|glue:figure|figure)\}[^\n]*\n((?::[\w-]+:[^\n]*\n)*)",
                             text, re.M):
            if not re.search(r"^:(label|name):", m.group(2), re.M):
                unlabelled.append((doc, m.group(0).splitlines()[0]))
    assert not unlabelled, f"results without a stable label: {unlabelled}"


def test_every_claim_of_the_ledger_has_a_target_in_the_verdict_chapter_and_back():
    chapter = "chapters/10_verdict"
    targets = {label for label, kind in labels.labels_in(labels.markdown_of(chapter)) if kind == "claim"}
    ids = {c.id for c in CLAIMS}
    assert ids - targets == set(), f"claims without a (claim-...)= target in {chapter}: {sorted(ids - targets)}"
    assert targets - ids == set(), f"targets in {chapter} that are no claim of the ledger: {sorted(targets - ids)}"


def _bib_entries(text):
    return re.findall(r"@(\w+)\s*\{\s*([^,\s]+)\s*,(.*?)\n\}", text, re.S)


def test_every_bibliography_entry_has_an_eprint_or_doi():
    """Papers carry an arXiv id or a DOI; a post (a @misc with howpublished) its URL."""
    entries = _bib_entries((ROOT / "references.bib").read_text(encoding="utf-8"))
    assert entries, "references.bib has no entries"
    def post_with_url(kind, body):
        return (kind.lower() == "misc" and re.search(r"^\s*howpublished\s*=", body, re.M | re.I)
                and re.search(r"^\s*url\s*=\s*[{\"]\s*https://\S", body, re.M | re.I))
    missing = [key for kind, key, body in entries
               if not re.search(r"^\s*(eprint|doi)\s*=\s*[{\"]\s*\S", body, re.M | re.I)
               and not post_with_url(kind, body)]
    assert not missing, f"entries without eprint or doi: {missing}"
    arxiv = [key for _, key, body in entries if re.search(r"^\s*eprint\s*=", body, re.M | re.I)
             and not re.search(r"eprint\s*=\s*[{\"]\s*\d{4}\.\d{4,5}(v\d+)?\s*[}\"]", body, re.I)]
    assert not arxiv, f"eprint that is not an arXiv identifier (NNNN.NNNNN): {arxiv}"
    keys = [key for _, key, _ in entries]
    assert len(keys) == len(set(keys)), "duplicate bibliography keys"


def test_citation_cff_is_complete():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    for key in ("cff-version", "message", "title", "authors", "version", "date-released", "license",
                "abstract", "keywords", "preferred-citation", "references"):
        assert cff.get(key), f"CITATION.cff lacks {key}"
    assert cff["cff-version"] == "1.2.0"
    assert all(a.get("name") or a.get("family-names") for a in cff["authors"])
    pc = cff["preferred-citation"]
    assert pc["type"] and pc["title"] and pc["authors"] and pc.get("year")
    version = re.search(r'__version__ = "([^"]+)"', (ROOT / "resdecay_lib" / "__init__.py").read_text()).group(1)
    assert str(cff["version"]) == version, "CITATION.cff version differs from resdecay_lib.__version__"
    ids = [i["value"] for r in cff["references"] for i in r.get("identifiers", [])]
    assert "arXiv:2304.14802" in " ".join(ids) or any("2304.14802" in i for i in ids)


def test_preface_has_how_to_cite_with_bibtex():
    # the Preface is a notebook (it glues the findings): its markdown cells' text
    nb = json.loads((ROOT / "intro.ipynb").read_text(encoding="utf-8"))
    intro = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    section = intro.split("## How to cite", 1)
    assert len(section) == 2, "intro.ipynb has no '## How to cite' section"
    bib = re.search(r"```(?:bibtex|bib)\n(@\w+\{[^,]+,.*?\n\})\n```", section[1], re.S)
    assert bib, "no BibTeX block in 'How to cite'"
    assert all(f in bib.group(1) for f in ("title", "author", "year", "version"))
    assert "CITATION.cff" in section[1]
