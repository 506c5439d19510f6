"""Serve MathJax from the built book itself, so offline readers see rendered math.

Copies the MathJax 3 ``es5`` bundle shipped by the PyPI package django-static-mathjax
(import name ``mathjax``) into ``_static/mathjax`` of the HTML output. ``_config.yml``
points ``mathjax_path`` at ``mathjax/tex-mml-chtml.js``, a path relative to ``_static``,
so no page references a CDN.
"""
import pathlib
import shutil


def _bundle() -> pathlib.Path:
    import mathjax  # django-static-mathjax; needs no Django
    return pathlib.Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"


def _copy(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    dest = pathlib.Path(app.outdir) / "_static" / "mathjax"
    if not (dest / "tex-mml-chtml.js").exists():
        shutil.copytree(_bundle(), dest, dirs_exist_ok=True)


def setup(app):
    if not (_bundle() / "tex-mml-chtml.js").exists():
        raise RuntimeError("MathJax bundle not found: pip install django-static-mathjax==3.2.2.1")
    app.connect("build-finished", _copy)
    # Sphinx loads MathJax only on pages whose body has math, but a chapter title with math
    # (e.g. "O(1/\\sqrt{k})") is in every page's navigation: without MathJax it shows as raw
    # TeX on math-free pages (search, index, bibliography). Load it on every page.
    app.set_html_assets_policy("always")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
