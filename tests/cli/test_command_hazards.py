"""A command checks its paths and the cache before any work (one line,
exit code 2), and a sweep's exit code says what happened (0: every result on disk, whoever
trained it; 3: ``--no-wait`` left runs another live process holds without a result)."""
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from resdecay_lib.__main__ import main
from resdecay_lib.cli import record
from resdecay_lib.cli import measure as M
from resdecay_lib.cli import prepare_models as PM
from resdecay_lib.cli import sweep as sweep_cli
from resdecay_lib.cli import train as train_cli
from resdecay_lib.nn import pretrained
from resdecay_lib.training import data
from resdecay_lib.training import runs
from resdecay_lib.training import sweep as S
from sweep_fixtures import SPEC, sweep_toml

ROOT = Path(__file__).resolve().parents[2]
TEXT = "To be or not to be, that is the question. " * 200


def _one_line(capsys, command: str) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{command}: ") and len(err.splitlines()) == 1, err
    assert "Traceback" not in err, err
    return err


def _no_training(monkeypatch):
    fail = lambda *a, **k: pytest.fail("a run was trained")      # noqa: E731
    monkeypatch.setattr(S, "run_result", fail)
    monkeypatch.setattr(runs, "run_result", fail)
    monkeypatch.setattr(train_cli, "run_result", fail)


def _no_loading(monkeypatch):
    fail = lambda *a, **k: pytest.fail("a model was loaded")      # noqa: E731
    monkeypatch.setattr(pretrained, "load", fail)
    monkeypatch.setattr(pretrained, "load_packaged", fail)
    monkeypatch.setattr(M, "load", fail, raising=False)
    monkeypatch.setattr(PM, "load_packaged", fail)


# ----------------------------------------------------------------------------- sweep: the output folder

def test_a_sweep_whose_out_runs_under_a_file_is_refused_before_any_training(tmp_path, monkeypatch, capsys,
                                                                            seed_corpus):
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    _no_training(monkeypatch)
    (tmp_path / "FILE").write_text("")
    spec = {**SPEC, "out": "FILE/sweep"}
    cfg = tmp_path / "s.toml"
    cfg.write_text(sweep_toml(spec))
    with pytest.raises(ValueError, match=r"^the sweep's out folder .*FILE/sweep.* a path under the file"):
        S.run_sweep(spec, root=tmp_path, log=lambda *a: None)
    capsys.readouterr()
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1"]) == 2
    assert "out folder" in _one_line(capsys, "sweep")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE", "cache", "s.toml"]


def test_a_sweep_whose_out_folder_is_read_only_is_refused_before_any_training(tmp_path, monkeypatch, capsys,
                                                                             seed_corpus):
    # tests run as root, where chmod does not stop a write: os.access says "not writable" instead
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    _no_training(monkeypatch)
    out = tmp_path / "sweep"
    out.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **k: False if Path(p) == out else real(p, mode, **k))
    cfg = tmp_path / "s.toml"
    cfg.write_text(sweep_toml(SPEC))
    capsys.readouterr()
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1"]) == 2
    assert "is not writable" in _one_line(capsys, "sweep")
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("make", ["file", "under_file"])
def test_a_sweep_with_a_broken_cache_is_refused_in_one_line_before_any_training(tmp_path, monkeypatch, capsys, make):
    _no_training(monkeypatch)
    (tmp_path / "FILE").write_text("")
    cache = tmp_path / "FILE" if make == "file" else tmp_path / "FILE" / "cache"
    monkeypatch.setenv("RESDECAY_CACHE", str(cache))
    cfg = tmp_path / "s.toml"
    cfg.write_text(sweep_toml(SPEC))
    capsys.readouterr()
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1"]) == 2
    assert "RESDECAY_CACHE" in _one_line(capsys, "sweep")
    assert not (tmp_path / "sweep").exists()


def test_a_sweep_without_the_prepared_corpus_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    _no_training(monkeypatch)
    monkeypatch.setenv("RESDECAY_CACHE", str(tmp_path / "empty_cache"))
    data._CORPUS_CACHE.clear()
    cfg = tmp_path / "s.toml"
    cfg.write_text(sweep_toml(SPEC))
    capsys.readouterr()
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1"]) == 2
    assert "prepare-corpus" in _one_line(capsys, "sweep")


# ----------------------------------------------------------------------------- sweep: waiting for another process

def _held_sweep(tmp_path, monkeypatch, seed_corpus):
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    monkeypatch.setattr(S, "WAIT_FIRST_S", 0.2, raising=False)
    monkeypatch.setattr(S, "WAIT_MAX_S", 0.5, raising=False)
    spec = {**SPEC, "archs": ["pre_ln"], "depths": [1, 2]}
    cfg = tmp_path / "s.toml"
    cfg.write_text(sweep_toml(spec))
    return cfg


def test_a_sweep_waits_for_a_run_another_live_process_holds_and_exits_0(tmp_path, monkeypatch, seed_corpus, capsys):
    cfg = _held_sweep(tmp_path, monkeypatch, seed_corpus)
    held = S.claim(tmp_path / "sweep" / ".claims", "pre_ln_L2_s0")      # this process: alive
    timer = threading.Timer(2.0, S.release, args=(held,))             # ... until it ends its run
    timer.start()
    capsys.readouterr()
    try:
        assert main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1"]) == 0
    finally:
        timer.cancel()
    out = capsys.readouterr().out
    waits = [line for line in out.splitlines() if line.startswith("waiting for ")]
    assert len(waits) == 1 and "pre_ln_L2_s0" in waits[0] and "pre_ln_L1_s0" not in waits[0], out
    assert (tmp_path / "sweep" / "pre_ln_L2_s0.json").is_file()


def test_a_sweep_takes_over_a_waited_for_run_when_its_holder_dies(tmp_path, monkeypatch, seed_corpus, capsys):
    import json
    import socket
    cfg = _held_sweep(tmp_path, monkeypatch, seed_corpus)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    claims = tmp_path / "sweep" / ".claims"
    claims.mkdir(parents=True)
    (claims / "pre_ln_L2_s0.claim").write_text(json.dumps(
        {"host": socket.gethostname(), "pid": holder.pid, "time": 0}))

    def die():
        holder.kill()
        holder.wait()
    timer = threading.Timer(2.0, die)
    timer.start()
    try:
        assert main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1"]) == 0
    finally:
        timer.cancel()
        if holder.poll() is None:
            die()
    assert (tmp_path / "sweep" / "pre_ln_L2_s0.json").is_file()
    assert "pre_ln_L2_s0: ok" in capsys.readouterr().out


def test_a_sweep_with_no_wait_exits_3_naming_the_runs_another_live_process_holds(tmp_path, monkeypatch,
                                                                                 seed_corpus, capsys):
    cfg = _held_sweep(tmp_path, monkeypatch, seed_corpus)
    held = S.claim(tmp_path / "sweep" / ".claims", "pre_ln_L2_s0")
    capsys.readouterr()
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1", "--no-wait"]) == sweep_cli.EXIT_HELD == 3
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("sweep: 1 run(s) held by another live process") and "--no-wait" in err and \
        err.count("pre_ln_L2_s0") == 1 and "pre_ln_L1_s0" not in err, err
    assert (tmp_path / "sweep" / "pre_ln_L1_s0.json").is_file()
    S.release(held)
    assert main(["sweep", str(cfg), "--root", str(tmp_path), "--workers", "1", "--no-wait"]) == 0


def test_the_sweep_help_documents_its_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--no-wait" in text and "exit code 3" in text and "Exit codes: 0, every result" in text


# ----------------------------------------------------------------------------- measure

@pytest.mark.parametrize("kind, words", [
    ("empty", "is empty"), ("short", "needs at least"), ("missing", "nothing is there"),
    ("folder", "regular file"), ("fifo", "regular file"),
])
def test_measure_checks_the_text_before_loading_the_model(tmp_path, monkeypatch, capsys, kind, words):
    _no_loading(monkeypatch)
    text = tmp_path / "text.txt"
    if kind == "empty":
        text.write_text("")
    elif kind == "short":
        text.write_text("To be or not to be.")
    elif kind == "folder":
        text.mkdir()
    elif kind == "fifo":
        os.mkfifo(text)        # read_text() would block for ever
    assert main(["measure", "smollm2-135m", "--text", str(text), "--out", str(tmp_path / "out")]) == 2
    err = _one_line(capsys, "measure")
    assert "--text" in err and words in err, err
    assert not (tmp_path / "out").exists()


def test_measure_refuses_an_output_file_that_is_a_folder_before_loading(tmp_path, monkeypatch, capsys):
    _no_loading(monkeypatch)
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    (tmp_path / "out" / "smollm2-135m_layers.csv").mkdir(parents=True)
    assert main(["measure", "smollm2-135m", "--text", str(text), "--out", str(tmp_path / "out")]) == 2
    assert "smollm2-135m_layers.csv" in _one_line(capsys, "measure")


@pytest.mark.parametrize("make", ["models_file", "cache_file"])
def test_measure_and_record_check_the_models_cache_before_loading(tmp_path, monkeypatch, capsys, make):
    _no_loading(monkeypatch)
    cache = tmp_path / "cache"
    if make == "models_file":
        cache.mkdir()
        (cache / "models").write_text("")
    else:
        cache.write_text("")
    monkeypatch.setenv("RESDECAY_CACHE", str(cache))
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    assert main(["measure", "smollm2-135m", "--text", str(text), "--out", str(tmp_path / "out")]) == 2
    assert "RESDECAY_CACHE" in _one_line(capsys, "measure")
    assert main(["record", "smollm2-135m", "--text", "pydoc", "--out", str(tmp_path / "out")]) == 2
    assert "RESDECAY_CACHE" in _one_line(capsys, "record")
    with pytest.raises(ValueError, match="RESDECAY_CACHE") as exc:
        pretrained.model_cache_dir()
    assert len(str(exc.value).splitlines()) == 1


def test_record_checks_its_records_and_the_corpus_before_loading(tmp_path, monkeypatch, capsys):
    _no_loading(monkeypatch)
    out = tmp_path / "out"
    (out / "smollm2-135m__pydoc.json").mkdir(parents=True)        # a folder where a record goes
    assert main(["record", "smollm2-135m", "--text", "pydoc", "--out", str(out)]) == 2
    assert "smollm2-135m__pydoc.json" in _one_line(capsys, "record")
    monkeypatch.setenv("RESDECAY_CACHE", str(tmp_path / "empty_cache"))
    assert main(["record", "smollm2-135m", "--text", "shakespeare", "--out", str(tmp_path / "o2")]) == 2
    assert "prepare-corpus" in _one_line(capsys, "record")


def test_prepare_models_with_a_broken_cache_is_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "models").write_text("")
    monkeypatch.setenv("RESDECAY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(PM, "load_packaged", lambda *a, **k: pytest.fail("a model was loaded"))
    assert main(["prepare-models"]) == 2
    assert "RESDECAY_CACHE" in _one_line(capsys, "prepare-models")


# ----------------------------------------------------------------------------- prepare-corpus

@pytest.mark.parametrize("cache", ["", "   ", "FILE", "FILE/sub"])
def test_prepare_corpus_refuses_a_bad_cache_in_one_line_naming_it(tmp_path, monkeypatch, capsys, cache):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("")
    monkeypatch.setattr(data, "fetch_shakespeare", lambda *a, **k: pytest.fail("fetched"))
    assert main(["prepare-corpus", "--cache", cache]) == 2
    assert "--cache" in _one_line(capsys, "prepare-corpus")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]


def test_prepare_corpus_with_a_broken_default_cache_is_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "FILE").write_text("")
    monkeypatch.setenv("RESDECAY_CACHE", str(tmp_path / "FILE" / "cache"))
    monkeypatch.setattr(data, "fetch_shakespeare", lambda *a, **k: pytest.fail("fetched"))
    assert main(["prepare-corpus"]) == 2
    assert "RESDECAY_CACHE" in _one_line(capsys, "prepare-corpus")


# ----------------------------------------------------------------------------- train

@pytest.mark.parametrize("make", ["file", "under_file", "no_corpus"])
def test_train_with_a_broken_cache_or_no_corpus_is_one_line_before_any_training(tmp_path, monkeypatch, capsys, make):
    fail = lambda *a, **k: pytest.fail("a run was trained")      # noqa: E731
    monkeypatch.setattr(runs, "run_result", fail)
    monkeypatch.setattr(train_cli, "run_result", fail)
    (tmp_path / "FILE").write_text("")
    cache = {"file": tmp_path / "FILE", "under_file": tmp_path / "FILE" / "c", "no_corpus": tmp_path / "empty"}[make]
    monkeypatch.setenv("RESDECAY_CACHE", str(cache))
    assert main(["train", "--steps", "4", "--out", str(tmp_path / "r.json")]) == 2
    err = _one_line(capsys, "train")
    assert ("prepare-corpus" if make == "no_corpus" else "RESDECAY_CACHE") in err, err


def test_prepare_models_leaves_the_large_model_to_its_own_flag(monkeypatch, capsys):
    loaded = []

    class _Pre:
        n_layer, d_model = 2, 4

    monkeypatch.setattr(PM, "model_cache_dir", lambda: None)
    monkeypatch.setattr(PM, "load_packaged", lambda name, progress=False: loaded.append(name) or _Pre())
    assert main(["prepare-models"]) == 0
    assert "qwen2.5-coder-1.5b" not in loaded and len(loaded) == len(PM.PACKAGED) - 1
    loaded.clear()
    assert main(["prepare-models", "--large"]) == 0
    assert loaded == ["qwen2.5-coder-1.5b"]
