"""Tests of resdecay_lib.train: the loop, exact resume, the NaN guard, unreadable checkpoints."""
from dataclasses import replace

import numpy as np
import pytest
import torch

from resdecay_lib import train as T

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
    real_loss = T.next_char_loss
    calls = {"n": 0}

    def poisoned(model, x, y):
        calls["n"] += 1
        loss = real_loss(model, x, y)
        return loss * float("nan") if calls["n"] == 6 else loss  # step index 5

    monkeypatch.setattr(T, "next_char_loss", poisoned)
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


def test_callback_log_survives_a_resume(tmp_path):
    def on_step(step, model, log):
        log.append({"step": step, "w": float(model.wte.weight[0, 0].detach())})

    straight = T.train(TINY, on_step=on_step, callback_steps=(2, 5, 8))
    ck = tmp_path / "run.pt"
    T.train(TINY, checkpoint=ck, stop_after=6, on_step=on_step, callback_steps=(2, 5, 8))
    resumed = T.train(TINY, checkpoint=ck, on_step=on_step, callback_steps=(2, 5, 8))
    assert [r["step"] for r in straight.log] == [2, 5, 8]
    assert resumed.log == straight.log


@pytest.mark.parametrize("damage", ["empty", "truncated", "folder"])
def test_unreadable_checkpoint_names_the_file(tmp_path, damage):
    ck = tmp_path / "run.pt"
    if damage == "folder":
        ck.mkdir()
    else:
        T.train(TINY, checkpoint=ck, stop_after=2)
        data = ck.read_bytes()
        ck.write_bytes(b"" if damage == "empty" else data[: len(data) // 2])
    with pytest.raises(T.CheckpointUnreadable, match="run.pt"):
        T.train(TINY, checkpoint=ck)


def test_fused_adamw_agrees_with_the_loop_adamw_to_float32_rounding(monkeypatch):
    """The stored sweep ran with torch's for-loop AdamW; the library now asks for fused."""
    fast = T.train(replace(TINY, steps=12))
    real = torch.optim.AdamW

    def looped(*a, **kw):
        kw.pop("fused", None)
        kw["foreach"] = False
        return real(*a, **kw)

    monkeypatch.setattr(torch.optim, "AdamW", looped)
    slow = T.train(replace(TINY, steps=12))
    from resdecay_lib.data import load_corpus
    init = _params(T._build_model(TINY, load_corpus(TINY.corpus).vocab.size, "cpu"))
    moved = sum(float((q - p0).pow(2).sum()) for q, p0 in zip(_params(slow.model), init)) ** 0.5
    diff = sum(float((p - q).pow(2).sum()) for p, q in zip(_params(fast.model), _params(slow.model))) ** 0.5
    print(f"fused vs loop after 12 steps: |difference| {diff:.3g}, |movement from init| {moved:.3g}")
    # the two differ by float32 rounding, which Adam's m / sqrt(v) amplifies where a gradient
    # is near 0: a small fraction of how far the parameters moved, never of their size
    assert 0 <= diff < 1e-3 * moved
