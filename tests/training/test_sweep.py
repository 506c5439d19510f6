"""Tests of resdecay_lib.training.sweep: validation, claims, atomic results, kills, two sweeps at once,
and a failed run's result."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from resdecay_lib.cli.sweep import EXIT_HELD
from resdecay_lib.training import sweep as S
from resdecay_lib.training import train as T
from sweep_fixtures import BASE, QUIET, SPEC, result_files, sweep_toml

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("bad, key", [
    ({"depths": [2.7]}, "depths"), ({"depths": [True]}, "depths"), ({"depths": ["3"]}, "depths"),
    ({"seeds": [0.9]}, "seeds"), ({"seeds": [0, 0]}, "seeds"), ({"archs": ["pre-ln"]}, "archs"),
    ({"out": "../../x"}, "out"), ({"colour": 1}, "colour"), ({"base": {**BASE, "arch": "post_ln"}}, "arch"),
    ({"base": {**BASE, "lr": True}}, "lr"), ({"plan": {"every": 3}}, "every"),
    ({"depths": {"pre_ln": [2]}}, "depths"),
])
def test_bad_sweep_configuration_is_rejected_naming_the_key(bad, key):
    with pytest.raises(ValueError, match=key):
        S.load_sweep({**SPEC, **bad})


def test_missing_sweep_file_is_a_clear_error(tmp_path, capsys):
    from resdecay_lib.__main__ import main
    assert main(["sweep", str(tmp_path / "none.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_claims_are_exclusive_and_a_dead_claim_is_taken_over(tmp_path):
    first = S.claim(tmp_path, "run")
    assert first is not None and S.claim(tmp_path, "run") is None  # this process holds it, alive
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    first.write_text(json.dumps({"host": os.uname().nodename, "pid": dead.pid, "time": 0}))
    assert S.claim(tmp_path, "run") is not None


def test_a_corrupt_result_is_reported_and_rerun(tmp_path, monkeypatch, seed_corpus):
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    spec = {**SPEC, "archs": ["pre_ln"], "depths": [1]}
    S.run_sweep(spec, root=tmp_path, log=lambda *a: None)
    p = tmp_path / "sweep" / "pre_ln_L1_s0.json"
    good = result_files(tmp_path / "sweep")
    p.write_text('{"config": ')  # truncated
    done = S.run_sweep(spec, root=tmp_path, log=lambda *a: None)
    assert "not a usable result" in done[0][1]
    assert result_files(tmp_path / "sweep") == good
    assert (tmp_path / "sweep" / "pre_ln_L1_s0.json.corrupt").exists()


def _start(cfg: Path, root: Path, cache: Path, workers=1):
    env = {**os.environ, "RESDECAY_CACHE": str(cache)}
    return subprocess.Popen([sys.executable, "-m", "resdecay_lib", "sweep", str(cfg), "--root",
                             str(root), "--workers", str(workers)], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.slow
def test_sweep_killed_at_several_moments_resumes_to_the_uninterrupted_result(tmp_path, seed_corpus):
    for cache in ("cache_ref", "cache_k"):  # the prepared corpus, linked into the fresh caches
        seed_corpus(tmp_path / cache)
    cfg = tmp_path / "s.toml"
    cfg.write_text(sweep_toml(SPEC))
    ref = _start(cfg, tmp_path / "ref", tmp_path / "cache_ref")
    assert ref.wait(timeout=300) == 0, ref.stdout.read()
    root = tmp_path / "killed"
    for delay in (2.0, 3.5, 5.0, 6.5):
        p = _start(cfg, root, tmp_path / "cache_k")
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
    p = _start(cfg, root, tmp_path / "cache_k")
    assert p.wait(timeout=300) == 0, p.stdout.read()
    folder = root / "sweep"
    assert not list(folder.glob(".*.tmp")) and not list(folder.glob("*.corrupt"))
    assert result_files(folder) == result_files(tmp_path / "ref" / "sweep")


@pytest.mark.slow
def test_two_sweeps_on_one_folder_run_each_configuration_once(tmp_path, seed_corpus):
    seed_corpus(tmp_path / "cache")
    cfg = tmp_path / "s.toml"
    cfg.write_text(sweep_toml(SPEC))
    a = _start(cfg, tmp_path, tmp_path / "cache")
    b = _start(cfg, tmp_path, tmp_path / "cache")
    out = [a.communicate(timeout=300)[0], b.communicate(timeout=300)[0]]
    trained = [line for o in out for line in o.splitlines() if ": ok," in line]
    assert len(trained) == 4, out  # 2 placements x 2 depths, each trained once in all
    assert len(list((tmp_path / "sweep").glob("*.json"))) == 4
    # a sweep that finds a run the other holds waits for its result: both end with every result
    # on disk, so both exit 0 (the first used to exit 1 although the other finished)
    assert (a.returncode, b.returncode) == (0, 0), out


def test_on_device_keeps_the_sweep_and_stores_it_apart():
    spec = S.load_sweep(Path(__file__).resolve().parents[2] / "configs" / "train_long.toml")
    gpu = S.on_device(spec, "cuda")
    assert gpu["base"]["device"] == "cuda" and spec["base"]["device"] == "cpu"     # a copy
    assert gpu["out"] == spec["out"] + "_cuda" and gpu["name"] == spec["name"] + "_cuda"
    strip = lambda sp: {**sp, "base": {k: v for k, v in sp["base"].items() if k != "device"},  # noqa: E731
                        "out": None, "name": None}
    assert strip(gpu) == strip(spec)          # grid, seeds, steps, rates, plan unchanged
    assert [c.lr for c in S.sweep_runs(gpu)] == [c.lr for c in S.sweep_runs(spec)]
    with pytest.raises(ValueError, match="device must be one of"):
        S.on_device(spec, "tpu")


def test_device_cuda_without_cuda_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    import torch
    from resdecay_lib.__main__ import main
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cfg = Path(__file__).resolve().parents[2] / "configs" / "train_long.toml"
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--device", "cuda"]) == 2
    assert "--device cuda: CUDA is not available" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


# ----------------------------------------------------------------------------- paths, claims, faults

def test_claim_keeps_a_run_name_inside_its_folder(tmp_path):
    claims = tmp_path / "a" / "claims"
    for bad in ("../../escaped", "..", "a/b", "", "x\\y"):
        with pytest.raises(ValueError, match=r"^name must be a plain name"):
            S.claim(claims, bad)
    assert not (tmp_path / "escaped.claim").exists() and not any(tmp_path.rglob("*.claim"))


def test_read_result_and_claim_take_a_str_path(tmp_path):
    assert S.read_result(str(tmp_path / "absent.json")) == (None, None)
    held = S.claim(str(tmp_path / "claims"), "run")
    assert held == tmp_path / "claims" / "run.claim" and held.is_file()
    S.release(str(held))
    assert not held.exists()


def test_run_sweep_rejects_a_root_of_none_before_writing_anything(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match=r"^root must be a path"):
        S.run_sweep(SPEC, root=None)
    with pytest.raises(ValueError, match=r"^root must be a path"):
        S.run_sweep(SPEC, root="")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("root, words", [("", "--root must be a folder path"),
                                         ("FILE", "--root must be a folder (created if absent), got the file")])
def test_sweep_rejects_an_empty_root_or_a_file_on_the_command_line(tmp_path, capsys, monkeypatch, root, words):
    from resdecay_lib.__main__ import main
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("")
    cfg = tmp_path / "s.toml"
    cfg.write_text(sweep_toml(SPEC))
    capsys.readouterr()
    assert main(["sweep", str(cfg), "--root", root]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sweep: ") and words in err and len(err.splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE", "s.toml"]


def test_a_sweep_with_no_wait_that_skips_a_run_another_live_process_claims_exits_3_naming_it(tmp_path, monkeypatch,
                                                                                            seed_corpus, capsys):
    from resdecay_lib.__main__ import main
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    spec = {**SPEC, "archs": ["pre_ln"], "depths": [1, 2]}
    cfg = tmp_path / "s.toml"
    cfg.write_text(sweep_toml(spec))
    held = S.claim(tmp_path / "sweep" / ".claims", "pre_ln_L2_s0")      # this process: alive
    capsys.readouterr()
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1", "--no-wait"]) == EXIT_HELD
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("sweep: 1 run(s) held by another live process have no result yet") and \
        err.count("pre_ln_L2_s0") == 1 and "pre_ln_L1_s0" not in err, err
    assert (tmp_path / "sweep" / "pre_ln_L1_s0.json").is_file()
    S.release(held)                                  # the other process ends: its run is resumed
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1"]) == 0
    assert (tmp_path / "sweep" / "pre_ln_L2_s0.json").is_file()


def test_a_sweep_removes_stale_temporaries_and_its_empty_checkpoint_folder(tmp_path, monkeypatch, seed_corpus):
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    spec = S.load_sweep({**SPEC, "archs": ["pre_ln"], "depths": [1]})
    ck_dir = S._checkpoint_dir(spec, tmp_path)
    stale_ck = ck_dir / ".pre_ln_L1_s0.pt.4242.tmp"                   # a writer killed mid-save
    stale_ck.write_bytes(b"half")
    out = tmp_path / "sweep"
    out.mkdir()
    stale_res = out / ".pre_ln_L1_s0.json.4242.140000.tmp"
    stale_res.write_text('{"config"')
    done = S.run_sweep(spec, root=tmp_path, log=lambda *a: None)
    assert done[0][1].startswith("ok")
    assert not stale_ck.exists() and not stale_res.exists()
    assert not ck_dir.exists(), list(ck_dir.iterdir())                # the finished run's folder, empty
    assert not list(out.glob(".*.tmp")) and (out / "pre_ln_L1_s0.json").is_file()


# ----------------------------------------------------------------------------- a failed run

def test_a_non_finite_loss_in_a_sweep_is_a_result_naming_the_step(tmp_path, monkeypatch,
                                                                  seed_corpus):
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    calls = {"n": 0}
    real = T.next_char_loss

    def poisoned(model, x, y):
        calls["n"] += 1
        loss = real(model, x, y)
        return loss * float("nan") if calls["n"] == 8 else loss  # step index 7

    monkeypatch.setattr(T, "next_char_loss", poisoned)
    spec = {**SPEC, "archs": ["pre_ln"], "depths": [1]}
    done = S.run_sweep(spec, root=tmp_path, **QUIET)
    assert "failed at step 7" in done[0][1] and "non_finite" in done[0][1], done
    res = json.loads((tmp_path / "sweep" / "pre_ln_L1_s0.json").read_text())
    assert res["status"] == "non_finite" and res["failed_step"] == 7
    assert [c["step"] for c in res["checkpoints"]] == [0, 4]  # measured before it failed
    ck = S._checkpoint_dir(S.load_sweep(spec), tmp_path) / "pre_ln_L1_s0.pt"
    assert torch.load(ck, weights_only=True)["step"] == 4  # the last good checkpoint is kept
    # a stored failure is a result: the next sweep does not run it again
    assert S.run_sweep(spec, root=tmp_path, **QUIET)[0][1] == "done, skipped"
