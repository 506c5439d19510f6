"""Tests of resdecay_lib.analysis.depth_analysis: the cost of depth in the trained networks."""
import dataclasses
import math

import numpy as np
import pytest

from resdecay_lib.analysis import depth_analysis, training_analysis
from sweep_fixtures import stored_run, stored_sweep


def test_ablation_trend_is_a_rank_correlation_per_seed():
    sw = stored_sweep({("pre_ln", 6): [2.0, 2.0, 2.0]})
    per, iv = depth_analysis.ablation_trend(sw, "pre_ln", 6)
    assert np.allclose(per, -1.0) and iv.n == 3


def test_loss_at_flops_interpolates_in_log_step_and_stops_at_the_end():
    r = stored_run("x", "pre_ln", 2, 0, 1.0, curve=[(0, 4.0), (10, 3.0), (100, 2.0), (1000, 1.0)], flops=2.0)
    assert depth_analysis.loss_at_flops(r, 2.0 * 100) == pytest.approx(2.0)
    assert depth_analysis.loss_at_flops(r, 2.0 * math.sqrt(10 * 100)) == pytest.approx(2.5)
    assert math.isnan(depth_analysis.loss_at_flops(r, 2.0 * 2000))


def test_ladder_steps_pair_the_seeds():
    steps = depth_analysis.ladder_steps({4: [2.0, 2.1, 2.2], 8: [1.9, 2.0, 2.1]})
    (a, b, iv), = steps
    assert (a, b) == (4, 8) and iv.mean == pytest.approx(-0.1) and iv.se == pytest.approx(0.0, abs=1e-12)


def test_depth_law_recovers_alpha():
    d = np.array([2, 4, 8, 16, 24])
    f = depth_analysis.depth_law(d, 0.8 * d ** -1.0 + 1.5)
    assert f["alpha"] == pytest.approx(1.0, rel=0.01) and f["L_inf"] == pytest.approx(1.5, abs=0.01)
    assert not f["at_edge"]


def test_depth_ladder_stops_paying_only_inside_the_ladder():
    # each seed gains 0.1 from 4 to 8 and loses 0.05 from 8 to 16: 8 is best and 16 worse
    stop = depth_analysis.depth_ladder({4: [2.0, 2.1, 2.2], 8: [1.9, 2.01, 2.1], 16: [1.95, 2.06, 2.16]})
    assert (stop.best, stop.not_worse, stop.reading) == (8, [8], "stops paying")
    assert (stop.stops, stop.lo, stop.hi) == (8.0, 8.0, 8.0)
    assert stop.level == pytest.approx(1 - 0.05 / 2) and len(stop.steps) == 2
    # the top is best: depth keeps paying, and the reading is infinite above
    pays = depth_analysis.depth_ladder({4: [2.0, 2.1, 2.2], 8: [1.9, 2.01, 2.1]})
    assert pays.reading == "keeps paying" and math.isinf(pays.stops) and math.isinf(pays.hi) and pays.lo == 8.0
    # a noisy top rung is not worse than the best: the set reaches the top, and the ladder
    # locates nothing (not shown to stop is not shown to keep paying)
    noisy = depth_analysis.depth_ladder({4: [2.0, 2.1, 2.2], 8: [1.9, 2.0, 2.1], 16: [1.7, 2.3, 2.0]})
    assert noisy.best == 8 and 16 in noisy.not_worse and noisy.reading == "not located"
    assert (noisy.stops, noisy.lo, noisy.hi) == (8.0, 8.0, math.inf)
    # the top is best but a lower rung is within the noise of it: not located either
    flat = depth_analysis.depth_ladder({4: [2.3, 2.4, 2.5], 8: [1.9, 2.0, 2.1], 16: [1.85, 2.0, 2.02]})
    assert flat.best == 16 and flat.not_worse == [8, 16] and flat.reading == "not located"
    assert (flat.stops, flat.lo, flat.hi) == (16.0, 8.0, math.inf)
    with pytest.raises(ValueError, match="at least 2 depths"):
        depth_analysis.depth_ladder({4: [1.0, 1.0, 1.0]})


def test_paired_gap_pairs_seeds_at_the_deepest_shared_depth():
    sw = stored_sweep({("pre_ln", 4): [2.0, 2.1, 2.2], ("pre_ln", 8): [1.9, 2.0, 2.1],
                 ("peri_ln", 4): [2.1, 2.2, 2.3], ("peri_ln", 8): [2.2, 2.25, 2.4]})
    L, iv = depth_analysis.paired_gap(sw, "peri_ln")
    assert L == 8 and iv.mean == pytest.approx((0.3 + 0.25 + 0.3) / 3) and iv.n == 3
    # one excluded Pre-LN seed at depth 8 leaves two pairs there: depth 4 is used
    L, iv = depth_analysis.paired_gap(sw, "peri_ln", exclude={"pre_ln_L8_s1"})
    assert L == 4 and iv.mean == pytest.approx(0.1)
    assert depth_analysis.paired_gap(sw, "peri_ln", exclude={"pre_ln_L8_s1", "peri_ln_L4_s0"}) is None


def test_depth_law_over_seeds_recovers_each_seeds_alpha_and_summarises_it():
    depths = [2, 4, 8, 16, 24]
    alphas = [0.8, 1.0, 1.2]
    losses = {d: [0.5 * d ** -a + 1.6 for a in alphas] for d in depths}
    got = depth_analysis.depth_law_over_seeds(losses)
    assert [f["alpha"] for f in got["per_seed"]] == pytest.approx(alphas, abs=0.01)
    assert got["alpha"].mean == pytest.approx(1.0, abs=0.01) and got["alpha"].n == 3
    assert got["n_edge"] == 0 and got["L_inf"] == pytest.approx(1.6, abs=1e-3)
    with pytest.raises(ValueError, match="3 depths"):
        depth_analysis.depth_law_over_seeds({2: [1, 2, 3], 4: [1, 2, 3]})
    with pytest.raises(training_analysis.TooFewSeeds):
        depth_analysis.depth_law_over_seeds({d: [1.0, 2.0] for d in depths})


def test_ablation_halves_leaves_block_one_out_of_the_earlier_half():
    d = np.array([[5.0, 1.0, 1.0, 0.5, 0.5, 0.5], [7.0, 1.0, 1.0, 0.5, 0.5, 0.5]])
    first, ratio = depth_analysis.ablation_halves(d)
    assert first == 6.0 and ratio == pytest.approx(0.5)      # blocks 4..6 over blocks 2..3
    with pytest.raises(ValueError, match="at least 4 blocks"):
        depth_analysis.ablation_halves(d[:, :3])


# ----------------------------------------------------------------------------- where depth starts to cost

def test_gain_per_doubling_divides_each_rungs_paired_gain_by_its_doublings():
    losses = {8: [2.0, 2.1, 2.2], 16: [1.9, 2.0, 2.05], 64: [1.8, 1.9, 1.85]}
    (a, b, first), (c, d, second) = depth_analysis.gain_per_doubling(losses, level=0.9)
    assert (a, b, c, d) == (8, 16, 16, 64)
    assert first.mean == pytest.approx(np.mean([0.1, 0.1, 0.15])) and first.level == 0.9
    assert second.mean == pytest.approx(np.mean([0.1, 0.1, 0.2]) / 2)      # 16 -> 64 is two doublings
    with pytest.raises(ValueError, match="same seeds"):
        depth_analysis.gain_per_doubling({8: [1.0, 2.0, 3.0], 16: [1.0, 2.0, 3.0, 4.0]})


def _runs(cells):
    return stored_sweep(cells).runs


def test_gaps_by_depth_pairs_pre_ln_with_the_fix_seed_by_seed_at_each_shared_depth():
    runs = _runs({("pre_ln", 4): [2.0, 2.1, 2.2], ("resi_dual", 4): [1.9, 2.1, 2.0],
                  ("pre_ln", 8): [1.8, 1.9, 2.0], ("resi_dual", 8): [1.7, 1.75, 1.8], ("pre_ln", 2): [3.0, 3.0, 3.0]})
    four, eight = depth_analysis.gaps_by_depth(runs)
    assert (four.depth, eight.depth) == (4, 8) and four.seeds == (0, 1, 2)
    assert four.interval.mean == pytest.approx(np.mean([0.1, 0.0, 0.2]))      # Pre-LN minus ResiDual
    assert eight.interval.mean == pytest.approx(np.mean([0.1, 0.15, 0.2])) and eight.interval.n == 3


def test_a_depth_with_fewer_than_three_paired_seeds_has_no_interval():
    runs = _runs({("pre_ln", 4): [2.0, 2.1, 2.2], ("resi_dual", 4): [1.9, 2.1, 2.0]})
    runs[("resi_dual", 4, 2)] = dataclasses.replace(runs[("resi_dual", 4, 2)], status="non_finite", final=None,
                                                   failed_step=50)
    (gap,) = depth_analysis.gaps_by_depth(runs)
    assert gap.seeds == (0, 1) and gap.interval is None


def test_gaps_by_depth_refuses_runs_it_cannot_pair():
    with pytest.raises(ValueError, match="no depth with both resi_dual and pre_ln"):
        depth_analysis.gaps_by_depth(_runs({("pre_ln", 4): [2.0, 2.1, 2.2]}))
    with pytest.raises(ValueError, match="two placements"):
        depth_analysis.gaps_by_depth(_runs({("pre_ln", 4): [2.0, 2.1, 2.2]}), arch="pre_ln")
    with pytest.raises(ValueError, match=r"keyed by \(placement, depth, seed\)"):
        depth_analysis.gaps_by_depth({"pre_ln_L4_s0": {}})


def _gap(depth, lo, hi):
    iv = training_analysis.stats.TInterval((lo + hi) / 2, lo, hi, 0.01, 4.3, 3, 0.95)
    return depth_analysis.DepthGap(depth, (0, 1, 2), iv)


def test_the_onset_is_the_first_depth_from_which_every_deeper_gap_exceeds_the_margin():
    gaps = [_gap(4, -0.01, 0.005), _gap(8, 0.02, 0.05), _gap(16, 0.03, 0.09), _gap(24, 0.02, 0.12)]
    onset = depth_analysis.cost_onset(gaps, margin=0.01)
    assert (onset.depth, onset.reading, onset.undecided) == (8, "costs from this depth on", ())
    # a cost that comes and goes does not start at the shallow depth
    gaps = [_gap(4, 0.02, 0.05), _gap(8, -0.01, 0.03), _gap(16, 0.03, 0.09)]
    assert depth_analysis.cost_onset(gaps, margin=0.01).depth == 16


def test_no_onset_when_every_gap_is_within_the_margin_and_cannot_tell_otherwise():
    within = depth_analysis.cost_onset([_gap(4, -0.02, 0.005), _gap(24, -0.03, 0.0)], margin=0.01)
    assert within.depth is None and within.reading == "costs nothing up to the deepest depth"
    unsure = depth_analysis.cost_onset([_gap(4, -0.02, 0.005), _gap(24, -0.03, 0.08)], margin=0.01)
    assert unsure.depth is None and unsure.reading == "cannot tell" and unsure.undecided == (24,)
    missing = depth_analysis.cost_onset([_gap(4, -0.02, 0.005), depth_analysis.DepthGap(24, (0,), None)], 0.01)
    assert missing.reading == "cannot tell" and missing.undecided == (24,)
    with pytest.raises(ValueError, match="margin"):
        depth_analysis.cost_onset([_gap(4, 0.0, 0.1)], margin=0.0)
    with pytest.raises(TypeError, match="gaps must be"):
        depth_analysis.cost_onset([(4, 0.0, 0.1)], margin=0.01)


def test_gap_growth_is_the_per_seed_slope_of_the_gap_on_log2_depth():
    # seed s: gap 0.01 at L = 4, widening by 0.02 * (s + 1) per doubling
    cells = {}
    for L, x in ((4, 0), (8, 1), (16, 2)):
        cells[("resi_dual", L)] = [2.0, 2.0, 2.0]
        cells[("pre_ln", L)] = [2.0 + 0.01 + 0.02 * (s + 1) * x for s in range(3)]
    iv = depth_analysis.gap_growth(_runs(cells), [4, 8, 16], level=0.9)
    assert iv.n == 3 and iv.mean == pytest.approx(0.04) and iv.lo < 0.04 < iv.hi


def test_gap_growth_needs_three_seeds_with_every_depth():
    cells = {("resi_dual", 4): [2.0, 2.0, 2.0], ("pre_ln", 4): [2.1, 2.1, 2.1],
             ("resi_dual", 8): [2.0, 2.0], ("pre_ln", 8): [2.1, 2.1, 2.1]}
    assert depth_analysis.gap_growth(_runs(cells), [4, 8]) is None
    with pytest.raises(ValueError, match="at least two distinct depths"):
        depth_analysis.gap_growth(_runs(cells), [4, 4])
