"""The book's own stylesheet, ``_ext/static/resdecay.css``: what a reader sees at normal size.

* a text output (stream, printed value) wraps inside its box (``white-space: pre-wrap``), so no
  part of a long line hides behind a scrollbar; wide HTML tables and display math scroll in
  their own box; nothing pushes the page sideways;
* a figure's image is shown at the column's width, so the figure's text (drawn at
  ``plots.MIN_FONT_PT`` for a PNG of ``plots.COLUMN_IN`` at 100 dpi) scales with the column;
* captions are in the body text's colour, and the caption labels have their own style.

``tests/documents/test_browser.py`` checks the result in Chromium at a 1280 px window: no page is wider
than the window, no text output is wider than its box, a figure's smallest text is at least 0.8
of the body text's size, and captions have a WCAG AA contrast (at least 4.5).
"""
import pathlib

STATIC = pathlib.Path(__file__).resolve().parent / "static"


def _add_static(app):
    if str(STATIC) not in app.config.html_static_path:
        app.config.html_static_path.append(str(STATIC))


def setup(app):
    app.connect("builder-inited", _add_static)
    app.add_css_file("resdecay.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
