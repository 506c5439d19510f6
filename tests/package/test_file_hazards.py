"""No user file is ever destroyed or renamed; paths are checked for what they are
before use; records are validated when read.

A FIFO given as a path used to block its reader forever: every FIFO test here runs under a
10 s alarm, so a regression fails instead of hanging the suite.
"""
import contextlib
import json
import math
import os
import shutil
import signal
import stat
from pathlib import Path

import numpy as np
import pytest
import torch

from resdecay_lib import checks as C
from resdecay_lib.__main__ import main as cli_main
from resdecay_lib.analysis import pretrained_analysis
from resdecay_lib.nn import device
from resdecay_lib.training import data, runs, store, train as T

ROOT = Path(__file__).resolve().parents[2]
TINY = T.TrainConfig(arch="pre_ln", n_layer=1, d_model=16, n_head=2, block_size=16, batch_size=4,
                     steps=3, warmup=1, threads=1, eval_windows=4, measure_windows=3, device="cpu")
PLAN = runs.RunPlan(measure_steps=(0, 3), eval_every=0)
TRAIN = ["train", "--arch", "pre_ln", "--n-layer", "1", "--d-model", "16", "--n-head", "2", "--block-size", "16",
         "--batch-size", "4", "--steps", "3", "--warmup", "1", "--threads", "1", "--eval-windows", "4",
         "--measure-windows", "3", "--device", "cpu"]


class _Hang(Exception):
    pass


@contextlib.contextmanager
def _within(seconds=10):
    def hang(signum, frame):
        raise _Hang(f"the call did not return within {seconds} s")
    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _fifo(tmp_path, name="pipe"):
    p = tmp_path / name
    os.mkfifo(p)
    return p


def _no_work(monkeypatch):
    """Make any corpus load (the first work of a run) fail the test."""
    def boom(*a, **k):
        raise AssertionError("work started before the path was checked")
    monkeypatch.setattr(T, "load_corpus", boom)
    monkeypatch.setattr(runs, "load_corpus", boom)


def _cli(argv, capsys):
    capsys.readouterr()
    with _within(60):
        rc = cli_main(argv)
    return rc, capsys.readouterr().err.strip()


# ----------------------------------------------------------------------------- checks.check_in_file

@pytest.mark.parametrize("bad", [3, True, b"x.json", None, 2.5])
def test_check_in_file_refuses_what_is_not_a_path_as_a_wrong_kind(bad):
    with pytest.raises(C.ArgumentTypeError, match=r"^p must be a file path"):
        C.check_in_file("p", bad)


def test_check_in_file_refuses_an_empty_path_a_folder_a_fifo_a_device_and_a_missing_file(tmp_path):
    fifo = _fifo(tmp_path)
    with _within():
        for bad, words in (("", "must be a file path"), (tmp_path, "the folder"), (fifo, "FIFO"),
                           ("/dev/null", "character device"), (tmp_path / "absent", "nothing is there")):
            with pytest.raises(ValueError, match=r"^p ") as err:
                C.check_in_file("p", bad)
            assert words in str(err.value) and "\n" not in str(err.value), err.value
    assert C.check_in_file("p", tmp_path / "absent", missing_ok=True) == tmp_path / "absent"
    (tmp_path / "f").write_text("x")
    assert C.check_in_file("p", str(tmp_path / "f")) == tmp_path / "f"


def test_check_out_file_refuses_a_fifo_and_a_device_at_the_target(tmp_path):
    fifo = _fifo(tmp_path)
    with pytest.raises(ValueError, match=r"^out must be a regular file path, got the FIFO"):
        C.check_out_file("out", fifo)
    with pytest.raises(ValueError, match=r"^out must be a regular file path, got the character device"):
        C.check_out_file("out", "/dev/null")
    assert C.check_out_file("out", tmp_path / "new.json") == tmp_path / "new.json"


# ----------------------------------------------------------------------------- FIFOs: refused, never opened

def _readers(fifo):
    return {
        "train": lambda: T.train(TINY, checkpoint=fifo, progress=False),
        "run_result": lambda: runs.run_result(TINY, PLAN, checkpoint=fifo, progress=False),
        "read_result": lambda: store.read_result(fifo),
        "load_record": lambda: pretrained_analysis.load_record(fifo),
        "CharVocab.load": lambda: data.CharVocab.load(fifo),
        "sha256_file": lambda: device.sha256_file(fifo),
    }


@pytest.mark.parametrize("reader", ["train", "run_result", "read_result", "load_record", "CharVocab.load",
                                    "sha256_file"])
def test_a_fifo_given_as_a_path_is_refused_at_once_before_any_work(tmp_path, monkeypatch, reader):
    """Used to block forever in open(); now refused by os.stat before anything is opened or built."""
    fifo = _fifo(tmp_path)
    _no_work(monkeypatch)
    with _within():
        with pytest.raises(ValueError) as err:
            _readers(fifo)[reader]()
    msg = str(err.value)
    assert "FIFO" in msg and str(fifo) in msg and "\n" not in msg, msg
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)           # left as it was


def test_the_train_command_refuses_a_fifo_checkpoint_in_one_line(tmp_path, capsys):
    fifo = _fifo(tmp_path)
    rc, err = _cli(TRAIN + ["--checkpoint", str(fifo)], capsys)
    assert rc == 2 and len(err.splitlines()) == 1 and "--checkpoint" in err and "FIFO" in err, err


# ----------------------------------------------------------------------------- an fd is not a path

def test_sha256_file_refuses_an_int_and_leaves_that_file_descriptor_open(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"secret")
    fd = os.open(p, os.O_RDONLY)
    try:
        with pytest.raises(C.ArgumentTypeError, match=r"^path must be a file path .* got int"):
            device.sha256_file(fd)
        os.fstat(fd)                                      # still open: the old code closed it
    finally:
        os.close(fd)
    with pytest.raises(ValueError, match="the folder"):
        device.sha256_file(tmp_path)


# ----------------------------------------------------------------------------- checkpoints: only our own

def _checkpoint(path):
    T.train(TINY, checkpoint=path, stop_after=1, progress=False)
    return path


def test_a_checkpoint_holds_the_library_marker(tmp_path):
    state = torch.load(_checkpoint(tmp_path / "run.pt"), weights_only=True)
    assert state["format"] == T.CHECKPOINT_FORMAT


@pytest.mark.parametrize("content", ["text", "json", "empty", "zip", "torch"])
def test_a_foreign_file_at_a_checkpoint_path_is_refused_before_any_work_and_kept(tmp_path, monkeypatch, content):
    ck = tmp_path / "notes.json"
    if content == "torch":
        torch.save({"weights": torch.ones(2)}, ck)       # another program's torch file
    elif content == "zip":
        shutil.make_archive(str(tmp_path / "a"), "zip", ROOT / "resdecay_lib" / "cli")
        (tmp_path / "a.zip").rename(ck)
    else:
        ck.write_text({"text": "my notes\n", "json": '{"config": 1, "step": 2}', "empty": ""}[content])
    before = ck.read_bytes()
    _no_work(monkeypatch)
    with pytest.raises(T.ForeignCheckpoint, match=r"not a checkpoint this library wrote: refused") as err:
        T.train(TINY, checkpoint=ck, progress=False)
    assert isinstance(err.value, ValueError) and "notes.json" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(T.ForeignCheckpoint):
        T.discard_checkpoint(ck)
    assert ck.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir() if p.name != "a.zip") == ["notes.json"]


def test_the_train_command_refuses_a_foreign_checkpoint_and_keeps_it(tmp_path, capsys):
    """Used to delete notes.json, write a checkpoint in its place and exit 0."""
    notes = tmp_path / "notes.json"
    notes.write_text('{"my": "notes"}')
    rc, err = _cli(TRAIN + ["--out", str(tmp_path / "o.json"), "--checkpoint", str(notes)], capsys)
    assert rc == 2 and len(err.splitlines()) == 1 and "notes.json" in err and "refused" in err, err
    assert notes.read_text() == '{"my": "notes"}' and not (tmp_path / "o.json").exists()


def test_discard_checkpoint_refuses_a_folder_and_never_moves_it(tmp_path):
    d = tmp_path / "b.pt"
    d.mkdir()
    (d / "inside").write_text("mine")
    with pytest.raises(T.ForeignCheckpoint, match="folder"):
        T.discard_checkpoint(d)
    assert [p.name for p in tmp_path.iterdir()] == ["b.pt"] and (d / "inside").read_text() == "mine"


def test_a_truncated_checkpoint_of_the_library_is_recognised_and_may_be_discarded(tmp_path):
    ck = _checkpoint(tmp_path / "run.pt")
    raw = ck.read_bytes()
    ck.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(T.CheckpointUnreadable) as err:
        T.train(TINY, checkpoint=ck, progress=False)
    assert not isinstance(err.value, T.ForeignCheckpoint)
    assert T.discard_checkpoint(ck) == "removed it" and not ck.exists()


def test_a_checkpoint_of_an_older_version_without_the_marker_still_resumes(tmp_path):
    ck = _checkpoint(tmp_path / "run.pt")
    state = torch.load(ck, weights_only=True)
    del state["format"]
    torch.save(state, ck)
    resumed = T.train(TINY, checkpoint=ck, progress=False)
    assert resumed.resumed_from == 1 and resumed.step == TINY.steps


# ----------------------------------------------------------------------------- results: refused or quarantined

def _valid_result():
    return json.loads(next((ROOT / "results" / "train_deep").glob("*.json")).read_text())


def test_read_result_refuses_a_folder_and_never_renames_it(tmp_path):
    folder = tmp_path / "pre_ln_L1_s0.json"
    folder.mkdir()
    with pytest.raises(ValueError, match=r"^path must be a regular file to read, got the folder"):
        store.read_result(folder)
    with pytest.raises(ValueError, match="the folder"):
        store.read_result(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["pre_ln_L1_s0.json"] and folder.is_dir()


@pytest.mark.parametrize("name, content", [("notes.txt", "my notes"), ("notes.json", '{"a": 1}'),
                                           ("data.json", "[1, 2, 3]")])
def test_read_result_refuses_a_file_that_is_not_a_result_nor_named_as_one_and_leaves_it(tmp_path, name, content):
    p = tmp_path / name
    p.write_text(content)
    with pytest.raises(ValueError, match=r"is not a result file .* refused, left as it is") as err:
        store.read_result(p)
    assert "\n" not in str(err.value) and name in str(err.value)
    assert [q.name for q in tmp_path.iterdir()] == [name] and p.read_text() == content


def test_read_result_quarantines_a_truncated_file_named_as_a_run(tmp_path):
    p = tmp_path / "pre_ln_L1_s0.json"
    p.write_text('{"config": ')
    res, why = store.read_result(p, TINY)
    assert res is None and "not JSON" in why and "moved to pre_ln_L1_s0.json.corrupt" in why
    assert not p.exists() and (tmp_path / "pre_ln_L1_s0.json.corrupt").read_text() == '{"config": '


def _set(d, dotted, value):
    *head, last = dotted.split(".")
    for k in head:
        d = d[k]
    if value is _DROP:
        del d[last]
    else:
        d[last] = value


_DROP = object()


@pytest.mark.parametrize("field, value", [
    ("final.val_loss.mean", "not a number"), ("final.val_loss.mean", math.nan), ("final.val_loss.mean", None),
    ("final.val_loss.se", -1.0), ("status", "done"), ("status", 1), ("config.lr", -1.0),
    ("config.colour", "red"), ("config.n_layer", _DROP), ("config", [1]), ("val_curve", "none"),
    ("checkpoints", [{"step": "0"}]), ("final", _DROP), ("name", 3),
])
def test_a_result_holding_wrong_values_is_not_done_its_field_named_and_it_is_quarantined(tmp_path, field, value):
    """Used to count as done (a sweep would never rerun it)."""
    res = _valid_result()
    _set(res, field, value)
    p = tmp_path / "anything.json"                       # a result record by its schema: ours
    p.write_text(json.dumps(res))                        # NaN as JSON's NaN, as a careless writer does
    got, why = store.read_result(p)
    top = field.split(".")[0] if field.startswith("config") else field
    assert got is None and top in why and "moved to anything.json.corrupt" in why, why
    assert not p.exists() and (tmp_path / "anything.json.corrupt").exists()


def test_read_result_keeps_an_earlier_quarantined_file(tmp_path):
    p = tmp_path / "pre_ln_L1_s0.json"
    for text in ("first", "second"):
        p.write_text(text)
        assert store.read_result(p)[0] is None
    assert (tmp_path / "pre_ln_L1_s0.json.corrupt").read_text() == "first"
    assert (tmp_path / "pre_ln_L1_s0.json.corrupt.1").read_text() == "second"


def test_a_sweep_reruns_a_stored_result_whose_loss_is_a_string(tmp_path, monkeypatch, seed_corpus):
    from resdecay_lib.training import sweep as S
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    base = {k: getattr(TINY, k) for k in ("d_model", "n_head", "block_size", "batch_size", "steps", "warmup",
                                           "threads", "device", "eval_windows", "measure_windows")}
    spec = {"out": "sweep", "archs": ["pre_ln"], "depths": [1], "seeds": [0], "base": base,
            "plan": {"measure_steps": [0, 3], "eval_every": 0}}
    S.run_sweep(spec, root=tmp_path, log=lambda *a: None)
    p = tmp_path / "sweep" / "pre_ln_L1_s0.json"
    res = json.loads(p.read_text())
    res["final"]["val_loss"]["mean"] = "not a number"
    p.write_text(json.dumps(res))
    done = S.run_sweep(spec, root=tmp_path, log=lambda *a: None)
    assert "final.val_loss.mean" in done[0][1] and "ok" in done[0][1], done
    assert isinstance(json.loads(p.read_text())["final"]["val_loss"]["mean"], float)
    assert (tmp_path / "sweep" / "pre_ln_L1_s0.json.corrupt").exists()


def test_every_stored_result_reads_as_valid(tmp_path):
    n = 0
    for src in sorted((ROOT / "results").rglob("*.json")):
        rec = json.loads(src.read_text())
        if not (isinstance(rec, dict) and "config" in rec and "status" in rec):
            continue
        copy = tmp_path / f"{n}" / src.name        # a copy: a refusal must not move the stored file
        copy.parent.mkdir()
        shutil.copy(src, copy)
        res, why = store.read_result(copy, T.TrainConfig.from_dict(rec["config"]))
        assert why is None and res.to_dict() == rec, (src, why)
        n += 1
    assert n >= 100


# ----------------------------------------------------------------------------- pretrained records

def test_every_stored_pretrained_record_loads():
    recs = pretrained_analysis.load_records(ROOT / "results" / "pretrained")
    assert len(recs) == len(list((ROOT / "results" / "pretrained").glob("*__*.json"))) >= 8
    for (model, text), rec in recs.items():
        assert rec.model == model and rec.skip.value.shape[0] == rec.n_layer
        assert rec.schema == 1                  # made before the field was written: read as schema 1


@pytest.mark.parametrize("field, value, words", [
    ("n_layer", "30", "n_layer must be an integer"), ("cost_kind", "loss", "cost_kind must be one of"),
    ("change.omega_sq", [[1.0]], "change.omega_sq must be an array of shape"), ("change.norm", _DROP, "change must"),
    ("gram", [[1.0, "x"]], "gram must be an array"), ("skip.value", [[1.0]], "skip.value must be an array of shape"),
    ("skip", _DROP, "lacks the field 'skip'"), ("prune.deepest.sets", [[99]], "prune.deepest.sets must be"),
    ("rms_change", [[math.inf] * 30] * 16, "rms_change must hold finite numbers"),
])
def test_load_record_names_the_bad_field(tmp_path, field, value, words):
    rec = json.loads((ROOT / "results" / "pretrained" / "smollm2-135m__shakespeare.json").read_text())
    _set(rec, field, value)
    p = tmp_path / "smollm2-135m__shakespeare.json"
    p.write_text(json.dumps(rec))
    with pytest.raises(ValueError, match="is not a usable pretrained record") as err:
        pretrained_analysis.load_record(p)
    assert words in str(err.value) and "\n" not in str(err.value), err.value
    assert p.exists()                                    # read, never moved


@pytest.mark.parametrize("bad", [3, True, b"x"])
def test_load_record_refuses_what_is_not_a_path(bad):
    with pytest.raises(C.ArgumentTypeError, match=r"^path must be"):
        pretrained_analysis.load_record(bad)


def test_load_record_and_load_records_refuse_a_folder_and_a_file(tmp_path):
    with pytest.raises(ValueError, match="the folder"):
        pretrained_analysis.load_record(tmp_path)
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match=r"^root must be a folder"):
        pretrained_analysis.load_records(tmp_path / "f")
    assert pretrained_analysis.load_records(tmp_path / "absent") == {}


def test_charvocab_load_names_a_file_that_is_not_a_vocabulary(tmp_path):
    p = tmp_path / "v.json"
    for text in ("not json", '{"x": 1}', '{"chars": ["a", "b"]}'):
        p.write_text(text)
        with pytest.raises(ValueError, match=r"is not a saved CharVocab") as err:
            data.CharVocab.load(p)
        assert "\n" not in str(err.value)
    data.CharVocab.from_text("abc").save(p)
    assert data.CharVocab.load(p).chars == ("\x00", "a", "b", "c")
    assert np.array_equal(data.CharVocab.load(p).encode("cab"), [3, 1, 2])
