"""Chapter 7b's result (resdecay_lib.analysis.chapters.front): each wording function's branches
on tiny numbers, the names the result glues against those the chapter reads, and the result on
the stored runs against values recomputed here from their JSON."""
import json
import math
import pathlib
import re

import numpy as np
import pytest

from resdecay_lib.analysis import front as front_models
from resdecay_lib.analysis import training_analysis
from resdecay_lib.analysis.chapters import front
from resdecay_lib.book import evidence
from resdecay_lib.book.glues import EvidenceGlue, Table, Words, glue_names
from resdecay_lib.stats.inference import TInterval

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "chapters" / "07b_front.ipynb"
NAN = float("nan")


def iv(mean, lo, hi, n=3):
    return TInterval(mean, lo, hi, (hi - lo) / 4, 2.0, n, 0.95)


def settling(verdict, change=iv(0.178, 0.123, 0.233)):
    return training_analysis.Settling((6000, 10800), change, 0.144, verdict, -0.11, 0.30, 0.10, 0.05)


# ----------------------------------------------------------------------------- wording functions

def test_missing_words_names_each_run_as_code_or_says_none():
    assert front.missing_words([]) == "none"
    assert front.missing_words(["pre_ln_L96_s3", "pre_ln_L96_s4"]) == "`pre_ln_L96_s3`, `pre_ln_L96_s4`"
    assert isinstance(front.missing_words([]), Words)


@pytest.mark.parametrize("u, lo, hi, says", [
    ([1.04, -2.0], NAN, NAN, "fewer than three deep runs are stored, so the data cannot tell yet (the 2 stored: "
                             "u = +1.0, -2.0)"),
    ([-1.0, -1.1, -0.9], -1.5, -0.5, "the decay resumes past the front, on the front model's side"),
    ([4.0, 5.0, 6.0], 1.5, 8.0, "the change does not resume its decay: it rises, beyond even the level model's"),
    ([0.5, 1.0, 0.8], 0.2, 1.5, "the change does not resume its decay, on the level model's side"),
    ([-1.4, 4.8, 10.3], -1.2, 8.7, "the runs stored so far cannot tell the two apart"),
])
def test_front_words_reads_the_interval_of_u_against_the_two_predictions(u, lo, hi, says):
    words = front.front_words(u, lo, hi)
    assert isinstance(words, Words) and words.startswith(says)


def test_premise_words_all_above_the_front_models_interval_or_each_count():
    assert front.premise_words(3, 1, 0, 0).startswith("In every one of the 3 stored, the change over the later half")
    assert front.premise_words(6, 5, 1, 1) == (
        "Over the later half of the blocks the change rises in 5 of the 8 stored, falls more slowly than the "
        "front model predicted in 1 (above its 95% interval), falls as it predicted in 1 and faster in 1")


@pytest.mark.parametrize("n_above, n_rising, n, says", [
    (4, 2, 4, "is not what trained Pre-LN shows"),
    (6, 5, 8, "does not describe most of the runs"),
    (4, 4, 8, "the runs are split"),           # half rising is not most
])
def test_premise_reading_words_all_above_most_rising_or_split(n_above, n_rising, n, says):
    assert says in front.premise_reading_words(n_above, n_rising, n)


def test_laws_words_counts_each_verdict():
    assert front.laws_words(0, 15, 5) == "0 shifted, 15 power, 5 neither"


@pytest.mark.parametrize("verdict", ["settled", "rising", "falling", "undetermined"])
def test_long_words_gives_the_change_the_margin_the_verdict_and_end_against_end(verdict):
    words = front.long_words(3, settling(verdict), iv(-0.0676, -0.284, 0.149), -0.16)
    assert words.startswith("between steps 6,000 and 10,800 the exponent moves by +0.178 (+0.123 to +0.233, "
                            "90% interval over the 3 runs), against a margin of 0.144: ")
    assert front.SETTLE_CLAUSES[verdict] in words
    assert words.endswith("At the end of its schedule it is -0.07 (-0.28 to +0.15), against -0.16 at the end of "
                          "the 3,600-step schedule: a difference of +0.10 (-0.11 to +0.30, Welch 95%)")


def test_long_words_waits_for_three_runs():
    assert front.long_words(2) == "the test waits for three runs (2 stored)"


@pytest.mark.parametrize("k0_long, how", [
    ({0: 12.1, 1: 11.5, 2: 19.5}, "smaller"),
    ({0: 40.0, 1: 45.0, 2: 50.0}, "larger"),
    ({0: 30.0, 1: 12.0, 2: 33.0}, "about as large"),
])
def test_long_front_words_compares_the_long_runs_fronts_with_the_same_seeds_short_ones(k0_long, how):
    short = {0: 35.6, 1: 28.3, 2: 31.7}
    words = front.long_front_words(k0_long, short)
    assert words.startswith(f"Their front is {how} than at the end of the 3,600-step schedule")
    assert ", against 36, 28, 32 for the same seeds trained 3,600 steps" in words
    assert " for seeds 0, 1, 2," in words


def test_long_front_words_waits_for_three_runs():
    assert front.long_front_words({0: 12.0, 1: 11.0}, {0: 35.0, 1: 28.0}) == "Their front is compared once three are stored"


@pytest.mark.parametrize("verdict", ["settled", "rising", "falling", "undetermined", None])
def test_long_card_words_one_sentence_per_verdict_or_the_wait(verdict):
    words = front.long_card_words(verdict)
    assert words == (front.SETTLE_CARD[verdict] if verdict else
                     "whether longer training moves the depth-24 exponent waits for the 10,800-step runs")


@pytest.mark.parametrize("how", ["steeper", "flatter", "not distinguishable"])
def test_wide_words_gives_both_intervals_and_how_they_stand(how):
    words = front.wide_words(3, iv(-0.16, -0.34, 0.02), iv(-0.11, -0.46, 0.24), how)
    assert words == ("the exponent at width 128 is -0.11 (-0.46 to +0.24) against -0.16 (-0.34 to +0.02) at width "
                     "64 (95% t intervals over seeds): " + front.WIDTH_CLAUSES[how])


def test_wide_words_below_three_runs_says_how_many():
    assert front.wide_words(2).startswith("fewer than three are stored (2), so there is no interval yet")


# ----------------------------------------------------------------------------- tables

def test_tests_table_is_the_chapters_table_as_it_was_written_by_hand():
    t = front_models.PredictionTest("front", 48, "quarter_half", -0.354, 0.5, 5, 0.17, 1.54, 0.9958)
    assert front.tests_table([t]) == (
        "| depth | window | model | predicted | measured (runs) | measured - predicted | verdict |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n"
        "| 48 | $k \\in [12, 24]$ | front | -0.35 | +0.50 (5) | [+0.17, +1.54] | **refuted** |")


def test_laws_table_marks_a_flat_fit_the_longer_runs_steps_and_a_curve_too_short():
    laws = [front.LawComparison("pre_ln_L24_s0", None, 21, -3.6, "power", 2e5, 35.6, "neither"),
            front.LawComparison("pre_ln_L24_s0", 10800, 21, -11.7, "power", 9.5, 12.1, "power"),
            front.LawComparison("all-minilm-l6", None, 3, NAN, "neither", 1.0, NAN, None)]
    rows = front.laws_table(laws).splitlines()[2:]
    assert rows == ["| `pre_ln_L24_s0` | -3.6 | power | flat | 35.6 | neither |",
                    "| `pre_ln_L24_s0` (10,800 steps) | -11.7 | power | 9.5 | 12.1 | power |",
                    "| `all-minilm-l6` | - | neither (3 blocks past the front: too few) | - | - | - |"]


def test_settling_table_has_a_row_per_step_of_either_schedule():
    table = front.settling_table({3600: iv(-0.16, -0.34, 0.02)}, {3600: iv(-0.40, -0.71, -0.09),
                                                                  10800: iv(-0.07, -0.28, 0.15)})
    assert table.splitlines()[2:] == ["| 3,600 | -0.16 [-0.34, +0.02] | -0.40 [-0.71, -0.09] |",
                                      "| 10,800 | - | -0.07 [-0.28, +0.15] |"]


# ----------------------------------------------------------------------------- the names glued

def _empty_result(**changes) -> front.FrontResult:
    """A book with the predictions written and nothing run yet: every count 0, every test waiting."""
    predicted = tuple(front.PredictedSlopes(m, L, (4, 5, 6), (0.03, 0.02, 0.01),
                                            {"quarter_half": (-0.3, -0.4, -0.2), "half_end": (-0.5, -0.6, -0.4)},
                                            0.3 if L == 24 else None)
                      for m in front_models.MODELS for L in (24, *front_models.PREDICT_DEPTHS))
    fields = dict(final_step=3600, committed=front.CommittedPredictions("what", "2026", "git:0", {}, "x", "r"),
                  k0_mean=31.88, k0_lo=22.74, k0_hi=41.02, source_profiles=(), predicted=predicted,
                  order=front.RunOrder("15cc3ab", "2026-12-02", (), ("pre_ln_L48_s0",)), runs=(), position=None,
                  pred_width=1.5, draft=front.DraftReading((), None), tests=(), laws=(), long_n_runs=0,
                  exponent_short={}, exponent_long={}, settle=None, k0_long={}, k0_short={}, wide=(),
                  wide_64=None, wide_128=None, wide_how=None)
    return front.FrontResult(**(fields | changes))


def _parts(names) -> set:
    """Each glued name with the parts an evidence name is glued as (``_lo``, ``_hi``, ``_se``)."""
    return {n + s for n in names for s in (evidence.KINDS[evidence.declared(n).kind] if n.startswith("ev_") else ("",))}


def _read_by_prose() -> set:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return (set(re.findall(r"\{glue:(?:text|md)\}`([\w-]+)", text))
            | set(re.findall(r"```\{glue:md\} ([\w-]+)", text)))


def _stored_glues() -> set:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return {o["metadata"]["scrapbook"]["name"] for c in cells for o in c.get("outputs", [])
            if "scrapbook" in o.get("metadata", {})}


FIGURES = {"fig-front-predictions", "fig-front-slopes"}


def test_the_result_glues_exactly_what_the_prose_reads():
    assert _parts(glue_names(_empty_result())) == _read_by_prose()


def test_the_stored_chapter_glued_the_results_names_and_its_two_figures():
    assert _stored_glues() == _parts(glue_names(_empty_result())) | FIGURES | {f + "-data" for f in FIGURES}


def test_with_nothing_run_the_evidence_is_nan_and_every_sentence_waits():
    g = _empty_result().glues()
    for name in ("ev_front_position", "ev_long_exp_end", "ev_long_exp_change", "ev_long_settle_margin"):
        assert isinstance(g[name], EvidenceGlue) and math.isnan(g[name].value)
    assert g["ev_front_n_runs"].value == 0.0 and g["ev_long_n_runs"].value == 0.0
    assert g["front_words"].startswith("fewer than three deep runs are stored")
    assert g["long_words"] == "the test waits for three runs (0 stored)"
    assert g["wide_words"].startswith("fewer than three are stored (0)")
    assert g["front_missing"] == "`pre_ln_L48_s0`"
    assert math.isnan(g["front_tests_level"]) and math.isnan(g["front_q48_measured"])
    assert all(isinstance(g[n], Table) for n in g if n.endswith("_table"))


# ----------------------------------------------------------------------------- on the stored runs

def _stored_run(folder, name) -> dict:
    return json.loads((ROOT / "results" / folder / f"{name}.json").read_text(encoding="utf-8"))


def _slope(k, y) -> float:
    return float(np.polyfit(np.log(k), np.log(y), 1)[0])


def _curve(run, step) -> np.ndarray:
    cp = next(c for c in run["checkpoints"] if c["step"] == step)
    return np.mean(np.asarray(cp["measure"]["stream"]["omega_sq_per_sequence"], dtype=float), axis=0)


@pytest.fixture(scope="module")
def result():
    return front.chapter(ROOT)


@pytest.mark.slow
def test_the_result_on_the_stored_runs_agrees_with_their_json(result):
    pred = json.loads((ROOT / "results" / "predictions" / "front.json").read_text(encoding="utf-8"))
    # k0 over the source seeds, from each seed's own k0 in the file
    assert result.k0_mean == pytest.approx(np.mean([p["k0"] for p in pred["profile"].values()]), rel=1e-12)
    # every finished deep run is read, and each one's slope over [L/2, L] and its position u
    deep = sorted(p.stem for p in (ROOT / "results" / "train_deep").glob("pre_ln_L*_s*.json")
                  if _stored_run("train_deep", p.stem)["status"] == "ok")
    assert sorted(r.name for r in result.runs) == deep
    for r in result.runs:
        L = r.L
        y = _curve(_stored_run("train_deep", r.name), 3600)
        k = np.arange(L // 2, L + 1)
        slope = _slope(k, y[k - 1])
        f, lv = (pred["models"][m][str(L)]["slopes"]["half_end"]["mean"] for m in ("front", "level"))
        assert r.slopes["half_end"] == pytest.approx(slope, abs=1e-10)
        assert r.u == pytest.approx((slope - (f + lv) / 2) / ((lv - f) / 2), abs=1e-9)
    assert result.position.mean == pytest.approx(np.mean(result.u), abs=1e-12)
    # the settling test: each long run's exponent (k = 2..24) from step 6,000 to 10,800
    change = []
    for p in sorted((ROOT / "results" / "train_long3x").glob("pre_ln_L24_s*.json")):
        run = _stored_run("train_long3x", p.stem)
        b6, b10 = (_slope(np.arange(2, 25), _curve(run, st)[1:]) for st in (6000, 10800))
        change.append(b10 - b6)
    assert result.long_n_runs == len(change) == 3
    assert result.settle.change.mean == pytest.approx(np.mean(change), abs=1e-10)
    # one curve per finished run of the long sweep at depth 24, per deeper or longer run, per pretrained model
    n_src = sum(_stored_run("train_long", f"pre_ln_L24_s{s}")["status"] == "ok" for s in range(5))
    assert len(result.laws) == n_src + len(deep) + 3 + len(front.PRETRAINED)
    assert sum(result.laws_count.values()) == len(result.laws)
