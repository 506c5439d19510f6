"""Reading the stored notebooks (resdecay_lib.book.notebooks): the glued evidence."""
from __future__ import annotations

import math

import pytest

from notebook_fixtures import glue_output, notebook   # a notebook as the chapters store it
from resdecay_lib.book.notebooks import read_evidence


def test_read_evidence_takes_only_ev_glue_from_stored_outputs(tmp_path):
    notebook(tmp_path / "a.ipynb", [glue_output("ev_x", 0.25), glue_output("w24", 0.04),
                                     glue_output("ev_y", -1.02, display=False),
                                     {"output_type": "stream", "name": "stdout", "text": "ev_z 3\n"}])
    notebook(tmp_path / "b.ipynb", [glue_output("ev_z", 3), glue_output("ev_inf", float("inf"))])
    ev = read_evidence(tmp_path)
    assert ev == {"ev_x": 0.25, "ev_y": -1.02, "ev_z": 3.0, "ev_inf": math.inf}
    assert all(type(v) is float for v in ev.values())


def test_read_evidence_rejects_duplicates_and_non_numbers(tmp_path):
    notebook(tmp_path / "a.ipynb", [glue_output("ev_x", 1.0)])
    notebook(tmp_path / "b.ipynb", [glue_output("ev_x", 2.0)])
    with pytest.raises(ValueError, match="ev_x.*both"):
        read_evidence(tmp_path)
    with pytest.raises(ValueError, match="ev_s.*not a number"):
        read_evidence([notebook(tmp_path / "c.ipynb", [glue_output("ev_s", "holds")])])
    with pytest.raises(ValueError, match="chapters must be a folder"):
        read_evidence(tmp_path / "missing")
