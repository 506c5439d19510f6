"""``make pdf``: the whole book as one PDF, with its theorems in the text.

Builds the PDF the way ``make pdf`` does (``tools/pdf.py``: singlehtml from stored outputs,
printed by headless Chromium) into ``$RESDECAY_PDF_OUT`` (default ``_build/pdf-test``), then
reads its text with pypdf. Without Chromium the tests skip with the install line, except
under ``CI=true``, where a missing browser fails.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import sys
import unicodedata

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import book  # noqa: E402
import pdf  # noqa: E402

pytestmark = pytest.mark.slow

OUT = pathlib.Path(os.environ.get("RESDECAY_PDF_OUT", ROOT / "_build" / "pdf-test"))
STATEMENT = re.compile(r"^(?:```+|:::+)\{prf:(theorem|corollary|lemma|proposition)\}[ \t]*(.*?)\n(.*?)^(?:```+|:::+)[ \t]*$",
                       re.S | re.M)


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]


def _markdown(doc: str) -> str:
    """The markdown text of a book document (notebook markdown cells, or a .md file)."""
    nb = ROOT / f"{doc}.ipynb"
    if nb.exists():
        cells = json.loads(nb.read_text())["cells"]
        return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    md = ROOT / f"{doc}.md"
    return md.read_text() if md.exists() else ""


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\u00ad", "")
    return re.sub(r"\s+", " ", text).strip().lower()


def _plain_runs(text: str) -> list[str]:
    """Runs of plain words in MyST text: math, roles, options and markup cut the runs."""
    text = re.sub(r"^:\w[\w-]*:.*$", "\n", text, flags=re.M)           # directive options
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", "\n", text, flags=re.S)     # math
    text = re.sub(r"\{[\w:.-]+\}`[^`]*`|`[^`]*`", "\n", text)           # roles, code
    text = re.sub(r"[*_#>|\[\]()]", "\n", text)                          # markup, links
    runs = [r.strip() for r in re.split(r"\n|(?<=[.;:,])\s", text)]
    return [r for r in runs if len(r.split()) >= 3]


def statements() -> list[tuple[str, str, str]]:
    """(document, kind, plain-text run) for the longest plain run of each stated result."""
    found = []
    for doc in _toc_files():
        for kind, title, body in STATEMENT.findall(_markdown(doc)):
            runs = _plain_runs(title + "\n" + body)
            if runs:
                found.append((doc, kind, max(runs, key=len)))
    return found


@pytest.fixture(scope="module")
def pdf_text():
    book.require_chromium()
    from pypdf import PdfReader
    path = pdf.write_pdf(OUT / "book.pdf", OUT / "singlehtml")
    reader = PdfReader(str(path))
    pages = [page.extract_text() or "" for page in reader.pages]
    print(f"\nPDF: {path} ({len(pages)} pages)")
    return pages


def test_pdf_page_count_is_plausible(pdf_text):
    """Each document of _toc.yml starts a page; none should need more than 60."""
    n_docs = len(_toc_files())
    assert n_docs <= len(pdf_text) <= 60 * n_docs, (len(pdf_text), n_docs)


def test_every_chapter_title_is_in_the_pdf(pdf_text):
    text = _norm(" ".join(pdf_text))
    missing = []
    for doc in _toc_files():
        heading = re.search(r"^# (.+)$", _markdown(doc), re.M)
        runs = _plain_runs(heading.group(1)) if heading else []
        if runs and _norm(runs[0]) not in text:
            missing.append((doc, runs[0]))
    assert not missing, f"chapter titles not in the PDF text: {missing}"


def test_theorem_statements_are_in_the_pdf(pdf_text):
    text = _norm(" ".join(pdf_text))
    found = statements()
    assert found, "no {prf:theorem} or {prf:corollary} in the book's chapters"
    missing = [(doc, kind, run) for doc, kind, run in found if _norm(run) not in text]
    assert not missing, f"statements not in the PDF text: {missing}"
    assert "theorem" in text


def test_math_is_rendered_in_the_pdf(pdf_text):
    """MathJax ran before printing: no raw TeX delimiters are left in the text."""
    text = " ".join(pdf_text)
    assert not [t for t in ("\\(", "\\[", "$$") if t in text]


def test_the_pdf_is_the_paper_without_the_code(pdf_text):
    """Code cells' sources and printed logs are in the HTML only: no import line, no glue
    call, no assert of a chapter cell reaches the PDF (listings in the prose may)."""
    text = " ".join(pdf_text)
    code = [line for doc in _toc_files() if (ROOT / f"{doc}.ipynb").exists()
            for cell in json.loads((ROOT / f"{doc}.ipynb").read_text())["cells"] if cell["cell_type"] == "code"
            for line in "".join(cell["source"]).splitlines()
            if line.startswith(("glue(", "assert ", "from resdecay_lib import"))]
    assert code, "the chapters have no code cells to look for"
    prose = " ".join(_markdown(doc) for doc in _toc_files())   # listings in the prose may show code
    leaked = sorted({line for line in code if line[:40] in text and line[:40] not in prose})
    assert not leaked, f"{len(leaked)} code lines are in the PDF, e.g. {leaked[:3]}"
