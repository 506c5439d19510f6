"""Chapter 2's result (resdecay_lib.analysis.chapters.theorem): Theorem 3.3 against the Monte Carlo."""
from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from resdecay_lib.analysis.chapters import theorem
from resdecay_lib.book.glues import Words, glue_names
from notebook_fixtures import glued_text, stored_glues

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "chapters" / "02_theorem.ipynb"


def test_first_plain_words_says_rejected_above_the_critical_value():
    words = theorem.first_plain_words(4.4, 3.8)
    assert isinstance(words, Words) and words.startswith("above the critical value") and "rejected" in words


def test_first_plain_words_says_below_at_or_under_the_critical_value():
    assert theorem.first_plain_words(2.0, 3.8) == "below the critical value even without the allowance"
    assert theorem.first_plain_words(3.8, 3.8).startswith("below")


@pytest.fixture(scope="module")
def result():
    return theorem.chapter()


@pytest.mark.slow
def test_the_result_glues_what_the_notebook_glues(result):
    stored = {n: v for n, v in stored_glues(NOTEBOOK).items()}
    assert glue_names(result) == list(result.glues()) and set(result.glues()) == set(stored)
    assert {n: glued_text(v) for n, v in result.glues().items()} == stored


@pytest.mark.slow
def test_the_tests_against_values_computed_here(result):
    n = theorem.DEPTH - 1
    assert result.n_tests == n and result.symbolic_residual == 0
    assert math.isclose(result.z_crit, NormalDist().inv_cdf(1 - theorem.ALPHA / (2 * n)), rel_tol=1e-12)
    ks = np.arange(2, theorem.DEPTH + 1)
    assert result.ks.tolist() == ks.tolist()
    np.testing.assert_allclose(result.omega, 2 / (np.sqrt(ks) * (np.sqrt(ks - 1) + np.sqrt(ks))), rtol=1e-14)
    for d, t in result.tests.items():
        assert t.sim.d == d and t.sim.n_samples == theorem.WIDTHS[d]
        assert t.raw == pytest.approx(np.max(np.abs(t.sim.mean_sq_change - result.omega) / t.sim.stderr), rel=1e-12)
        # the first-order prediction: omega_k^2 + rho (1 - rho^2) / (d - 1), rho = sqrt((k - 1) / k)
        rho = np.sqrt((ks - 1) / ks)
        np.testing.assert_allclose(t.first_pred, result.omega + rho * (1 - rho**2) / (d - 1), rtol=1e-12)
    excess = np.mean(result.tests[16].sim.mean_sq_change / result.omega - 1)
    assert result.mean_excess(16) == pytest.approx(excess, rel=1e-12) and excess > 0
    assert result.tests_table().count("\n") == 1 + len(theorem.WIDTHS)
