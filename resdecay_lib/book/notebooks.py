"""Reading the book's stored notebooks: the evidence the chapters glued, and the documents of
the table of contents.

The evidence is what the chapters glued under names starting with ``ev_`` (myst-nb
``glue``), read from the outputs STORED in ``chapters/*.ipynb`` -- the same outputs nbval
re-executes and compares, so a verdict can only change when the evidence does
(:func:`read_evidence`). :func:`toc_documents` is the one reader of ``_toc.yml`` (the verdict
chapter, the Preface, ``tools/labels.py`` and ``tools/pdf.py`` use it through
:mod:`resdecay_lib.book.ledger`), and :func:`book_notebooks` the notebooks it lists.
"""
from __future__ import annotations

import ast
import json
import pathlib

__all__ = ["read_evidence", "toc_documents", "book_notebooks"]


def _glued_float(text: str, name: str) -> float:
    text = text.strip()
    if text in ("inf", "-inf", "nan"):
        return float(text)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"glued evidence {name!r} is not a number: {text!r}") from exc
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"glued evidence {name!r} is not a number: {text!r}")
    return float(value)


def read_evidence(chapters="chapters", prefix: str = "ev_") -> dict[str, float]:
    """Glued values named ``prefix*`` in the stored outputs of ``chapters/*.ipynb``.

    ``chapters`` is a folder, or an iterable of notebook paths. myst-nb's ``glue`` stores a
    value as a display output whose metadata carries ``scrapbook: {name, mime_prefix}`` and
    whose data holds ``<mime_prefix>text/plain``: the repr of the value. Returns
    ``{name: float}``; a name glued by two notebooks, or a value that is not a number,
    raises ``ValueError`` naming it.
    """
    if not isinstance(prefix, str) or not prefix:
        raise ValueError(f"prefix must be a non-empty string (the evidence names' start), got {prefix!r}")
    if isinstance(chapters, (str, pathlib.Path)):
        folder = pathlib.Path(chapters)
        if not folder.is_dir():
            raise ValueError(f"chapters must be a folder of notebooks, got {str(folder)!r}")
        paths = sorted(folder.glob("*.ipynb"))
    else:
        if isinstance(chapters, bytes) or not hasattr(chapters, "__iter__"):
            raise ValueError(f"chapters must be a folder of notebooks or a list of notebook paths, "
                             f"got {type(chapters).__name__} {chapters!r}")
        chapters = list(chapters)
        for i, p in enumerate(chapters):
            if not isinstance(p, (str, pathlib.Path)) or not pathlib.Path(p).is_file():
                raise ValueError(f"chapters[{i}] must be the path of a notebook file, got {p!r}")
        paths = [pathlib.Path(p) for p in chapters]
    evidence, source = {}, {}
    for path in paths:
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"chapters: {path} is not a notebook (not JSON: {exc})") from exc
        if not isinstance(notebook, dict):
            raise ValueError(f"chapters: {path} is not a notebook (its JSON is not an object)")
        for cell in notebook.get("cells", []):
            for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
                scrap = output.get("metadata", {}).get("scrapbook")
                if not scrap or not str(scrap.get("name", "")).startswith(prefix):
                    continue
                name = scrap["name"]
                text = output.get("data", {}).get(scrap.get("mime_prefix", "") + "text/plain")
                if text is None:
                    raise ValueError(f"glued evidence {name!r} in {path.name} has no text/plain value")
                if name in evidence and source[name] != path.name:
                    raise ValueError(f"evidence {name!r} is glued by both {source[name]} and {path.name}")
                evidence[name] = _glued_float("".join(text) if isinstance(text, list) else text, name)
                source[name] = path.name
    return evidence


def toc_documents(root) -> list[str]:
    """The documents of ``root``'s ``_toc.yml``, in the book's order: its root, then each
    part's chapters, then top-level chapters (the one reader of the table of contents;
    ``tools/labels.py`` uses it too)."""
    import yaml
    toc = yaml.safe_load((pathlib.Path(root) / "_toc.yml").read_text())
    docs = [toc["root"]]
    for part in toc.get("parts", []):
        docs += [c["file"] for c in part.get("chapters", [])]
    docs += [c["file"] for c in toc.get("chapters", [])]
    return docs


def book_notebooks(root) -> list[pathlib.Path]:
    """The notebooks of the book: the ``.ipynb`` documents of ``root``'s ``_toc.yml``, in
    order (a chapter that exists but is not in the table of contents is not in the book)."""
    root = pathlib.Path(root)
    toc = sorted(toc_documents(root))
    return [root / f"{doc}.ipynb" for doc in toc if (root / f"{doc}.ipynb").exists()]
