"""Tests of the sweep's engines (resdecay_lib.training.engines): one tiny sweep run in this process,
on a real Dask cluster on 127.0.0.1 (scheduler and workers started here as processes), by
the command line against that cluster and by submitit's local executor stores the same
result files; a non-finite loss in a sweep is a result naming its step; every command-line
validation error is one line and exit code 2."""
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from resdecay_lib.training import engines as E
from resdecay_lib.training import sweep as S
from resdecay_lib.training import train as T
from resdecay_lib.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# the pattern of tests/test_sweep.py: 2 placements x depths [1, 2], 12 steps, one thread
BASE = {"d_model": 16, "n_head": 2, "block_size": 16, "batch_size": 4, "steps": 12, "warmup": 2,
        "threads": 1, "device": "cpu", "eval_windows": 6, "measure_windows": 4}
SPEC = {"out": "sweep", "archs": ["pre_ln", "post_ln"], "depths": [1, 2], "seeds": [0],
        "base": BASE, "plan": {"measure_steps": [0, 4, 12], "eval_every": 4}}
QUIET = {"log": lambda *a: None}


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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(procs):
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=20)


# ----------------------------------------------------------------------------- validation

@pytest.mark.parametrize("argv, option", [
    (["--workers", "0"], "--workers"), (["--workers", "2.5"], "--workers"),
    (["--workers", "-1"], "--workers"), (["--workers", "x"], "--workers"),
    (["--workers", str(10**12)], "--workers"), (["--executor", "gpu"], "--executor"),
    (["--executor", "local", "--scheduler", "tcp://127.0.0.1:8786"], "--scheduler"),
    (["--scheduler", "nohost"], "--scheduler"), (["--scheduler", "tcp://127.0.0.1:0"], "--scheduler"),
    (["--scheduler", "udp://127.0.0.1:8786"], "--scheduler"),
    (["--scheduler", "tcp://127.0.0.1:8786", "--workers", "2"], "--workers"),
    (["--executor", "slurm", "--workers", "2"], "--workers"),
    (["--connect-timeout", "nan"], "--connect-timeout"), (["--connect-timeout", "0"], "--connect-timeout"),
])
def test_bad_sweep_options_are_one_line_and_exit_code_2(tmp_path, capsys, argv, option):
    cfg = tmp_path / "s.toml"
    cfg.write_text(_toml(SPEC))
    assert main(["sweep", str(cfg), "--root", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sweep: ") and option in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "sweep").exists()  # nothing ran


@pytest.mark.parametrize("table, key", [
    ({"partition": 3}, "partition"), ({"partition": ""}, "partition"), ({"timeout_min": 0}, "timeout_min"),
    ({"timeout_min": 2.5}, "timeout_min"), ({"cpus_per_task": True}, "cpus_per_task"),
    ({"nodes": 2}, "nodes"), ({"folder": None}, "folder"),
])
def test_bad_slurm_table_is_rejected_naming_the_key(table, key):
    with pytest.raises(ValueError, match=key):
        S.load_sweep({**SPEC, "slurm": table})


def test_unreachable_scheduler_is_one_line_and_exit_code_2(tmp_path, capsys):
    pytest.importorskip("distributed")
    cfg = tmp_path / "s.toml"
    cfg.write_text(_toml(SPEC))
    port = _free_port()  # nobody listens there
    t0 = time.perf_counter()
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--scheduler",
                 f"tcp://127.0.0.1:{port}", "--connect-timeout", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sweep: cannot reach the Dask scheduler") and len(err.splitlines()) == 1, err
    assert time.perf_counter() - t0 < 30


def test_slurm_without_slurm_is_one_line_and_exit_code_2(tmp_path, capsys, monkeypatch):
    pytest.importorskip("submitit")
    import submitit
    if submitit.AutoExecutor.which() == "slurm":
        pytest.skip("this machine has SLURM")
    cfg = tmp_path / "s.toml"
    cfg.write_text(_toml({**SPEC, "slurm": {"partition": "cpu", "timeout_min": 30}}))
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--executor", "slurm"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sweep: --executor slurm needs SLURM") and len(err.splitlines()) == 1, err


# ----------------------------------------------------------------------------- same results

@pytest.fixture
def reference(tmp_path, monkeypatch, seed_corpus):
    """The sweep run one run after another in this process: its result files."""
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache_ref")))
    t0 = time.perf_counter()
    S.run_sweep(SPEC, root=tmp_path / "ref", **QUIET)
    print(f"in-process sweep: {time.perf_counter() - t0:.1f} s")
    return _results(tmp_path / "ref" / "sweep")


@pytest.mark.slow
def test_a_real_dask_cluster_and_the_cli_store_the_results_of_a_local_run(tmp_path, reference,
                                                                         seed_corpus):
    distributed = pytest.importorskip("distributed")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    # the workers get their own cache (checkpoints) and run in another folder than the client
    env = {**os.environ, "RESDECAY_CACHE": str(seed_corpus(tmp_path / "cache_dask"))}
    work = tmp_path / "workers"
    work.mkdir()
    procs = []
    try:
        procs.append(subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1",
                                       "--port", str(port), "--no-dashboard"], env=env, cwd=work,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(2):
            procs.append(subprocess.Popen([str(BIN / "dask"), "worker", address, "--nthreads", "1",
                                           "--no-dashboard"], env=env, cwd=work,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        t0 = time.perf_counter()
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
            t_up = time.perf_counter() - t0
            with client.get_executor(pure=False) as ex:
                done = S.run_sweep(SPEC, root=tmp_path / "dask", executor=ex, **QUIET)
            t_dask = time.perf_counter() - t0 - t_up
            hosts = {w["host"] for w in client.scheduler_info()["workers"].values()}
        assert [d[1].split(",")[0] for d in done] == ["ok"] * 4, done
        assert hosts == {"127.0.0.1"}
        assert _results(tmp_path / "dask" / "sweep") == reference

        cfg = tmp_path / "s.toml"
        cfg.write_text(_toml(SPEC))
        t1 = time.perf_counter()
        cli = subprocess.run([sys.executable, "-m", "resdecay_lib", "sweep", str(cfg), "--root",
                              str(tmp_path / "cli"), "--scheduler", address], env=env, cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
        t_cli = time.perf_counter() - t1
        assert cli.returncode == 0, cli.stderr[-3000:]
        assert cli.stdout.count(": ok,") == 4, cli.stdout
        assert _results(tmp_path / "cli" / "sweep") == reference
        print(f"dask: cluster up {t_up:.1f} s, sweep {t_dask:.1f} s, cli {t_cli:.1f} s")
    finally:
        _stop(procs[::-1])  # workers first, then the scheduler


@pytest.mark.slow
def test_submitit_local_executor_stores_the_results_of_a_local_run(tmp_path, reference,
                                                                  seed_corpus, monkeypatch):
    pytest.importorskip("submitit")
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache_submitit")))
    spec = {**SPEC, "slurm": {"timeout_min": 10}}
    t0 = time.perf_counter()
    with E.open_executor("slurm", spec=S.load_sweep(spec), root=tmp_path / "sub",
                         slurm_cluster="local") as ex:
        done = S.run_sweep(spec, root=tmp_path / "sub", executor=ex, **QUIET)
    print(f"submitit local: {time.perf_counter() - t0:.1f} s")
    assert [d[1].split(",")[0] for d in done] == ["ok"] * 4, done
    assert _results(tmp_path / "sub" / "sweep") == reference
    assert list((tmp_path / "sub" / "sweep" / ".submitit").iterdir())  # the jobs' logs


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
