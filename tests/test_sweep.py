"""Tests of resdecay_lib.sweep: validation, claims, atomic results, kills, two sweeps at once."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from resdecay_lib import sweep as S

ROOT = Path(__file__).resolve().parents[1]
BASE = {"d_model": 16, "n_head": 2, "block_size": 16, "batch_size": 4, "steps": 12, "warmup": 2,
        "threads": 1, "device": "cpu", "eval_windows": 6, "measure_windows": 4}
SPEC = {"out": "sweep", "archs": ["pre_ln", "post_ln"], "depths": [1, 2], "seeds": [0],
        "base": BASE, "plan": {"measure_steps": [0, 4, 12], "eval_every": 4}}


def _toml(spec) -> str:
    def val(v):
        return json.dumps(v) if not isinstance(v, bool) else str(v).lower()
    lines = [f"{k} = {val(v)}" for k, v in spec.items() if not isinstance(v, dict)]
    for k, v in spec.items():
        if isinstance(v, dict):
            lines.append(f"[{k}]")
            lines += [f"{a} = {val(b)}" for a, b in v.items()]
    return "\n".join(lines) + "\n"


def _results(folder: Path) -> dict:
    """Result files without what legitimately differs between runs (wall time, provenance)."""
    out = {}
    for p in sorted(folder.glob("*.json")):
        r = json.loads(p.read_text())
        for k in ("wall_time_s", "code_version", "platform", "device"):
            r.pop(k, None)
        out[p.name] = r
    return out


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


def test_write_json_atomic_leaves_nothing_on_failure_and_writes_standard_json(tmp_path):
    p = tmp_path / "r.json"
    with pytest.raises(TypeError):
        S.write_json_atomic({"x": object()}, p)
    assert list(tmp_path.iterdir()) == []
    S.write_json_atomic({"x": float("nan")}, p)
    assert json.loads(p.read_text()) == {"x": None}


def test_a_corrupt_result_is_reported_and_rerun(tmp_path, monkeypatch, seed_corpus):
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    spec = {**SPEC, "archs": ["pre_ln"], "depths": [1]}
    S.run_sweep(spec, root=tmp_path, log=lambda *a: None)
    p = tmp_path / "sweep" / "pre_ln_L1_s0.json"
    good = _results(tmp_path / "sweep")
    p.write_text('{"config": ')  # truncated
    done = S.run_sweep(spec, root=tmp_path, log=lambda *a: None)
    assert "not a usable result" in done[0][1]
    assert _results(tmp_path / "sweep") == good
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
    cfg.write_text(_toml(SPEC))
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
    assert _results(folder) == _results(tmp_path / "ref" / "sweep")


@pytest.mark.slow
def test_two_sweeps_on_one_folder_run_each_configuration_once(tmp_path, seed_corpus):
    seed_corpus(tmp_path / "cache")
    cfg = tmp_path / "s.toml"
    cfg.write_text(_toml(SPEC))
    a = _start(cfg, tmp_path, tmp_path / "cache")
    b = _start(cfg, tmp_path, tmp_path / "cache")
    out = [a.communicate(timeout=300)[0], b.communicate(timeout=300)[0]]
    assert a.returncode == b.returncode == 0, out
    trained = [line for o in out for line in o.splitlines() if ": ok," in line]
    assert len(trained) == 4, out  # 2 placements x 2 depths, each trained once in all
    assert len(list((tmp_path / "sweep").glob("*.json"))) == 4


_POOL_SCRIPT = """
import os, sys, time
from resdecay_lib import sweep as S
if __name__ == "__main__":
    ex = S.local_executor(2)
    pids = {ex.submit(os.getpid).result() for _ in range(8)}    # every worker started and initialised
    open(sys.argv[1], "w").write(" ".join(map(str, sorted(pids))))
    time.sleep(300)
"""


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"   # dead, unreaped
    except OSError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_killing_a_sweep_takes_its_local_workers_down(tmp_path):
    script, out = tmp_path / "pool.py", tmp_path / "pids"
    script.write_text(_POOL_SCRIPT)
    parent = subprocess.Popen([sys.executable, str(script), str(out)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    try:
        deadline = time.time() + 120
        while not (out.exists() and out.read_text()) and time.time() < deadline:
            time.sleep(0.2)
        pids = [int(p) for p in out.read_text().split()]
        assert pids and parent.pid not in pids
        parent.send_signal(signal.SIGKILL)           # no clean-up code runs in the parent
        parent.wait(10)
        deadline = time.time() + 20
        while not all(_gone(p) for p in pids) and time.time() < deadline:
            time.sleep(0.2)
        assert all(_gone(p) for p in pids), f"workers {[p for p in pids if not _gone(p)]} outlived the sweep"
    finally:
        parent.kill()


def test_on_device_keeps_the_sweep_and_stores_it_apart():
    spec = S.load_sweep(Path(__file__).resolve().parents[1] / "configs" / "train_long.toml")
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
    cfg = Path(__file__).resolve().parents[1] / "configs" / "train_long.toml"
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--device", "cuda"]) == 2
    assert "--device cuda: CUDA is not available" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
