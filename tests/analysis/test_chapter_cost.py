"""Chapter 8's typed result (resdecay_lib.analysis.chapters.cost): its wording functions branch by
branch, the glue names it hands the notebook, and its numbers on the stored runs against the
same numbers recomputed from the JSON records directly."""
import json
import math
import pathlib
import re

import numpy as np
import pytest

from resdecay_lib.analysis.chapters import cost
from resdecay_lib.book import evidence as E
from resdecay_lib.book.glues import EvidenceGlue, Table, Words, glue_names

from notebook_fixtures import prose_glue_names

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "chapters" / "08_cost.ipynb"


# ----------------------------------------------------------------------------- wording

@pytest.mark.parametrize("lo, hi, words", [
    (-0.03, -0.02, "depth still pays at the deepest rung"),
    (0.0, 0.01, "depth has stopped paying"),
    (-0.02, 0.0, "the runs cannot tell whether depth still pays"),
])
def test_depth_slope_words_reads_the_interval_against_the_margin(lo, hi, words):
    out = cost.depth_slope_words(lo, hi, 0.01)
    assert isinstance(out, Words) and out == words


def test_depth_slope_words_at_the_margin_itself_cannot_tell():
    assert cost.depth_slope_words(-0.03, -0.01, 0.01) == "the runs cannot tell whether depth still pays"


@pytest.mark.parametrize("reading, words", [
    ("keeps paying", "keeps paying within the ladder: its top beats every lower depth"),
    ("stops paying", "stops paying at depth 8"),
    ("not located", "has its lowest mean loss at depth 8, and its paired steps do not locate where depth stops "
                    "paying: every depth from 4 up is within the noise of the best"),
])
def test_depth_verdict_words_has_one_clause_per_reading(reading, words):
    assert cost.depth_verdict_words(reading, 8, 4.0) == words


def test_depth_verdict_words_rejects_an_unknown_reading_naming_the_valid_ones():
    with pytest.raises(ValueError, match="keeps paying"):
        cost.depth_verdict_words("pays", 8, 4.0)


def test_depth_set_words_lists_the_depths_or_says_why_there_are_none():
    assert cost.depth_set_words([16, 24]) == "16, 24"
    assert cost.depth_set_words([]) == "none (fewer than two depths)"


def test_listed_words_formats_each_value():
    assert cost.listed_words([0.871, 1.0], "{:.2f}") == "0.87, 1.00"
    assert cost.listed_words([]) == ""


@pytest.mark.parametrize("lo, hi, words", [
    (math.nan, math.nan, "no interval"),
    (-0.5, 1.5, "contains 1, and contains 0 too: the runs cannot tell Liu et al.'s law from no depth term"),
    (0.5, 1.5, "contains 1 and excludes 0"),
    (0.1, 0.5, "excludes 1: the depth term falls slower than Liu et al.'s"),
    (1.2, 2.0, "excludes 1: the depth term falls faster than Liu et al.'s"),
])
def test_alpha_vs_liu_words_every_branch(lo, hi, words):
    assert cost.alpha_vs_liu_words(lo, hi) == words


def test_gap_words_one_clause_per_placement_in_order():
    out = cost.gap_words([("A", -0.05, -0.06, -0.04), ("B", 0.03, 0.01, 0.05), ("C", 0.0, -0.01, 0.02)])
    assert out == ("A -0.050 (-0.060 to -0.040), better than Pre-LN; B +0.030 (+0.010 to +0.050), worse than "
                   "Pre-LN; C +0.000 (-0.010 to +0.020), not distinguishable from Pre-LN")


def test_gap_words_without_any_interval():
    assert cost.gap_words([]) == "no placement has three seeds paired with Pre-LN"


def test_a_seed_sets_evidence_is_glued_under_its_tag():
    s = cost.SeedSetEvidence("s34", {"ev_half_ratio_toy": {"value": math.nan, "lo": math.nan, "hi": math.nan}})
    g = s.glues()["ev_half_ratio_toy"]
    assert isinstance(g, EvidenceGlue) and g.seed_set == "s34" and g.digits == 4 and g.se is None


def test_the_reproduction_prints_each_run_and_collects_every_z():
    r = cost.Reproduction(({"name": "a", "step": 20, "max_z_change": 0.5, "z_loss": 4.0},),
                          {"name": "b", "step": 3600, "max_z": 1.0, "z_loss": 0.0, "max_z_change": 2.0},
                          np.array([2.0, 0.3]))
    assert r.z_scores == {"a change": 0.5, "a loss": 4.0, "b removal costs": 1.0, "b final loss": 0.0,
                          "b final change": 2.0}
    text = str(r)
    assert "a" in text and "4.00 standard errors" in text
    assert ("stored final weights give removal costs, final loss and change at step 3600 within 3 standard errors"
            in text)
    far = cost.Reproduction((), {"name": "b", "step": 3600, "max_z": 1.0, "z_loss": 5.5, "max_z_change": 0.0},
                            np.array([2.0, 0.3]))
    assert "up to 5.50 standard errors from them" in str(far)


# ----------------------------------------------------------------------------- the check from stored weights

@pytest.fixture(scope="module")
def tiny_kept(tmp_path_factory):
    """A tiny finished run (8 steps) with its final weights stored beside it: (result, weights file)."""
    from resdecay_lib.training import runs, train as T
    cfg = T.TrainConfig(arch="pre_ln", n_layer=2, d_model=16, n_head=2, block_size=16, batch_size=4, steps=8,
                        warmup=2, threads=1, eval_windows=6, measure_windows=4, device="cpu")
    path = tmp_path_factory.mktemp("kept") / "pre_ln_L2_s0.weights.pt"
    return runs.run_result(cfg, runs.RunPlan(measure_steps=(0, 2, 8), eval_every=4), weights=path), path


def test_the_stored_weights_of_an_unchanged_run_give_its_stored_numbers_exactly(tiny_kept):
    from resdecay_lib.analysis import recheck
    res, path = tiny_kept
    out = recheck.stored_weights(res, path)
    assert (out["name"], out["step"]) == ("pre_ln_L2_s0", 8)
    assert out["max_z"] == out["z_loss"] == out["max_z_change"] == out["max_abs_delta"] == 0
    assert list(out["delta"]) == res["final"]["ablation"]["delta"]
    assert out["provenance"]["code_version"] == res["code_version"]


@pytest.mark.parametrize("field", ["delta", "val_loss", "omega_sq"])
def test_a_stored_number_the_weights_do_not_give_is_seen_in_its_standard_errors(tiny_kept, field):
    import copy
    from resdecay_lib.analysis import recheck
    res, path = tiny_kept
    moved = copy.deepcopy(res)
    if field == "delta":
        a = moved["final"]["ablation"]
        a["delta"] = [d + 10 * se for d, se in zip(a["delta"], a["delta_se"])]
        key = "max_z"
    elif field == "val_loss":
        moved["final"]["val_loss"]["mean"] += 10 * moved["final"]["val_loss"]["se"]
        key = "z_loss"
    else:
        rec = moved["checkpoints"][-1]["measure"]["stream"]
        rec["omega_sq"] = list(np.asarray(rec["omega_sq"]) + 10 * np.asarray(rec["omega_sq_se"]))
        key = "max_z_change"
    out = recheck.stored_weights(moved, path)
    assert out[key] == pytest.approx(10, rel=1e-6)
    assert all(out[k] == 0 for k in ("max_z", "z_loss", "max_z_change") if k != key)


def test_the_check_from_stored_weights_refuses_another_runs_weights_or_an_unfinished_run(tiny_kept, tmp_path):
    import copy
    from resdecay_lib.analysis import recheck
    res, path = tiny_kept
    other = copy.deepcopy(res)
    other["config"]["lr"] = 0.01
    with pytest.raises(ValueError, match="not those of stored"):
        recheck.stored_weights(other, path)
    with pytest.raises(ValueError, match="status 'ok'"):
        recheck.stored_weights({**res, "status": "partial"}, path)
    with pytest.raises(ValueError, match="must be an existing file"):
        recheck.stored_weights(res, tmp_path / "absent.weights.pt")
    with pytest.raises(ValueError, match="stored"):
        recheck.stored_weights({"name": "x"}, path)


# ----------------------------------------------------------------------------- the notebook's names

def _notebook():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))


def _names_stored(nb) -> set:
    return {o["metadata"]["scrapbook"]["name"] for c in nb["cells"] if c["cell_type"] == "code"
            for o in c.get("outputs", []) if "scrapbook" in o.get("metadata", {})}


@pytest.fixture(scope="module")
def result():
    return cost.chapter(ROOT)


def test_the_result_glues_every_name_the_notebook_reads_and_stores(result):
    nb = _notebook()
    figures = {"fig-ablation", "fig-depth"}
    # what the prose refers to is glued by the result (figures by the notebook's plots cells)
    assert prose_glue_names(NOTEBOOK) - figures <= _expanded(result)
    # every name but the seed sets' and the figures' is glued by glue_all(result), and nothing else is stored
    tagged = {f"{k}{suffix}__{s}" for s, ev in result.seed_sets.items() for k in glue_names(ev)
              for suffix in ("", "_lo", "_hi", "_se")}
    stored = _names_stored(nb) - figures - {f + "-data" for f in figures}
    assert {n for n in stored if "__" not in n} == {n for n in _expanded(result) if "__" not in n}
    assert {n for n in stored if "__" in n} <= tagged
    # every table the result builds is placed in a {table} directive with a tbl-cost- name
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for name, v in result.glues().items():
        if isinstance(v, Table):
            assert re.search(r"(?:````|::::)\{table\}[^\n]+\n:name: tbl-cost-[\w-]+\n\n```\{glue:md\} " + name, text), name


def _expanded(result) -> set:
    """The stored glue names of ``glue_all(result)``: an evidence name with its parts."""
    from resdecay_lib.book import evidence
    out = set()
    for k, v in result.glues().items():
        if isinstance(v, EvidenceGlue):
            out |= set(evidence.declared(k).keys())
        else:
            out.add(k)
    return out


# ----------------------------------------------------------------------------- on the stored runs

def _runs(folder, pattern):
    return [json.loads(p.read_text()) for p in sorted((ROOT / "results" / folder).glob(pattern))]


def test_the_removal_costs_match_the_records(result):
    pre24 = [r for r in _runs("train_long", "pre_ln_L24_s*.json") if r["status"] == "ok"
             and r["seed"] in E.EXPLORATORY_SEEDS]
    delta = np.array([r["final"]["ablation"]["delta"] for r in pre24])       # [S, 24]
    assert result.block1_pre_ln == pytest.approx(delta[:, 0].mean(), rel=1e-12)
    assert result.late_pre_ln == pytest.approx(delta[:, 12:].mean(), rel=1e-12)
    # later half (blocks 13..24) over the earlier half past the front (blocks 4..12), per seed
    ratios = delta[:, 12:].mean(1) / delta[:, 3:12].mean(1)
    assert result.half_ratio_seeds == ", ".join(f"{x:.2f}" for x in ratios)
    assert result.trend.n == len(pre24)


def test_what_the_reproduction_reads_is_the_smallest_pre_ln_runs_record_and_its_weights_file(result):
    from resdecay_lib.training.weights import load_weights
    stored = json.loads((ROOT / "results" / "train_long" / "pre_ln_L2_s0.json").read_text())
    assert (result.weights_run, result.weights_run_code) == ("pre_ln_L2_s0", stored["code_version"])
    assert result.weights_file == "results/train_long/pre_ln_L2_s0.weights.pt"
    w = load_weights(ROOT / result.weights_file, stored)          # the run's own name and configuration
    assert result.weights_code == w.provenance["code_version"] and result.weights_code.startswith("git:")
    assert w.provenance["threads"] == stored["config"]["threads"] == 1
    assert result.first_step == stored["plan"]["measure_steps"][1] == 20
    g = result.glues()
    assert g["rep_run"] == "`pre_ln_L2_s0`" and g["rep_weights_file"] == f"`{result.weights_file}`"
    assert g["rep_z_max"] == cost.Z_MAX and g["rep_first_step"] == 20


def test_the_stored_weights_of_the_smallest_pre_ln_run_give_its_stored_numbers(result):
    from resdecay_lib.analysis import recheck
    stored = json.loads((ROOT / "results" / "train_long" / "pre_ln_L2_s0.json").read_text())
    out = recheck.stored_weights(stored, ROOT / result.weights_file)
    assert max(out["max_z"], out["z_loss"], out["max_z_change"]) <= cost.Z_MAX, out


def test_the_depth_slope_and_the_learning_rates_match_the_records(result):
    import tomllib
    spec = tomllib.loads((ROOT / "configs" / "train_long.toml").read_text())
    assert result.lr == {a: spec["arch"][a]["lr"] for a in spec["archs"]}
    runs = _runs("train_long", "pre_ln_L*_s*.json") + _runs("train_deep", "pre_ln_L*_s*.json")
    pts = [(r["config"]["n_layer"], r["final"]["val_loss"]["mean"]) for r in runs
           if r["status"] == "ok" and r["config"]["n_layer"] >= 8 and math.isclose(r["config"]["lr"], 0.006)
           and r["seed"] in E.EXPLORATORY_SEEDS]
    slope = np.polyfit(np.log2([p[0] for p in pts]), [p[1] for p in pts], 1)[0]
    assert result.n_slope_runs == len(pts)
    assert result.slope["slope"] == pytest.approx(slope, rel=1e-9)
    assert result.slope["df"] == len(pts) - 2
