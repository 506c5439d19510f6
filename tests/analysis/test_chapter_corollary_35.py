"""Chapter 4's result (resdecay_lib.analysis.chapters.corollary_35): its glue names are the
notebook's, its constant is SymPy's, and its Monte Carlo numbers agree with values recomputed
here from the closed forms and the simulator."""
from __future__ import annotations

import math
import pathlib
from statistics import NormalDist

import numpy as np
import pytest

from resdecay_lib.analysis.chapters import corollary_35
from resdecay_lib.book.glues import EvidenceGlue, glue_names
from resdecay_lib.maths import gaussian
from resdecay_lib.stats.inference import ZCheck

from notebook_fixtures import prose_glue_names

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "chapters" / "04_corollary_35.ipynb"


def _tiny_result() -> corollary_35.Corollary35Result:
    k = np.arange(2, 5)
    return corollary_35.Corollary35Result(
        const=1.0, remainder_C=0.16478, rel_24=0.20521, n_max=4, widths=(32, 1024),
        mc=ZCheck(1.23456, 3.5, 6, 0.01), bias_se={32: 5.26, 1024: 0.24}, sqrtN_sd_sim=0.99812,
        sqrtN_sd_se=0.00312, sqrtN_sd_exact=1.00098, points={32: (k, k * 1.0, k * 0.1)},
        line=(k, k * 1.0, "line"))


def test_glue_names_are_the_names_the_notebook_reads():
    names = set(glue_names(_tiny_result()))
    assert names == prose_glue_names(NOTEBOOK) - {"fig-cor35-mc"}


def test_glues_round_as_the_prose_shows_and_evidence_is_evidence():
    g = _tiny_result().glues()
    assert g["ev_cor35_maxz"] == EvidenceGlue(1.23456, digits=3)
    assert g["ev_cor35_const"] == EvidenceGlue(1.0, digits=6)
    assert g["cor35_C"] == 0.1648 and g["cor35_rel_24"] == 0.2052
    assert g["cor35_bias_se_32"] == 5.3 and g["cor35_bias_se_1024"] == 0.2
    assert g["cor35_n_tests"] == 6 and isinstance(g["cor35_n_tests"], int)
    assert g["cor35_sqrtN_sd_exact"] == 1.001


def test_output_constant_is_one():
    assert corollary_35.output_constant() == 1.0


@pytest.mark.slow
def test_chapter_matches_closed_forms_and_an_independent_recomputation():
    r = corollary_35.chapter(ROOT)
    n = 2 * (corollary_35.N_MAX - 1)
    assert r.mc.n == n
    # Bonferroni at alpha = 0.01 over n two-sided tests, from the standard library
    assert r.mc.z_crit == pytest.approx(NormalDist().inv_cdf(1 - 0.01 / (2 * n)), rel=1e-9)
    assert r.rel_24 == pytest.approx(math.sqrt(2 * (1 - math.sqrt(23 / 24))), rel=1e-12)
    N = corollary_35.N_MAX
    assert r.sqrtN_sd_exact == pytest.approx(math.sqrt(N) * math.sqrt(2 * (1 - math.sqrt((N - 1) / N))), rel=1e-12)
    # the deepest point at the wide width, recomputed from the simulator
    d = corollary_35.WIDTHS[-1]
    sim = gaussian.simulate(N, d, corollary_35.ELEMENTS // d, seed=corollary_35.SEED + 1)
    assert r.sqrtN_sd_sim == pytest.approx(math.sqrt(N * sim.mean_sq_change[-1]), rel=1e-12)
    # the large-width formula plus the first-order term 1/(d-1) r^2 (1 + r^2)^{-3/2}, r^2 = 1/(N-1)
    r2 = 1 / (N - 1)
    pred = 2 * (1 - math.sqrt((N - 1) / N)) + r2 / (1 + r2) ** 1.5 / (d - 1)
    assert abs(sim.mean_sq_change[-1] - pred) / sim.stderr[-1] <= r.mc.max_abs
    assert r.mc.passed and r.bias_se[32] > r.mc.z_crit > r.bias_se[1024]
