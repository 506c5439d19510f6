"""Chapter 9's typed result (resdecay_lib.analysis.chapters.pretrained): its small functions,
each branch on tiny numbers; the stored-record path (``stored``: no model loaded, seconds) against
values recomputed from the JSON records; its refusals of records without their stream section;
and, slow (one model loaded, about a minute), the live check of SmolLM2 and the glue names against
the notebook's."""
from __future__ import annotations

import json
import math
import pathlib
from types import SimpleNamespace

import numpy as np
import pytest

from resdecay_lib.analysis import pretrained_analysis
from resdecay_lib.analysis.chapters import pretrained
from resdecay_lib.nn import metrics
from resdecay_lib.book import evidence
from resdecay_lib.book.glues import EvidenceGlue, Table, Words, glue_names

from notebook_fixtures import prose_glue_names

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "chapters" / "09_pretrained.ipynb"


# ----------------------------------------------------------------------------- small pieces

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


def test_section_words_names_the_sections_provenance_or_none():
    import types
    section = pretrained_analysis.StreamSection(np.zeros((1, 2)), provenance={"code_version": "git:abc1234",
                                                                              "wall_s": 90.0, "threads": 1})
    assert pretrained.section_words(types.SimpleNamespace(stream=section)) == "git:abc1234, 1.5, 1"
    assert pretrained.section_words(types.SimpleNamespace(stream=None)) == "none"
    assert isinstance(pretrained.section_words(types.SimpleNamespace(stream=None)), Words)


def test_curves_give_the_mean_and_se_layer_change_gives():
    torch = pytest.importorskip("torch")
    stream = torch.randn(5, 4, 6, 8, generator=torch.Generator().manual_seed(0))     # [L+1, B, T, D]
    ch = metrics.layer_change(stream)
    cv = pretrained.Curves({m: ch.per_sequence[m] for m in ch.METRICS})
    for m in ch.METRICS:
        assert np.array_equal(getattr(cv, m), getattr(ch, m))          # the same float64 operations
        assert np.array_equal(getattr(cv, m + "_se"), getattr(ch, m + "_se"))
    assert cv.k.tolist() == ch.k.tolist() == [1, 2, 3, 4]
    with pytest.raises(AttributeError, match="not 'gain'"):
        cv.gain


def test_live_tolerance_is_the_stated_one():
    assert pretrained.RTOL == 1e-4 and pretrained.ATOL == 1e-6
    assert pretrained.LIVE_MODEL in pretrained.PRE_LN


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
def stored():
    return pretrained.stored(ROOT)


@pytest.fixture(scope="module")
def result(stored):
    from dataclasses import replace
    return replace(stored, live=pretrained.live_check(ROOT, stored.records))


@pytest.mark.slow      # the bootstraps of the stored analysis: about 15 s alone, 30 s beside other work
def test_stored_reads_every_field_from_the_records_with_no_live_part(stored):
    assert stored.live is None
    assert not {"pt_recheck_table", "pt_live_table", "pt_recheck_worst"} & set(stored.glues())
    recs = {p.stem: json.loads(p.read_text(encoding="utf-8"))
            for p in (ROOT / "results" / "pretrained").glob("*__*.json")}
    assert len(recs) == 8 and stored.missing == []
    glues = stored.glues()
    for model, short in pretrained.SHORT.items():
        rec = recs[f"{model}__shakespeare"]
        increase = np.asarray(rec["skip"]["value"]) - np.asarray(rec["skip"]["base"])[None]   # [L, B]
        assert glues[f"pt_block1_{short}"] == round(float(increase[0].mean()), 4)
        assert glues[f"pt_blockL_{short}"] == round(float(increase[-1].mean()), 4)
        assert glues[f"pt_L_{short}"] == rec["n_layer"]
        med = float(np.median(np.asarray(rec["change"]["omega_sq"]).mean(0)[1:]))
        assert glues[f"pt_median_{short}"] == round(med, 4)
    ev = glues["ev_skip_block1_qwen"]
    assert isinstance(ev, EvidenceGlue) and ev.digits == 4
    qwen = recs["qwen2.5-coder-0.5b__shakespeare"]
    assert ev.value == pytest.approx(np.mean(np.asarray(qwen["skip"]["value"][0]) - np.asarray(qwen["skip"]["base"])))
    # the quantisation's weight changes and the sublayer panels are the stream sections' own
    assert glues["pt_err_smol"] == round(recs["smollm2-135m__shakespeare"]["stream"]["quantised"]["relative_weight_change"], 4)
    assert glues["pt_err_mini"] == round(recs["all-minilm-l6__shakespeare"]["stream"]["quantised"]["relative_weight_change"], 4)
    sub = np.asarray(recs["gemma3-270m__shakespeare"]["stream"]["sublayer_omega_sq"]).mean(0)
    k, att, mlp = stored.panels["sublayers"]["Gemma-3-270M"]
    assert np.array_equal(att, sub[0::2]) and np.array_equal(mlp, sub[1::2]) and k.tolist() == list(range(1, 19))
    smol = recs["smollm2-135m__shakespeare"]
    rep = stored.reports["smollm2-135m", "shakespeare"]
    assert rep.main.k_max == smol["n_layer"] and rep.embedding_counted is False


def _book_with(tmp_path, strip):
    """A book folder holding copies of the records, ``strip(name, record)`` applied to each."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    out = tmp_path / "results" / "pretrained"
    out.mkdir(parents=True)
    for p in (ROOT / "results" / "pretrained").glob("*__*.json"):
        rec = json.loads(p.read_text(encoding="utf-8"))
        strip(p.stem, rec)
        (out / p.name).write_text(json.dumps(rec), encoding="utf-8")
    return tmp_path


def test_stored_names_the_command_when_a_stream_section_is_missing(tmp_path):
    def strip(name, rec):
        if name == "gemma3-270m__shakespeare":
            del rec["stream"]
    with pytest.raises(ValueError, match=r"\['gemma3-270m'\] lack their stream section.*--only stream"):
        pretrained.stored(_book_with(tmp_path, strip))


def test_stored_names_a_missing_round_trip_and_a_missing_record(tmp_path):
    def strip(name, rec):
        if name == "all-minilm-l6__shakespeare":
            del rec["stream"]["quantised"]
    with pytest.raises(ValueError, match=r"all-minilm-l6.*--only stream"):
        pretrained.stored(_book_with(tmp_path / "a", strip))
    book = _book_with(tmp_path / "b", lambda name, rec: None)
    (book / "results" / "pretrained" / "qwen2.5-coder-0.5b__pydoc.json").unlink()
    with pytest.raises(ValueError, match=r"qwen2.5-coder-0.5b', 'pydoc'.*record MODEL"):
        pretrained.stored(book)


def test_live_check_refuses_records_without_smollm2s_stream_section():
    records = pretrained_analysis.load_records(ROOT / "results" / "pretrained")
    recs = {k: v for k, v in records.items() if k != (pretrained.LIVE_MODEL, pretrained.SH)}
    with pytest.raises(ValueError, match="record smollm2-135m"):
        pretrained.live_check(ROOT, recs)
    import dataclasses
    bare = {**recs, (pretrained.LIVE_MODEL, pretrained.SH): dataclasses.replace(
        records[pretrained.LIVE_MODEL, pretrained.SH], stream=None)}
    with pytest.raises(ValueError, match="stream section"):
        pretrained.live_check(ROOT, bare)


# ----------------------------------------------------------------------------- live (slow: SmolLM2 loaded)

@pytest.mark.slow
def test_glue_names_are_the_notebooks(result):
    nb = _notebook()
    second = pretrained.second_size(ROOT, result)      # the second size's section glues its own names
    names = _glued_parts(result.glues()) | _glued_parts(second.glues())
    assert set(glue_names(result)) == set(result.glues()) and not set(result.glues()) & set(second.glues())
    figures = {n for n in _stored_glue_names(nb) if n.startswith("fig-")}
    assert names == _stored_glue_names(nb) - figures
    assert prose_glue_names(NOTEBOOK) <= names | figures
    assert all(isinstance({**result.glues(), **second.glues()}[n], Table) for n in names if n.endswith("_table"))


@pytest.mark.slow
def test_live_check_reproduces_smollm2s_record(result):
    live = result.live
    assert all(ok for _, ok in live.agrees.values()), live.agrees
    assert {"change.omega_sq", "rms_change", "stream.sublayer_omega_sq", "stream.quantised.omega_sq"} <= set(live.agrees)
    rec = result.records[pretrained.LIVE_MODEL, pretrained.SH]
    assert live.agrees["stream.sublayer_omega_sq"][0] == rec.n_seq * 2 * rec.n_layer
    assert live.recheck_worst <= 3
    glues = result.glues()
    assert glues["pt_live_values"] == sum(n for n, _ in live.agrees.values())
    assert glues["pt_live_model"] == "SmolLM2-135M"


def test_the_confirmatory_reading_computes_the_exploratory_statistics(result):
    """pretrained.confirmatory's statistics are stored()'s: fed the 0.5B's Shakespeare record, they
    give exactly the exploratory reading's values of Qwen (the same functions, levels and digits)."""
    got = pretrained._confirmatory_evidence(result.records["qwen2.5-coder-0.5b", pretrained.SH])
    assert len(got) == 14
    for name, g in got.items():
        base = name.replace("_qwen15", "_qwen")
        want = result.values[base]
        assert (g.value, g.lo, g.hi, g.digits) == (want.value, want.lo, want.hi, want.digits), name


def test_the_confirmatory_reading_is_nan_while_its_record_is_not_stored(tmp_path):
    from resdecay_lib.book import evidence as E
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    out = pretrained.confirmatory(tmp_path)
    names = {str(t[m]) for t in (E.PRETRAINED_EXP, E.PRETRAINED_REF, E.FITRANGE_SHIFT, E.PRETRAINED_DRIFT,
                                 E.FLATTENING, E.HALF_RATIO, E.HALF_RATIO_REF, E.HALF_RATIO_NO_LAST,
                                 E.HALF_RATIO_REF_NO_LAST, E.METRIC_RHO_CHANGE) for m in E.CONFIRMATORY_MODELS}
    names |= {str(E.METRIC_DIFF[c, m]) for c in ("influence", "angular", "relative", "deepest") for m in E.CONFIRMATORY_MODELS}
    assert set(out) == names and all(math.isnan(g.value) for g in out.values())


def test_the_second_size_refuses_what_is_not_a_record_or_a_result(tmp_path):
    from resdecay_lib.checks import ArgumentTypeError
    with pytest.raises(ArgumentTypeError, match="rec must be a pretrained record"):
        pretrained.size_reading("qwen2.5-coder-1.5b", {"change": {}})
    with pytest.raises(ArgumentTypeError, match="result must be Chapter 9's result"):
        pretrained.second_size(ROOT, {"records": {}})
    with pytest.raises(ValueError, match="root"):
        pretrained.second_size(tmp_path, None)


def test_the_second_size_reads_both_sizes_on_both_texts(result):
    second = pretrained.second_size(ROOT, result)
    assert [(m, t) for m, t, _ in second.sizes] == [(m, t) for m in pretrained.SIZES for t in pretrained.TEXTS]
    assert second.measured and set(second.panels()) == set(pretrained.SIZES.values())
    z = dict(((m, t), z) for m, t, z in second.sizes)["qwen2.5-coder-1.5b", "pydoc"]
    assert z.n_layer == 28 and z.exponent.lo <= z.exponent.exponent <= z.exponent.hi
