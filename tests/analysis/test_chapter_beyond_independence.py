"""Chapter 5's result (resdecay_lib.analysis.chapters.beyond_independence): its glue names are the
notebook's, its SymPy constants are the closed forms, and its simulations agree with values
recomputed here from the simulators and the closed forms."""
from __future__ import annotations

import math
import pathlib
from statistics import NormalDist

import numpy as np
import pytest

from resdecay_lib.analysis.chapters import beyond_independence as B
from resdecay_lib.book.glues import EvidenceGlue, glue_names
from resdecay_lib.maths import gaussian
from resdecay_lib.stats.inference import ZCheck

from notebook_fixtures import prose_glue_names

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "chapters" / "05_beyond_independence.ipynb"


def _tiny_result() -> B.BeyondIndependenceResult:
    z = ZCheck(2.61372, 3.99717, 156, 0.01)
    return B.BeyondIndependenceResult(
        beta_crit=-1.0, geometric_limit_q2=0.5857864376, zeta2=1.644934, hetero_curves={}, hetero_geometric={},
        hetero_b1_gap=0.0, hetero=z, hetero_term_err=0.0, hetero_eps_ratio=0.1, rc=ZCheck(2.1184, 3.4808, 20, 0.01),
        rc_identity_worst=0.001, feedback=ZCheck(2.8123, 4.0419, 189, 0.01), feedback_w2_star=0.8,
        feedback_kw_far=2.00049, feedback_fixed_gap=0.0, feedback_series={})


def test_glue_names_are_the_names_the_notebook_reads():
    assert set(glue_names(_tiny_result())) == prose_glue_names(NOTEBOOK) - {"fig-hetero", "fig-feedback"}


def test_glues_round_as_the_prose_shows_and_evidence_is_evidence():
    g = _tiny_result().glues()
    assert g["ev_hetero_beta_crit"] == EvidenceGlue(-1.0, digits=4)
    assert g["ev_geometric_limit_q2"] == EvidenceGlue(0.5857864376, digits=6)
    assert g["ev_rc_maxz"] == EvidenceGlue(2.1184, digits=3)
    assert g["hetero_zeta2"] == 1.6449 and g["feedback_maxz"] == 2.81 and g["feedback_z_crit"] == 4.04
    assert g["feedback_kw_far"] == 2.0 and g["feedback_k_w_limit"] == 2.0
    assert (g["hetero_depth"], g["hetero_d"], g["feedback_d"], g["hetero_K"]) == (40, 256, 2048, 100_000)


def test_sympy_constants_are_the_closed_forms():
    assert B.beta_crit() == -1.0
    assert B.geometric_limit(2) == pytest.approx(2 - math.sqrt(2), rel=1e-15)
    assert B.geometric_limit(4) == pytest.approx(1.0, rel=1e-15)
    assert B.zeta2() == pytest.approx(math.pi**2 / 6, rel=1e-15)


def test_hetero_profiles_are_the_four_cases():
    p = B.hetero_profiles(3)
    assert list(p) == list(B.HETERO_CASES)
    np.testing.assert_allclose(p["beta = -2"], [1, 1 / 4, 1 / 9])
    np.testing.assert_allclose(p["geometric q = 2"], [2, 4, 8])


@pytest.mark.slow
def test_chapter_matches_an_independent_recomputation():
    r = B.chapter(ROOT)
    depth, d, n = B.HETERO_SIM
    assert r.hetero.n == 4 * (depth - 1)
    assert r.hetero.z_crit == pytest.approx(NormalDist().inv_cdf(1 - 0.01 / (2 * r.hetero.n)), rel=1e-9)
    assert r.rc.n == len(B.RC_R) * len(B.RC_C)
    # the beta = 1 profile, recomputed: eq-hetero with S_k = k (k - 1) / 2, plus m1 / (d - 1) at c = 0
    res = gaussian.simulate(depth, d, n, seed=50, sigma=np.sqrt(np.arange(1, depth + 1, dtype=float)))
    k = np.arange(2, depth + 1)
    S = k * (k - 1) / 2
    r2 = k / S
    pred = 2 * (1 - np.sqrt(S / (S + k))) + r2 / (1 + r2) ** 1.5 / (d - 1)
    assert np.max(np.abs((res.mean_sq_change - pred) / res.stderr)) <= r.hetero.max_abs
    # the feedback fixed point for a = -0.5, b = 1: 4 a^2 / (a^2 + b^2)
    assert r.feedback_w2_star == pytest.approx(0.8, rel=1e-12)
    # the a = 0 feedback stream is the theorem's model: its change against omega_k^2 = 2(1 - sqrt((k-1)/k))
    k, mean, se2, rec = r.feedback_series["simulation, a = 0"]
    np.testing.assert_allclose(rec, 2 * (1 - np.sqrt((k - 1) / k)), rtol=1e-9)
    assert r.hetero.passed and r.rc.passed and r.feedback.passed
