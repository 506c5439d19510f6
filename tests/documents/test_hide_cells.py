"""tools/hide_cells.py: which code cells a reader sees, and a tool that rewrites tags only."""
from __future__ import annotations

import copy
import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import hide_cells as H  # noqa: E402  (tools/hide_cells.py)

API = {"probe", "plots", "R", "ledger"}


@pytest.mark.parametrize("source", [
    "assert x < 1",
    "# the bound holds at every width\nassert abs(m - w) < 3 * se, (m, w)\n",
    # every line part of asserts, however long the cell
    "assert a\nassert b\nassert (c\n        < d)\nassert e\nassert f\nassert g\nassert h, 'h'\n",
    # short, with an assert
    "z = (m - w) / se\nprint(f'z = {z:.2f}')\nassert abs(z) < z_crit",
    "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nassert a + b + c + d + e == 15",
])
def test_a_cell_that_states_a_claim_is_visible(source):
    assert H.is_claim(source) and H.visible(source, API)


@pytest.mark.parametrize("source", [
    "x = 1",
    "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\nassert a < f",     # 7 code lines, not all asserts
    "if x:\n    assert y\nz = 1\nw = 2\nv = 3\nu = 4\nt = 5",      # an assert nested in set-up code
    "%matplotlib inline\nthis is not python",
])
def test_a_long_or_assert_free_cell_is_no_claim(source):
    assert not H.is_claim(source)


@pytest.mark.parametrize("source", [
    "stream = probe.residual_stream(model, inputs, blocks)",
    "change = probe.layer_change(stream)\nchange.omega_sq[:4]",
    "# the per-layer table\nrows = R.exponent_table(sweep)\nprint(rows)\nrows",
])
def test_a_short_call_of_the_library_is_visible(source):
    assert H.shows_api(source, API) and H.visible(source, API)


@pytest.mark.parametrize("source, why", [
    ("a = probe.x(1)\nb = probe.y(a)\nc = probe.z(b)\nd = probe.w(c)\ne = probe.v(d)", "five lines"),
    ("for k in ks:\n    probe.layer_change(k)", "a loop"),
    ("ys = [probe.layer_change(k) for k in ks]", "a comprehension"),
    ("from resdecay_lib import probe\nprobe.layer_change(s)", "an import"),
    ("fig = plots.skip_costs(panels)\nplots.glue_figure('fig-skip-cost', fig)", "it glues a figure"),
    ("glue('n', ledger.count(rows), display=False)", "it glues a number"),
    ("print(len(rows))", "no library call"),
    ("x = np.sqrt(2)", "a call, but not of the library"),
    ("def f(x):\n    return probe.g(x)", "a definition"),
])
def test_set_up_and_analysis_are_folded(source, why):
    assert not H.visible(source, API), why


def test_api_names_are_what_the_notebook_imports_from_the_library():
    names = H.api_names(["import numpy as np\nfrom resdecay_lib import probe, results as R",
                         "import resdecay_lib.book.ledger as L\nfrom resdecay_lib.training.train import load_sweep",
                         "from other import thing"])
    assert names == {"probe", "R", "L", "load_sweep"}


def _nb(cells):
    return {"cells": cells, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}


def _code(source, tags=None, outputs=None):
    meta = {"tags": list(tags)} if tags is not None else {}
    return {"cell_type": "code", "execution_count": 1, "id": f"c{abs(hash(source)) % 10**8}",
            "metadata": meta, "outputs": outputs or [], "source": source.splitlines(keepends=True)}


NB = _nb([
    {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# A chapter\n"]},
    _code("import numpy as np\nfrom resdecay_lib import probe\n"),                              # set-up
    _code("stream = probe.residual_stream(model, x, blocks)", tags=["hide-input"]),             # API: unfold
    _code("assert stream.shape[0] == 13", tags=["hide-input", "raises-exception"]),             # claim: unfold
    _code("ys = []\nfor k in range(3):\n    ys.append(k)\nprint(ys)\n", tags=["hide-output"],
          outputs=[{"name": "stdout", "output_type": "stream", "text": ["[0, 1, 2]\n"]}]),     # analysis: fold
    _code("secret = 1", tags=["remove-input"]),                                                # left alone
])


def test_retag_sets_and_clears_hide_input_and_keeps_every_other_tag():
    nb = H.retag(copy.deepcopy(NB))
    tags = [c["metadata"].get("tags") for c in nb["cells"]]
    assert tags == [None, ["hide-input"], None, ["raises-exception"], ["hide-output", "hide-input"], ["remove-input"]]


def test_retag_changes_tags_only_and_is_idempotent():
    once = H.retag(copy.deepcopy(NB))
    strip = lambda nb: [{k: v for k, v in c.items() if k != "metadata"} | {"meta": {k: v for k, v in c["metadata"].items() if k != "tags"}}
                        for c in nb["cells"]]
    assert strip(once) == strip(NB)                         # sources, outputs, ids, other metadata
    assert {k: v for k, v in once.items() if k != "cells"} == {k: v for k, v in NB.items() if k != "cells"}
    assert H.dumps(H.retag(copy.deepcopy(once))) == H.dumps(once)


def test_visible_lines_count_only_unfolded_code():
    assert H.visible_lines(NB) == 2 + 4                 # the untagged import and loop cells
    assert H.visible_lines(H.retag(copy.deepcopy(NB))) == 1 + 1       # the API call and the claim


def test_the_tool_rewrites_a_notebook_prints_the_counts_and_then_checks_clean(tmp_path, capsys):
    path = tmp_path / "ch.ipynb"
    path.write_text(H.dumps(NB), encoding="utf-8")
    assert H.main(["--check", str(path)]) == 1 and path.read_text(encoding="utf-8") == H.dumps(NB)
    assert H.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "ch.ipynb: visible code lines 6 -> 2" in out and "[rewritten]" in out
    assert H.main(["--check", str(path)]) == 0
    assert "[rewritten]" not in capsys.readouterr().out


@pytest.mark.parametrize("path", H.book_notebooks(), ids=lambda p: p.name)
def test_on_the_book_the_tool_would_change_tags_only_and_write_the_file_as_nbformat_does(path):
    raw = path.read_text(encoding="utf-8")
    assert H.dumps(json.loads(raw)) == raw, "the notebook is not in nbformat's layout: a rewrite would change more than tags"
    before, after = json.loads(raw), H.retag(json.loads(raw))
    for a, b in zip(before["cells"], after["cells"]):
        a["metadata"].pop("tags", None), b["metadata"].pop("tags", None)
    assert before == after
