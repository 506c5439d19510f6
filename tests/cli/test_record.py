"""``record MODEL --only stream``: the record's stream section added to a finished record, on a
tiny model standing in for the packaged one (no download, no hour of skip costs), and its refusals."""
import json

import numpy as np
import pytest

transformers = pytest.importorskip("transformers")

from resdecay_lib.__main__ import main  # noqa: E402
from resdecay_lib.analysis import pretrained_analysis  # noqa: E402
from resdecay_lib.cli import record  # noqa: E402
from resdecay_lib.nn import pretrained as P  # noqa: E402
from resdecay_lib.training.store import write_json_atomic  # noqa: E402
from hf_tiny import TEXT, tiny, tiny_tokenizer  # noqa: E402

ARGS = ["--text", "pydoc", "--n-seq", "3", "--n-tokens", "10", "--threads", "1"]


@pytest.fixture
def tiny_smollm(monkeypatch):
    """record's loader and text replaced by a tiny Llama and a short text; the record's model
    name is the packaged one's, so the command's round-trip (offset 16) is SmolLM2's."""
    pre = P._finish("smollm2-135m", tiny("llama"), tiny_tokenizer(), "pre_ln", "test", "here")
    monkeypatch.setattr(record.pretrained, "load", lambda name, progress=False: pre)
    monkeypatch.setattr(record, "book_text", lambda t: TEXT)
    return pre


def _finished_record(out, pre):
    rec = pretrained_analysis.measure_model(pre, TEXT, n_seq=3, n_tokens=10, batch_size=2)
    rec.update(text="pydoc", provenance={"code_version": "git:before", "wall_s": 1.0, "threads": 1})
    path = pretrained_analysis.store_path(out, "smollm2-135m", "pydoc")
    write_json_atomic(rec, path)
    return path, rec


def test_only_stream_adds_the_section_and_keeps_the_record(tmp_path, tiny_smollm, capsys):
    path, before = _finished_record(tmp_path, tiny_smollm)
    assert main(["record", "smollm2-135m", "--only", "stream", *ARGS, "--out", str(tmp_path)]) == 0
    rec = json.loads(path.read_text())
    st = rec.pop("stream")
    assert rec == json.loads(json.dumps(before))                       # nothing else moved
    assert set(st) == {"sublayer_omega_sq", "quantised", "provenance"}
    assert np.shape(st["sublayer_omega_sq"]) == (3, 6)
    assert st["quantised"]["offset"] == pretrained_analysis.ROUND_TRIPS["smollm2-135m"] == 16
    prov = st["provenance"]
    assert prov["threads"] == 1 and prov["code_version"] != "git:before" and "cpu_capability" in prov
    pretrained_analysis.load_record(path)                              # a valid record
    # a second run skips it; --replace measures it again, to the same values
    assert main(["record", "smollm2-135m", "--only", "stream", *ARGS, "--out", str(tmp_path)]) == 0
    assert "done already (it holds stream)" in capsys.readouterr().out
    assert main(["record", "smollm2-135m", "--only", "stream", "--replace", *ARGS, "--out", str(tmp_path)]) == 0
    again = json.loads(path.read_text())["stream"]
    assert again["sublayer_omega_sq"] == st["sublayer_omega_sq"] and again["quantised"] == st["quantised"]


@pytest.mark.parametrize("extra, match", [
    (["--only", "skip"], "--only must be one of stream, got 'skip'"),
    (["--replace"], "--replace needs --only SECTION"),
    (["--only", "stream", "--n-seq", "4"], "--n-seq 4 differs from the record's n_seq 3"),
])
def test_only_refuses_bad_options_before_loading(tmp_path, tiny_smollm, capsys, extra, match, monkeypatch):
    path, _ = _finished_record(tmp_path, tiny_smollm)
    text = path.read_text()
    monkeypatch.setattr(record.pretrained, "load", lambda *a, **kw: pytest.fail("loaded a model"))
    assert main(["record", "smollm2-135m", *ARGS, *extra, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("record: ") and match in err and len(err.splitlines()) == 1
    assert path.read_text() == text


def test_only_stream_names_the_full_run_when_there_is_no_record(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(record.pretrained, "load", lambda *a, **kw: pytest.fail("loaded a model"))
    assert main(["record", "smollm2-135m", "--only", "stream", *ARGS, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "holds no record; run record smollm2-135m --text pydoc first" in err
    (tmp_path / "smollm2-135m__pydoc.json").write_text('{"model": "smollm2-135m"}')
    assert main(["record", "smollm2-135m", "--only", "stream", *ARGS, "--out", str(tmp_path)]) == 2
    assert "not a usable pretrained record" in capsys.readouterr().err
