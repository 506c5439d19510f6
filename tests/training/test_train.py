"""Tests of resdecay_lib.training.train: the loop, exact resume, the NaN guard, unreadable checkpoints."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from resdecay_lib.training import train as T

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


def test_a_resumed_run_counts_the_time_of_its_earlier_segments(tmp_path):
    ck = tmp_path / "run.pt"
    first = T.train(TINY, checkpoint=ck, stop_after=TINY.steps // 2)
    assert first.prior_wall_s == 0.0 and first.resumed_from == 0
    stored = torch.load(ck, weights_only=True)["elapsed_s"]
    assert 0 < stored <= first.wall_s
    resumed = T.train(TINY, checkpoint=ck)
    assert resumed.resumed_from == TINY.steps // 2 and resumed.prior_wall_s == stored
    assert torch.load(ck, weights_only=True)["elapsed_s"] > stored
    # a checkpoint written before checkpoints kept the time: the earlier segments' time is unknown
    old_ck = tmp_path / "old.pt"
    T.train(TINY, checkpoint=old_ck, stop_after=TINY.steps // 2)
    old = torch.load(old_ck, weights_only=True)
    del old["elapsed_s"]
    torch.save(old, old_ck)
    assert T.train(TINY, checkpoint=old_ck).prior_wall_s is None


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
    from resdecay_lib.training.data import load_corpus
    init = _params(T._build_model(TINY, load_corpus(TINY.corpus).vocab.size, "cpu"))
    moved = sum(float((q - p0).pow(2).sum()) for q, p0 in zip(_params(slow.model), init)) ** 0.5
    diff = sum(float((p - q).pow(2).sum()) for p, q in zip(_params(fast.model), _params(slow.model))) ** 0.5
    print(f"fused vs loop after 12 steps: |difference| {diff:.3g}, |movement from init| {moved:.3g}")
    # the two differ by float32 rounding, which Adam's m / sqrt(v) amplifies where a gradient
    # is near 0: a small fraction of how far the parameters moved, never of their size
    assert 0 <= diff < 1e-3 * moved


# ----------------------------------------------------------------------------- bad input, faults

def test_lr_factor_rejects_a_nan_step_naming_it():
    with pytest.raises((TypeError, ValueError), match=r"^step must be an integer >= 0"):
        T.lr_factor(float("nan"), TINY)
    with pytest.raises(ValueError, match="step"):
        T.lr_factor(-1, TINY)


@pytest.mark.parametrize("bad", ["pre_ln", {"arch": "pre_ln"}, None])
def test_train_and_lr_factor_reject_what_is_not_a_train_config_with_a_type_error(bad):
    with pytest.raises(TypeError, match=r"^cfg must be a TrainConfig, got"):
        T.lr_factor(3, bad)
    with pytest.raises(TypeError, match=r"^cfg must be a TrainConfig, got"):
        T.train(bad)


def test_next_char_loss_rejects_token_ids_at_or_above_the_vocabulary_naming_their_range():
    from resdecay_lib.nn.models import build
    model = build("pre_ln", 1, 8, 2, 5, 4, device="cpu")
    ok = torch.zeros(2, 4, dtype=torch.long)
    with pytest.raises(ValueError, match=r"^x must hold token ids in \[0, vocab_size=5\), got ids from 0 to 5"):
        T.next_char_loss(model, ok + torch.tensor([0, 0, 0, 5]), ok)
    with pytest.raises(ValueError, match=r"^y must hold token ids in \[0, vocab_size=5\), got ids from -1 to 0"):
        T.next_char_loss(model, ok, ok - torch.tensor([1, 0, 0, 0]))


def test_a_checkpoint_under_a_file_is_rejected_before_training(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(ValueError, match=r"^checkpoint cannot be written: .* is a file, not a folder"):
        T.train(TINY, checkpoint=tmp_path / "f" / "run.pt")


def test_a_checkpoint_in_a_missing_folder_gets_its_folder_before_training(tmp_path):
    ck = tmp_path / "new" / "deeper" / "run.pt"
    T.train(TINY, checkpoint=ck, stop_after=2)
    assert ck.is_file()


def test_a_stale_checkpoint_temporary_of_a_dead_writer_is_removed_and_a_live_ones_kept(tmp_path):
    import os
    import subprocess
    import sys
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    ck = tmp_path / "run.pt"
    stale = tmp_path / f".run.pt.{dead.pid}.tmp"
    live = tmp_path / f".run.pt.{os.getppid()}.tmp"      # the test runner's parent: alive
    other = tmp_path / f".other.pt.{dead.pid}.tmp"        # another checkpoint's: not touched
    for p in (stale, live, other):
        p.write_bytes(b"half a checkpoint")
    T.train(TINY, checkpoint=ck, stop_after=2)
    assert not stale.exists() and live.exists() and other.exists() and ck.is_file()
    assert T.clean_checkpoint_temporaries(ck, every=True) == [live] and not live.exists()


def test_a_checkpoint_write_that_fails_leaves_no_temporary(tmp_path, monkeypatch):
    ck = tmp_path / "run.pt"

    def full_disk(obj, f, *a, **kw):
        with open(f, "wb") as out:
            out.write(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch, "save", full_disk)
    with pytest.raises(OSError, match="No space left"):
        T.train(TINY, checkpoint=ck, stop_after=2)
    assert list(tmp_path.iterdir()) == []


def test_discard_checkpoint_removes_a_truncated_checkpoint_of_its_own_and_refuses_anything_else(tmp_path):
    """Only the library's own checkpoint is removed: any other file, and any folder, is left as it is."""
    ck, f, d = tmp_path / "run.pt", tmp_path / "a.pt", tmp_path / "b.pt"
    T.train(TINY, checkpoint=ck, stop_after=2)
    ck.write_bytes(ck.read_bytes()[:2000])               # truncated, still recognisable as ours
    f.write_bytes(b"trunc")                              # not recognisable: someone else's
    d.mkdir()
    assert T.discard_checkpoint(ck) == "removed it" and not ck.exists()
    for other in (f, d):
        with pytest.raises(T.ForeignCheckpoint, match="refused and left as it is"):
            T.discard_checkpoint(other)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.pt", "b.pt"] and f.read_bytes() == b"trunc"


def test_a_checkpoint_is_written_even_when_its_folder_vanishes_just_before(tmp_path, monkeypatch):
    """Two processes of one sweep share a checkpoint folder, and a process that finishes a run
    removes it when empty; the other may have made it and not yet opened its checkpoint."""
    import torch as _torch
    real_save, calls = _torch.save, []

    def save_after_the_folder_vanished(obj, f, *a, **k):
        calls.append(f)
        if len(calls) == 1:
            Path(f).parent.rmdir()           # the other process's cleanup, in between
        return real_save(obj, f, *a, **k)

    monkeypatch.setattr(T.torch, "save", save_after_the_folder_vanished)
    ck = tmp_path / "checkpoints" / "run.pt"
    st = T.train(TINY, checkpoint=ck, checkpoint_every=4)
    assert st.step == TINY.steps and ck.is_file()         # trained to the end, the checkpoint written
    assert Path(calls[0]).name.startswith(".run.pt.") and Path(calls[1]).name.startswith(".run.pt.")  # written again
