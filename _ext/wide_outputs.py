"""The book's own stylesheet, ``_ext/static/resdecay.css``: wide outputs scroll or wrap inside
their box instead of pushing the page sideways, and the caption labels' style.

``tests/test_browser.py`` checks the result in Chromium: no page is wider than the window.
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
