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
import os
import pathlib

from ..checks import ArgumentTypeError, show

__all__ = ["read_evidence", "toc_documents", "book_notebooks", "book_root", "find_book_root"]


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


def book_root(root, name: str = "root") -> pathlib.Path:
    """``root`` as the folder of a book: a path (a non-empty str or ``os.PathLike``;
    :class:`~resdecay_lib.checks.ArgumentTypeError` otherwise) to a folder that holds a
    ``_toc.yml`` (``ValueError`` naming ``name`` and the path otherwise)."""
    if isinstance(root, os.PathLike):
        try:
            fs = os.fspath(root)
        except Exception:                 # a broken __fspath__
            fs = None
    else:
        fs = root
    if not isinstance(fs, str):
        raise ArgumentTypeError(f"{name} must be the book's folder (a non-empty str or os.PathLike), "
                                f"got {type(root).__name__} {show(root)}")
    if not fs.strip() or "\x00" in fs:
        raise ValueError(f"{name} must be the book's folder (a non-empty path without NUL), got {show(root)}")
    folder = pathlib.Path(fs)
    if not folder.is_dir():
        what = "a file" if folder.exists() else "nothing"
        raise ValueError(f"{name} must be the book's folder, got {str(folder)!r}: {what} is there")
    if not (folder / "_toc.yml").is_file():
        raise ValueError(f"{name} {str(folder)!r} is not a book's folder: it has no _toc.yml")
    return folder


def find_book_root(start=None) -> pathlib.Path:
    """The book's folder that holds ``start`` (default: the working directory): ``start`` or
    the nearest folder above it with a ``_toc.yml``. What every chapter calls to find
    ``configs/`` and ``results/``, whether it runs from ``chapters/`` (``jupyter execute``,
    nbval) or from the root (``jupyter-book build``). ``ValueError`` naming the folder when no
    folder up to the file system's root holds a ``_toc.yml``."""
    here = pathlib.Path.cwd() if start is None else book_path_arg(start)
    here = here.resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file():
            return folder
    raise ValueError(f"start {str(here)!r} is in no book: neither it nor any folder above it holds a _toc.yml")


def book_path_arg(path, name: str = "start") -> pathlib.Path:
    """``path`` (a non-empty str or ``os.PathLike``) as a Path; ArgumentTypeError naming
    ``name`` otherwise."""
    fs = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    if not isinstance(fs, str) or not fs.strip() or "\x00" in fs:
        raise ArgumentTypeError(f"{name} must be a folder (a non-empty str or os.PathLike), "
                                f"got {type(path).__name__} {show(path)}")
    return pathlib.Path(fs)


def _toc_file(toc, path) -> list[str]:
    """The documents of a parsed ``_toc.yml``; ValueError naming the file when it is not one."""
    def doc(entry, where):
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            raise ValueError(f"{path}: {where} must be a mapping with a 'file' string, got {show(entry)}")
        return entry["file"]

    def entries(value, where):
        if value is None:
            return []
        if not isinstance(value, list):
            raise ValueError(f"{path}: {where} must be a list, got {show(value)}")
        return value

    if not isinstance(toc, dict) or not isinstance(toc.get("root"), str):
        raise ValueError(f"{path} is not a table of contents: it needs a mapping with a 'root' document, "
                         f"got {show(toc)}")
    docs = [toc["root"]]
    for i, part in enumerate(entries(toc.get("parts", []), "parts")):
        if not isinstance(part, dict):
            raise ValueError(f"{path}: parts[{i}] must be a mapping, got {show(part)}")
        docs += [doc(c, f"parts[{i}].chapters[{j}]")
                 for j, c in enumerate(entries(part.get("chapters", []), f"parts[{i}].chapters"))]
    docs += [doc(c, f"chapters[{j}]") for j, c in enumerate(entries(toc.get("chapters", []), "chapters"))]
    return docs


def toc_documents(root) -> list[str]:
    """The documents of ``root``'s ``_toc.yml``, in the book's order: its root, then each
    part's chapters, then top-level chapters (the one reader of the table of contents;
    ``tools/labels.py`` uses it too). ``root``: the book's folder (:func:`book_root`); a
    ``_toc.yml`` that is not YAML or not a table of contents raises ``ValueError`` naming it."""
    import yaml
    path = book_root(root) / "_toc.yml"
    try:
        toc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ValueError(f"{path} cannot be read as YAML: {type(exc).__name__}: {' '.join(str(exc).split())}"[:300]) from None
    return _toc_file(toc, path)


def book_notebooks(root) -> list[pathlib.Path]:
    """The notebooks of the book: the ``.ipynb`` documents of ``root``'s ``_toc.yml``, in
    order (a chapter that exists but is not in the table of contents is not in the book).
    ``root`` as in :func:`toc_documents`."""
    root = book_root(root)
    toc = sorted(toc_documents(root))
    return [root / f"{doc}.ipynb" for doc in toc if (root / f"{doc}.ipynb").exists()]
