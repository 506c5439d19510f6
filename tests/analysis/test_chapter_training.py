"""Chapter 7's typed result (resdecay_lib.analysis.chapters.training): its wording functions,
branch by branch, its tables, the names it glues against the notebook's, and the result on
the stored sweep against values recomputed here from the JSON."""
import json
import math
import pathlib
import re

import numpy as np
import pytest

from resdecay_lib.analysis.chapters import training
from resdecay_lib.book import evidence as E
from resdecay_lib.book.glues import EvidenceGlue, Table, Words, glue_names
from resdecay_lib.stats.inference import TInterval

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "chapters" / "07_training.ipynb"
RUNS = ROOT / "results" / "train_long"


def iv(mean, lo, hi):
    return TInterval(mean, lo, hi, 0.1, 2.0, 5, 0.95)


# ----------------------------------------------------------------------------- wording

def test_placements_words_lists_names_or_says_none():
    assert training.placements_words(["Pre-LN", "Peri-LN"]) == "Pre-LN, Peri-LN"
    assert training.placements_words([], "no placement") == "no placement"
    assert training.placements_words([]) == "none"
    assert isinstance(training.placements_words([]), Words)


def test_far_from_pre_ln_words_lists_cells_or_says_none():
    assert training.far_from_pre_ln_words([("Post-LN", 8, 0.2), ("Peri-LN", 16, 0.314)]) == \
        "Post-LN at L = 8 (+0.20), Peri-LN at L = 16 (+0.31)"
    assert training.far_from_pre_ln_words([]) == "none"


def test_comparison_words_reads_the_intervals():
    a = iv(-1.0, -1.1, -0.9)
    assert training.comparison_words(a, iv(-2.0, -2.1, -1.9)) == "steeper"
    assert training.comparison_words(a, iv(0.0, -0.1, 0.1)) == "flatter"
    assert training.comparison_words(a, iv(-0.95, -1.0, -0.8)) == "not distinguishable"


def test_convention_words():
    assert training.convention_words(True) == "embedding-counted"
    assert training.convention_words(False) == "seed"


def test_shapes_and_shape_words():
    assert training.shapes_words([("Pre-LN", "bent"), ("ResiDual", "undetermined")]) == \
        "Pre-LN bent, ResiDual undetermined"
    for shape in ("power law", "bent", "undetermined"):
        assert training.shape_words(shape) == shape
    with pytest.raises(ValueError, match="shape must be one of"):
        training.shape_words("curved")


def test_k3_words_branches():
    assert training.k3_words(0.1).startswith("its interval reaches above 0")
    assert training.k3_words(-0.1).startswith("its interval stays below 0")


def test_k2_words_branches():
    assert training.k2_words(-0.01) == "negative"
    assert training.k2_words(0.02) == "not shown negative"


def test_steps_and_exponents_words():
    assert training.steps_words([1000, 1800, 3600]) == "1000, 1800, 3600"
    assert training.exponents_words([-0.714, -0.4849, -0.16]) == "-0.71, -0.48, -0.16"


def test_departure_words_branches():
    assert training.departure_words(["a", "b"]) == "a; b"
    assert training.departure_words([]) == "none of them"


def test_r_vs_theorem_words_branches():
    assert training.r_vs_theorem_words(-0.3, -0.1).startswith("slower than the theorem's")
    assert training.r_vs_theorem_words(-0.9, -0.6).startswith("faster than the theorem's")
    assert training.r_vs_theorem_words(-0.6, -0.4).startswith("at a rate not distinguishable")


def test_var_exp_words_branches_and_nan():
    assert training.var_exp_words(0.1, 0.7) == "are scaled up with depth (the interval lies above 0)"
    assert training.var_exp_words(-0.7, -0.1) == "are not scaled up (the interval lies below 0)"
    assert training.var_exp_words(-0.1, 0.1).startswith("are not shown to be scaled up or down")
    assert training.var_exp_words(math.nan, math.nan).startswith("are not shown")


# ----------------------------------------------------------------------------- tables

def test_ngram_table():
    t = training.ngram_table({1: 3.3291, 2: 2.5})
    assert isinstance(t, Table)
    assert t.splitlines()[2:] == ["| 1-gram | 3.329 |", "| 2-gram | 2.500 |"]


def test_pilot_table_marks_diverged_and_rates_off_the_grid():
    short = {"lr": 0.01, "losses": {0.01: 2.0, 0.1: None}}
    chosen = {"pre_ln": {**short, "stage": "short", "short": short},
              "peri_ln": {"lr": 0.001, "losses": {0.001: 1.7, 0.01: 1.8}, "stage": "long",
                          "short": {"lr": 0.1, "losses": {0.01: 2.1, 0.1: 2.0}}}}
    lines = training.pilot_table(chosen, 8, 3600).splitlines()
    assert lines[0] == "| placement | pilot | 0.001 | 0.01 | 0.1 | its choice |"
    assert lines[2] == "| Pre-LN | short | - | 2.000 | diverged | 0.01 |"
    assert lines[3] == "| Peri-LN | short | - | 2.100 | 2.000 | 0.1 |"
    assert lines[4] == "| Peri-LN | horizon-matched (L = 8, 3600 steps) | 1.700 | 1.800 | - | 0.001 |"


def test_loss_table_leaves_untrained_cells_blank():
    cell_loss = {("pre_ln", 2): np.array([1.0, 2.0]), ("pre_ln", 4): np.array([1.5])}
    n_kept = {("pre_ln", 2): 2, ("pre_ln", 4): 1}
    t = training.loss_table(["pre_ln"], [2, 4, 8], cell_loss, n_kept)
    assert t.splitlines()[2] == "| Pre-LN | 1.500 (2) | 1.500 (1) |  |"


def test_departure_table_gives_the_reason_when_there_is_no_interval():
    d = {"r_exp": iv(-0.5, -0.6, -0.4), "c_mean": iv(0.0, -0.1, 0.1), "consistent_with": []}
    lines = training.departure_table([("Pre-LN", 24, 0, d), ("Post-LN", None, None, "no depth")]).splitlines()
    assert lines[2] == "| Pre-LN | 24 | 0 | -0.50 [-0.60, -0.40] | 0.00 [-0.10, 0.10] | none of them |"
    assert lines[3] == "| Post-LN |  |  |  |  | no depth |"


def test_seed_set_table_shows_nan_where_an_interval_needs_three_seeds():
    nan = {"value": math.nan, "lo": math.nan, "hi": math.nan}
    ev = {E.EXP_N_SEEDS: {"value": 2.0}, E.TRAINED_EXP_PRE_LN: nan, E.SPLIT_CORR_SHARE: nan, E.VAR_EXP_TOY: nan}
    assert training.seed_set_table([("s34", 38, ev)]).splitlines()[2] == \
        "| s34 | 38 | 2 | nan [nan, nan] | nan [nan, nan] | nan [nan, nan] |"


# ----------------------------------------------------------------------------- on the stored sweep

@pytest.fixture(scope="module")
def result():
    return training.chapter(ROOT, live=False)


def _notebook():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))


def _glued_in_notebook() -> set:
    return {o["metadata"]["scrapbook"]["name"] for c in _notebook()["cells"] for o in c.get("outputs", [])
            if o.get("metadata", {}).get("scrapbook")}


@pytest.mark.slow
def test_glue_names_are_the_names_the_notebook_glues(result):
    def glued(glues, tag=""):      # an evidence name is glued with each of its parts
        return {n + part + tag for n, v in glues.items()
                for part in (E.KINDS[E.declared(n).kind] if isinstance(v, EvidenceGlue) else ("",))}

    assert glue_names(result) == list(result.glues())
    names = glued(result.glues())
    for s in E.SEED_SETS:
        names |= glued(result.on_seed_set(s).glues(), f"__{s}")
    figures = {n for n in _glued_in_notebook() if n.startswith("fig-")}
    assert names == _glued_in_notebook() - figures
    prose = "".join("".join(c["source"]) for c in _notebook()["cells"] if c["cell_type"] == "markdown")
    used = set(re.findall(r"\{glue:(?:text|md)\}`([\w-]+)", prose)) | set(re.findall(r"\{glue:md\} ([\w-]+)", prose))
    assert used - names == set()
    assert {n for n in names if not n.startswith("ev_")} - used == set()   # every other name is read by the prose


@pytest.mark.slow
def test_result_matches_the_stored_runs_read_here(result):
    # the exploratory rounds' runs (the confirmatory seeds 5-7 are read as their own seed set)
    runs = [r for r in (json.loads(p.read_text()) for p in sorted(RUNS.glob("*.json")))
            if r["seed"] in E.EXPLORATORY_SEEDS]
    assert result.n_runs == len(runs)
    assert result.n_converged == sum(r["convergence"]["met"] for r in runs if r["status"] == "ok")
    deep = [r["final"]["val_loss"]["mean"] for r in runs
            if r["config"]["arch"] == "pre_ln" and r["config"]["n_layer"] >= 8]
    assert max(loss for _, loss, _ in result.deep_pre_ln) == max(deep)
    assert result.seed_sets[None][1][E.PRE_LN_WORST_LOSS_DEEP]["value"] == max(deep)
    # the deepest Pre-LN runs (all converged): the exponent of omega_k^2 over k = 2..L at the end,
    # a least-squares slope in log-log per seed, averaged over seeds
    deepest = [r for r in runs if r["config"]["arch"] == "pre_ln" and r["config"]["n_layer"] == 24
               and r["convergence"]["met"]]
    assert result.L_max == 24 and len(deepest) == len(result.kept_names) == 5
    last = [next(c for c in r["checkpoints"] if c["step"] == result.final)["measure"]["stream"] for r in deepest]
    k = np.arange(1, 25)
    slopes = [np.polyfit(np.log(k[1:]), np.log(np.mean(m["omega_sq_per_sequence"], 0)[1:]), 1)[0] for m in last]
    assert result.pre[result.final].interval.mean == pytest.approx(np.mean(slopes), abs=1e-9)
    # mean |correlation| between different block outputs, from the stored Gram matrices
    corr = []
    for m in last:
        G = np.array(m["gram"])
        C = (G / np.sqrt(np.outer(np.diag(G), np.diag(G))))[1:, 1:]
        corr.append(np.abs(C[~np.eye(len(C), dtype=bool)]).mean())
    assert result.mean_abs_corr[result.final].mean() == pytest.approx(np.mean(corr), abs=1e-12)
    # the failed pilot run: its mid point is the first validation at or after an eighth of its steps
    failed = json.loads((ROOT / "results" / "lr_pilot_long" / "peri_ln_L16_s0_lr0.096.json").read_text())
    assert result.failure.mid_step == min(p["step"] for p in failed["val_curve"]
                                          if p["step"] >= failed["config"]["steps"] // 8)
    assert result.failure.final_loss == failed["final"]["val_loss"]["mean"]
    assert result.rechecks == ()
