"""resdecay_lib.analysis.front: the models past the front, the window slopes, the shifted law."""
import math

import numpy as np
import pytest

from resdecay_lib.analysis import front
from resdecay_lib.maths import theory
from sweep_fixtures import run_dict


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


# ----------------------------------------------------------------------------- declared after the deep runs were seen

def test_runs_needed_is_the_first_n_whose_t_half_width_falls_below_the_target():
    from scipy.stats import t
    # t_{0.975, 6} / sqrt(7) = 0.925 < 1 while t_{0.975, 5} / sqrt(6) = 1.050
    assert front.runs_needed(1.0, 1.0, alpha=0.05) == 7
    n = front.runs_needed(5.0, 2.0)                      # claim-front's level, 1 - 0.05/2
    assert t.ppf(1 - 0.0125, n - 1) * 5 / math.sqrt(n) < 2 <= t.ppf(1 - 0.0125, n - 2) * 5 / math.sqrt(n - 1)


def test_runs_needed_rejects_a_zero_spread_and_a_search_that_ends_too_soon():
    with pytest.raises(ValueError, match="sd"):
        front.runs_needed(0.0, 1.0)
    with pytest.raises(ValueError, match="n_max = 5"):
        front.runs_needed(10.0, 0.1, n_max=5)


def test_depth_scaling_finds_a_front_proportional_to_depth_and_one_that_does_not_grow():
    from scipy.stats import linregress
    noise = (math.exp(0.1), math.exp(-0.1), 1.0)           # balanced at every depth: the slope is exactly 1
    k0 = {L: [1.25 * L * e for e in noise] for L in (24, 48, 96)}
    s = front.depth_scaling(k0)
    x = [math.log(L) for L in k0 for _ in noise]
    y = [math.log(v) for L in k0 for v in k0[L]]
    ref = linregress(x, y)
    assert s.slope.mean == pytest.approx(1.0, abs=1e-12) and s.slope.se == pytest.approx(ref.stderr, rel=1e-9)
    assert s.reading == "proportional" and s.slope.n == 9
    assert s.ratio[48].mean == pytest.approx(1.25 * np.mean(noise), rel=1e-12)
    flat = front.depth_scaling({L: [30.0 * e for e in noise] for L in (24, 48, 96)})
    assert flat.slope.mean == pytest.approx(0.0, abs=1e-12) and flat.reading == "not shown to grow"


def test_depth_scaling_needs_two_depths_four_runs_and_positive_k0():
    with pytest.raises(ValueError, match="two depths"):
        front.depth_scaling({24: [30.0, 31.0, 32.0, 33.0]})
    with pytest.raises(ValueError, match="k0\\[48\\]"):
        front.depth_scaling({24: [30.0, 31.0], 48: [-1.0, 60.0]})


def test_sign_test_counts_positive_signs_leaves_zeros_out_and_gives_the_binomial_p():
    assert front.sign_test([0.5, 0.2, 0.1]) == front.SignTest(3, 3, 0.25)
    assert front.sign_test([0.6] * 8).p == pytest.approx(2 / 2 ** 8)
    assert front.sign_test([1.0, 0.0, -1.0]) == front.SignTest(1, 2, 1.0)
    with pytest.raises(ValueError, match="nonzero"):
        front.sign_test([0.0, 0.0])


def test_last_block_jump_is_the_last_change_over_the_rest_of_the_later_half():
    curve = np.ones(8)
    curve[-1] = 3.0
    curve[3] = 2.0                          # k = 4 = L/2 is in the window: the rest's mean is 5/4
    assert front.last_block_jump(curve) == pytest.approx(3.0 / 1.25)
    with pytest.raises(ValueError, match="positive"):
        front.last_block_jump(np.zeros(8))


def test_position_without_last_places_the_slope_over_L_half_to_L_minus_one_between_the_models():
    L = 16
    k = np.arange(4, L + 1, dtype=float)
    level = np.ones_like(k)
    level[-1] = 5.0                         # the level model's tail: left out with block L
    pred = {"models": {"front": {str(L): {"k": list(k), "curve_per_seed": [list(1 / k), list(2 / k)]}},
                       "level": {str(L): {"k": list(k), "curve_per_seed": [list(level)]}}}}
    kk = np.arange(1, L + 1, dtype=float)
    halfway = kk ** -0.5
    halfway[-1] = 10.0                      # a jumped last block changes nothing without it
    assert front.position_without_last(halfway, pred) == pytest.approx(0.0, abs=1e-12)   # midway: u = 0
    assert front.position_without_last(np.ones(L), pred) == pytest.approx(1.0, abs=1e-12)
    assert front.position_without_last(1 / kk, pred) == pytest.approx(-1.0, abs=1e-12)
    with pytest.raises(ValueError, match="no 'front' curve for L = 8"):
        front.position_without_last(np.ones(8), pred)


def _late_sweep(changes, L=8, steps=(6000, 10800)):
    """A StoredSweep whose run of seed s is the power law k^-0.3 at steps[0] and k^(-0.3 + changes[s]) at steps[1]."""
    from resdecay_lib.analysis import training_analysis
    k = np.arange(1, L + 1)
    runs = {}
    for s, d in enumerate(changes):
        ck = [{"step": st, "measure": {"stream": {"omega_sq_per_sequence": np.tile(0.5 * k ** b, (2, 1)).tolist()}}}
              for st, b in zip(steps, (-0.3, -0.3 + d))]
        runs[("pre_ln", L, s)] = run_dict(arch="pre_ln", L=L, seed=s, checkpoints=ck)
    spec = {"name": "long", "archs": ["pre_ln"], "seeds": list(range(len(changes))), "depths": {"pre_ln": [L]},
            "plan": {"measure_steps": list(steps)}}
    return training_analysis.StoredSweep(spec, runs)


@pytest.mark.parametrize("changes, margin, verdict", [
    ([0.20, 0.19, 0.21], 0.1, "rising beyond the margin"),     # 90% interval about [0.18, 0.22], above 0.1
    ([0.20, 0.19, 0.21], 0.5, "settled"),
    ([-0.20, -0.19, -0.21], 0.1, "falling beyond the margin"),
    ([0.20, 0.10, 0.15], 0.12, "rising"),                     # 90% [0.07, 0.23] crosses 0.12; 95% [0.03, 0.27]
    ([0.30, -0.20, 0.05], 0.1, "undetermined"),
])
def test_settling_at_margin_reads_the_paired_change_against_the_given_margin(changes, margin, verdict):
    r = front.settling_at_margin(_late_sweep(changes), "pre_ln", 8, margin)
    assert r.verdict == verdict and r.margin == margin
    assert r.change.mean == pytest.approx(np.mean(changes), abs=1e-10)
    assert r.change.level == pytest.approx(0.9) and r.two_sided.level == pytest.approx(0.95)


def test_settling_at_margin_rejects_a_zero_margin_unmeasured_steps_and_two_runs():
    sw = _late_sweep([0.2, 0.1, 0.15])
    with pytest.raises(ValueError, match="margin"):
        front.settling_at_margin(sw, "pre_ln", 8, 0.0)
    with pytest.raises(ValueError, match="steps"):
        front.settling_at_margin(sw, "pre_ln", 8, 0.1, steps=(6000, 9000))
    with pytest.raises(ValueError, match="3 or more runs"):
        front.settling_at_margin(_late_sweep([0.2, 0.1]), "pre_ln", 8, 0.1)


def test_schedule_is_the_training_loops_warm_up_then_cosine_with_no_constant_part():
    from resdecay_lib.training.plan import TrainConfig
    from resdecay_lib.training.train import lr_factor
    cfg = TrainConfig(steps=60, warmup=6, min_lr_frac=0.1)
    s = front.schedule({"steps": 60, "warmup": 6, "min_lr_frac": 0.1})
    assert [s.factor(i) for i in range(60)] == pytest.approx([lr_factor(i, cfg) for i in range(60)], abs=1e-15)
    assert s.constant_steps == 0
    held = front.schedule({"steps": 60, "warmup": 6, "min_lr_frac": 1.0})     # cosine from 1 to 1: all flat
    assert held.constant_steps == 60 - 6 - 1
    with pytest.raises(ValueError, match="warmup"):
        front.schedule({"steps": 60, "warmup": 60, "min_lr_frac": 0.1})
