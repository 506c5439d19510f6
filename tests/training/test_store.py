"""The run store's one atomic write: a temporary name of each call's own."""
import json
import threading

import pytest

from resdecay_lib.training import store
from resdecay_lib.training.data import CharVocab


def test_two_writers_of_one_path_get_temporaries_of_their_own(tmp_path):
    target = tmp_path / "r.json"
    with store.replacing(target) as a, store.replacing(target) as b:
        assert a != b and a.parent == b.parent == tmp_path
        a.write_text("1")
        b.write_text("2")
    assert target.read_text() in ("1", "2") and not list(tmp_path.glob(".*.tmp"))


def test_a_failed_write_leaves_the_target_and_no_temporary(tmp_path):
    target = tmp_path / "r.txt"
    store.write_atomic(target, "old")
    with pytest.raises(RuntimeError):
        with store.replacing(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("disk full")
    assert target.read_text() == "old" and not list(tmp_path.glob(".*.tmp"))


def test_write_json_atomic_writes_non_finite_floats_as_null(tmp_path):
    store.write_json_atomic({"x": float("nan"), "y": [1.0]}, tmp_path / "w.json")
    assert json.loads((tmp_path / "w.json").read_text()) == {"x": None, "y": [1.0]}


def test_write_json_atomic_leaves_nothing_on_failure_and_writes_standard_json(tmp_path):
    p = tmp_path / "r.json"
    with pytest.raises(TypeError):
        store.write_json_atomic({"x": object()}, p)
    assert list(tmp_path.iterdir()) == []
    store.write_json_atomic({"x": float("nan")}, p)
    assert json.loads(p.read_text()) == {"x": None}


def test_vocab_saves_at_once_do_not_collide(tmp_path):
    """CharVocab.save wrote through one fixed ``vocab.tmp``: two writers at once could rename
    each other's half-written file or fail on a vanished one."""
    vocab, path, errors = CharVocab.from_text("to be or not to be"), tmp_path / "vocab.json", []

    def save():
        try:
            for _ in range(50):
                vocab.save(path)
        except Exception as exc:            # noqa: BLE001 (any error is the collision)
            errors.append(exc)

    threads = [threading.Thread(target=save) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and CharVocab.load(path) == vocab and not list(tmp_path.glob("*.tmp"))
