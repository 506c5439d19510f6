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


@pytest.mark.parametrize("verdict", ["settled", "rising", "falling", "undetermined"])
def test_long_card_words_gives_the_verdict_within_runs_then_end_against_end(verdict):
    words = front.long_card_words(settling(verdict))
    assert words == (front.SETTLE_CARD[verdict] + "; end against end, its end is not distinguishable from the "
                     "3,600-step schedule's (+0.10, -0.11 to +0.30, Welch 95%), so the runs do not show that longer "
                     "training ends further from the theorem's decay, or closer to it")


def test_long_card_words_reads_an_end_interval_wholly_above_or_below_zero_and_waits_without_runs():
    above = training_analysis.Settling((6000, 10800), iv(0.178, 0.123, 0.233), 0.144, "rising", 0.05, 0.30, 0.17, 0.05)
    below = training_analysis.Settling((6000, 10800), iv(-0.178, -0.233, -0.123), 0.144, "falling", -0.30, -0.05,
                                       -0.17, 0.05)
    assert front.long_card_words(above).endswith("(+0.17, +0.05 to +0.30, Welch 95%): longer training ends further "
                                                 "from the theorem's decay")
    assert front.long_card_words(below).endswith("longer training ends closer to the theorem's decay")
    assert front.long_card_words(None) == "whether longer training moves the depth-24 exponent waits for the 10,800-step runs"


def test_the_rising_clause_claims_no_more_than_the_rule_shows():
    # "rising" needs only a 95% interval that excludes 0, not a change beyond the margin
    assert "more than" not in front.SETTLE_CLAUSES["rising"] and "excludes 0" in front.SETTLE_CLAUSES["rising"]
    assert "further from the theorem's decay" not in front.SETTLE_CARD["rising"]


def _margin_reading(verdict, lo=0.123, hi=0.233):
    return front_models.MarginSettling((6000, 10800), iv((lo + hi) / 2, lo, hi), iv((lo + hi) / 2, lo - 0.03, hi + 0.03),
                                       0.1, verdict)


@pytest.mark.parametrize("verdict", front_models.MARGIN_VERDICTS)
def test_settle_margin_words_gives_the_interval_and_its_place_against_the_margin(verdict):
    words = front.settle_margin_words(_margin_reading(verdict))
    assert words == "the same 90% interval of the change (+0.123 to +0.233) " + front.MARGIN_CLAUSES[verdict]


def test_settle_margin_words_waits_without_runs():
    assert front.settle_margin_words(None) == "the reading at the book's exponent margin waits for three runs"


def test_schedule_words_names_the_warm_up_the_cosine_and_the_rates_fall_over_the_window():
    s = front_models.schedule({"steps": 10800, "warmup": 540, "min_lr_frac": 0.1})
    assert front.schedule_words(s, (6000, 10800)) == (
        "a linear warm-up of 540 steps, then a cosine from the peak rate to 0.1 of it at step 10,800: no constant "
        "part. Between steps 6,000 and 10,800 the rate falls from 0.50 to 0.10 of its peak")
    held = front_models.schedule({"steps": 100, "warmup": 10, "min_lr_frac": 1.0})
    assert "a part of 89 steps past the warm-up at which the rate does not fall" in front.schedule_words(held, (20, 99))
    assert front.schedule_words(None, (6000, 10800)) == "the schedule is read once a run is stored"


def test_power_words_says_the_runs_cannot_decide_and_how_many_would_or_that_they_suffice():
    assert front.power_words(8, 34, 12) == (
        "these 8 runs cannot decide: telling the two predictions apart needs about 34 runs, and even if the true "
        "mean were the observed one, an interval excluding 0 needs about 12")
    assert front.power_words(40, 34, 12) == "the 40 runs stored are enough to tell the two predictions apart"


def _scaling(lo, hi, ratios, reading):
    slope = TInterval((lo + hi) / 2, lo, hi, 0.1, 2.2, 13, 0.95)
    return front_models.DepthScaling({L: iv(r, r - 0.1, r + 0.1) for L, r in zip((24, 48, 96), ratios)}, slope,
                                     reading)


def test_scaling_words_reads_the_slope_and_where_the_depth_stands_against_the_front():
    words = front.scaling_words(_scaling(0.61, 1.05, (1.34, 1.19, 1.08), "proportional"))
    assert words.startswith("the least-squares slope of $\\log k_0$ on $\\log L$ over the 13 runs is 0.83 (0.61 to "
                            "1.05, 95% $t$ interval): its interval contains 1 and excludes 0")
    assert words.endswith("between 1.08 and 1.34 at the depths trained, so on average even the last block lies "
                          "before $k_0$: \"past the front\" is never reached at these depths")
    share = front.scaling_words(_scaling(0.61, 1.05, (0.5, 0.6, 0.55), "proportional"))
    assert share.endswith("between 0.50 and 0.60: a deeper network's front keeps the same share of its blocks")
    assert front.scaling_words(_scaling(-0.2, 0.3, (1, 1, 1), "not shown to grow")).endswith(
        front.SCALING_CLAUSES["not shown to grow"])
    assert front.scaling_words(None).startswith("the front's growth with depth is read once")


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


def test_scaling_table_gives_each_depths_runs_k0_and_k0_over_L():
    k0 = {24: (36.0, 28.0, 32.0), 96: (118.0, 111.0)}
    nan = float("nan")
    sc = front_models.DepthScaling({24: iv(1.33, 1.18, 1.49), 96: TInterval(1.19, nan, nan, nan, nan, 2, 0.95)},
                                   iv(0.83, 0.61, 1.05), "proportional")
    assert front.scaling_table(k0, sc).splitlines()[2:] == ["| 24 | 3 | 36, 28, 32 | 1.33 [1.18, 1.49] |",
                                                            "| 96 | 2 | 118, 111 | 1.19 |"]


def test_sensitivity_and_source_tables_have_a_row_per_run():
    run = front.DeepRun("pre_ln_L48_s0", 48, np.ones(48), {"quarter_half": 0.59, "half_end": 1.04}, 4.79, "above",
                        None, 1.621, True)
    assert front.sensitivity_table([run], [4.53], [1.804]).splitlines()[2:] == [
        "| `pre_ln_L48_s0` | 48 | +4.79 | 1.8 | +4.53 |"]
    src = {"pre_ln_L24_s1": {"quarter_half": 0.37}, "pre_ln_L24_s0": {"quarter_half": 0.25}}
    assert front.source_table(src, [-0.195, -0.234]).splitlines()[2:] == [
        "| `pre_ln_L24_s0` | -0.20 | +0.25 |", "| `pre_ln_L24_s1` | -0.23 | +0.37 |"]


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
                  wide_64=None, wide_128=None, wide_how=None, source_slopes={}, k0_by_depth={}, predictions={},
                  settle_exp=None, long_schedule=None)
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
    assert math.isnan(g["front_runs_needed_sep"]) and g["front_power_words"].startswith("the power computation waits")
    assert g["front_scaling_words"].startswith("the front's growth with depth is read once")
    assert g["front_settle_margin_words"].endswith("waits for three runs")
    assert g["front_schedule_words"] == "the schedule is read once a run is stored"
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
    # declared after the deep runs were seen: each deep run's slope over [L/4, L/2] and its last block
    # against the rest of [L/2, L - 1], from its JSON
    for r, jump in zip(result.runs, result.jumps):
        y = _curve(_stored_run("train_deep", r.name), 3600)
        k = np.arange(math.ceil(r.L / 4), r.L // 2 + 1)
        assert r.slopes["quarter_half"] == pytest.approx(_slope(k, y[k - 1]), abs=1e-10)
        assert jump == pytest.approx(y[-1] / y[r.L // 2 - 1:r.L - 1].mean(), rel=1e-12)
    assert result.early_signs.n_positive == sum(r.slopes["quarter_half"] > 0 for r in result.runs)
    # every Pre-LN run at depths 24, 48, 96 enters the slope of log k0 on log L
    assert result.scaling.slope.n == n_src + len(deep)
    assert result.long_schedule == front_models.schedule(_stored_run("train_long3x", "pre_ln_L24_s0")["config"])
