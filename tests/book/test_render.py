"""The ledger's verdicts in MyST Markdown (resdecay_lib.book.render)."""
from __future__ import annotations

import copy
import json

from resdecay_lib.book import notebooks, render, verdicts
from resdecay_lib.book.claims import CLAIMS
from resdecay_lib.book.verdicts import Verdict
from notebook_fixtures import glue_output, notebook   # a notebook as the chapters store it


def test_markdown_table_escapes_pipes():
    claim = copy.copy(CLAIMS[0])
    table = render.markdown_table([(claim, Verdict("open", "a | b"))])
    assert "a \\| b" in table


def test_evidence_markdown_links_only_what_the_book_has(tmp_path):
    (tmp_path / "_toc.yml").write_text("root: intro\nparts:\n  - caption: x\n    chapters:\n"
                                       "      - file: chapters/02_theorem\n")
    (tmp_path / "chapters").mkdir()
    notebook(tmp_path / "chapters" / "02_theorem.ipynb", [glue_output("ev_a", 1.0)])
    claim = verdicts.Claim("claim-x", "X", "s", (("chapters/02_theorem", "thm-omega"),
                                                 ("chapters/07_training", "")), ("ev_a",), lambda ev: Verdict("holds", ""))
    md = render.evidence_markdown(claim, tmp_path)
    assert "{doc}`/chapters/02_theorem`" in md and "`thm-omega` (not in the chapter yet)" in md
    assert "`chapters/07_training` (not in the book yet)" in md
    assert notebooks.book_notebooks(tmp_path) == [tmp_path / "chapters" / "02_theorem.ipynb"]
    nb = json.loads((tmp_path / "chapters" / "02_theorem.ipynb").read_text())
    nb["cells"][1]["source"] = "```{prf:theorem} T\n:label: thm-omega\n\nx\n```"
    (tmp_path / "chapters" / "02_theorem.ipynb").write_text(json.dumps(nb))
    assert "{prf:ref}`thm-omega` in {doc}`/chapters/02_theorem`" in render.evidence_markdown(claim, tmp_path)
