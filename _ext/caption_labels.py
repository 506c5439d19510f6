"""Show each numbered figure's and table's stable label in its caption: "Fig. 18 (fig-ablation) ...".

A reader who cites a figure needs its label, not only its number (numbers move when a chapter
gains a figure; labels do not). After references are resolved (``doctree-resolved``, so a
``{ref}`` to the figure keeps the caption's text as written), every figure with a name and a
caption, and every table with a name and a title, gets ``(label)`` at the start of its caption,
in an ``inline`` with class ``caption-label``; the HTML writer puts the number before it. The
labels page (``tools/labels.py``) lists the same labels with their numbers.
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


def add_labels(app, doctree, docname) -> None:
    for node in list(doctree.findall(lambda n: isinstance(n, (nodes.figure, nodes.table)))):
        label, caption = label_of(node), _caption(node)
        if not label or caption is None or caption.get("resdecay_labelled"):
            continue
        caption.insert(0, nodes.inline("", f"({label}) ", classes=["caption-label"]))
        caption["resdecay_labelled"] = True


def setup(app):
    app.connect("doctree-resolved", add_labels)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
