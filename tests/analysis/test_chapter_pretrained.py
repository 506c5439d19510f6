"""Chapter 9's typed result (resdecay_lib.analysis.chapters.pretrained): its small functions,
each branch on tiny numbers, and, on the stored records with the models loaded (slow: the live
measurement takes minutes), its glue names against the notebook's and a few fields against
values recomputed from the JSON records."""
from __future__ import annotations

import json
import math
import pathlib
from types import SimpleNamespace

import numpy as np
import pytest

from resdecay_lib.analysis.chapters import pretrained
from resdecay_lib.book import evidence
from resdecay_lib.book.glues import EvidenceGlue, Table, Words, glue_names

from notebook_fixtures import prose_glue_names

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "chapters" / "09_pretrained.ipynb"


# ----------------------------------------------------------------------------- small pieces

def test_sublayers_splits_attention_from_mlp_by_the_streams_order():
    steps = np.array([10.0, 20.0, 11.0, 21.0, 12.0, 22.0])       # att 1, mlp 1, att 2, mlp 2, ...
    parts = pretrained.sublayers(steps)
    assert parts["attention"].tolist() == [10.0, 11.0, 12.0]
    assert parts["mlp"].tolist() == [20.0, 21.0, 22.0]


def test_sublayers_splits_per_sequence_curves_along_the_last_axis():
    per_seq = np.arange(8.0).reshape(2, 4)
    parts = pretrained.sublayers(per_seq)
    assert parts["attention"].tolist() == [[0.0, 2.0], [4.0, 6.0]]
    assert parts["mlp"].tolist() == [[1.0, 3.0], [5.0, 7.0]]


@pytest.mark.parametrize("bad", [np.zeros(3), np.zeros(0), np.float64(1.0)])
def test_sublayers_refuses_an_odd_or_empty_number_of_steps(bad):
    with pytest.raises(ValueError, match="even number"):
        pretrained.sublayers(bad)


def test_convention_name_both_conventions():
    assert pretrained.convention_name(True) == "embedding-counted"
    assert pretrained.convention_name(False) == "seed"
    assert type(pretrained.convention_name(False)) is str      # glued as text, not as Markdown


def test_se_distance_words_below_and_above_the_noise_floor():
    assert pretrained.se_distance_words(0.004) == "within 0.01"
    assert pretrained.se_distance_words(-0.004) == "within 0.01"
    assert pretrained.se_distance_words(1.234) == "within 1.23"
    assert pretrained.se_distance_words(0.01) == "within 0.01"     # the boundary prints the number
    assert isinstance(pretrained.se_distance_words(2.0), Words)


def test_band_exit_words_inside_the_band_and_leaving_it():
    assert pretrained.band_exit_words(None, 30) == "beyond 15 (>50%)"
    assert pretrained.band_exit_words(None, 7) == "beyond 3 (>50%)"
    assert pretrained.band_exit_words(1, 30) == "1 (3%)"
    assert pretrained.band_exit_words(6, 24) == "6 (25%)"


def test_geometric_limit_only_for_a_growing_stream():
    assert pretrained.geometric_limit(1.25) == pytest.approx(2 * (1 - 1 / 1.25))
    assert math.isnan(pretrained.geometric_limit(1.0))
    assert math.isnan(pretrained.geometric_limit(0.9))


def test_interval_words_reads_an_exponent_a_correlation_or_a_mean():
    assert pretrained.interval_words(SimpleNamespace(exponent=-0.5, lo=-0.6, hi=-0.4)) == "-0.50 [-0.60, -0.40]"
    assert pretrained.interval_words(SimpleNamespace(rho=0.75, lo=0.7, hi=0.8)) == "0.75 [0.70, 0.80]"
    assert pretrained.interval_words(SimpleNamespace(mean=1.08612, lo=1.0849, hi=1.0871), ".4f") \
        == "1.0861 [1.0849, 1.0871]"


def test_levels_are_the_bonferroni_levels_the_prose_states():
    assert pretrained.LEVEL == 1 - 0.05 / 2
    assert pretrained.LEVEL_SUB == 1 - 0.05 / 8
    assert pretrained.N_COMPARISONS == 6                          # the prose's 1 - 0.05/6
    assert set(pretrained.PRE_LN) <= set(pretrained.MODELS) and set(pretrained.SHORT) == set(pretrained.MODELS)


# ----------------------------------------------------------------------------- on the stored records

def _notebook():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))


def _stored_glue_names(nb) -> set:
    return {o["metadata"]["scrapbook"]["name"] for c in nb["cells"] for o in c.get("outputs", [])
            if o.get("metadata", {}).get("scrapbook")}


def _glued_parts(glues: dict) -> set:
    """The names glue_all stores: an evidence name as the parts its kind has (name, name_lo, ...)."""
    out = set()
    for name, v in glues.items():
        if isinstance(v, EvidenceGlue):
            out |= {name + part for part in evidence.KINDS[evidence.declared(name).kind]}
        else:
            out.add(name)
    return out


@pytest.fixture(scope="module")
def result():
    return pretrained.chapter(ROOT)


@pytest.mark.slow
def test_glue_names_are_the_notebooks(result):
    nb = _notebook()
    names = _glued_parts(result.glues())
    assert set(glue_names(result)) == set(result.glues())
    figures = {n for n in _stored_glue_names(nb) if n.startswith("fig-")}
    assert names == _stored_glue_names(nb) - figures
    assert prose_glue_names(NOTEBOOK) <= names | figures
    assert all(isinstance(result.glues()[n], Table) for n in names if n.endswith("_table"))


@pytest.mark.slow
def test_fields_agree_with_the_json_records(result):
    recs = {p.stem: json.loads(p.read_text(encoding="utf-8"))
            for p in (ROOT / "results" / "pretrained").glob("*__*.json")}
    assert len(recs) == 8 and result.missing == []
    glues = result.glues()
    for model, short in pretrained.SHORT.items():
        rec = recs[f"{model}__shakespeare"]
        increase = np.asarray(rec["skip"]["value"]) - np.asarray(rec["skip"]["base"])[None]   # [L, B]
        assert glues[f"pt_block1_{short}"] == round(float(increase[0].mean()), 4)
        assert glues[f"pt_blockL_{short}"] == round(float(increase[-1].mean()), 4)
        assert glues[f"pt_L_{short}"] == rec["n_layer"]
    ev = glues["ev_skip_block1_qwen"]
    assert isinstance(ev, EvidenceGlue) and ev.digits == 4
    qwen = recs["qwen2.5-coder-0.5b__shakespeare"]
    assert ev.value == pytest.approx(np.mean(np.asarray(qwen["skip"]["value"][0]) - np.asarray(qwen["skip"]["base"])))
    # the live change is the stored one to float rounding, on every model and text
    assert all(result.records_match_live.values())
    smol = recs["smollm2-135m__shakespeare"]
    live = result.reports["smollm2-135m", "shakespeare"]
    assert live.main.k_max == smol["n_layer"] and live.embedding_counted is False
