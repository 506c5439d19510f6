"""Tests of the sweep's engines (resdecay_lib.training.engines): one tiny sweep run in this process,
on a real Dask cluster on 127.0.0.1 (scheduler and workers started here as processes), by
the command line against that cluster and by submitit's local executor stores the same
result files; every command-line validation error is one line and exit code 2; killing a sweep
takes its local workers down."""
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from resdecay_lib.training import engines as E
from resdecay_lib.training import sweep as S
from resdecay_lib.__main__ import main
from sweep_fixtures import QUIET, SPEC, result_files, sweep_toml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


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
    cfg.write_text(sweep_toml(SPEC))
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
    cfg.write_text(sweep_toml(SPEC))
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
    cfg.write_text(sweep_toml({**SPEC, "slurm": {"partition": "cpu", "timeout_min": 30}}))
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--executor", "slurm"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sweep: --executor slurm needs SLURM") and len(err.splitlines()) == 1, err


# ----------------------------------------------------------------------------- same results

@pytest.fixture(scope="module")
def reference(tmp_path_factory, seed_corpus):
    """The sweep run one run after another in this process: its result files (once for the
    tests of this file, which compare other engines' results with them and never change them)."""
    tmp_path = tmp_path_factory.mktemp("reference")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache_ref")))
        t0 = time.perf_counter()
        S.run_sweep(SPEC, root=tmp_path / "ref", **QUIET)
    print(f"in-process sweep: {time.perf_counter() - t0:.1f} s")
    return result_files(tmp_path / "ref" / "sweep")


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
        assert result_files(tmp_path / "dask" / "sweep") == reference

        cfg = tmp_path / "s.toml"
        cfg.write_text(sweep_toml(SPEC))
        t1 = time.perf_counter()
        cli = subprocess.run([sys.executable, "-m", "resdecay_lib", "sweep", str(cfg), "--root",
                              str(tmp_path / "cli"), "--scheduler", address], env=env, cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
        t_cli = time.perf_counter() - t1
        assert cli.returncode == 0, cli.stderr[-3000:]
        assert cli.stdout.count(": ok,") == 4, cli.stdout
        assert result_files(tmp_path / "cli" / "sweep") == reference
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
    assert result_files(tmp_path / "sub" / "sweep") == reference
    assert list((tmp_path / "sub" / "sweep" / ".submitit").iterdir())  # the jobs' logs


# ----------------------------------------------------------------------------- local workers

_POOL_SCRIPT = """
import os, sys, time
from resdecay_lib.training import engines
if __name__ == "__main__":
    ex = engines.local_executor(2)
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
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
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
