"""Show each numbered figure's and table's stable label in its caption: "Fig. 18 (fig-ablation) ...".

A reader who cites a figure needs its label, not only its number (numbers move when a chapter
gains a figure; labels do not). After references are resolved (``doctree-resolved``, so a
``{ref}`` to the figure keeps the caption's text as written), every figure with a name and a
caption, and every table with a name and a title, gets ``(label)`` at the start of its caption,
in an ``inline`` with class ``caption-label``; the HTML writer puts the number before it. The
labels page (``tools/labels.py``) lists the same labels with their numbers.

Each image of a figure with a caption also gets the caption's text as its ``alt``:
without one the HTML writer falls back to the image's file name, a content hash, which is all
a screen reader or a reader whose images did not load would get. The alt is the caption as
written (math as its TeX source), without the number and the label; ``tests/documents/test_browser.py``
checks that every image's alt is its caption's text.
"""
from docutils import nodes


def label_of(node) -> str | None:
    """The stable label of a figure or table node: its first name (``:name:``)."""
    names = node.get("names") or []
    return names[0] if names else None


def _caption(node):
    kind = nodes.caption if isinstance(node, nodes.figure) else nodes.title
    for child in node.children:
        if isinstance(child, kind):
            return child
    return None


def caption_text(caption) -> str:
    """A caption's text on one line: what the reader reads after the number and label."""
    return " ".join(caption.astext().split())


def add_alt(figure, caption) -> None:
    """Give each image of ``figure`` the caption's text as its alt, unless it has its own (a
    file name is not one)."""
    text = caption_text(caption)
    for image in figure.findall(nodes.image):
        if text and image.get("alt", "") in ("", image.get("uri")):
            image["alt"] = text


def add_labels(app, doctree, docname) -> None:
    for node in list(doctree.findall(lambda n: isinstance(n, (nodes.figure, nodes.table)))):
        label, caption = label_of(node), _caption(node)
        if isinstance(node, nodes.figure) and caption is not None and not caption.get("resdecay_labelled"):
            add_alt(node, caption)  # before the label goes in, so the alt is the caption as written
        if not label or caption is None or caption.get("resdecay_labelled"):
            continue
        caption.insert(0, nodes.inline("", f"({label}) ", classes=["caption-label"]))
        caption["resdecay_labelled"] = True


def setup(app):
    app.connect("doctree-resolved", add_labels)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
