"""Tests of resdecay_lib.analysis.pretrained_analysis: Chapter 9's stored record and its analysis."""
import json
from pathlib import Path

import numpy as np
import pytest

transformers = pytest.importorskip("transformers")

from resdecay_lib.nn import pretrained as P  # noqa: E402
from resdecay_lib.analysis import pretrained_analysis  # noqa: E402
from resdecay_lib.analysis import training_analysis  # noqa: E402
from resdecay_lib.training.store import write_json_atomic  # noqa: E402
from hf_tiny import TEXT, tiny, tiny_tokenizer  # noqa: E402


def test_exponent_report_recovers_a_power_law_and_matches_the_reference_to_its_range():
    rng = np.random.default_rng(0)
    L, B = 12, 16
    k = np.arange(1, L + 1)
    y = 0.3 * k ** -1.0 * np.exp(0.05 * rng.standard_normal((B, L)))
    G = np.eye(L + 1)
    G[0, 0] = 3.0                                   # rho = 3: embedding-counted
    rep = pretrained_analysis.exponent_report(y, G, n_boot=500)
    assert rep.main.lo < -1 < rep.main.hi and rep.curvature["shape"] == "power law"
    assert rep.rho == 3.0 and rep.embedding_counted
    assert {m: f.reference for m, f in rep.fits.items()} == {
        m: training_analysis.reference_exponent(m, L, True) for m in pretrained_analysis.K_MINS}
    assert all((f.k_min, f.k_max, f.n, f.over, f.rho) == (m, L, B, "sequences", 3.0) for m, f in rep.fits.items())
    assert rep.range_shift < 0.1
    G[0, 0] = 0.1                                   # rho below 1/2: the seed convention
    assert pretrained_analysis.exponent_report(y, G, n_boot=200).main.reference == \
        training_analysis.reference_exponent(2, L, False)
    bent = 0.3 * np.exp(-0.3 * (np.log(k) - 1.2) ** 2 * 6) * np.exp(0.02 * rng.standard_normal((B, L)))
    assert pretrained_analysis.exponent_report(bent, G, n_boot=200).curvature["shape"] == "bent"
    with pytest.raises(ValueError, match="per_sequence"):
        pretrained_analysis.exponent_report(y[:, :4], G)


def test_norm_growth_recovers_a_geometric_factor_with_a_t_interval():
    rng = np.random.default_rng(1)
    k = np.arange(1, 21)
    norms = 5 * 1.045 ** k[None] * np.exp(0.01 * rng.standard_normal((16, 20)))
    g = pretrained_analysis.norm_growth(norms)
    assert g.lo < 1.045 < g.hi and g.n == 16 and g.hi - g.lo < 0.01


def test_measure_model_record_round_trips_through_the_store(tmp_path):
    pre = P._finish("tiny-llama", tiny("llama"), tiny_tokenizer(), "pre_ln", "test", "here")
    rec = pretrained_analysis.measure_model(pre, TEXT, n_seq=3, n_tokens=10, prune=True, batch_size=2)
    rec["text"] = "shakespeare"
    path = pretrained_analysis.store_path(tmp_path, "tiny-llama", "shakespeare")
    write_json_atomic(rec, path)
    back = pretrained_analysis.load_records(tmp_path)[("tiny-llama", "shakespeare")]
    assert back.change["omega_sq"].shape == (3, 3) and back.gram.shape == (4, 4)
    assert back.rms_change.shape == back.rms_change_gain.shape == (3, 3)
    assert back.skip.value.shape == (3, 3) and back.skip.kind == "next_token"
    assert set(back.prune) == set(pretrained_analysis.pruning.RANKINGS)
    assert back.prune["deepest"].sets == ((3,),)                     # n = 1..floor(3/2)
    np.testing.assert_allclose(back.prune["deepest"].value[0], back.skip.value[2])
    stored = json.loads(path.read_text())
    assert stored["n_layer"] == 3 and stored["schema"] == back.schema == pretrained_analysis.PRETRAINED_SCHEMA


def test_book_text_rejects_an_unknown_name():
    with pytest.raises(ValueError, match="shakespeare"):
        pretrained_analysis.book_text("poems")


# ----------------------------------------------------------------------------- the stream section

def _tiny(kind="llama"):
    return P._finish(f"tiny-{kind}", tiny(kind), tiny_tokenizer(), "post_ln" if kind == "bert" else "pre_ln",
                     "test", "here")


def test_measure_stream_repeats_the_records_change_and_restores_the_quantised_weights():
    import torch
    pre = _tiny()
    weights = {n: p.clone() for n, p in pre.model.named_parameters()}
    rec = pretrained_analysis.measure_model(pre, TEXT, n_seq=3, n_tokens=10, batch_size=2)
    st = pretrained_analysis.measure_stream(pre, TEXT, n_seq=3, n_tokens=10, round_trip=16, batch_size=2)
    assert np.shape(st["sublayer_omega_sq"]) == (3, 6) and "raw_change" not in st
    for m, v in rec["change"].items():       # the same inputs and batches: the record's own change
        np.testing.assert_allclose(st["change"][m], v, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(st["rms_change"], rec["rms_change"], rtol=1e-6)
    # block k's two steps are its attention and MLP additions: both move the stream
    assert np.all(np.asarray(st["sublayer_omega_sq"]) > 0)
    q = st["quantised"]
    assert q["format"] == "q4_1" and q["offset"] == 16 and 0 < q["relative_weight_change"] < 0.5
    assert np.shape(q["omega_sq"]) == (3, 3) and not np.allclose(q["omega_sq"], rec["change"]["omega_sq"])
    assert all(torch.equal(weights[n], p) for n, p in pre.model.named_parameters())   # restored bit for bit
    assert "quantised" not in pretrained_analysis.measure_stream(pre, TEXT, n_seq=3, n_tokens=10, batch_size=2)


def test_measure_stream_reads_a_post_ln_stream_itself():
    st = pretrained_analysis.measure_stream(_tiny("bert"), TEXT, n_seq=3, n_tokens=10, batch_size=2)
    assert np.shape(st["raw_change"]) == (3, 3) and "rms_change" not in st
    assert np.shape(st["sublayer_omega_sq"]) == (3, 6)


@pytest.mark.parametrize("kw, match", [({"n_seq": 1}, "n_seq"), ({"batch_size": 0}, "batch_size"),
                                       ({"round_trip": -1}, "round_trip")])
def test_measure_stream_refuses_bad_arguments_before_any_work(kw, match):
    with pytest.raises(ValueError, match=match):
        pretrained_analysis.measure_stream(object(), TEXT, **{"n_seq": 3, "n_tokens": 10, **kw})


def _record_with_stream(tmp_path):
    pre = _tiny()
    rec = pretrained_analysis.measure_model(pre, TEXT, n_seq=3, n_tokens=10, batch_size=2)
    st = pretrained_analysis.measure_stream(pre, TEXT, n_seq=3, n_tokens=10, round_trip=0, batch_size=2)
    rec["text"] = "shakespeare"
    rec["stream"] = {k: st[k] for k in pretrained_analysis.STREAM_FIELDS if k in st}
    rec["stream"]["provenance"] = {"code_version": "test"}
    return rec


def test_a_record_with_its_stream_section_round_trips_through_the_store(tmp_path):
    rec = _record_with_stream(tmp_path)
    path = pretrained_analysis.store_path(tmp_path, "tiny-llama", "shakespeare")
    write_json_atomic(rec, path)
    back = pretrained_analysis.load_record(path).stream
    assert back.sublayer_omega_sq.shape == (3, 6) and back.quantised.omega_sq.shape == (3, 3)
    assert back.quantised.relative_weight_change == rec["stream"]["quantised"]["relative_weight_change"]


@pytest.mark.parametrize("edit, match", [
    (lambda st: st.pop("sublayer_omega_sq"), "stream must be a dict holding sublayer_omega_sq"),
    (lambda st: st.update(sublayer_omega_sq=[[0.1] * 3] * 3), r"stream.sublayer_omega_sq must be an array of shape \[3, 6\]"),
    (lambda st: st.update(raw_change=[[0.1] * 2] * 3), r"stream.raw_change must be an array of shape \[3, 3\]"),
    (lambda st: st["quantised"].pop("offset"), "stream.quantised must be a dict"),
    (lambda st: st["quantised"].update(format="q8_0"), "stream.quantised.format must be 'q4_1'"),
    (lambda st: st["quantised"].update(offset=-1), "stream.quantised.offset must be an integer >= 0"),
    (lambda st: st["quantised"].update(relative_weight_change=-0.1), "relative_weight_change must be a finite"),
    (lambda st: st["quantised"].update(omega_sq=[[0.1] * 3] * 2), r"stream.quantised.omega_sq must be an array"),
    (lambda st: st.update(provenance="today"), "stream.provenance must be a dict"),
])
def test_a_bad_stream_section_is_refused_naming_its_field(tmp_path, edit, match):
    rec = _record_with_stream(tmp_path)
    edit(rec["stream"])
    path = pretrained_analysis.store_path(tmp_path, "tiny-llama", "shakespeare")
    write_json_atomic(rec, path)
    with pytest.raises(ValueError, match=match):
        pretrained_analysis.load_record(path)


def test_output_flattening_reads_the_block_output_scales_with_a_bootstrap_over_sequences():
    rng = np.random.default_rng(0)
    B, L = 40, 12
    norm = np.sqrt(np.arange(1, L + 1))[None, :] * np.exp(0.05 * rng.standard_normal((B, L)))
    # equal output scales |f_k| = 1 for every block: nothing past the front is scaled up
    flat = pretrained_analysis.output_flattening(1.0 / norm, norm, False, n_boot=200)
    assert flat[0] == pytest.approx(0.0, abs=1e-9) and flat[1] <= flat[0] <= flat[2]
    grow = pretrained_analysis.output_flattening(np.arange(1, L + 1)[None, :] / norm, norm, False, n_boot=200)
    assert grow[1] > 0.1
    with pytest.raises(ValueError, match="one shape"):
        pretrained_analysis.output_flattening(np.ones((3, L)), np.ones((3, L + 1)), False)


def test_a_records_json_reads_as_a_pretrained_record_of_its_schema_or_is_refused_naming_the_field():
    path = min((Path(__file__).resolve().parents[2] / "results" / "pretrained").glob("*__*.json"),
               key=lambda p: p.stat().st_size)
    raw = json.loads(path.read_text(encoding="utf-8"))
    rec = pretrained_analysis.PretrainedRecord.from_dict(raw)
    assert rec.schema == 1 and rec.change["omega_sq"].shape == (rec.n_seq, rec.n_layer)   # made before the field
    assert pretrained_analysis.PretrainedRecord.from_dict({**raw, "schema": 2}).schema == 2
    with pytest.raises(ValueError, match="schema must be 2"):
        pretrained_analysis.PretrainedRecord.from_dict({**raw, "schema": 3})
    with pytest.raises(ValueError, match="n_layer must be an integer"):
        pretrained_analysis.PretrainedRecord.from_dict({**raw, "n_layer": "24"})
