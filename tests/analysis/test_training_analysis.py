"""Tests of resdecay_lib.analysis.training_analysis (the analysis of stored sweeps); resdecay_lib.stats.inference is
tests/stats/test_inference.py, resdecay_lib.stats.exponents tests/stats/test_exponents.py."""
import dataclasses
import json
import math

import numpy as np
import pytest

from resdecay_lib.analysis import training_analysis
from sweep_fixtures import run_dict, stored_run, stored_sweep


# ----------------------------------------------------------------------------- curves

def test_curvature_calls_a_power_law_straight_and_a_bend_bent():
    k = np.arange(1, 17)
    rng = np.random.default_rng(1)
    straight = np.array([k ** -1.0 * np.exp(0.01 * rng.standard_normal(16)) for _ in range(3)])
    bent = np.array([k ** -1.0 * np.exp(0.5 * np.log(k) ** 2 + 0.01 * rng.standard_normal(16)) for _ in range(3)])
    assert training_analysis.curvature(straight, 2)["shape"] == "power law"
    assert training_analysis.curvature(bent, 2)["shape"] == "bent"
    noisy = np.array([k ** -1.0 * np.exp(0.3 * rng.standard_normal(16)) for _ in range(3)])
    assert training_analysis.curvature(noisy, 2)["shape"] in ("undetermined", "bent", "power law")


def test_rc_from_gram_of_independent_equal_summands_is_the_theorems():
    L = 12
    G = np.eye(L + 1)
    r, c = training_analysis.rc_from_gram(G)
    assert np.allclose(r, 1 / np.sqrt(np.arange(1, L + 1))) and np.allclose(c, 0)
    p = training_analysis.predictions(G)
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
    indep = training_analysis.departure([np.diag(np.exp(0.1 * rng.standard_normal(17))) for _ in range(3)])
    assert any(n.startswith("independent") for n in indep["consistent_with"])
    fb = training_analysis.departure([_feedback_gram(64, a) for a in (1.9, 2.0, 2.1)])
    assert fb["c_sign"] == 1
    assert not any(n.startswith("independent") for n in fb["consistent_with"])


# ----------------------------------------------------------------------------- runs and sweeps

def test_flags_name_outliers_and_unconverged_runs():
    sw = stored_sweep({("pre_ln", 4): [2.0, 2.01, 2.5], ("pre_ln", 8): [1.9, 1.91, 1.905]})
    r = sw.runs[("pre_ln", 8, 1)]
    sw.runs[("pre_ln", 8, 1)] = dataclasses.replace(r, convergence=dataclasses.replace(r.convergence, met=False))
    flags = training_analysis.flag_runs(sw)
    assert set(flags) == {"pre_ln_L4_s2", "pre_ln_L8_s1"}
    assert "outlier" in flags["pre_ln_L4_s2"][0] and "not converged" in flags["pre_ln_L8_s1"][0]


def test_sweep_losses_keep_only_complete_kept_finite_cells():
    sw = stored_sweep({("pre_ln", 4): [2.0, 2.1, 2.2], ("pre_ln", 8): [1.9, 2.0, 2.1], ("pre_ln", 16): [1.8, 1.9, 2.0]})
    del sw.runs[("pre_ln", 16, 2)]
    assert sw.losses("pre_ln", training_analysis.final_loss) == {4: [2.0, 2.1, 2.2], 8: [1.9, 2.0, 2.1]}
    assert set(sw.losses("pre_ln", training_analysis.final_loss, exclude={"pre_ln_L8_s0"})) == {4}
    assert sw.kept_by_seed("pre_ln", 8, {"pre_ln_L8_s1"}) == {0: 1.9, 2: 2.1}


def test_sweep_deepest_is_the_deepest_depth_of_at_least_four_with_enough_kept_seeds():
    sw = stored_sweep({("pre_ln", 2): [2.0, 2.1, 2.2], ("pre_ln", 4): [1.9, 2.0, 2.1], ("pre_ln", 8): [1.8, 1.9, 2.0]})
    assert sw.deepest("pre_ln") == 8
    assert sw.deepest("pre_ln", exclude={"pre_ln_L8_s0"}) == 4              # two kept seeds at 8
    assert sw.deepest("pre_ln", exclude={"pre_ln_L8_s0"}, min_seeds=2) == 8
    # depth 2 has three seeds, but k = 2..2 is one block: nothing to fit
    assert sw.deepest("pre_ln", exclude={"pre_ln_L8_s0", "pre_ln_L4_s1"}) is None
    assert sw.deepest("pre_ln", exclude={"pre_ln_L8_s0", "pre_ln_L4_s1"}, min_depth=2) == 2
    with pytest.raises(ValueError, match="min_seeds"):
        sw.deepest("pre_ln", min_seeds=0)


def test_correlation_and_error_shares():
    G = np.array([[4.0, 2.0], [2.0, 9.0]])
    assert training_analysis.correlation(G) == pytest.approx(np.array([[1.0, 1 / 3], [1 / 3, 1.0]]))
    errs = [{"theorem": 1.0, "hetero": 0.4, "rc": 0.1}, {"theorem": 2.0, "hetero": 1.0, "rc": 0.4},
            {"theorem": 1.0, "hetero": 0.5, "rc": 0.2}]
    var, corr = training_analysis.error_shares(errs)
    assert var.mean == pytest.approx((0.6 + 0.5 + 0.5) / 3) and corr.mean == pytest.approx((0.3 + 0.3 + 0.3) / 3)
    with pytest.raises(ValueError, match="one per seed"):
        training_analysis.error_shares(errs[:1])


def test_choose_lr_takes_the_lowest_final_loss_and_skips_diverged(tmp_path):
    out = tmp_path / "p"
    out.mkdir()
    spec = {"out": "p", "archs": ["pre_ln"], "depths": [2], "seeds": [0], "lrs": [0.001, 0.002, 0.004],
            "base": {"d_model": 16, "n_head": 2, "block_size": 16, "steps": 4, "warmup": 1}}
    for lr, loss, div in ((0.001, 2.0, False), (0.002, 1.5, True), (0.004, 1.8, False)):
        r = run_dict(loss=loss, config={"lr": lr}, convergence={"diverged": div, "met": True})
        (out / f"pre_ln_L2_s0_lr{lr:g}.json").write_text(json.dumps(r))
    got = training_analysis.choose_lr(spec, tmp_path)["pre_ln"]
    assert got["lr"] == 0.004 and got["losses"][0.002] is None


def _pilot(tmp_path, folder, archs_losses, steps):
    out = tmp_path / folder
    out.mkdir()
    archs = sorted(archs_losses)
    lrs = sorted({lr for v in archs_losses.values() for lr in v})
    for a, losses in archs_losses.items():
        for lr, loss in losses.items():
            r = run_dict(arch=a, loss=loss, config={"lr": lr})
            (out / f"{a}_L2_s0_lr{lr:g}.json").write_text(json.dumps(r))
    return {"out": folder, "archs": archs, "depths": [2], "seeds": [0], "lrs": lrs,
            "base": {"d_model": 16, "n_head": 2, "block_size": 16, "steps": steps, "warmup": 1}}


def test_two_stage_rechooses_only_a_choice_at_the_top_of_the_short_grid(tmp_path):
    short = _pilot(tmp_path, "short", {"pre_ln": {0.001: 2.0, 0.002: 1.9, 0.004: 2.1},
                                       "peri_ln": {0.001: 2.2, 0.002: 2.1, 0.004: 2.0}}, 4)
    # the long pilot covers both, but only Peri-LN's short choice sits at the grid's top
    long_ = _pilot(tmp_path, "long", {"pre_ln": {0.001: 1.0, 0.002: 1.2},
                                      "peri_ln": {0.001: 1.1, 0.002: 1.3}}, 8)
    got = training_analysis.choose_lr_two_stage(short, long_, tmp_path)
    assert (got["pre_ln"]["lr"], got["pre_ln"]["stage"]) == (0.002, "short")
    assert (got["peri_ln"]["lr"], got["peri_ln"]["stage"]) == (0.001, "long")
    assert got["peri_ln"]["short"]["lr"] == 0.004


def test_two_stage_keeps_a_top_choice_the_long_pilot_does_not_cover(tmp_path):
    short = _pilot(tmp_path, "short", {"peri_ln": {0.001: 2.2, 0.004: 2.0}}, 4)
    long_ = _pilot(tmp_path, "long", {"pre_ln": {0.001: 1.0}}, 8)
    got = training_analysis.choose_lr_two_stage(short, long_, tmp_path)["peri_ln"]
    assert (got["lr"], got["stage"]) == (0.004, "short")


# ----------------------------------------------------------------------------- settling

def _exponent_sweep(exponents_by_seed, steps, L=8, name="long"):
    """A StoredSweep whose run of seed s has, at steps[i], a pure power law k^b with b = exponents_by_seed[s][i]."""
    k = np.arange(1, L + 1)
    runs = {}
    for s, bs in enumerate(exponents_by_seed):
        ck = [{"step": st, "measure": {"stream": {"omega_sq_per_sequence": np.tile(0.5 * k ** b, (2, 1)).tolist()}}}
              for st, b in zip(steps, bs)]
        runs[("pre_ln", L, s)] = run_dict(arch="pre_ln", L=L, seed=s, checkpoints=ck)
    spec = {"name": name, "archs": ["pre_ln"], "seeds": list(range(len(exponents_by_seed))),
            "depths": {"pre_ln": [L]}, "plan": {"measure_steps": list(steps)}}
    return training_analysis.StoredSweep(spec, runs)


REF = _exponent_sweep([[-0.9, -0.30], [-0.8, -0.20], [-0.85, -0.25]], [0, 3600])   # end spread sd 0.05


def test_exponent_path_recovers_each_steps_exponent_with_an_interval_over_seeds():
    sw = _exponent_sweep([[-0.9, -0.5, -0.3], [-0.8, -0.4, -0.2], [-0.7, -0.3, -0.1]], [0, 6000, 10800])
    path = training_analysis.exponent_path(sw, "pre_ln", 8)
    assert sorted(path) == [0, 6000, 10800]
    assert [round(path[s].mean, 6) for s in sorted(path)] == [-0.8, -0.4, -0.2]
    assert path[0].n == 3 and path[0].lo < -0.8 < path[0].hi


def test_settling_calls_a_paired_change_inside_the_end_spread_settled():
    sw = _exponent_sweep([[-0.30, -0.29], [-0.20, -0.195], [-0.25, -0.24]], [6000, 10800])
    s = training_analysis.settling(sw, REF, "pre_ln", 8)
    assert s.margin == pytest.approx(0.05)
    assert s.verdict == "settled"
    assert s.change.mean == pytest.approx((0.01 + 0.005 + 0.01) / 3)


def test_settling_calls_a_consistent_rise_larger_than_the_spread_rising_and_a_fall_falling():
    up = _exponent_sweep([[-0.30, -0.10], [-0.20, -0.01], [-0.25, -0.04]], [6000, 10800])
    down = _exponent_sweep([[-0.10, -0.30], [-0.01, -0.20], [-0.04, -0.25]], [6000, 10800])
    assert training_analysis.settling(up, REF, "pre_ln", 8).verdict == "rising"
    assert training_analysis.settling(down, REF, "pre_ln", 8).verdict == "falling"


def test_settling_leaves_scattered_changes_undetermined():
    sw = _exponent_sweep([[-0.30, -0.10], [-0.20, -0.40], [-0.25, -0.20]], [6000, 10800])
    assert training_analysis.settling(sw, REF, "pre_ln", 8).verdict == "undetermined"


def test_settling_compares_the_end_of_one_schedule_with_the_end_of_the_other():
    sw = _exponent_sweep([[-0.30, 0.00], [-0.20, 0.10], [-0.25, 0.05]], [6000, 10800])
    s = training_analysis.settling(sw, REF, "pre_ln", 8)
    assert s.end_diff == pytest.approx(0.05 - (-0.25))
    assert s.end_lo < s.end_diff < s.end_hi


def test_settling_rejects_steps_the_sweep_does_not_measure_and_too_few_runs():
    sw = _exponent_sweep([[-0.3, -0.2], [-0.2, -0.1], [-0.25, -0.15]], [6000, 10800])
    with pytest.raises(ValueError, match="steps"):
        training_analysis.settling(sw, REF, "pre_ln", 8, steps=(6000, 9000))
    with pytest.raises(ValueError, match="steps"):
        training_analysis.settling(sw, REF, "pre_ln", 8, steps=(10800, 6000))
    two = _exponent_sweep([[-0.3, -0.2], [-0.2, -0.1]], [6000, 10800])
    with pytest.raises(training_analysis.TooFewSeeds):
        training_analysis.settling(two, REF, "pre_ln", 8)


def test_flattening_is_zero_for_equal_variances_and_reads_only_the_blocks_past_the_front():
    L = 24
    for emb in (True, False):
        assert training_analysis.flattening(np.ones(L + 1), emb) == pytest.approx(0.0, abs=1e-12)
        # a large front changes both curves alike: nothing past it is scaled
        front = np.r_[5.0, 10.0, 5.0, 3.0, np.ones(L - 3)]
        assert training_analysis.flattening(front, emb) == pytest.approx(0.0, abs=1e-12)
        # growth past the front flattens the decay, more the faster it grows; shrinking steepens it
        grow = [training_analysis.flattening(np.r_[1.0, np.arange(1, L + 1) ** b], emb) for b in (0.5, 1.0, 2.0)]
        assert 0 < grow[0] < grow[1] < grow[2]
        assert training_analysis.flattening(np.r_[1.0, np.arange(1, L + 1) ** -1.0], emb) < 0
    with pytest.raises(ValueError, match="3 blocks past the front"):
        training_analysis.flattening(np.ones(6), True)


def test_flattening_of_a_power_law_scale_up_shrinks_with_the_range_as_chapter_5s_limit_says():
    # s_k^2 = k: k omega_k^2 -> 2, the 1/k rate again, so the finite-range flattening falls with L
    f = [training_analysis.flattening(np.r_[1.0, np.arange(1, L + 1, dtype=float)], False) for L in (24, 96, 384)]
    assert f[0] > f[1] > f[2] > 0


def _sweep_spec(seeds, archs, depths, lr=0.006, out="results/x"):
    return {"out": out, "archs": archs, "seeds": seeds, "depths": depths, "base": {"d_model": 8},
            "plan": {"measure_steps": [0, 200]}, "arch": {a: {"lr": lr} for a in archs}}


def test_merged_sweeps_read_as_one_grid_and_refuse_another_recipe():
    a = training_analysis.StoredSweep(_sweep_spec([0, 1], ["pre_ln"], {"pre_ln": [4]}),
                                      {("pre_ln", 4, 0): run_dict(arch="pre_ln", L=4, seed=0)}, ["pre_ln_L4_s1"])
    b = training_analysis.StoredSweep(_sweep_spec([5], ["pre_ln", "resi_dual"], {"pre_ln": [4, 8], "resi_dual": [4]}),
                                      {("pre_ln", 4, 5): run_dict(arch="pre_ln", L=4, seed=5)}, ["resi_dual_L4_s5"])
    m = training_analysis.merged(a, b)
    assert m.seeds == [0, 1, 5] and m.archs == ["pre_ln", "resi_dual"]
    assert m.depths("pre_ln") == [4, 8] and m.depths("resi_dual") == [4]
    assert set(m.runs) == {("pre_ln", 4, 0), ("pre_ln", 4, 5)} and m.missing == ["pre_ln_L4_s1", "resi_dual_L4_s5"]
    assert {k: r.name for k, r in training_analysis.subset(m, [5]).runs.items()} == {("pre_ln", 4, 5): "pre_ln_L4_s5"}
    other = training_analysis.StoredSweep(_sweep_spec([2], ["pre_ln"], {"pre_ln": [4]}, lr=0.012), {})
    with pytest.raises(ValueError, match="one learning rate"):
        training_analysis.merged(a, other)
    elsewhere = training_analysis.StoredSweep(_sweep_spec([2], ["pre_ln"], {"pre_ln": [4]}, out="results/y"), {})
    with pytest.raises(ValueError, match="share their 'out'"):
        training_analysis.merged(a, elsewhere)
    with pytest.raises(ValueError, match="at least one"):
        training_analysis.merged()
