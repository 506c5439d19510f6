"""Tests of resdecay_lib.train: exact resume, NaN guard, sweeps, and the stored results."""
import json
import math
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest
import torch

from resdecay_lib import train as T
from resdecay_lib.__main__ import main as cli_main

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ROOT / "configs" / "train_sweep.toml"

TINY = T.TrainConfig(arch="pre_ln", n_layer=2, d_model=16, n_head=2, block_size=16, batch_size=4,
                     steps=8, warmup=2, threads=1, eval_windows=6, measure_windows=4)


def _params(model):
    return [p.detach().clone() for p in model.parameters()]


def test_lr_factor_warms_up_then_decays_to_min():
    cfg = replace(TINY, steps=100, warmup=10, min_lr_frac=0.1)
    f = [T.lr_factor(s, cfg) for s in range(100)]
    assert f[0] == pytest.approx(0.1) and f[9] == pytest.approx(1.0)
    assert f[10] == pytest.approx(1.0) and f[99] == pytest.approx(0.1)
    assert all(a >= b for a, b in zip(f[10:], f[11:]))


def test_config_rejects_bad_values_naming_the_field():
    with pytest.raises(ValueError, match="arch"):
        replace(TINY, arch="pre-ln")
    with pytest.raises(ValueError, match="steps"):
        replace(TINY, steps=0)
    with pytest.raises(ValueError, match="lr"):
        replace(TINY, lr=-1.0)
    with pytest.raises(ValueError, match="unknown"):
        T.TrainConfig.from_dict({"archh": "pre_ln"})


@pytest.mark.slow
def test_training_lowers_the_loss():
    st = T.train(replace(TINY, steps=30, warmup=3))
    assert np.mean(st.train_loss[-5:]) < np.mean(st.train_loss[:5]) - 0.3


def test_training_is_repeatable_for_a_seed():
    a, b = T.train(TINY), T.train(TINY)
    assert all(torch.equal(p, q) for p, q in zip(_params(a.model), _params(b.model)))
    assert a.train_loss == b.train_loss


def test_resume_gives_bit_identical_parameters(tmp_path):
    straight = T.train(TINY)
    ck = tmp_path / "run.pt"
    half = T.train(TINY, checkpoint=ck, stop_after=TINY.steps // 2)
    assert half.step == TINY.steps // 2 and ck.exists()
    resumed = T.train(TINY, checkpoint=ck)
    assert resumed.step == TINY.steps
    assert all(torch.equal(p, q) for p, q in zip(_params(straight.model), _params(resumed.model)))
    assert resumed.train_loss == straight.train_loss
    # the checkpoint loads with weights_only=True and holds every piece of state
    state = torch.load(ck, weights_only=True)
    assert {"model", "optimizer", "scheduler", "rng_cpu", "step", "train_loss"} <= set(state)


def test_resume_refuses_a_checkpoint_of_another_config(tmp_path):
    ck = tmp_path / "run.pt"
    T.train(TINY, checkpoint=ck, stop_after=2)
    with pytest.raises(ValueError, match="another config"):
        T.train(replace(TINY, lr=1e-2), checkpoint=ck)


def test_non_finite_loss_stops_naming_the_step_and_keeps_last_good_checkpoint(tmp_path, monkeypatch):
    real_loss = T._loss
    calls = {"n": 0}

    def poisoned(model, x, y):
        calls["n"] += 1
        loss = real_loss(model, x, y)
        return loss * float("nan") if calls["n"] == 6 else loss  # step index 5

    monkeypatch.setattr(T, "_loss", poisoned)
    ck = tmp_path / "run.pt"
    with pytest.raises(T.NonFiniteLoss, match="at step 5") as info:
        T.train(TINY, checkpoint=ck, checkpoint_every=2)
    assert info.value.step == 5 and info.value.last_good == 4
    state = torch.load(ck, weights_only=True)
    assert state["step"] == 4
    assert all(torch.isfinite(v).all() for v in state["model"].values())


def test_huge_learning_rate_is_caught_as_non_finite():
    cfg = replace(TINY, lr=1e12, grad_clip=0.0, steps=40, warmup=0, weight_decay=0.0)
    with pytest.raises(T.NonFiniteLoss, match="at step"):
        T.train(cfg)


def test_ablation_hook_removes_the_block_and_leaves_no_hook():
    st = T.train(TINY)
    x = torch.randint(0, 80, (3, 16))
    y = torch.randint(0, 80, (3, 16))
    abl = T.ablation_losses(st.model, x, y)
    assert len(abl["delta"]) == TINY.n_layer
    assert all(not b._forward_hooks for b in st.model.blocks)
    # removing a block by hand (identity block) gives the same loss
    blocks = st.model.blocks
    keep = blocks[0]
    blocks[0] = torch.nn.Identity()
    try:
        by_hand = T._window_losses(st.model, x, y).mean()
    finally:
        blocks[0] = keep
    assert abl["loss"][0] == pytest.approx(by_hand, rel=1e-12)


def test_gram_of_independent_summands_is_near_diagonal():
    g = torch.Generator().manual_seed(0)
    u = torch.randn(5, 8, 16, 256, generator=g)
    stream = torch.cumsum(u, 0)
    G = T._gram(stream)
    assert G.shape == (5, 5)
    assert np.allclose(np.diag(G), 1.0, atol=0.05)  # variance 1 - 1/D after centring
    off = G[~np.eye(5, dtype=bool)]
    assert np.abs(off).max() < 5 / math.sqrt(8 * 16 * 256)  # ~5 standard errors of a correlation


@pytest.mark.parametrize("arch", ["pre_ln", "resi_dual"])
def test_run_result_holds_what_the_chapters_read(arch):
    res = T.run_result(replace(TINY, arch=arch))
    assert res["status"] == "ok"
    json.dumps(res, allow_nan=False)  # strict JSON
    for when in ("init", "trained"):
        parts = res[when]["measure"]
        assert set(parts) == ({"post_ln", "dual"} if arch == "resi_dual" else {"stream"})
        for rec in parts.values():
            assert len(rec["omega_sq"]) == TINY.n_layer
            assert len(rec["gram"]) == TINY.n_layer + 1
            assert len(rec["omega_sq_per_sequence"]) == TINY.measure_windows
    assert len(res["trained"]["ablation"]["delta"]) == TINY.n_layer
    assert {"code_version", "library_versions", "device", "wall_time_s", "seed"} <= set(res)


def test_sweep_skips_finished_runs_and_loses_none_when_interrupted(tmp_path, monkeypatch):
    spec = {"out": "sweep", "archs": ["pre_ln", "post_ln"], "depths": [1, 2], "seeds": [0],
            "base": {k: v for k, v in asdict(TINY).items() if k not in ("arch", "n_layer", "seed")}}
    monkeypatch.setenv("RESDECAY_CACHE", str(tmp_path / "cache"))
    # the corpus is memoised per process, so the cache override only moves checkpoints
    real = T.run_result
    calls = []

    def interrupting(cfg, **kw):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(cfg.run_name())
        return real(cfg, **kw)

    monkeypatch.setattr(T, "run_result", interrupting)
    with pytest.raises(KeyboardInterrupt):
        T.sweep(spec, root=tmp_path, log=lambda *a: None)
    done = sorted(p.name for p in (tmp_path / "sweep").glob("*.json"))
    assert len(done) == 2
    first = {p: (tmp_path / "sweep" / p).read_text() for p in done}
    monkeypatch.setattr(T, "run_result", real)
    written = T.sweep(spec, root=tmp_path, log=lambda *a: None)
    assert len(written) == 2  # only the missing ones ran
    assert all((tmp_path / "sweep" / p).read_text() == s for p, s in first.items())
    assert len(list((tmp_path / "sweep").glob("*.json"))) == 4
    assert not list((tmp_path / "sweep").glob(".*tmp"))


def test_cli_train_writes_a_result(tmp_path):
    out = tmp_path / "r.json"
    args = ["train", "--arch", "pre_ln", "--n-layer", "1", "--d-model", "16", "--n-head", "2",
            "--block-size", "16", "--batch-size", "4", "--steps", "3", "--warmup", "1",
            "--threads", "1", "--eval-windows", "4", "--measure-windows", "3", "--out", str(out)]
    assert cli_main(args) == 0
    assert json.loads(out.read_text())["config"]["steps"] == 3


def _stored(name):
    path = ROOT / "results" / "train_sweep" / f"{name}.json"
    if not path.exists():
        pytest.skip(f"{path} not produced yet (python -m resdecay_lib sweep {SWEEP})")
    return json.loads(path.read_text())


@pytest.mark.slow
def test_stored_train_sweep_reproduces_its_smallest_run():
    """The train_sweep family: re-run its smallest run and compare with the stored file.

    With the thread count pinned (the config's), the same CPU family gives the same bits;
    another family may differ in the last bits of every step. Tolerance: the trained
    validation loss within 3 standard errors over evaluation windows of the stored one
    (3 sigma of the measurement's own noise: a re-run that differs less than that is the
    same result), and the trained omega_sq of each layer within 3 of its standard errors
    over sequences.
    """
    spec = T.load_sweep(SWEEP)
    runs = T.sweep_runs(spec)
    small = min(runs, key=lambda c: (c.n_layer, c.seed, c.arch != "pre_ln"))
    stored = _stored(small.run_name())
    assert stored["config"] == asdict(small)
    live = T.run_result(small)
    sv, lv = stored["trained"]["val_loss"], live["trained"]["val_loss"]
    assert abs(lv["mean"] - sv["mean"]) <= 3 * sv["se"]
    so, lo = stored["trained"]["measure"]["stream"], live["trained"]["measure"]["stream"]
    for a, b, se in zip(lo["omega_sq"], so["omega_sq"], so["omega_sq_se"]):
        assert abs(a - b) <= 3 * se
