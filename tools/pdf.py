"""Write the whole book as one PDF, with rendered math: ``make pdf``.

Usage: python tools/pdf.py [OUT.pdf]        (default: _build/pdf/book.pdf)

Builds the book from its stored outputs with the ``singlehtml`` builder (every chapter on
one page, executing nothing), lets headless Chromium typeset the math with the book's own
MathJax copy, then prints the page (``--print-to-pdf --no-pdf-header-footer``). Jupyter
Book's ``pdfhtml`` builder would download a browser, which fails offline; this does not.
"""
from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import book  # noqa: E402
import yaml  # noqa: E402

# Print styles: the theme hides its sidebars in print; this also drops the header bar,
# the prev/next buttons, every code cell's source and printed log (the PDF is the paper; the
# HTML keeps the code, folded where it is set-up), and keeps figures and theorem boxes whole
# on a page.
PRINT_CSS = """
<style media="print">
  .bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .header-article, .prev-next-area,
  .bd-footer, .bd-footer-article, .bd-footer-content, .search-button-field, .theme-switch-button,
  .sidebar-toggle, #pst-back-to-top { display: none !important; }
  .bd-main .bd-content .bd-article-container { max-width: 100% !important; }
  figure, .proof, .admonition, table { break-inside: avoid; }
  /* the PDF reads as a paper: code and its printed logs are in the HTML only; theorems,
     prose, figures, tables and displayed results stay */
  .cell_input, details.above-input, details.below-input, .cell_output .output.stream,
  .cell_output .output.stderr { display: none !important; }
  .cell:not(:has(.cell_output img, .cell_output table, .cell_output .text_html)) { display: none !important; }
  /* what code remains (listings in the prose) wraps instead of being cut off at the edge */
  pre { white-space: pre-wrap !important; overflow-wrap: anywhere; }
  /* singlehtml nests every later document inside the root's section: one chapter a page */
  section.mathjax_ignore section.mathjax_ignore { break-before: page; }
</style>
"""


def write_pdf(out: pathlib.Path, build_dir: pathlib.Path | None = None) -> pathlib.Path:
    """Build the singlehtml book into ``build_dir`` and print it to ``out``; return ``out``."""
    out = pathlib.Path(out).resolve()
    build_dir = pathlib.Path(build_dir or out.parent / "singlehtml").resolve()
    pages = book.build(build_dir, "singlehtml")
    # index.html only redirects; the book is the root document of _toc.yml
    root = yaml.safe_load((book.ROOT / "_toc.yml").read_text())["root"]
    page = pages / f"{root}.html"
    printable = pages / "book-print.html"
    printable.write_text(page.read_text(encoding="utf-8").replace("</head>", PRINT_CSS + "</head>", 1),
                         encoding="utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        out.unlink()
    proc = book.run_chromium(["--virtual-time-budget=30000", "--run-all-compositor-stages-before-draw",
                              f"--print-to-pdf={out}", "--no-pdf-header-footer", printable.as_uri()],
                             timeout=300)
    if not out.is_file() or out.stat().st_size == 0:
        raise RuntimeError(f"chromium wrote no PDF (rc={proc.returncode}):\n{proc.stderr[-3000:]}")
    return out


if __name__ == "__main__":
    target = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else book.ROOT / "_build" / "pdf" / "book.pdf"
    if book.chromium() is None:
        sys.exit(f"make pdf needs headless Chromium: {book.INSTALL_HINT}")
    print(write_pdf(target))
