"""Wrong values that pass, and NaN that decides: a typo, an index
outside its range or a record without its fields raises a one-line error naming what is
wrong, and an empty or degenerate input is refused instead of giving NaN or an empty answer
that reads like missing data."""
import copy
import dataclasses
import math

import numpy as np
import pytest
import torch

from resdecay_lib.analysis import depth_analysis
from resdecay_lib.analysis import front
from resdecay_lib.analysis import training_analysis
from resdecay_lib.analysis import training_claims as T
from resdecay_lib.checks import ArgumentTypeError
from resdecay_lib.nn import models
from resdecay_lib.nn.config import GPTConfig
from resdecay_lib.nn.hooks import patched_blocks
from resdecay_lib.stats import fit
from resdecay_lib.training.records import as_run
from sweep_fixtures import stored_run, stored_sweep


def _one_line(exc):
    return "\n" not in str(exc.value)


def _sweep():
    return stored_sweep({("pre_ln", 4): [2.0, 2.1, 2.05], ("pre_ln", 8): [1.9, 1.95, 1.92],
                         ("post_ln", 8): [1.8, 1.85, 1.82]})


# ----------------------------------------------------------------------------- 1. StoredSweep.cell, complete

def test_sweep_cell_and_complete_refuse_a_typo_for_an_arch_instead_of_answering_no_runs():
    sw = _sweep()
    for call in (lambda: sw.cell("PRE_LN", 4), lambda: sw.complete("pre-ln", 4),
                 lambda: sw.kept_by_seed("preln", 4), lambda: sw.deepest("PRE_LN"),
                 lambda: sw.losses("PRE_LN", training_analysis.final_loss), lambda: sw.depths("PRE_LN")):
        with pytest.raises(ValueError, match=r"arch must be one of .*'pre_ln'") as info:
            call()
        assert _one_line(info)
    # a placement of the registry that this sweep did not train: no grid to look runs up on
    with pytest.raises(ValueError, match=r"arch .*'peri_ln'.*this sweep's placements \['post_ln', 'pre_ln'\]"):
        sw.cell("peri_ln", 8)


def test_sweep_cell_and_complete_take_an_integer_depth_on_the_grid():
    sw = _sweep()
    for bad in ("4", 16.5, 4.0, True, None):
        with pytest.raises(ArgumentTypeError, match=r"\bL must be an integer"):
            sw.cell("pre_ln", bad)
        with pytest.raises(ArgumentTypeError, match=r"\bL must be an integer"):
            sw.complete("pre_ln", bad)
    with pytest.raises(ValueError, match=r"L must be one of the depths \[4, 8\] of pre_ln") as info:
        sw.cell("pre_ln", 16)
    assert _one_line(info)
    with pytest.raises(ValueError, match=r"L must be one of the depths \[8\] of post_ln"):
        sw.complete("post_ln", 4)
    # valid calls answer as before (a numpy integer is an integer)
    assert [r.name for r in sw.cell("pre_ln", np.int64(4))] == ["pre_ln_L4_s0", "pre_ln_L4_s1", "pre_ln_L4_s2"]
    assert sw.cell("pre_ln", 4, {"pre_ln_L4_s1"})[1].name == "pre_ln_L4_s2"
    assert sw.complete("pre_ln", 8) and not training_analysis.StoredSweep(sw.spec, {}).complete("pre_ln", 8)
    assert training_analysis.StoredSweep(sw.spec, {}).cell("pre_ln", 8) == []      # on the grid, not stored: no runs
    with pytest.raises(ArgumentTypeError, match="exclude"):
        sw.cell("pre_ln", 4, None)


# ----------------------------------------------------------------------------- 2. front.local_slope

def test_local_slope_takes_integer_bounds_inside_k():
    k = np.arange(1, 25)
    y = k ** -0.5
    assert front.local_slope(k, y, 12, 24) == pytest.approx(-0.5)
    for name, lo, hi in (("lo", [2], 16), ("lo", True, 16), ("lo", -math.inf, 16), ("lo", 2.0, 16),
                         ("hi", 2, "16"), ("hi", 2, math.nan)):
        with pytest.raises(ArgumentTypeError, match=rf"\b{name} must be an integer") as info:
            front.local_slope(k, y, lo, hi)
        assert _one_line(info)
    for name, lo, hi in (("lo", 0, 16), ("hi", 2, 25), ("hi", 16, 16), ("hi", 16, 8)):
        with pytest.raises(ValueError, match=rf"\b{name} must be an integer in") as info:
            front.local_slope(k, y, lo, hi)
        assert _one_line(info)
    with pytest.raises(ValueError, match=r"\by\b"):
        front.local_slope(k, y[:-1], 2, 16)
    with pytest.raises(ArgumentTypeError, match=r"\bk\b"):
        front.local_slope("abc", y, 2, 16)


def test_the_other_public_functions_of_front_check_their_arguments():
    with pytest.raises(ArgumentTypeError, match=r"\bname\b"):
        front.window(24, ["half_end"])
    with pytest.raises(ArgumentTypeError, match=r"\bslope\b"):
        front.position("0.5", 48, {"models": {}})
    with pytest.raises(ArgumentTypeError, match=r"\bL\b"):
        front.against_front(-0.5, 48.0, {"models": {}})
    with pytest.raises(ArgumentTypeError, match=r"\bcurve\b"):
        front.curve_slopes("abc")
    with pytest.raises(ArgumentTypeError, match=r"\bslopes\b"):
        front.prediction_tests([[-0.5] * 3], {"models": {}})


# ----------------------------------------------------------------------------- 3. hooks.patched_blocks

class _Double(torch.nn.Module):
    def forward(self, x):
        return 2 * x


def test_patched_blocks_takes_block_indices_inside_the_stack_only():
    blocks = torch.nn.ModuleList([_Double(), _Double(), _Double()])
    x = torch.ones(2)
    for bad in ([-1], [3], {0, 7}):
        with pytest.raises(ValueError, match=r"\bremoved\b.*\[0, 2\]") as info:
            with patched_blocks(blocks, removed=bad):
                pass
        assert _one_line(info)
    for bad in ([True], [1.0], 1, "0"):
        with pytest.raises(ArgumentTypeError, match=r"\bremoved\b"):
            with patched_blocks(blocks, removed=bad):
                pass
    with pytest.raises(ValueError, match=r"\breplay\b"):
        with patched_blocks(blocks, replay={-1: x}):
            pass
    with pytest.raises(ArgumentTypeError, match=r"\breplay\b"):
        with patched_blocks(blocks, replay=[x]):
            pass
    assert all("forward" not in b.__dict__ for b in blocks)     # nothing was patched
    with patched_blocks(blocks, removed={np.int64(2)}, replay={0: x * 7}):
        assert torch.equal(blocks[0](x), x * 7) and torch.equal(blocks[2](x), x)
    assert all("forward" not in b.__dict__ for b in blocks)


# ----------------------------------------------------------------------------- 4. the blocks' arguments

def test_block_classes_take_a_layer_index_inside_the_model_and_a_valid_config():
    cfg = GPTConfig(arch="deepnorm", n_layer=4, d_model=8, n_head=2, vocab_size=5, block_size=4)
    for cls in models.ARCHS.values():
        for bad in (-5, 4):
            with pytest.raises(ValueError, match=r"layer_idx must be an integer in \[0, 3\]") as info:
                cls(cfg, bad)
            assert _one_line(info)
        for bad in (math.nan, 1.0, True, None, "0"):
            with pytest.raises(ArgumentTypeError, match=r"layer_idx must be an integer"):
                cls(cfg, bad)
        with pytest.raises(ArgumentTypeError, match=r"\bcfg must be a GPTConfig"):
            cls({"n_layer": 4}, 0)
        cls(cfg, 3)                                              # the last layer is fine
    broken = copy.copy(cfg)
    broken.deepnorm_alpha = math.nan                             # set after the config's own check
    with pytest.raises(ValueError, match="deepnorm_alpha"):
        models.DeepNormBlock(broken, 0)
    broken = copy.copy(cfg)
    broken.mix_ln_frac = -1.0
    with pytest.raises(ValueError, match="mix_ln_frac"):
        models.MixLNBlock(broken, 0)


# ----------------------------------------------------------------------------- 5. stats.fit.power_law

def test_power_law_of_one_curve_has_no_interval_and_says_so_instead_of_nan():
    k = np.arange(1, 11)
    f = fit.power_law(k, 0.7 * k ** -1.3)
    assert f.exponent == pytest.approx(-1.3)
    assert f.lo is None and f.hi is None and f.boot_se is None and f.n_boot == 0 and not f.has_interval
    assert "one curve" in f.no_interval
    for y in (0.7 * k ** -1.3, (0.7 * k ** -1.3)[None]):       # a curve, or a single sample row
        asked = fit.power_law(k, y, n_boot=500)                  # replicates asked for: it says why none
        assert asked.lo is None and asked.n_boot == 0 and "nothing to resample" in asked.no_interval
    with pytest.raises(ValueError, match=r"\bgroups\b"):
        fit.power_law(k, 0.7 * k ** -1.3, groups=[0])
    rng = np.random.default_rng(0)
    many = fit.power_law(k, k ** -1.0 * np.exp(0.05 * rng.standard_normal((20, 10))), n_boot=200)
    assert many.has_interval and many.lo < -1 < many.hi and many.no_interval == ""


# ----------------------------------------------------------------------------- 6. the ledger's evidence

def _ladder_sweep(runs):
    spec = {"out": "empty_sweep", "archs": ["pre_ln"], "seeds": [0, 1, 2],
            "depths": {"pre_ln": [8, T.TRAINED_L]}, "plan": {"measure_steps": [0, 200]}}
    return training_analysis.StoredSweep(spec, runs)


def test_the_evidence_of_an_empty_sweep_is_refused_naming_the_sweep():
    empty = _ladder_sweep({})
    for fn in (T.exponent_evidence, T.cost_evidence):
        with pytest.raises(ValueError, match=r"empty_sweep.*no stored run") as info:
            fn(empty)
        assert _one_line(info)


def test_the_evidence_of_a_sweep_whose_deepest_pre_ln_runs_all_failed_is_refused():
    runs = {}
    for s in range(3):
        r = stored_run(f"pre_ln_L24_s{s}", "pre_ln", T.TRAINED_L, s, 2.0)
        r.update(status="non_finite", failed_step=10)
        runs[("pre_ln", T.TRAINED_L, s)] = r
    sw = _ladder_sweep(runs)
    with pytest.raises(ValueError, match=r"empty_sweep.*no (converged|finished) run of pre_ln at L = 24"):
        T.exponent_evidence(sw)
    with pytest.raises(ValueError, match=r"empty_sweep.*no finished run of pre_ln at L = 24"):
        T.cost_evidence(sw)
    with pytest.raises(ArgumentTypeError, match=r"\bsweep\b"):
        T.exponent_evidence({"runs": {}})


# ----------------------------------------------------------------------------- 7. final_loss

def test_final_loss_refuses_a_record_without_a_valid_status_or_loss():
    r = stored_run("pre_ln_L24_s0", "pre_ln", 24, 0, 1.5)
    assert training_analysis.final_loss(r) == 1.5
    assert math.isnan(training_analysis.final_loss({**r, "status": "non_finite", "failed_step": 10}))   # documented: a run that did not finish
    for status in (None, 3, "OK", ""):
        with pytest.raises(ValueError, match=r"run pre_ln_L24_s0: status") as info:
            training_analysis.final_loss({**r, "status": status})
        assert _one_line(info)
    for loss in (None, "1.5", True, math.nan):
        bad = copy.deepcopy(r)
        bad["final"]["val_loss"]["mean"] = loss
        with pytest.raises(ValueError, match=r"run pre_ln_L24_s0: final\.val_loss\.mean"):
            training_analysis.final_loss(bad)
    bad = copy.deepcopy(r)
    del bad["final"]["val_loss"]
    with pytest.raises(ValueError, match=r"run pre_ln_L24_s0: final\.val_loss is missing"):
        training_analysis.final_loss(bad)


def test_missing_fields_of_a_record_name_the_run_and_the_field_not_a_bare_key_error():
    sw = _sweep()
    sw.runs[("pre_ln", 4, 1)] = dataclasses.replace(sw.runs[("pre_ln", 4, 1)], convergence=None)
    with pytest.raises(ValueError, match=r"run pre_ln_L4_s1: convergence(\.diverged)? is missing"):
        training_analysis.flag_runs(sw)
    r = stored_run("pre_ln_L4_s0", "pre_ln", 4, 0, 2.0)
    del r["final"]["ablation"]["delta_se"]
    with pytest.raises(ValueError, match=r"run pre_ln_L4_s0: final\.ablation\.delta_se is missing"):
        depth_analysis.ablation(r)
    assert as_run(stored_run("x", "pre_ln", 4, 0, 2.0)).final.val_loss.mean == 2.0      # the record reads


# ----------------------------------------------------------------------------- 8. equal_depth_gap

def test_equal_depth_gap_checks_its_arguments():
    sw = _sweep()
    for bad in (math.nan, 8.0, True, None):
        with pytest.raises(ArgumentTypeError, match=r"\bmin_depth\b") as info:
            depth_analysis.equal_depth_gap(sw, "post_ln", min_depth=bad)
        assert _one_line(info)
    with pytest.raises(ValueError, match=r"\bmin_depth\b"):
        depth_analysis.equal_depth_gap(sw, "post_ln", min_depth=0)
    with pytest.raises(ValueError, match=r"\bmin_depth\b.*no depth"):
        depth_analysis.equal_depth_gap(sw, "post_ln", min_depth=16)
    with pytest.raises(ValueError, match=r"\barch\b"):
        depth_analysis.equal_depth_gap(sw, "POST_LN")
    with pytest.raises(ValueError, match=r"\bagainst\b"):
        depth_analysis.equal_depth_gap(sw, "post_ln", against="peri_ln")
    depths, iv = depth_analysis.equal_depth_gap(sw, "post_ln")
    assert depths == [8] and iv.mean == pytest.approx(-0.1)
    with pytest.raises(ValueError, match=r"\barch\b"):
        depth_analysis.paired_gap(sw, "POST_LN")
