"""Tests of resdecay_lib.analysis.training_analysis (the analysis of stored sweeps); resdecay_lib.stats.inference is
tests/test_inference.py, resdecay_lib.stats.exponents tests/test_exponents.py."""
import json
import math

import numpy as np
import pytest

from resdecay_lib.analysis import training_analysis as R


# ----------------------------------------------------------------------------- curves

def test_curvature_calls_a_power_law_straight_and_a_bend_bent():
    k = np.arange(1, 17)
    rng = np.random.default_rng(1)
    straight = np.array([k ** -1.0 * np.exp(0.01 * rng.standard_normal(16)) for _ in range(3)])
    bent = np.array([k ** -1.0 * np.exp(0.5 * np.log(k) ** 2 + 0.01 * rng.standard_normal(16)) for _ in range(3)])
    assert R.curvature(straight, 2)["shape"] == "power law"
    assert R.curvature(bent, 2)["shape"] == "bent"
    noisy = np.array([k ** -1.0 * np.exp(0.3 * rng.standard_normal(16)) for _ in range(3)])
    assert R.curvature(noisy, 2)["shape"] in ("undetermined", "bent", "power law")


def test_rc_from_gram_of_independent_equal_summands_is_the_theorems():
    L = 12
    G = np.eye(L + 1)
    r, c = R.rc_from_gram(G)
    assert np.allclose(r, 1 / np.sqrt(np.arange(1, L + 1))) and np.allclose(c, 0)
    p = R.predictions(G)
    assert np.allclose(p["hetero"], p["theorem"]) and np.allclose(p["rc"], p["theorem"])


def _feedback_gram(L, a, b=1.0):
    """Gram matrix of the summands of x_{k+1} = x_k + a x_k / |x_k| sqrt(d) + b z (large d)."""
    u = [np.zeros(L + 1) for _ in range(L + 1)]       # summands in a basis of independent noises
    u[0][0] = 1.0
    x = u[0].copy()
    for k in range(1, L + 1):
        f = a * x / np.linalg.norm(x)
        f[k] += b
        u[k] = f
        x = x + f
    U = np.array(u)
    return U @ U.T


def test_departure_finds_the_feedback_case_and_the_independent_case():
    rng = np.random.default_rng(0)
    indep = R.departure([np.diag(np.exp(0.1 * rng.standard_normal(17))) for _ in range(3)])
    assert any(n.startswith("independent") for n in indep["consistent_with"])
    fb = R.departure([_feedback_gram(64, a) for a in (1.9, 2.0, 2.1)])
    assert fb["c_sign"] == 1
    assert not any(n.startswith("independent") for n in fb["consistent_with"])


# ----------------------------------------------------------------------------- runs and sweeps

def _run(name, arch, L, seed, loss, met=True, curve=None, flops=1e6):
    curve = curve or [(0, 4.0), (100, 2.0), (200, loss)]
    return {"name": name, "status": "ok", "seed": seed, "config": {"arch": arch},
            "convergence": {"met": met, "diverged": False, "improvement": 0.01 if met else 0.2},
            "final": {"val_loss": {"mean": loss, "se": 0.01},
                      "ablation": {"delta": list(np.linspace(1, 0.1, L)), "delta_se": [0.01] * L}},
            "val_curve": [{"step": s, "mean": v} for s, v in curve], "flops_per_step": flops}


def _sweep(cells):
    spec = {"archs": sorted({a for a, _ in cells}), "seeds": [0, 1, 2],
            "depths": {a: sorted({L for b, L in cells if b == a}) for a, _ in cells},
            "plan": {"measure_steps": [0, 200]}}
    runs = {}
    for (a, L), losses in cells.items():
        for s, v in enumerate(losses):
            runs[(a, L, s)] = _run(f"{a}_L{L}_s{s}", a, L, s, v)
    return R.Sweep(spec, runs)


def test_flags_name_outliers_and_unconverged_runs():
    sw = _sweep({("pre_ln", 4): [2.0, 2.01, 2.5], ("pre_ln", 8): [1.9, 1.91, 1.905]})
    sw.runs[("pre_ln", 8, 1)]["convergence"]["met"] = False
    flags = R.flag_runs(sw)
    assert set(flags) == {"pre_ln_L4_s2", "pre_ln_L8_s1"}
    assert "outlier" in flags["pre_ln_L4_s2"][0] and "not converged" in flags["pre_ln_L8_s1"][0]


def test_ablation_trend_is_a_rank_correlation_per_seed():
    sw = _sweep({("pre_ln", 6): [2.0, 2.0, 2.0]})
    per, iv = R.ablation_trend(sw, "pre_ln", 6)
    assert np.allclose(per, -1.0) and iv.n == 3


def test_loss_at_flops_interpolates_in_log_step_and_stops_at_the_end():
    r = _run("x", "pre_ln", 2, 0, 1.0, curve=[(0, 4.0), (10, 3.0), (100, 2.0), (1000, 1.0)], flops=2.0)
    assert R.loss_at_flops(r, 2.0 * 100) == pytest.approx(2.0)
    assert R.loss_at_flops(r, 2.0 * math.sqrt(10 * 100)) == pytest.approx(2.5)
    assert math.isnan(R.loss_at_flops(r, 2.0 * 2000))


def test_ladder_steps_pair_the_seeds():
    steps = R.ladder_steps({4: [2.0, 2.1, 2.2], 8: [1.9, 2.0, 2.1]})
    (a, b, iv), = steps
    assert (a, b) == (4, 8) and iv.mean == pytest.approx(-0.1) and iv.se == pytest.approx(0.0, abs=1e-12)


def test_depth_law_recovers_alpha():
    d = np.array([2, 4, 8, 16, 24])
    f = R.depth_law(d, 0.8 * d ** -1.0 + 1.5)
    assert f["alpha"] == pytest.approx(1.0, rel=0.01) and f["L_inf"] == pytest.approx(1.5, abs=0.01)
    assert not f["at_edge"]


def test_sweep_losses_keep_only_complete_kept_finite_cells():
    sw = _sweep({("pre_ln", 4): [2.0, 2.1, 2.2], ("pre_ln", 8): [1.9, 2.0, 2.1], ("pre_ln", 16): [1.8, 1.9, 2.0]})
    del sw.runs[("pre_ln", 16, 2)]
    assert sw.losses("pre_ln", R.final_loss) == {4: [2.0, 2.1, 2.2], 8: [1.9, 2.0, 2.1]}
    assert set(sw.losses("pre_ln", R.final_loss, exclude={"pre_ln_L8_s0"})) == {4}
    assert sw.kept_by_seed("pre_ln", 8, {"pre_ln_L8_s1"}) == {0: 1.9, 2: 2.1}


def test_sweep_deepest_is_the_deepest_depth_of_at_least_four_with_enough_kept_seeds():
    sw = _sweep({("pre_ln", 2): [2.0, 2.1, 2.2], ("pre_ln", 4): [1.9, 2.0, 2.1], ("pre_ln", 8): [1.8, 1.9, 2.0]})
    assert sw.deepest("pre_ln") == 8
    assert sw.deepest("pre_ln", exclude={"pre_ln_L8_s0"}) == 4              # two kept seeds at 8
    assert sw.deepest("pre_ln", exclude={"pre_ln_L8_s0"}, min_seeds=2) == 8
    # depth 2 has three seeds, but k = 2..2 is one block: nothing to fit
    assert sw.deepest("pre_ln", exclude={"pre_ln_L8_s0", "pre_ln_L4_s1"}) is None
    assert sw.deepest("pre_ln", exclude={"pre_ln_L8_s0", "pre_ln_L4_s1"}, min_depth=2) == 2
    with pytest.raises(ValueError, match="min_seeds"):
        sw.deepest("pre_ln", min_seeds=0)


def test_depth_ladder_stops_paying_only_inside_the_ladder():
    # each seed gains 0.1 from 4 to 8 and loses 0.05 from 8 to 16: 8 is best and 16 worse
    stop = R.depth_ladder({4: [2.0, 2.1, 2.2], 8: [1.9, 2.01, 2.1], 16: [1.95, 2.06, 2.16]})
    assert (stop.best, stop.not_worse, stop.reading) == (8, [8], "stops paying")
    assert (stop.stops, stop.lo, stop.hi) == (8.0, 8.0, 8.0)
    assert stop.level == pytest.approx(1 - 0.05 / 2) and len(stop.steps) == 2
    # the top is best: depth keeps paying, and the reading is infinite above
    pays = R.depth_ladder({4: [2.0, 2.1, 2.2], 8: [1.9, 2.01, 2.1]})
    assert pays.reading == "keeps paying" and math.isinf(pays.stops) and math.isinf(pays.hi) and pays.lo == 8.0
    # a noisy top rung is not worse than the best: the set reaches the top, and the ladder
    # locates nothing (not shown to stop is not shown to keep paying)
    noisy = R.depth_ladder({4: [2.0, 2.1, 2.2], 8: [1.9, 2.0, 2.1], 16: [1.7, 2.3, 2.0]})
    assert noisy.best == 8 and 16 in noisy.not_worse and noisy.reading == "not located"
    assert (noisy.stops, noisy.lo, noisy.hi) == (8.0, 8.0, math.inf)
    # the top is best but a lower rung is within the noise of it: not located either
    flat = R.depth_ladder({4: [2.3, 2.4, 2.5], 8: [1.9, 2.0, 2.1], 16: [1.85, 2.0, 2.02]})
    assert flat.best == 16 and flat.not_worse == [8, 16] and flat.reading == "not located"
    assert (flat.stops, flat.lo, flat.hi) == (16.0, 8.0, math.inf)
    with pytest.raises(ValueError, match="at least 2 depths"):
        R.depth_ladder({4: [1.0, 1.0, 1.0]})


def test_paired_gap_pairs_seeds_at_the_deepest_shared_depth():
    sw = _sweep({("pre_ln", 4): [2.0, 2.1, 2.2], ("pre_ln", 8): [1.9, 2.0, 2.1],
                 ("peri_ln", 4): [2.1, 2.2, 2.3], ("peri_ln", 8): [2.2, 2.25, 2.4]})
    L, iv = R.paired_gap(sw, "peri_ln")
    assert L == 8 and iv.mean == pytest.approx((0.3 + 0.25 + 0.3) / 3) and iv.n == 3
    # one excluded Pre-LN seed at depth 8 leaves two pairs there: depth 4 is used
    L, iv = R.paired_gap(sw, "peri_ln", exclude={"pre_ln_L8_s1"})
    assert L == 4 and iv.mean == pytest.approx(0.1)
    assert R.paired_gap(sw, "peri_ln", exclude={"pre_ln_L8_s1", "peri_ln_L4_s0"}) is None


def test_correlation_and_error_shares():
    G = np.array([[4.0, 2.0], [2.0, 9.0]])
    assert R.correlation(G) == pytest.approx(np.array([[1.0, 1 / 3], [1 / 3, 1.0]]))
    errs = [{"theorem": 1.0, "hetero": 0.4, "rc": 0.1}, {"theorem": 2.0, "hetero": 1.0, "rc": 0.4},
            {"theorem": 1.0, "hetero": 0.5, "rc": 0.2}]
    var, corr = R.error_shares(errs)
    assert var.mean == pytest.approx((0.6 + 0.5 + 0.5) / 3) and corr.mean == pytest.approx((0.3 + 0.3 + 0.3) / 3)
    with pytest.raises(ValueError, match="one per seed"):
        R.error_shares(errs[:1])


def test_choose_lr_takes_the_lowest_final_loss_and_skips_diverged(tmp_path):
    out = tmp_path / "p"
    out.mkdir()
    spec = {"out": "p", "archs": ["pre_ln"], "depths": [2], "seeds": [0], "lrs": [0.001, 0.002, 0.004],
            "base": {"d_model": 16, "n_head": 2, "block_size": 16, "steps": 4, "warmup": 1}}
    for lr, loss, div in ((0.001, 2.0, False), (0.002, 1.5, True), (0.004, 1.8, False)):
        r = {"status": "ok", "config": {"lr": lr}, "convergence": {"diverged": div},
             "final": {"val_loss": {"mean": loss}}}
        (out / f"pre_ln_L2_s0_lr{lr:g}.json").write_text(json.dumps(r))
    got = R.choose_lr(spec, tmp_path)["pre_ln"]
    assert got["lr"] == 0.004 and got["losses"][0.002] is None


def _pilot(tmp_path, folder, archs_losses, steps):
    out = tmp_path / folder
    out.mkdir()
    archs = sorted(archs_losses)
    lrs = sorted({lr for v in archs_losses.values() for lr in v})
    for a, losses in archs_losses.items():
        for lr, loss in losses.items():
            r = {"status": "ok", "config": {"lr": lr}, "convergence": {"diverged": False},
                 "final": {"val_loss": {"mean": loss}}}
            (out / f"{a}_L2_s0_lr{lr:g}.json").write_text(json.dumps(r))
    return {"out": folder, "archs": archs, "depths": [2], "seeds": [0], "lrs": lrs,
            "base": {"d_model": 16, "n_head": 2, "block_size": 16, "steps": steps, "warmup": 1}}


def test_two_stage_rechooses_only_a_choice_at_the_top_of_the_short_grid(tmp_path):
    short = _pilot(tmp_path, "short", {"pre_ln": {0.001: 2.0, 0.002: 1.9, 0.004: 2.1},
                                       "peri_ln": {0.001: 2.2, 0.002: 2.1, 0.004: 2.0}}, 4)
    # the long pilot covers both, but only Peri-LN's short choice sits at the grid's top
    long_ = _pilot(tmp_path, "long", {"pre_ln": {0.001: 1.0, 0.002: 1.2},
                                      "peri_ln": {0.001: 1.1, 0.002: 1.3}}, 8)
    got = R.choose_lr_two_stage(short, long_, tmp_path)
    assert (got["pre_ln"]["lr"], got["pre_ln"]["stage"]) == (0.002, "short")
    assert (got["peri_ln"]["lr"], got["peri_ln"]["stage"]) == (0.001, "long")
    assert got["peri_ln"]["short"]["lr"] == 0.004


def test_two_stage_keeps_a_top_choice_the_long_pilot_does_not_cover(tmp_path):
    short = _pilot(tmp_path, "short", {"peri_ln": {0.001: 2.2, 0.004: 2.0}}, 4)
    long_ = _pilot(tmp_path, "long", {"pre_ln": {0.001: 1.0}}, 8)
    got = R.choose_lr_two_stage(short, long_, tmp_path)["peri_ln"]
    assert (got["lr"], got["stage"]) == (0.004, "short")


def test_depth_law_over_seeds_recovers_each_seeds_alpha_and_summarises_it():
    depths = [2, 4, 8, 16, 24]
    alphas = [0.8, 1.0, 1.2]
    losses = {d: [0.5 * d ** -a + 1.6 for a in alphas] for d in depths}
    got = R.depth_law_over_seeds(losses)
    assert [f["alpha"] for f in got["per_seed"]] == pytest.approx(alphas, abs=0.01)
    assert got["alpha"].mean == pytest.approx(1.0, abs=0.01) and got["alpha"].n == 3
    assert got["n_edge"] == 0 and got["L_inf"] == pytest.approx(1.6, abs=1e-3)
    with pytest.raises(ValueError, match="3 depths"):
        R.depth_law_over_seeds({2: [1, 2, 3], 4: [1, 2, 3]})
    with pytest.raises(R.TooFewSeeds):
        R.depth_law_over_seeds({d: [1.0, 2.0] for d in depths})


def test_ablation_halves_leaves_block_one_out_of_the_earlier_half():
    d = np.array([[5.0, 1.0, 1.0, 0.5, 0.5, 0.5], [7.0, 1.0, 1.0, 0.5, 0.5, 0.5]])
    first, ratio = R.ablation_halves(d)
    assert first == 6.0 and ratio == pytest.approx(0.5)      # blocks 4..6 over blocks 2..3
    with pytest.raises(ValueError, match="at least 4 blocks"):
        R.ablation_halves(d[:, :3])
