"""Tests of resdecay_lib.analysis.recheck: a stored run re-run live is found equal, a changed one is not."""
import copy

import numpy as np
import pytest

from resdecay_lib.analysis import recheck
from resdecay_lib.training import runs, train as T

TINY = T.TrainConfig(arch="pre_ln", n_layer=2, d_model=16, n_head=2, block_size=16, batch_size=4,
                     steps=8, warmup=2, threads=1, eval_windows=6, measure_windows=4)
PLAN = runs.RunPlan(measure_steps=(0, 2, 8), eval_every=4)


def test_first_interval_of_an_unchanged_run_is_exact_and_a_changed_one_is_seen():
    stored = runs.run_result(TINY, PLAN)
    same = recheck.first_interval(stored, PLAN)
    assert same["step"] == 2 and same["max_z_change"] == 0 and same["z_loss"] == 0
    moved = copy.deepcopy(stored)
    rec = moved["checkpoints"][1]["measure"]["stream"]
    rec["omega_sq"] = list(np.asarray(rec["omega_sq"]) + 10 * np.asarray(rec["omega_sq_se"]))
    assert recheck.first_interval(moved, PLAN)["max_z_change"] == pytest.approx(10, rel=1e-3)


def test_whole_run_ablation_of_an_unchanged_run_is_exact():
    stored = runs.run_result(TINY, PLAN)
    assert recheck.whole_run_ablation(stored, PLAN)["max_z"] == 0


def test_recheck_rejects_what_is_not_a_stored_run():
    with pytest.raises(ValueError, match="stored"):
        recheck.first_interval({"name": "x"}, PLAN)
