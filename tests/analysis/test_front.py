"""resdecay_lib.analysis.front: the models past the front, the window slopes, the shifted law."""
import math

import numpy as np
import pytest

from resdecay_lib.analysis import front
from resdecay_lib.maths import theory


def _gram(front_var=(0.04, 25.0, 7.0, 2.0), bulk=1.3, L=24, last=5.0, align=0.0):
    """A diagonal Gram matrix (independent summands): embedding and blocks 1..L."""
    d = list(front_var) + [bulk] * (L - len(front_var)) + [last]
    return np.diag(d[: L + 1])


def test_front_model_of_independent_blocks_is_the_heteroscedastic_formula():
    G = _gram()
    p = front.block_profile(G)
    k, w = front.model_curve(p, "front", 24)
    expected = theory.omega_sq_hetero(np.diag(G))[front.FRONT_BLOCKS:]
    assert list(k) == list(range(4, 25))
    assert np.allclose(w, expected, rtol=1e-12)


def test_independent_blocks_make_feedback_equal_front():
    p = front.block_profile(_gram())
    assert p.a == 0
    assert np.allclose(front.model_curve(p, "feedback", 48)[1], front.model_curve(p, "front", 48)[1])


def test_level_model_is_flat_in_the_bulk():
    p = front.block_profile(_gram())
    k, w = front.model_curve(p, "level", 96)
    assert np.ptp(w[:-1]) == 0 and w[-1] != w[0]


def test_front_model_k0_is_the_front_over_the_bulk_variance():
    p = front.block_profile(_gram())
    assert p.k0 == pytest.approx((0.04 + 25 + 7 + 2) / 1.3 - 3)


def test_front_model_decays_like_one_over_k_plus_k0_far_past_the_front():
    p = front.block_profile(_gram(last=1.3))
    k, w = front.model_curve(p, "front", 4000)
    # omega_k^2 ~ 1 / (k + k0): the local slope at k = 2000..4000 is about -k / (k + k0)
    slope = front.local_slope(k, w, 2000, 4000)
    assert slope == pytest.approx(-3000 / (3000 + p.k0), abs=0.01)


def test_a_negative_alignment_levels_the_feedback_model_off():
    L = 24
    G = np.diag([0.04, 25.0, 7.0, 2.0] + [1.3] * (L - 3)).astype(float)
    # blocks 4..L write against the stream: a negative covariance with everything before
    for k in range(4, L + 1):
        G[k, :k] = G[:k, k] = -0.02
    p = front.block_profile(G)
    assert p.a < 0
    _, w = front.model_curve(p, "feedback", 20000)
    v_star, w_star = theory.feedback_fixed_point(p.a, math.sqrt(p.b_sq))
    assert w[-2] == pytest.approx(w_star, rel=1e-3)


def test_windows_are_quarter_to_half_and_half_to_end():
    assert front.window(48, "quarter_half") == (12, 24)
    assert front.window(96, "half_end") == (48, 96)
    with pytest.raises(ValueError, match="name must be one of"):
        front.window(48, "middle")


def test_shifted_law_recovers_its_parameters():
    k = np.arange(4, 97)
    y = 1.1 / (k + 30.0)
    s = front.shifted_law(k, y)
    assert s.k0 == pytest.approx(30.0, rel=1e-4) and s.amplitude == pytest.approx(1.1, rel=1e-4)


def test_compare_laws_names_the_law_that_made_the_curve():
    k = np.arange(4, 97)
    rng = np.random.default_rng(0)
    noise = np.exp(0.01 * rng.standard_normal(k.size))
    assert front.compare_laws(k, 1.0 / (k + 30.0) * noise)["better"] == "shifted"
    assert front.compare_laws(k, 2.0 * k ** -0.4 * noise)["better"] == "power"


def test_position_puts_the_predictions_at_minus_one_and_plus_one():
    pred = {"models": {"front": {"96": {"slopes": {"half_end": {"mean": -0.5, "se": 0.05, "n": 3}}}},
                       "level": {"96": {"slopes": {"half_end": {"mean": 0.1, "se": 0.02, "n": 3}}}}}}
    assert front.position(-0.5, 96, pred) == pytest.approx(-1)
    assert front.position(0.1, 96, pred) == pytest.approx(1)
    assert front.position(-0.2, 96, pred) == pytest.approx(0)


def test_profile_rejects_a_bulk_of_fewer_than_two_blocks():
    with pytest.raises(ValueError, match="bulk needs at least 2 blocks"):
        front.block_profile(np.eye(6))


def test_the_recorded_order_matches_git_where_the_history_is_there():
    """results/predictions/order.json (written by tools/record_order.py) says what git says: the
    predictions' commit, and for every deep run's code version its commit time and descent."""
    import json
    import pathlib
    import subprocess
    root = pathlib.Path(__file__).resolve().parents[2]
    order = json.loads((root / "results" / "predictions" / "order.json").read_text())
    git = lambda *a: subprocess.run(["git", *a], cwd=root, capture_output=True, text=True)  # noqa: E731
    first = git("log", "--diff-filter=A", "--format=%H", "--", "results/predictions/front.json").stdout.split()
    if not first or git("cat-file", "-e", order["predictions"]["commit"]).returncode != 0:
        pytest.skip("no git history here (a shallow clone or an archive): the chapter's check stands alone")
    assert order["predictions"]["commit"] == first[-1]
    for v in order["code_versions"].values():
        anc = git("merge-base", "--is-ancestor", order["predictions"]["commit"], v["commit"]).returncode == 0
        assert anc == v["descends_from_predictions"]
        assert git("show", "-s", "--format=%cI", v["commit"]).stdout.strip() == v["committed"]


def test_a_slope_is_above_within_or_below_the_front_models_interval():
    pred = {"models": {"front": {"48": {"slopes": {"half_end": {"mean": -0.24, "lo": -0.47, "hi": -0.01}}}}}}
    assert [front.against_front(s, 48, pred) for s in (1.04, -0.33, -0.78, -0.01)] == ["above", "within", "below", "within"]
    with pytest.raises(ValueError, match="no 'front' slope for L = 96"):
        front.against_front(0.0, 96, pred)


def test_prediction_tests_are_welch_intervals_bonferroni_corrected_over_every_test():
    from scipy.stats import ttest_ind
    from resdecay_lib.stats import inference
    def entry(per_seed):
        return {"per_seed": per_seed, "mean": float(np.mean(per_seed))}
    pred = {"models": {m: {"48": {"slopes": {w: entry(v) for w in front.WINDOWS}}}
                       for m, v in (("front", [-0.3, -0.4, -0.35]), ("feedback", [-0.5, -0.2, -0.4]),
                                    ("level", [0.0, 0.0, 0.0]))}}
    runs = [0.59, 0.60, 0.69, 0.59, 0.03]
    tests = front.prediction_tests({48: {w: runs for w in front.WINDOWS}, 96: {w: runs[:2] for w in front.WINDOWS}}, pred)
    assert len(tests) == 6 and all(t.L == 48 and t.level == pytest.approx(1 - 0.05 / 6) for t in tests)
    f = next(t for t in tests if t.model == "front" and t.window == "half_end")
    ci = ttest_ind(runs, [-0.3, -0.4, -0.35], equal_var=False).confidence_interval(1 - 0.05 / 6)
    assert (f.lo, f.hi) == pytest.approx((ci.low, ci.high)) and f.refuted
    lv = next(t for t in tests if t.model == "level" and t.window == "half_end")
    iv = inference.t_interval(runs, 1 - 0.05 / 6)           # a flat prediction: the runs' own interval
    assert (lv.lo, lv.hi) == pytest.approx((iv.lo, iv.hi)) and lv.refuted == (iv.lo > 0 or iv.hi < 0)
    assert front.prediction_tests({96: {w: runs[:2] for w in front.WINDOWS}}, pred) == []
