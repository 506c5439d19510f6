"""Write the whole book as one PDF that reads as a paper: ``make pdf``.

Usage: python tools/pdf.py [OUT.pdf]        (default: _build/pdf/book.pdf)

Builds the book from its stored outputs with the ``singlehtml`` builder (every chapter on
one page, executing nothing; strict, ``tools/book.py``), turns that page into a printable one
(:func:`printable_html`) and lets headless Chromium typeset the math with the book's own
MathJax copy and print it. Jupyter Book's ``pdfhtml`` builder would download a browser, which
fails offline; this does not. The PDF has:

* a title page: the title, authors, version and commit, and the abstract,
  ``resdecay_lib.book.findings.abstract(root)`` (Markdown, written from the stored evidence);
* the chapters, each from a new page, as a paper: code cells and their printed logs are in
  the HTML only; theorems, prose, figures, tables and displayed results stay. Figures and
  tables are numbered and their captions show their stable label ("Fig. 18 (fig-ablation)",
  ``_ext/caption_labels.py``);
* the bibliography, then the appendices: A, every evidence value the ledger reads (declared in
  ``resdecay_lib.book.evidence``, with its stored value; in the PDF only), then the book's back
  matter after the bibliography (the labels page, ...), lettered B, C, ...;
* a page number on every page ("3 / 120", a CSS ``@page`` margin box, which Chromium prints);
* an outline (PDF bookmarks) by chapter and section: Chromium writes one from the headings
  (``--generate-pdf-document-outline``), and :func:`rebuild_outline` rewrites it with pypdf so
  each chapter is a top-level bookmark with its sections under it;
* math that survives copying: in the PDF the math is drawn as SVG (MathJax's SVG output, no
  glyph text), and each formula carries its TeX as transparent text over it, so selecting and
  copying a formula gives its TeX (``$\\omega_k^2 = ...$``), not a jumble of glyphs. (Chromium
  drops text with ``opacity: 0`` or clipped away, e.g. MathJax's assistive MathML, from the
  PDF; transparent-coloured text stays. Checked with Chromium 156.)
"""
from __future__ import annotations

import datetime
import html
import json
import math
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import book  # noqa: E402
import yaml  # noqa: E402

ROOT = book.ROOT
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "_ext"))

#: the appendix that exists only in the PDF: every evidence value, before the book's own
#: appendices (the documents of _toc.yml's last part after the bibliography)
EVIDENCE = "evidence"


def appendices(root: pathlib.Path = ROOT) -> dict[str, str]:
    """{document: appendix letter}: Appendix A is the evidence (PDF only), then each document
    of ``_toc.yml``'s last part ("Back matter") but the bibliography, in order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    parts = toc.get("parts") or []
    back = [c["file"] for c in parts[-1].get("chapters", [])] if parts else []
    docs = [EVIDENCE] + [d for d in back if d.split("/")[-1] != "bibliography"]
    return {doc: chr(ord("A") + i) for i, doc in enumerate(docs)}

# Print styles. The page: US Letter, 0.6 in margins, so the text column is 7.3 in (701 CSS px):
# wider than the 670 px a figure is drawn for (resdecay_lib.book.plots.COLUMN_IN), so no figure is
# scaled down. The theme hides its sidebars in print; this also drops the header bar, the
# prev/next buttons, the theme's print-only page contents, every code cell's source and
# printed log (the PDF is the paper; the HTML keeps the code), and keeps figures and theorem
# boxes whole on a page.
PRINT_CSS = """
<style media="print">
  @page {
    size: Letter;
    margin: 0.6in 0.6in 0.7in 0.6in;
    @bottom-center { content: counter(page) " / " counter(pages); font-family: sans-serif;
                     font-size: 9pt; color: #444; }
  }
  html { font-size: 14px !important; }
  .bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .header-article, .prev-next-area,
  .bd-footer, .bd-footer-article, .bd-footer-content, .search-button-field, .theme-switch-button,
  .sidebar-toggle, #pst-back-to-top, #jb-print-docs-body, .onlyprint, .headerlink,
  .bd-header-announcement { display: none !important; }
  /* the theme hides the page's first h1 in print (its print-only header repeats it): not here */
  .bd-main .bd-content .bd-article h1:first-of-type { display: block !important; }
  .bd-page-width, .bd-container, .bd-container__inner, .bd-main, .bd-content,
  .bd-article-container, article.bd-article { max-width: 100% !important; width: auto !important;
    padding-left: 0 !important; padding-right: 0 !important; margin-left: 0 !important;
    margin-right: 0 !important; }
  figure, .proof, .admonition, table, .title-page { break-inside: avoid; }
  /* a table wider than the text column would make Chromium shrink every page to fit it (and
     every figure with it, under its 9 pt): tables print a size smaller, and a figure is never
     wider than the column */
  table { font-size: 12px; }
  figure img, .cell_output img { max-width: 100% !important; height: auto !important; }
  h1, h2, h3, h4 { break-after: avoid; }
  /* the PDF reads as a paper: code and its printed logs are in the HTML only; theorems,
     prose, figures, tables and displayed results stay */
  .cell_input, details.above-input, details.below-input, .cell_output .output.stream,
  .cell_output .output.stderr { display: none !important; }
  .cell:not(:has(.cell_output img, .cell_output table, .cell_output .text_html)) { display: none !important; }
  /* what code remains (listings in the prose) wraps instead of being cut off at the edge */
  pre { white-space: pre-wrap !important; overflow-wrap: anywhere; }
  /* paper has no scroll bars: what scrolls on screen is shown whole (and wraps where it can) */
  mjx-container[display="true"], .pst-scrollable-table-container, .cell_output table,
  .cell_output pre, div.highlight pre { overflow: visible !important; }
  /* each document of the book (its span#document-... is right before it) starts a page */
  span[id^="document-"] + section, section.appendix { break-before: page; }
  .title-page { break-after: page; padding-top: 1.2in; }
  .title-page .book-title { font-size: 2rem; font-weight: 700; line-height: 1.25; margin-bottom: 0.6rem; }
  .title-page .book-meta { color: #444; margin: 0.2rem 0; }
  .title-page .abstract { margin: 2rem 0.4in 1rem; text-align: justify; }
  .title-page .abstract-head { font-weight: 700; text-align: center; margin-bottom: 0.4rem; }
  .evidence-table { font-size: 0.85rem; width: 100%; }
  .evidence-table td, .evidence-table th { padding: 2px 6px; vertical-align: top; }
  .evidence-table code { font-size: 0.8rem; word-break: break-all; }
  .evidence-table td.value { white-space: nowrap; }
  /* a formula's TeX, transparent over its drawing, so copying the formula copies its TeX: in
     the flow (so the PDF's text keeps the sentence's order) and zero-wide (so nothing moves) */
  .tex-copy { display: inline-block; width: 0; overflow: visible; white-space: nowrap;
              vertical-align: baseline; font-size: 3px; line-height: 1; color: transparent !important; }
  /* a displayed formula's TeX wraps over it, within the column (a long one would start off
     the page), and the formula is not split across pages */
  mjx-container[display="true"] { position: relative; break-inside: avoid; }
  /* a displayed formula's drawing as a block (its line box would be shorter than the drawing,
     and Chromium would cut the drawing at the page's end), scaled down to the column when wider
     (paper does not scroll) */
  mjx-container[display="true"] > svg { display: block; margin-left: auto; margin-right: auto;
                                        max-width: 100%; height: auto; }
  div.math { break-inside: avoid; }
  mjx-container[display="true"] > .tex-copy { position: absolute; left: 0; right: 0; top: 0; width: auto;
              text-align: left; white-space: normal; overflow-wrap: anywhere; }
</style>
"""

# MathJax for the printed page: SVG output (drawn, with no glyph text in the PDF) and, once
# typeset, each formula's TeX as a transparent text layer (see the module docstring).
MATHJAX_PRINT = """
<script>
window.MathJax = %s;
window.MathJax.svg = {fontCache: "local"};
window.MathJax.startup = {
  pageReady: function () {
    return MathJax.startup.defaultPageReady().then(function () {
      Array.from(MathJax.startup.document.math).forEach(function (item) {
        var root = item.typesetRoot;
        if (!root || root.querySelector(":scope > .tex-copy")) return;
        var layer = document.createElement("span");
        layer.className = "tex-copy";
        layer.textContent = item.display ? " " + item.math.trim() + " " : " $" + item.math.trim() + "$ ";
        root.insertBefore(layer, root.firstChild);
      });
      document.body.setAttribute("data-tex-layer", String(document.querySelectorAll(".tex-copy").length));
    });
  }
};
</script>
"""


def _soup(text: str):
    import bs4
    return bs4.BeautifulSoup(text, "html.parser")


def plain_title(text: str) -> str:
    """A heading's text for a bookmark: inline TeX made readable (``$O(1/\\sqrt{k})$`` ->
    ``O(1/√k)``), the header link's ``#`` dropped, whitespace collapsed."""
    text = re.sub(r"\\\(|\\\)|\$", "", text)
    text = re.sub(r"\\sqrt\{([^{}]*)\}", r"√\1", text)
    for tex, char in (("\\omega", "ω"), ("\\sigma", "σ"), ("\\beta", "β"), ("\\le", "≤"), ("\\ge", "≥"),
                      ("\\cdot", "·"), ("\\,", " "), ("\\;", " "), ("\\mathrm", ""), ("\\", "")):
        text = text.replace(tex, char)
    text = re.sub(r"[{}]", "", text).replace("¶", "").rstrip("#")
    return re.sub(r"\s+", " ", text).strip()


def _abstract_html(root: pathlib.Path) -> str:
    from markdown_it import MarkdownIt
    from resdecay_lib.book import findings
    return MarkdownIt("commonmark").render(findings.abstract(root))


def _fmt(x: float | None) -> str:
    if x is None:
        return ""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan"
    return f"{x:.4g}"


def evidence_appendix_html(root: pathlib.Path = ROOT, letter: str = "A") -> str:
    """Appendix A: every evidence value the ledger reads, by chapter, in the book's order: its
    name (what the chapter glues), what it is (its declaration in ``resdecay_lib.book.evidence``)
    and its value with its interval (and standard error) as stored in the chapter's outputs."""
    from resdecay_lib.book import evidence as E, ledger
    values = ledger.read_evidence(ledger.book_notebooks(root))
    titles = _chapter_titles(root)
    order = [d.split("/")[-1] for d in ledger.toc_documents(root)]
    by_chapter: dict[str, list] = {}
    for ev in E.DECLARED.values():
        by_chapter.setdefault(ev.chapter, []).append(ev)
    parts = [f'<section class="appendix" id="appendix-evidence"><h2>Appendix {letter}. Evidence</h2>',
             "<p>Every value the claims ledger (Chapter 10) reads, declared once in "
             "<code>resdecay_lib.book.evidence</code> with the chapter that computes it, and its value as "
             "stored in that chapter's outputs (4 significant digits; the chapter states the "
             "precision the evidence supports). An interval is the one the chapter states.</p>"]
    for chapter in sorted(by_chapter, key=lambda c: order.index(c) if c in order else len(order)):
        doc = next((d for d in ledger.toc_documents(root) if d.split("/")[-1] == chapter), chapter)
        parts.append(f"<h3>{html.escape(plain_title(titles.get(doc, chapter)))}</h3>")
        rows = ['<table class="evidence-table"><thead><tr><th>evidence</th><th>what</th><th>value</th>'
                "</tr></thead><tbody>"]
        for ev in by_chapter[chapter]:
            v = values.get(ev.name)
            if v is None:
                shown = "<em>not in the stored outputs</em>"
            else:
                shown = _fmt(v)
                if ev.kind in ("interval", "interval_se") and ev.lo in values:
                    shown += f" [{_fmt(values[ev.lo])}, {_fmt(values.get(ev.hi))}]"
                if ev.kind == "interval_se" and ev.se in values:
                    shown += f", se {_fmt(values[ev.se])}"
            rows.append(f"<tr><td><code>{html.escape(ev.name)}</code></td><td>{html.escape(ev.what)}</td>"
                        f'<td class="value">{shown}</td></tr>')
        rows.append("</tbody></table>")
        parts.append("".join(rows))
    parts.append("</section>")
    return "\n".join(parts)


def _chapter_titles(root: pathlib.Path) -> dict[str, str]:
    import labels
    return labels.chapter_titles(root)


def _title_page_html(root: pathlib.Path) -> str:
    import citation
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    sha = citation.commit(root)
    meta = f"Version {citation.version(root)}" + (f", commit {sha[:12]}" if sha else "") \
        + f", printed {datetime.date.today().isoformat()}"
    return (f'<section class="title-page" id="title-page">'
            f'<p class="book-title">{html.escape(config["title"])}</p>'
            f'<p class="book-meta">{html.escape(config.get("author", ""))}</p>'
            f'<p class="book-meta">{html.escape(meta)}</p>'
            f'<p class="book-meta">{html.escape(citation.repository_url(root))}</p>'
            f'<div class="abstract"><p class="abstract-head">Abstract</p>{_abstract_html(root)}</div>'
            f'</section>')


def printable_html(page: str, root: pathlib.Path = ROOT) -> str:
    """The singlehtml page made printable: print styles, MathJax drawing SVG with a TeX layer,
    the title page with the abstract first, the theme's print-only contents removed, and the
    appendices (evidence inserted before the labels page; both headed "Appendix X.")."""
    soup = _soup(page)
    head = soup.head
    # MathJax: keep Sphinx's options, draw SVG, add the TeX layer
    swapped = False
    for script in head.find_all("script"):
        text = script.string or ""
        if text.strip().startswith("window.MathJax"):
            config = json.loads(text.split("=", 1)[1].strip().rstrip(";"))
            script.replace_with(_soup(MATHJAX_PRINT % json.dumps(config)))
        elif (script.get("src") or "").split("?")[0].endswith("mathjax/tex-mml-chtml.js"):
            script["src"] = script["src"].replace("tex-mml-chtml.js", "tex-mml-svg.js")   # keeps ?v=
            swapped = True
    if not swapped:
        raise RuntimeError("the singlehtml page does not load mathjax/tex-mml-chtml.js: has _config.yml's mathjax_path changed?")
    head.append(_soup(PRINT_CSS))
    for node in soup.select("#jb-print-docs-body"):
        node.decompose()
    article = soup.select_one("article.bd-article")
    if article is None:
        raise RuntimeError("the singlehtml page has no article.bd-article: has the theme changed?")
    article.insert(0, _soup(_title_page_html(root)))
    letters = appendices(root)
    first = next((soup.find(id=f"document-{doc}") for doc in letters if doc != EVIDENCE
                  and soup.find(id=f"document-{doc}") is not None), None)
    evidence = _soup(evidence_appendix_html(root, letters[EVIDENCE]))
    if first is not None:
        first.insert_before(evidence)
    else:
        article.append(evidence)
    for doc, letter in letters.items():
        anchor = soup.find(id=f"document-{doc}")
        section = anchor.find_next_sibling("section") if anchor is not None else None
        heading = section.find(re.compile(r"^h[1-6]$")) if section is not None else None
        if heading is None:
            continue
        # "Labels" -> "Appendix B. Labels"; "Appendix: the numbers ..." -> "Appendix C. The numbers ..."
        for text in heading.find_all(string=True, recursive=True):
            if text.strip():
                rest = re.sub(r"^\s*Appendix\s*[:.]?\s*", "", str(text))
                text.replace_with(f"Appendix {letter}. " + rest[:1].upper() + rest[1:])
                break
    return str(soup)


def document_headings(page: str) -> list[tuple[str, int, str]]:
    """(document, level, title) of every heading the printed page shows, in order: what
    Chromium's outline lists. ``document`` is the book's document the heading is in (the
    root document for those before the first ``span#document-...``; "evidence" for Appendix A)."""
    soup = _soup(page)
    article = soup.select_one("article.bd-article")
    out, doc = [], None
    for node in article.find_all(True):
        if node.name == "span" and (node.get("id") or "").startswith("document-"):
            doc = node["id"][len("document-"):]
        elif node.name == "section" and node.get("id") == "appendix-evidence":
            doc = EVIDENCE
        elif re.fullmatch(r"h[1-6]", node.name or ""):
            out.append((doc or "", int(node.name[1]), plain_title(node.get_text(" "))))
    return out


def _flat_outline(reader) -> list[tuple[int, str, int]]:
    """(depth, title, page index) of every bookmark of ``reader``, in order."""
    out = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                out.append((depth, item.title, reader.get_destination_page_number(item)))
    walk(reader.outline, 0)
    return out


def _key(title: str) -> str:
    return re.sub(r"[^a-z0-9]", "", title.lower())[:24]


def rebuild_outline(pdf_path: pathlib.Path, page: str, root: pathlib.Path = ROOT) -> list[tuple[int, str, int]]:
    """Replace Chromium's outline (every heading, nested by level, all under the Preface) by
    the book's: the title page, then each document of the book (the Preface, each chapter,
    the bibliography, the appendices) as a top-level bookmark with its sections under it.
    Chromium's bookmarks are matched to the page's headings in order (the same headings, so
    the same count and titles; anything else is an error). Returns the new outline as
    (depth, title, page index); also sets the PDF's title and author."""
    from pypdf import PdfReader, PdfWriter
    import citation
    reader = PdfReader(str(pdf_path))
    marks = _flat_outline(reader)
    heads = [h for h in document_headings(page)]
    # Chromium's titles can repeat a heading's words or spell its math otherwise: the first
    # letters must agree (a shifted match would disagree almost everywhere)
    differ = [(m[1][:40], h[2][:40]) for m, h in zip(marks, heads) if _key(m[1])[:2] != _key(h[2])[:2]]
    if len(marks) != len(heads) or len(differ) > 3:
        raise RuntimeError(f"Chromium's outline ({len(marks)} bookmarks) does not match the page's "
                           f"headings ({len(heads)}); first differences: {differ[:5]}")
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    root_doc = toc["root"]
    outline = [(0, "Title and abstract", 0)]
    top_level: dict[str, int] = {}
    for (depth, _, pno), (doc, level, title) in zip(marks, heads):
        doc = doc or root_doc
        if doc not in top_level:
            top_level[doc] = level
            outline.append((0, title, pno))
        elif level == top_level[doc] + 1:
            outline.append((1, title, pno))
    writer = PdfWriter()
    writer.append(reader, import_outline=False)
    parent = None
    for depth, title, pno in outline:
        item = writer.add_outline_item(title=title, page_number=pno, parent=parent if depth else None)
        if depth == 0:
            parent = item
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    sha = citation.commit(root)
    writer.add_metadata({"/Title": config["title"], "/Author": config.get("author", ""),
                         "/Subject": f"version {citation.version(root)}" + (f", commit {sha}" if sha else "")})
    writer.page_mode = "/UseOutlines"
    with open(pdf_path, "wb") as fh:
        writer.write(fh)
    return outline


def image_placements(reader) -> list[tuple[int, int, float]]:
    """(page index, the image's width in pixels, its width on the page in points) for every
    image drawn in the PDF: a figure's scale on paper (points per pixel; 0.75 is 1:1, one CSS
    px, and shows a 9 pt text of a 100-dpi figure at 9.4 pt)."""
    from pypdf.generic import ContentStream

    def mul(m, n):
        a, b, c, d, e, f = m
        A, B, C, D, E, F = n
        return [a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D, e * A + f * C + E, e * B + f * D + F]

    out = []

    def walk(index, content, ctm, xobjects):
        stack = []
        for operands, op in content.operations:
            if op == b"q":
                stack.append(ctm)
            elif op == b"Q":
                ctm = stack.pop()
            elif op == b"cm":
                ctm = mul([float(x) for x in operands], ctm)
            elif op == b"Do" and operands[0] in xobjects:
                obj = xobjects[operands[0]].get_object()
                if obj.get("/Subtype") == "/Image":
                    out.append((index, int(obj["/Width"]), math.hypot(ctm[0], ctm[1])))
                elif obj.get("/Subtype") == "/Form":
                    sub = (obj.get("/Resources") or {}).get("/XObject") or {}
                    matrix = [float(x) for x in obj.get("/Matrix", [1, 0, 0, 1, 0, 0])]
                    walk(index, ContentStream(obj, reader), mul(matrix, ctm), sub.get_object() if hasattr(sub, "get_object") else sub)

    for index, page in enumerate(reader.pages):
        xobjects = (page.get("/Resources") or {}).get("/XObject") or {}
        walk(index, ContentStream(page.get_contents(), reader), [1, 0, 0, 1, 0, 0],
             xobjects.get_object() if hasattr(xobjects, "get_object") else xobjects)
    return out


def print_book(pages: pathlib.Path, out: pathlib.Path, root: pathlib.Path = ROOT) -> pathlib.Path:
    """Print the singlehtml book in ``pages`` to ``out`` (see the module docstring)."""
    root_doc = yaml.safe_load((root / "_toc.yml").read_text())["root"]
    page = printable_html((pages / f"{root_doc}.html").read_text(encoding="utf-8"), root)
    printable = pages / "book-print.html"
    printable.write_text(page, encoding="utf-8")
    out = pathlib.Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        out.unlink()
    proc = book.run_chromium(["--virtual-time-budget=60000", "--run-all-compositor-stages-before-draw",
                              "--generate-pdf-document-outline", f"--print-to-pdf={out}",
                              "--no-pdf-header-footer", printable.as_uri()], timeout=600)
    if not out.is_file() or out.stat().st_size == 0:
        raise RuntimeError(f"chromium wrote no PDF (rc={proc.returncode}):\n{proc.stderr[-3000:]}")
    rebuild_outline(out, page, root)
    return out


def write_pdf(out: pathlib.Path, build_dir: pathlib.Path | None = None) -> pathlib.Path:
    """Build the singlehtml book into ``build_dir`` (strict) and print it to ``out``; return ``out``."""
    out = pathlib.Path(out).resolve()
    build_dir = pathlib.Path(build_dir or out.parent / "singlehtml").resolve()
    return print_book(book.build(build_dir, "singlehtml"), out)


if __name__ == "__main__":
    target = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else book.ROOT / "_build" / "pdf" / "book.pdf"
    if book.chromium() is None:
        sys.exit(f"make pdf needs headless Chromium: {book.INSTALL_HINT}")
    print(write_pdf(target))
