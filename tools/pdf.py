"""Write the whole book as one PDF that reads as a paper: ``make pdf``.

Usage: python tools/pdf.py [OUT.pdf]        (default: _build/pdf/book.pdf)

Builds the book from its stored outputs with the ``singlehtml`` builder (every chapter on
one page, executing nothing; strict, ``tools/book.py``), turns that page into a printable one
(:func:`printable_html`) and lets headless Chromium typeset the math with the book's own
MathJax copy and print it. Jupyter Book's ``pdfhtml`` builder would download a browser, which
fails offline; this does not. The PDF has:

* a title page: the title, authors, version and commit (a repository address only when
  ``_config.yml`` sets one, ``_ext/citation.py``), and the abstract,
  ``resdecay_lib.book.findings.abstract(root)`` (Markdown, written from the stored evidence);
* a printed table of contents (:func:`contents_html`): every chapter and appendix with its
  sections, each with its page number and a link to it. The page numbers come from a first
  print: :func:`print_book` prints the book, reads from the PDF's outline where each heading
  landed, writes the numbers in and prints it again (the contents keep their length, so the
  pages do not move; checked, else a third print);
* the chapters, each from a new page, numbered as the prose calls them (Chapter 1 ... 7, 7b,
  8 ... 10, :func:`chapter_numbers`) with their sections and subsections numbered under them
  (7b.1, 7b.1.2; :func:`number_headings`); the Preface and the bibliography are unnumbered;
* as a paper: code cells and their printed logs are in the HTML only; theorems, prose,
  figures, tables and displayed results stay. Figures and tables are numbered and their
  captions show their stable label ("Fig. 18 (fig-ablation)", "Table 19 (tbl-ledger)",
  ``_ext/caption_labels.py``); the appendices' tables are numbered by appendix ("Table B.1"),
  captioned with their section (:func:`caption_appendix_tables`);
* page breaks that keep a short table whole with its caption and let a long one run on (its
  header row repeated), so no table stands alone on a half-empty page (:func:`mark_tables`);
* the bibliography, then the appendices: A, every evidence value the ledger reads (declared in
  ``resdecay_lib.book.evidence``, with its stored value; in the PDF only), then the book's back
  matter after the bibliography (the labels page, ...), lettered B, C, ... and their sections
  numbered B.1, B.2, ...;
* a page number on every page ("3 / 120", a CSS ``@page`` margin box, which Chromium prints);
* an outline (PDF bookmarks) by chapter and section, with the printed numbers: Chromium writes
  one from the headings (``--generate-pdf-document-outline``), and :func:`rebuild_outline`
  rewrites it with pypdf so each chapter is a top-level bookmark with its sections under it;
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


def chapter_numbers(root: pathlib.Path = ROOT) -> dict[str, str]:
    """{document: its chapter number as the prose calls it}: the documents of every part of
    ``_toc.yml`` but the last ("Back matter"), numbered by their file name's prefix
    (``chapters/01_stream`` -> "1", ``chapters/07b_front`` -> "7b"). The Preface (the root) and
    the back matter have none (the back matter is lettered, :func:`appendices`)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    parts = toc.get("parts") or []
    out = {}
    for part in parts[:-1]:
        for chapter in part.get("chapters", []):
            m = re.match(r"(\d+)([a-z]?)_", chapter["file"].split("/")[-1])
            if m is None:
                raise ValueError(f"_toc.yml: chapter {chapter['file']!r} has no number prefix (NN_ or NNx_)")
            out[chapter["file"]] = str(int(m.group(1))) + m.group(2)
    return out

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
  /* page breaks: a figure, a theorem box, a short table (with its caption, which is inside
     it) and a short admonition stay whole; a long table (mark_tables: more than about half a
     page) and an admonition that holds one run on, header row repeated, so none is pushed to
     the next page leaving a half-empty one behind; a heading, a caption and an admonition's
     title stay with what follows */
  figure, .proof, .admonition, .title-page, .bd-main .bd-content table.print-keep { break-inside: avoid !important; }
  /* (the theme keeps every table whole: .bd-main .bd-content table { break-inside: avoid }) */
  .bd-main .bd-content table:not(.print-keep), .bd-main .bd-content .admonition.print-breakable,
  .pst-scrollable-table-container { break-inside: auto !important; }
  thead { display: table-header-group; }
  tr, caption, h1, h2, h3, h4, h5, h6, .admonition-title { break-inside: avoid; }
  caption, .admonition-title, p.rubric { break-after: avoid; }
  table caption { caption-side: top; text-align: left; padding: 0 0 0.3rem; }
  /* the printed contents: leaders from each title to its page number */
  .print-toc { break-after: page; }
  .print-toc .toc-head { font-size: 1.6rem; font-weight: 700; margin: 0 0 0.8rem; }
  .print-toc .toc-entry a { display: flex; align-items: flex-end; color: inherit !important;
                            text-decoration: none !important; }
  .print-toc .toc-entry { break-inside: avoid; }
  .print-toc .toc-0 { font-weight: 600; margin-top: 0.45rem; break-after: avoid; }
  .print-toc .toc-1 { font-size: 0.9rem; padding-left: 2.4rem; margin-top: 0.05rem; }
  .print-toc .toc-num { flex: none; width: 2.4rem; align-self: flex-start; }
  .print-toc .toc-1 .toc-num { width: 2.9rem; }
  .print-toc .toc-title { flex: 0 1 auto; }
  .print-toc .toc-leader { flex: 1 1 auto; min-width: 1.5rem; margin: 0 0.3rem 0.3rem;
                           border-bottom: 1px dotted #777; }
  .print-toc .toc-page { flex: none; min-width: 1.8rem; text-align: right; }
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
  .title-page { break-after: page; padding-top: 0.5in; }
  .title-page .book-title { font-size: 2rem; font-weight: 700; line-height: 1.25; margin-bottom: 0.6rem; }
  .title-page .book-meta { color: #444; margin: 0.2rem 0; }
  .title-page .abstract { margin: 1.0rem 0.15in 0; text-align: justify; font-size: 12.5px; line-height: 1.36; }
  .title-page .abstract ul { margin-bottom: 0.4rem; }
  .title-page .abstract p { margin-bottom: 0.5rem; }
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
        number = chapter_numbers(root).get(doc)
        title = _strip_number(plain_title(titles.get(doc, chapter)), number)
        head = f"Chapter {number}: {title}" if number else title
        parts.append(f"<h3>{html.escape(head)}</h3>")
        caption = f"The evidence values of Chapter {number}, as stored" if number else f"The evidence values of {title}"
        rows = [f'<table class="evidence-table" data-caption="{html.escape(caption)}"><thead><tr><th>evidence</th>'
                "<th>what</th><th>value</th></tr></thead><tbody>"]
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
    url = citation.repository_url(root)      # optional: "" prints nothing
    return (f'<section class="title-page" id="title-page">'
            f'<p class="book-title">{html.escape(config["title"])}</p>'
            f'<p class="book-meta">{html.escape(config.get("author", ""))}</p>'
            f'<p class="book-meta">{html.escape(meta)}</p>'
            + (f'<p class="book-meta">{html.escape(url)}</p>' if url else "") +
            f'<div class="abstract"><p class="abstract-head">Abstract</p>{_abstract_html(root)}</div>'
            f'</section>')


def _strip_number(title: str, number: str | None) -> str:
    """``title`` without a leading chapter number ("7b. Past the front" -> "Past the front")."""
    if not number:
        return title
    return re.sub(rf"^\s*{re.escape(number)}(?![\w])[.:]?\s*", "", title)


#: the page's text height in CSS px (Letter, 0.6 in top and 0.7 in bottom margins, 96 px/in)
PAGE_PX = (11 - 1.3) * 96
#: a table estimated taller than this share of a page runs on to the next page (a shorter one is
#: kept whole: at most half a page is left behind). Below a half because the estimate runs short
#: on tables of long wrapped cells: Chapter 7b's evidence table, estimated at 0.47 of a page, took
#: more than 0.59 of one in print and left its page 41 % used
KEEP_SHARE = 0.45


def _table_height(table) -> float:
    """A rough height in CSS px of a printed table (12 px text, the 701 px column shared by
    its columns): lines per row from the longest cell, plus padding and the caption."""
    rows = table.find_all("tr")
    ncols = max((len(r.find_all(["td", "th"])) for r in rows), default=1) or 1
    per_line = max(8, int(701 / ncols / 6.6))
    height = 0.0
    for row in rows:
        cells = row.find_all(["td", "th"]) or [row]
        lines = max(max(1, math.ceil(len(c.get_text(" ", strip=True)) / per_line)) for c in cells)
        height += lines * 17 + 9
    caption = table.find("caption")
    if caption is not None:
        height += math.ceil(len(caption.get_text(" ", strip=True)) / 100) * 20 + 6
    return height


def mark_tables(soup) -> None:
    """Classes for the print styles' page breaks: ``print-keep`` on a table short enough to keep
    whole (with its caption), ``print-breakable`` on an admonition that holds a longer one (a
    whole dropdown of evidence would otherwise leave its title alone on a page)."""
    for table in soup.select("article.bd-article table"):
        if _table_height(table) <= KEEP_SHARE * PAGE_PX:
            table["class"] = (table.get("class") or []) + ["print-keep"]
        else:
            for box in table.find_parents("div", class_="admonition"):
                box["class"] = (box.get("class") or []) + ["print-breakable"]


def _document_spans(article):
    """Yield (document, node) for every tag of the article in order, ``document`` being the
    book's document the node is in ("" before the first ``span#document-...``, "evidence" in
    Appendix A)."""
    doc = ""
    for node in article.find_all(True):
        if node.name == "span" and (node.get("id") or "").startswith("document-"):
            doc = node["id"][len("document-"):]
        elif node.name == "section" and node.get("id") == "appendix-evidence":
            doc = EVIDENCE
        yield doc, node


def number_headings(soup, root: pathlib.Path = ROOT) -> None:
    """Number the headings as a paper: a chapter's title "7b. ..." (kept as it is when it
    already starts with its number), its sections 7b.1, 7b.2, ... and their subsections 7b.1.1;
    an appendix's sections B.1, ... (its title already reads "Appendix B. ..."). The number is a
    ``span.sec-number`` at the heading's start; every heading gets an id (``pdf-h-N``) for the
    printed contents' links. The Preface and the bibliography stay unnumbered."""
    numbers, letters = chapter_numbers(root), appendices(root)
    article = soup.select_one("article.bd-article")
    top: dict[str, int] = {}
    counters: dict[str, list[int]] = {}
    index = 0
    for doc, node in list(_document_spans(article)):
        if not re.fullmatch(r"h[1-6]", node.name or ""):
            continue
        node["id"] = node.get("id") or f"pdf-h-{index}"
        index += 1
        level = int(node.name[1])
        prefix = numbers.get(doc) or letters.get(doc)
        if doc not in top:
            top[doc] = level
            counters[doc] = [0, 0]
            if doc in numbers:
                _set_number(soup, node, numbers[doc] + ".", numbers[doc])
            continue
        if prefix is None:
            continue
        depth = level - top[doc]
        if depth == 1:
            counters[doc] = [counters[doc][0] + 1, 0]
            _set_number(soup, node, f"{prefix}.{counters[doc][0]}")
        elif depth == 2 and counters[doc][0]:
            counters[doc][1] += 1
            _set_number(soup, node, f"{prefix}.{counters[doc][0]}.{counters[doc][1]}")


def _set_number(soup, heading, number: str, already: str | None = None) -> None:
    """Put ``number`` in a ``span.sec-number`` at the start of ``heading``; when its text already
    starts with ``already`` (a chapter title "7b. Past ..."), that text becomes the span."""
    first = next((t for t in heading.find_all(string=True) if t.strip()), None)
    span = soup.new_tag("span", attrs={"class": "sec-number"})
    if already and first is not None:
        m = re.match(rf"^(\s*)({re.escape(already)}(?![\w])[.:]?)(\s*)", str(first))
        if m:
            span.string = m.group(2)
            rest = str(first)[m.end():]
            first.replace_with(rest)
            heading.insert(0, " ")
            heading.insert(0, span)
            return
    span.string = number
    heading.insert(0, " ")
    heading.insert(0, span)


def caption_appendix_tables(soup, root: pathlib.Path = ROOT) -> None:
    """Give each table of an appendix that has no caption one, numbered by its appendix
    ("Table B.1") and titled by its ``data-caption`` or else by its section's heading (the
    labels page's "Theorems")."""
    letters = appendices(root)
    article = soup.select_one("article.bd-article")
    count: dict[str, int] = {}
    heading = None
    for doc, node in list(_document_spans(article)):
        if re.fullmatch(r"h[1-6]", node.name or ""):
            heading = node
        if node.name != "table" or doc not in letters or node.find("caption") is not None:
            continue
        count[doc] = count.get(doc, 0) + 1
        text = node.get("data-caption")
        if not text and heading is not None:
            text = heading.get_text(" ", strip=True).replace("#", "").strip()
            text = re.sub(r"^(?:Appendix\s+)?[A-Z](?:\.\d+)*\.?\s+", "", text)
        caption = soup.new_tag("caption")
        number = soup.new_tag("span", attrs={"class": "caption-number"})
        number.string = f"Table {letters[doc]}.{count[doc]} "
        caption.append(number)
        body = soup.new_tag("span", attrs={"class": "caption-text"})
        body.string = text or ""
        caption.append(body)
        node.insert(0, caption)


def contents_entries(page: str, root: pathlib.Path = ROOT) -> list[tuple[int, int, str]]:
    """(depth, index of the heading in :func:`document_headings`, title) of every entry of the
    book's outline and printed contents: each document's title (depth 0) and its sections
    (depth 1), in order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    out, top = [], {}
    for i, (doc, level, title) in enumerate(document_headings(page)):
        doc = doc or toc["root"]
        if doc not in top:
            top[doc] = level
            out.append((0, i, title))
        elif level == top[doc] + 1:
            out.append((1, i, title))
    return out


def contents_html(soup, pages: list[int] | None = None) -> str:
    """The printed contents: one line per chapter, appendix and section (the outline's entries),
    its number, its title (as the heading prints it, math included), leaders and its page
    (``pages``: the page number of each entry, from a first print; blank without)."""
    article = soup.select_one("article.bd-article")
    heads = [n for n in article.find_all(re.compile(r"^h[1-6]$"))]
    entries = contents_entries(str(soup))
    lines = ['<nav class="print-toc" id="print-toc"><p class="toc-head">Contents</p>']
    for k, (depth, index, _) in enumerate(entries):
        node = heads[index]
        number = node.find("span", class_="sec-number", recursive=False)
        parts = []
        for child in node.children:
            if child is number or (getattr(child, "name", None) == "a" and "headerlink" in (child.get("class") or [])):
                continue
            parts.append(str(child))
        title = "".join(parts).strip()
        num = html.escape(number.get_text()) if number is not None else ""
        page = str(pages[k]) if pages is not None else ""
        lines.append(f'<div class="toc-entry toc-{depth}"><a href="#{node["id"]}"><span class="toc-num">{num}</span>'
                     f'<span class="toc-title">{title}</span><span class="toc-leader"></span>'
                     f'<span class="toc-page">{page}</span></a></div>')
    lines.append("</nav>")
    return "\n".join(lines)


def printable_html(page: str, root: pathlib.Path = ROOT, contents_pages: list[int] | None = None) -> str:
    """The singlehtml page made printable: print styles, MathJax drawing SVG with a TeX layer,
    the title page with the abstract first, then the printed contents (page numbers from
    ``contents_pages``, one per :func:`contents_entries`), the theme's print-only contents
    removed, the appendices (evidence inserted before the labels page; both headed
    "Appendix X."), numbered headings, captioned appendix tables and the page-break classes."""
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
    number_headings(soup, root)
    caption_appendix_tables(soup, root)
    mark_tables(soup)
    title_page = soup.find(id="title-page")
    title_page.insert_after(_soup(contents_html(soup, contents_pages)))
    return str(soup)


def document_headings(page: str) -> list[tuple[str, int, str]]:
    """(document, level, title) of every heading the printed page shows, in order: what
    Chromium's outline lists. ``document`` is the book's document the heading is in (the
    root document for those before the first ``span#document-...``; "evidence" for Appendix A)."""
    soup = _soup(page)
    article = soup.select_one("article.bd-article")
    return [(doc, int(node.name[1]), plain_title(node.get_text(" "))) for doc, node in _document_spans(article)
            if re.fullmatch(r"h[1-6]", node.name or "")]


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


def heading_pages(reader, page: str) -> list[int]:
    """The page index of each heading of :func:`document_headings` in the PDF ``reader`` read:
    Chromium's bookmarks, one per heading of the printed page in order (the same headings, so
    the same count and titles; anything else is an error)."""
    marks = _flat_outline(reader)
    heads = document_headings(page)
    # Chromium's titles can repeat a heading's words or spell its math otherwise: the first
    # letters must agree (a shifted match would disagree almost everywhere)
    differ = [(m[1][:40], h[2][:40]) for m, h in zip(marks, heads) if _key(m[1])[:2] != _key(h[2])[:2]]
    if len(marks) != len(heads) or len(differ) > 3:
        raise RuntimeError(f"Chromium's outline ({len(marks)} bookmarks) does not match the page's "
                           f"headings ({len(heads)}); first differences: {differ[:5]}")
    return [pno for _, _, pno in marks]


def rebuild_outline(pdf_path: pathlib.Path, page: str, root: pathlib.Path = ROOT) -> list[tuple[int, str, int]]:
    """Replace Chromium's outline (every heading, nested by level, all under the Preface) by
    the book's: the title page, the contents, then each document of the book (the Preface,
    each chapter, the bibliography, the appendices) as a top-level bookmark with its sections
    under it (:func:`contents_entries`, numbered as printed), each on the page
    :func:`heading_pages` finds. Returns the new outline as (depth, title, page index); also
    sets the PDF's title and author."""
    from pypdf import PdfReader, PdfWriter
    import citation
    reader = PdfReader(str(pdf_path))
    pages = heading_pages(reader, page)
    outline = [(0, "Title and abstract", 0), (0, "Contents", 1)]
    outline += [(depth, title, pages[index]) for depth, index, title in contents_entries(page, root)]
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
    return [(index, px, pt) for index, px, pt, _ in image_boxes(reader)]


def image_boxes(reader, pages: list[int] | None = None) -> list[tuple[int, int, float, float]]:
    """(page index, width in pixels, width on the page in points, its top's height above the
    page's bottom in points) of every image drawn on ``pages`` (default all) of the PDF."""
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
                    out.append((index, int(obj["/Width"]), math.hypot(ctm[0], ctm[1]),
                                max(ctm[5], ctm[5] + ctm[3])))
                elif obj.get("/Subtype") == "/Form":
                    sub = (obj.get("/Resources") or {}).get("/XObject") or {}
                    matrix = [float(x) for x in obj.get("/Matrix", [1, 0, 0, 1, 0, 0])]
                    walk(index, ContentStream(obj, reader), mul(matrix, ctm), sub.get_object() if hasattr(sub, "get_object") else sub)

    for index, page in enumerate(reader.pages):
        if pages is not None and index not in pages:
            continue
        xobjects = (page.get("/Resources") or {}).get("/XObject") or {}
        walk(index, ContentStream(page.get_contents(), reader), [1, 0, 0, 1, 0, 0],
             xobjects.get_object() if hasattr(xobjects, "get_object") else xobjects)
    return out


def print_book(pages: pathlib.Path, out: pathlib.Path, root: pathlib.Path = ROOT) -> pathlib.Path:
    """Print the singlehtml book in ``pages`` to ``out`` (see the module docstring)."""
    from pypdf import PdfReader
    root_doc = yaml.safe_load((root / "_toc.yml").read_text())["root"]
    source = (pages / f"{root_doc}.html").read_text(encoding="utf-8")
    out = pathlib.Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    printable = pages / "book-print.html"
    numbers = None
    # the first print has the contents without page numbers; each next one has the numbers
    # the previous print gave (the contents keep their length, so they agree at once)
    for _ in range(3):
        page = printable_html(source, root, numbers)
        printable.write_text(page, encoding="utf-8")
        _print(printable, out)
        got = [p + 1 for p in _entry_pages(PdfReader(str(out)), page, root)]
        if got == numbers:
            break
        numbers = got
    else:
        raise RuntimeError("the contents' page numbers did not settle in three prints")
    rebuild_outline(out, page, root)
    return out


def _entry_pages(reader, page: str, root: pathlib.Path) -> list[int]:
    pages = heading_pages(reader, page)
    return [pages[index] for _, index, _ in contents_entries(page, root)]


def _print(printable: pathlib.Path, out: pathlib.Path) -> None:
    if out.exists():
        out.unlink()
    proc = book.run_chromium(["--virtual-time-budget=60000", "--run-all-compositor-stages-before-draw",
                              "--generate-pdf-document-outline", f"--print-to-pdf={out}",
                              "--no-pdf-header-footer", printable.as_uri()], timeout=600)
    if not out.is_file() or out.stat().st_size == 0:
        raise RuntimeError(f"chromium wrote no PDF (rc={proc.returncode}):\n{proc.stderr[-3000:]}")


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
