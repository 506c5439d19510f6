"""Citing the book: an optional repository URL, CITATION.cff and CITATION.bib, the commit at
build time, and a one-line citation of a label.

* The book is cited by its version, its commit and a stable label. A repository address is
  optional and set in ONE place, ``_config.yml``'s ``sphinx: config: resdecay_repository_url``:
  empty (or absent) until the repository has a public remote, and then nothing prints a URL
  (no placeholder address: the title page of the PDF shows the version and the commit, the
  citation files cite the version, the built copies the commit too). When it is set,
  ``CITATION.cff`` (``repository-code``) and ``CITATION.bib`` (``url``) carry it, with the version
  of ``resdecay_lib.__version__``; ``python _ext/citation.py`` rewrites both from the setting
  and ``--check`` fails when they differ from it (``tests/documents/test_citation.py``).
* A file cannot hold the commit it is committed in, so the build adds it: as a Sphinx extension
  this module writes ``CITATION.cff`` (with ``commit:``) and ``CITATION.bib`` (commit in the
  note) into the built book's root, e.g. ``_build/html/CITATION.cff``, from ``git rev-parse HEAD``.
* :func:`cite_line` is the one-line citation of a label (Chapter 10 shows one per claim); the
  role ``{cite-line}`claim-fifth-at-24``` writes the same line in MyST text at build time.
  Neither carries the commit: a notebook's stored output cannot know it either, and nbval
  compares that output; the commit of a built book is in its ``CITATION.cff``.
"""
from __future__ import annotations

import pathlib
import re
import sys

from resdecay_lib.book.citation import (BIB_KEY, SETTING, citation_bib, cff_text, cite_line, commit,  # noqa: F401
                                        repository_url, version, write_repository_files)

ROOT = pathlib.Path(__file__).resolve().parents[1]


# --- Sphinx: the setting, the role, and the built copies with the commit ---------------------


def _write_built(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    root = pathlib.Path(app.srcdir)
    sha = commit(root)
    out = pathlib.Path(app.outdir)
    (out / "CITATION.cff").write_text(cff_text(root, sha), encoding="utf-8")
    (out / "CITATION.bib").write_text(citation_bib(root, sha), encoding="utf-8")


def _cite_line_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    from docutils import nodes
    env = inliner.document.settings.env
    m = re.fullmatch(r"\s*(.*?)\s*<([A-Za-z][\w-]*)>\s*", text)
    title, label = (m.group(1), m.group(2)) if m else (None, text.strip())
    try:
        line = cite_line(label, title, pathlib.Path(env.srcdir))
    except (ValueError, KeyError, OSError) as err:
        msg = inliner.reporter.error(f"cite-line: {err}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [nodes.literal(rawtext, line, classes=["cite-line"])], []


def setup(app):
    app.add_config_value(SETTING, "", "env", [str])
    app.add_role("cite-line", _cite_line_role)
    app.connect("build-finished", _write_built)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    names = write_repository_files(ROOT, check="--check" in sys.argv[1:])
    if "--check" in sys.argv[1:]:
        if names:
            print(f"out of date with _config.yml's {SETTING} or the version: {', '.join(names)} "
                  f"(run python _ext/citation.py)", file=sys.stderr)
        sys.exit(1 if names else 0)
    print("wrote " + (", ".join(names) if names else "nothing (up to date)"))
