"""Chapter 1's result (resdecay_lib.analysis.chapters.stream): the LayerNorm identity's checks."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from resdecay_lib.analysis.chapters import stream
from resdecay_lib.book.glues import EvidenceGlue, Table, Words, glue_names

from notebook_fixtures import glued_text, stored_glues

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "chapters" / "01_stream.ipynb"


def test_rounding_tolerance_is_16_d_plus_4_u_times_the_cancellation_factor():
    tol = stream.rounding_tolerance(12, np.array([0.0, 1.0]), np.array([0.0, 0.5]))
    assert tol.tolist() == [16 * 16 * 2.0**-53, 16 * 16 * 2.0**-53 * 2.5**2]


@pytest.mark.parametrize("r, c, d", [(0.3, 0.0, 16), (1.0, -0.5, 64), (0.05, 0.9, 3)])
def test_pair_with_builds_a_centred_pair_of_that_ratio_and_cosine(r, c, d):
    x, f = stream.pair_with(r, c, d, 2.0, np.random.default_rng(0))
    assert x.shape == f.shape == (d,)
    assert abs(x.sum()) < 1e-12 and abs(f.sum()) < 1e-12
    assert math.isclose(np.linalg.norm(f) / np.linalg.norm(x), r, rel_tol=1e-12)
    assert math.isclose(x @ f / (np.linalg.norm(x) * np.linalg.norm(f)), c, abs_tol=1e-12)


def test_conventions_table_moves_the_seed_column_up_one_row():
    rows = [line.strip("| ").split(" | ") for line in stream.conventions_table(4).splitlines()[2:]]
    assert [r[0] for r in rows] == ["1", "2", "3", "4"] and rows[0][1] == "-"
    assert [r[2] for r in rows[:-1]] == [r[1] for r in rows[1:]]
    assert rows[1][1] == f"{2 / (math.sqrt(2) * (1 + math.sqrt(2))):.4f}"   # omega_2^2


@pytest.fixture(scope="module")
def result():
    return stream.chapter()


@pytest.mark.slow
def test_the_result_glues_what_the_notebook_glues(result):
    stored = stored_glues(NOTEBOOK)
    assert glue_names(result) == list(result.glues()) and set(result.glues()) == set(stored)
    assert {n: glued_text(v) for n, v in result.glues().items()} == stored
    assert isinstance(result.glues()["stream_rc_table"], Table)


@pytest.mark.slow
def test_the_checks_against_values_computed_here(result):
    # 5 widths x 3 scales x 3 kinds of pair x 16 pairs each
    assert result.identity.n_pairs == 5 * 3 * 3 * 16
    assert result.identity.max_err0 < 1e-12 and result.identity.max_ratio0 <= 1 and result.identity.max_ratio_eps <= 1
    # the change of a pair with ratio r and cosine c: 2 (1 - cos(x, x + f)), cos = (1 + r c) / sqrt(1 + 2 r c + r^2)
    for (r, c), changes in result.rc_changes.items():
        expected = 2 * (1 - (1 + r * c) / math.sqrt(1 + 2 * r * c + r * r))
        assert len(changes) == 4 and all(math.isclose(v, expected, rel_tol=1e-9, abs_tol=1e-15) for v in changes)
    assert result.rc_spread <= result.rc_tolerance
    assert result.glues()["ln_full_range"] == 4
