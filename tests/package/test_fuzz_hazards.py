"""The fuzz beyond the declared domains: call shapes, damaged records and file hazards.

``tests/package/test_fuzz.py`` draws values outside each parameter's declared domain. This file goes
where a declaration cannot reach:

* **call shapes**: every declared function called with a required argument missing, an
  unknown keyword and one positional argument too many: a one-line ``TypeError`` or
  ``ValueError`` that names what is wrong, never a traceback from inside;
* **records**: a real stored run record (``results/``) and a real pretrained record, with
  each key a reader reads (found by recording the reads of a valid call) dropped, set to
  None, given the wrong type, or set to NaN: the reader raises one line that names the
  field, or returns a result without NaN;
* **file hazards**: each path a reader, a checkpoint or a cache takes, given an int, a
  folder, a FIFO, an existing foreign file, a path under a file, an immutable folder, or a
  cache that is a file: refused in one line naming the parameter or the path, within 10 s,
  and no foreign file or folder is changed, renamed or removed.

Each case is counted by class and outcome (``fuzz_counts``, reported at the end of the
session as ``hazard <class>: ...``); a destroyed file, a hang, a NaN answer or a raw traceback
fails its test.
"""
import copy
import hashlib
import inspect
import json
import math
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

from resdecay_lib import checks as C
from resdecay_lib.analysis import pretrained_analysis, training_analysis
from resdecay_lib.nn import device
from resdecay_lib.training import data, runs, store, train

import test_fuzz as F   # the declared functions' valid examples, shared with the domain fuzz

ROOT = Path(__file__).resolve().parents[2]


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang("the call did not return within 10 s")


def _call(fn, *args, **kwargs):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(10)
    try:
        return fn(*args, **kwargs)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _count(counts, cls, outcome):
    F._count(counts, "hazard_cases", f"hazard:{cls}:{outcome}")


def _names_any(msg: str, words) -> bool:
    return any(w and re.search(rf"(?<![\w]){re.escape(str(w))}(?![\w])", msg) for w in words)


# ----------------------------------------------------------------------------- call shapes

SHAPE_CASES = [pytest.param(q, id=F._short(q)) for q in F._declared_here() if not q.endswith(".__init__")
               and inspect.isfunction(C.DECLARED[q])]


def _required(fn) -> list:
    sig = inspect.signature(fn)
    return [p for p in sig.parameters.values() if p.default is p.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


@pytest.mark.parametrize("qualname", SHAPE_CASES)
def test_a_call_of_the_wrong_shape_is_refused_in_one_line_naming_what_is_wrong(qualname, fuzz_counts):
    fn = C.DECLARED[qualname]
    kwargs = dict(F.EXAMPLES[F._short(qualname)][0])
    sig = inspect.signature(fn)
    shapes = []
    for p in _required(fn):
        if p.name in kwargs:
            shapes.append((f"without {p.name}", (), {k: v for k, v in kwargs.items() if k != p.name}, p.name))
    shapes.append(("an unknown keyword", (), {**kwargs, "no_such_parameter": 1}, "no_such_parameter"))
    positional = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if all(p.name in kwargs for p in positional) and not any(
            p.kind is p.VAR_POSITIONAL for p in sig.parameters.values()):
        args = [kwargs[p.name] for p in positional] + ["one too many"]
        rest = {k: v for k, v in kwargs.items() if k not in {p.name for p in positional}}
        shapes.append(("one positional argument too many", tuple(args), rest, "positional"))
    for what, args, kw, word in shapes:
        try:
            _call(fn, *args, **kw)
        except (TypeError, ValueError) as exc:
            msg = str(exc)
            if "\n" in msg or not _names_any(msg, (word, fn.__name__)):
                _count(fuzz_counts, "call_shape", "raw")
                raise AssertionError(f"{qualname} called {what}: {msg!r} names neither {word!r} nor the function")
            _count(fuzz_counts, "call_shape", "clear")
            continue
        except BaseException as exc:
            _count(fuzz_counts, "call_shape", "raw")
            raise AssertionError(f"{qualname} called {what}: raw {type(exc).__name__}: {exc}") from exc
        _count(fuzz_counts, "call_shape", "silent")
        raise AssertionError(f"{qualname} accepted a call {what}")


# ----------------------------------------------------------------------------- records

class _Tracked(dict):
    """A record that logs the key path of every item read from it (nested dicts and the
    dicts inside lists too), so the fuzz damages exactly the keys a reader reads."""

    def __init__(self, data, path, log):
        super().__init__({k: _track(v, path + (k,), log) for k, v in data.items()})
        self._path, self._log = path, log

    def __getitem__(self, key):
        self._log.append(self._path + (key,))
        return super().__getitem__(key)

    def get(self, key, default=None):
        if key in self:                     # an optional key the record lacks cannot be damaged
            self._log.append(self._path + (key,))
        return super().get(key, default)


def _track(value, path, log):
    if isinstance(value, dict):
        return _Tracked(value, path, log)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [_track(v, path + (i,), log) for i, v in enumerate(value)]
    return value


def _reads(fn, record, *args) -> list:
    """The key paths ``fn(record, *args)`` reads, in order, one per pattern (list indices
    beyond the first matched one are the same key of another entry)."""
    log = []
    fn(_track(record, (), log), *args)
    seen, out = set(), []
    for path in log:
        pattern = tuple("#" if isinstance(p, int) else p for p in path)
        if pattern not in seen:
            seen.add(pattern)
            out.append(path)
    return out


def _parent(record, path):
    node = record
    for p in path[:-1]:
        node = node[p]
    return node


def _wrong_type(value):
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return "not a number"
    if isinstance(value, str):
        return 3
    return "not a table"


def _damaged(record, path):
    """(how, damaged copy) for each damage of the key at ``path``."""
    out = []
    value = _parent(record, path)[path[-1]]
    for how in ("dropped", "None", "wrong type", "NaN"):
        r = copy.deepcopy(record)
        parent = _parent(r, path)
        if how == "dropped":
            del parent[path[-1]]
        elif how == "None":
            parent[path[-1]] = None
        elif how == "wrong type":
            parent[path[-1]] = _wrong_type(value)
        else:
            if isinstance(value, float) or isinstance(value, int) and not isinstance(value, bool):
                parent[path[-1]] = math.nan
            elif isinstance(value, list) and value and isinstance(value[0], (int, float)):
                parent[path[-1]] = [math.nan] + list(value[1:])
            elif isinstance(value, list) and value and isinstance(value[0], list) and value[0] \
                    and isinstance(value[0][0], (int, float)):
                parent[path[-1]] = [[math.nan] + list(value[0][1:])] + list(value[1:])
            else:
                continue
        out.append((how, r))
    return out


def _smallest(folder: str) -> dict:
    paths = sorted((ROOT / "results" / folder).glob("*.json"), key=lambda p: p.stat().st_size)
    return json.loads(paths[0].read_text())


RUN = _smallest("lr_pilot")
STEP = RUN["checkpoints"][-1]["step"]
RUN_READERS = {
    "final_loss": (training_analysis.final_loss, ()),
    "at_step": (training_analysis.at_step, (STEP,)),
    "omega_per_sequence": (training_analysis.omega_per_sequence, (STEP,)),
    "gram_at": (training_analysis.gram_at, (STEP,)),
}


def _judge(counts, cls, label, call, words):
    try:
        out = _call(call)
    except (TypeError, ValueError, LookupError) as exc:
        msg = str(exc)
        if isinstance(exc, LookupError) and not isinstance(exc, ValueError) or "\n" in msg \
                or not _names_any(msg, words):
            _count(counts, cls, "raw")
            return f"{label}: {type(exc).__name__} that names none of {words}: {msg!r}"
        _count(counts, cls, "clear")
        return None
    except BaseException as exc:
        _count(counts, cls, "raw")
        return f"{label}: raw {type(exc).__name__}: {exc}"
    if F._has_nan(out):
        _count(counts, cls, "nan")
        return f"{label}: returned NaN"
    _count(counts, cls, "accepted")
    return None


@pytest.mark.parametrize("reader", sorted(RUN_READERS))
def test_a_damaged_run_record_is_refused_naming_the_field_or_read_without_nan(reader, fuzz_counts):
    fn, args = RUN_READERS[reader]
    fn(copy.deepcopy(RUN), *args)                  # the undamaged record reads
    failures = []
    for path in _reads(fn, copy.deepcopy(RUN), *args):
        for how, r in _damaged(RUN, path):
            words = [p for p in path if isinstance(p, str)][-1:] + [".".join(map(str, path))]
            why = _judge(fuzz_counts, "record", f"{reader} with {'.'.join(map(str, path))} {how}",
                         lambda: fn(r, *args), words)
            if why:
                failures.append(why)
    assert not failures, "\n".join(failures[:20]) + f"\n({len(failures)} in all)"


PRETRAINED = min((ROOT / "results" / "pretrained").glob("*__*.json"), key=lambda p: p.stat().st_size)


def test_a_damaged_pretrained_record_is_refused_naming_the_field_or_read_without_nan(tmp_path, fuzz_counts):
    record = json.loads(PRETRAINED.read_text())
    failures = []
    keys = [(k,) for k in record] + [("skip", k) for k in record.get("skip", {})]
    for path in keys:
        for how, r in _damaged(record, path):
            target = tmp_path / PRETRAINED.name
            target.write_text(json.dumps(r))
            why = _judge(fuzz_counts, "record", f"load_record with {'.'.join(path)} {how}",
                         lambda: pretrained_analysis.load_record(target), [path[-1], ".".join(path)])
            if why:
                failures.append(why)
    assert not failures, "\n".join(failures[:20]) + f"\n({len(failures)} in all)"


def test_a_damaged_stored_result_is_not_counted_as_done(tmp_path, fuzz_counts):
    """A result that parses but holds a wrong type or value where the sweep reads whether a
    run is done is not returned as a result."""
    good = _smallest("lr_pilot")
    failures = []
    for path in [("status",), ("final", "val_loss", "mean"), ("config",), ("final",), ("name",)]:
        for how, r in _damaged(good, path):
            target = tmp_path / f"{good['name']}.json"            # a result's own name: the store's file
            target.write_text(json.dumps(r, allow_nan=True))
            try:
                res, why = _call(store.read_result, target)
            except ValueError as exc:                             # refused, naming what is wrong
                res, why = None, str(exc)
            if res is not None:
                _count(fuzz_counts, "record", "silent")
                failures.append(f"read_result with {'.'.join(path)} {how} counted it as done")
            elif not why or "\n" in why:
                _count(fuzz_counts, "record", "raw")
                failures.append(f"read_result with {'.'.join(path)} {how}: no one-line reason ({why!r})")
            else:
                _count(fuzz_counts, "record", "clear")
    assert not failures, "\n".join(failures)


# ----------------------------------------------------------------------------- file hazards

def _digest(path: Path) -> str:
    if path.is_dir():
        return "dir:" + ",".join(sorted(p.name for p in path.iterdir()))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cfg():
    return F.CFG


#: a path parameter of a public function: (name, call(path), whether it names a file, words
#: its refusal must name)
FILE_TAKERS = {
    "store.read_result": (lambda p: store.read_result(p), "path"),     # absent: (None, None), by design
    "pretrained_analysis.load_record": (lambda p: pretrained_analysis.load_record(p), "path"),
    "data.CharVocab.load": (lambda p: data.CharVocab.load(p), "path"),
    "device.sha256_file": (lambda p: device.sha256_file(p), "path"),
    "store.load_sweep": (lambda p: store.load_sweep(p), "path_or_dict"),
    "train.discard_checkpoint": (lambda p: train.discard_checkpoint(p), "path"),
    "train.prepare_checkpoint": (lambda p: train.prepare_checkpoint(p), "path"),
    "train.train(checkpoint)": (lambda p: train.train(_cfg(), checkpoint=p, progress=False), "checkpoint"),
    "runs.run_result(checkpoint)": (lambda p: runs.run_result(_cfg(), runs.RunPlan((0, 4)), checkpoint=p,
                                                              progress=False, code="git:fuzz"), "checkpoint"),
}
#: readers to whom a missing path is an answer ("no result yet"): a path under a file, where
#: nothing can be, is one
MISSING_OK = {"store.read_result", "train.discard_checkpoint"}
DIR_TAKERS = {
    "store.claim": (lambda p: store.claim(p, "run"), "claim_dir"),
    "pretrained_analysis.load_records": (lambda p: pretrained_analysis.load_records(p), "root"),
    "data.load_corpus(cache)": (lambda p: data.load_corpus("pydoc", cache=p), "cache"),
}


def _hazards(tmp: Path, kind: str):
    """name -> path (or int) for each hazard of a file (``kind="file"``) or folder parameter."""
    a_file = tmp / "notes.json"
    a_file.write_text('{"mine": "a user\'s notes, not a result"}\n')
    folder = tmp / "a_folder"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep me")
    fifo = tmp / "a_fifo"
    os.mkfifo(fifo)
    out = {"int": 3, "fifo": fifo, "under a file": a_file / "sub" / "x.json"}
    if kind == "file":
        out.update({"folder": folder, "foreign file": a_file})
    else:
        out.update({"a file": a_file})
    return out, (a_file, folder)


def _file_case(counts, name, fn, param, hazard, value, kept, expect_refusal):
    before = {p: _digest(p) for p in kept}
    label = f"{name} given {hazard} ({value})"
    try:
        _call(fn, value)
        outcome = "silent" if expect_refusal else "accepted"
    except _Hang:
        outcome = "hang"
    except (TypeError, ValueError, RuntimeError, OSError) as exc:
        msg = str(exc)
        above = [str(p) for p in Path(str(value)).parents if p.exists()][:1]
        named = _names_any(msg, (param, str(value), Path(str(value)).name, *above))
        outcome = "clear" if named and "\n" not in msg and not isinstance(exc, OSError) else "raw"
        if outcome == "raw":
            label += f": {type(exc).__name__}: {msg!r}"
    except BaseException as exc:
        outcome, label = "raw", label + f": raw {type(exc).__name__}: {exc}"
    after = {p: (_digest(p) if p.exists() else None) for p in kept}
    if after != before:
        outcome = "destroyed"
    _count(counts, f"file:{hazard}", outcome)
    return None if outcome in ("clear", "accepted") else f"{label}: {outcome}"


@pytest.mark.parametrize("name", sorted(FILE_TAKERS))
def test_a_file_parameter_refuses_what_is_not_a_regular_file_and_destroys_nothing(name, tmp_path, fuzz_counts,
                                                                                  monkeypatch, seed_corpus):
    monkeypatch.setenv("RESDECAY_CACHE", str(seed_corpus(tmp_path / "cache")))
    fn, param = FILE_TAKERS[name]
    hazards, kept = _hazards(tmp_path, "file")
    tolerant = name in MISSING_OK
    failures = [f for h, v in hazards.items()
                if (f := _file_case(fuzz_counts, name, fn, param, h, v, kept,
                                    expect_refusal=h != "foreign file" and not (tolerant and h == "under a file")))]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name", sorted(DIR_TAKERS))
def test_a_folder_parameter_refuses_what_is_not_a_folder_and_destroys_nothing(name, tmp_path, fuzz_counts):
    fn, param = DIR_TAKERS[name]
    hazards, kept = _hazards(tmp_path, "dir")
    failures = [f for h, v in hazards.items()
                if (f := _file_case(fuzz_counts, name, fn, param, h, v, kept, expect_refusal=True))]
    assert not failures, "\n".join(failures)


def test_a_cache_that_is_a_file_is_refused_in_one_line(tmp_path, monkeypatch, fuzz_counts):
    cache = tmp_path / "cache_file"
    cache.write_text("not a folder")
    monkeypatch.setenv("RESDECAY_CACHE", str(cache))
    failures = [f for f in (
        _file_case(fuzz_counts, "device.cache_dir", lambda _: device.cache_dir(), "RESDECAY_CACHE",
                   "cache that is a file", cache, (cache,), True),
        _file_case(fuzz_counts, "data.load_corpus", lambda _: data.load_corpus("pydoc"), "RESDECAY_CACHE",
                   "cache that is a file", cache, (cache,), True)) if f]
    assert not failures, "\n".join(failures)


def _immutable(folder: Path) -> bool:
    """Make ``folder`` immutable (chattr +i, which binds root too); False where the file
    system or the tool does not allow it."""
    if shutil.which("chattr") is None:
        return False
    ok = subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
    if ok:
        try:                                           # is it enforced here?
            (folder / ".probe").write_text("")
        except OSError:
            return True
        (folder / ".probe").unlink()
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
    return False


def test_a_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path, fuzz_counts):
    folder = tmp_path / "frozen"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep me")
    if not _immutable(folder):
        pytest.skip("no immutable folder on this file system (chattr +i is not enforced): "
                    "the read-only case is covered by tests/cli/test_command_hazards.py with os.access")
    try:
        failures = [f for f in (
            _file_case(fuzz_counts, "train.prepare_checkpoint", train.prepare_checkpoint, "checkpoint",
                       "immutable folder", folder / "run.pt", (folder,), True),
            _file_case(fuzz_counts, "store.write_json_atomic", lambda p: store.write_json_atomic({"x": 1}, p),
                       "path", "immutable folder", folder / "r.json", (folder,), True),
            _file_case(fuzz_counts, "store.claim", lambda p: store.claim(p, "run"), "claim_dir",
                       "immutable folder", folder, (folder,), True)) if f]
    finally:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
    assert not failures, "\n".join(failures)
