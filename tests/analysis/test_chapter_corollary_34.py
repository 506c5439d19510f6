"""Chapter 3's result (resdecay_lib.analysis.chapters.corollary_34): Corollary 3.4 with constants."""
from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from resdecay_lib.analysis.chapters import corollary_34
from resdecay_lib.book.glues import glue_names
from notebook_fixtures import glued_text, stored_glues

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "chapters" / "03_corollary_34.ipynb"


def omega(k: int) -> float:
    """omega_k = sqrt(2 / (sqrt(k) (sqrt(k - 1) + sqrt(k)))), seed convention, in floats."""
    return math.sqrt(2 / (math.sqrt(k) * (math.sqrt(k - 1) + math.sqrt(k))))


def test_scaled_remainder_is_the_remainder_over_k_to_the_minus_three_halves():
    ks = np.arange(2, 12)
    direct = np.array([(omega(k) - k**-0.5) * k**1.5 for k in ks])
    np.testing.assert_allclose(corollary_34.scaled_remainder(ks), direct, rtol=1e-10)
    assert corollary_34.scaled_remainder(np.array([2]))[0] == pytest.approx(2**1.5 * (omega(2) - 2**-0.5), rel=1e-14)


def test_fifth_ratios_under_each_reading():
    r = {name: float(v) for name, v in corollary_34.fifth_ratios().items()}
    assert list(r) == list(corollary_34.READINGS)
    assert r["seed, formula at k = 1"] == pytest.approx(omega(24) / math.sqrt(2), rel=1e-14)
    assert r["seed, first valid index k = 2"] == pytest.approx(omega(24) / omega(2), rel=1e-14)
    assert r["embedding-counted, k = 1"] == pytest.approx(omega(25) / omega(2), rel=1e-14)
    assert r["real LayerNorm, LN(0) = 0 at k = 1"] == pytest.approx(omega(24), rel=1e-14)
    assert r["first term 1/sqrt(k)"] == pytest.approx(24**-0.5, rel=1e-14)


@pytest.fixture(scope="module")
def result():
    return corollary_34.chapter()


@pytest.mark.slow
def test_the_result_glues_what_the_notebook_glues(result):
    stored = stored_glues(NOTEBOOK)
    assert glue_names(result) == list(result.glues()) and set(result.glues()) == set(stored)
    assert {n: glued_text(v) for n, v in result.glues().items()} == stored


@pytest.mark.slow
def test_the_checks_against_values_computed_here(result):
    n = len(corollary_34.WIDTHS) * (corollary_34.DEPTH - 1)
    assert result.check.n == n
    assert math.isclose(result.check.z_crit, NormalDist().inv_cdf(1 - corollary_34.ALPHA / (2 * n)), rel_tol=1e-12)
    assert float(result.remainder_C) == pytest.approx(2**1.5 * (omega(2) - 2**-0.5), rel=1e-14)
    assert result.sqrtk_limit == 1 and float(result.mean_abs_limit) == pytest.approx(math.sqrt(2 / math.pi))
    for d, sim in result.sims.items():
        assert sim.d == d and sim.n_samples == corollary_34.ELEMENTS // d
        limit = np.array([math.sqrt(2 / math.pi) * omega(int(k)) for k in sim.k])
        if d == 1024:
            np.testing.assert_allclose(result.z_limit_1024, (sim.mean_abs_change - limit) / sim.stderr_abs, rtol=1e-9)
    # "about 1/n": 1/ratio rounded; 1/sqrt(24) is about a fifth, omega_24 / sqrt(2) about a seventh
    assert result.denominators["first term 1/sqrt(k)"] == 5 and result.denominators["seed, formula at k = 1"] == 7
    assert result.about_a_fifth == result.about_a_fifth_exact
    assert result.var_ratio == pytest.approx(omega(24) ** 2 / omega(2) ** 2, rel=1e-14)
