"""Keep every built page free of remote URLs that a browser would fetch on load.

Jupyter Book 1 always loads ``sphinx_thebe``, which writes
``const THEBE_JS_URL = "https://unpkg.com/thebe@0.8.2/lib/index.js"`` into every page
(the URL is hard-coded in ``sphinx_thebe.init_thebe_core``; no option changes it), adds
``sphinx-thebe.js``/``.css`` and appends a ``text/x-thebe-config`` block naming a Binder
repository. This book disables Thebe (``launch_buttons: thebe: false``), so none of it is
used: when Thebe is off this extension drops those assets from each page's context and the
config block from each doctree. With Thebe on it changes nothing.

The browser test (``tests/documents/test_browser.py``) checks the result: no page's scripts,
stylesheets, images, fonts or frames point off the machine.
"""
from docutils import nodes

_THEBE_FILES = ("sphinx-thebe.js", "sphinx-thebe.css")


def _thebe_off(app) -> bool:
    launch = (app.config.html_theme_options or {}).get("launch_buttons") or {}
    return not launch.get("thebe", False)


def _is_thebe_asset(asset) -> bool:
    """True for sphinx_thebe's script/stylesheet entries (file or inline body)."""
    name = str(getattr(asset, "filename", "") or "")
    body = str(getattr(asset, "attributes", {}).get("body", "") or "")
    return name.split("?")[0].endswith(_THEBE_FILES) or "THEBE_JS_URL" in body


def _drop_thebe_assets(app, pagename, templatename, context, doctree):
    if not _thebe_off(app):
        return
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [a for a in context[key] if not _is_thebe_asset(a)]


def _drop_thebe_config(app, doctree, docname):
    if not _thebe_off(app):
        return
    for node in list(doctree.findall(nodes.raw)):
        text = node.astext()
        if "text/x-thebe-config" in text or "kernelName =" in text:
            node.parent.remove(node)


def setup(app):
    # after sphinx_thebe's own doctree-resolved handler (default priority 500)
    app.connect("doctree-resolved", _drop_thebe_config, priority=900)
    app.connect("html-page-context", _drop_thebe_assets, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
