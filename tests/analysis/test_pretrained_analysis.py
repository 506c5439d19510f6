"""Tests of resdecay_lib.analysis.pretrained_analysis: Chapter 9's stored record and its analysis."""
import json

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
    assert rep.reference == {m: training_analysis.reference_exponent(m, L, True) for m in pretrained_analysis.K_MINS}
    assert rep.range_shift < 0.1
    G[0, 0] = 0.1                                   # rho below 1/2: the seed convention
    assert pretrained_analysis.exponent_report(y, G, n_boot=200).reference[2] == training_analysis.reference_exponent(2, L, False)
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
    assert back["change"]["omega_sq"].shape == (3, 3) and back["gram"].shape == (4, 4)
    assert back["rms_change"].shape == back["rms_change_gain"].shape == (3, 3)
    assert back["skip"].value.shape == (3, 3) and back["skip"].kind == "next_token"
    assert set(back["prune"]) == set(pretrained_analysis.pruning.RANKINGS)
    assert back["prune"]["deepest"].sets == ((3,),)                   # n = 1..floor(3/2)
    np.testing.assert_allclose(back["prune"]["deepest"].value[0], back["skip"].value[2])
    assert json.loads(path.read_text())["n_layer"] == 3


def test_book_text_rejects_an_unknown_name():
    with pytest.raises(ValueError, match="shakespeare"):
        pretrained_analysis.book_text("poems")
