"""Tests of resdecay_lib.stats.inference: t quantiles and intervals (SciPy), equivalence and margin tests,
Bonferroni families, claims, z checks and Spearman's rank correlation."""
import math

import numpy as np
import pytest

from resdecay_lib.stats import inference as stats

@pytest.mark.parametrize("p, df, want", [(0.975, 1, 12.706), (0.975, 2, 4.303), (0.975, 5, 2.571),
                                         (0.95, 2, 2.920), (0.995, 10, 3.169), (0.975, 1e7, 1.960)])
def test_t_quantile_matches_the_printed_table(p, df, want):
    assert stats.t_quantile(p, df) == pytest.approx(want, abs=6e-4)


def test_t_interval_covers_the_mean_at_its_level():
    rng = np.random.default_rng(0)
    hits = sum(stats.t_interval(rng.normal(1.0, 2.0, 3)).contains(1.0) for _ in range(4000))
    assert abs(hits / 4000 - 0.95) < 3 * math.sqrt(0.95 * 0.05 / 4000)


def test_equivalence_needs_the_whole_interval_inside_the_margin():
    ok, iv = stats.equivalent([1.0, 1.01, 0.99], 1.0, 0.1)
    assert ok and iv.level == pytest.approx(0.9)
    assert not stats.equivalent([1.0, 1.2, 0.8], 1.0, 0.1)[0]      # too noisy to tell
    assert not stats.equivalent([1.5, 1.51, 1.49], 1.0, 0.1)[0]    # precisely elsewhere


def test_spearman_averages_ties_and_rejects_constants():
    assert stats.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert stats.spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(0.9486832980505138)
    with pytest.raises(ValueError, match="constant"):
        stats.spearman([1, 1, 1], [1, 2, 3])


def test_stats_reject_bad_input_naming_it():
    with pytest.raises(ValueError, match="at least 3"):
        stats.t_interval([1.0, 2.0])
    with pytest.raises(ValueError, match="df"):
        stats.t_quantile(0.9, 0)
    with pytest.raises(ValueError, match="margin"):
        stats.equivalent([1, 2, 3], 0.0, -1)
    with pytest.raises(ValueError, match="m must"):
        stats.bonferroni(0.05, 0)


#: t quantiles of the library's own incomplete-beta bisection (git:51d9c6e, before SciPy), to
#: the last digit: the levels the book reads (95 % and Bonferroni-corrected) at small df
OLD_T_QUANTILES = [(0.975, 2, 4.302652729749752), (0.975, 4, 2.776445105198036), (0.995, 2, 9.924843200915348),
                   (1 - 0.05 / 36, 2, 18.934114592724654), (0.95, 17, 1.7396067260747259),
                   (0.975, 56, 2.003240718847337), (0.9995, 1000, 3.30028264842349)]


@pytest.mark.parametrize("p, df, old", OLD_T_QUANTILES)
def test_scipys_t_quantile_agrees_with_the_former_bisection_to_1e_10(p, df, old):
    assert abs(stats.t_quantile(p, df) - old) < 1e-10


def test_t_quantile_inverts_t_cdf_and_is_odd():
    for p, df in [(0.975, 3), (0.6, 1.5), (0.999, 40)]:
        q = stats.t_quantile(p, df)
        assert stats.t_cdf(q, df) == pytest.approx(p, abs=1e-12)
        assert stats.t_quantile(1 - p, df) == -q


def test_a_lower_quantile_far_in_the_tail_keeps_its_sign():
    assert stats.t_quantile(1e-300, 3.5) < 0 < stats.t_quantile(1 - 1e-16, 3.5)


def test_spearman_gives_the_former_implementations_value_to_the_last_bit():
    # average ranks of ties (scipy.stats.rankdata), then the same Pearson sums as before
    assert stats.spearman([3, 1, 4, 1, 5, 9, 2, 6], [2, 7, 1, 8, 2, 8, 1, 8]) == 0.19885368120992464
    assert stats.spearman([1, 2, 2, 3], [1, 2, 3, 4]) == 0.9486832980505138


def test_ranks_average_the_ties():
    assert stats._ranks(np.array([10.0, 20.0, 10.0, 5.0])).tolist() == [2.5, 4.0, 2.5, 1.0]


def test_z_check_is_one_bonferroni_family_over_every_statistic():
    from resdecay_lib.maths import gaussian
    zc = stats.z_check([np.array([1.0, -3.2]), np.array([0.5])], alpha=0.01)
    assert (zc.n, zc.max_abs) == (3, 3.2) and zc.z_crit == gaussian.bonferroni_z_crit(3, 0.01)
    assert zc.passed == (3.2 <= zc.z_crit)
    assert not stats.z_check(np.array([5.0]), alpha=0.01).passed
    with pytest.raises(ValueError, match="finite"):
        stats.z_check([np.array([1.0, np.nan])])
    with pytest.raises(ValueError, match="at least one"):
        stats.z_check([])


def test_margin_verdict_separates_equivalent_not_equivalent_and_undetermined():
    assert stats.margin_verdict(-0.98, -0.86, -0.95, 0.1) == "equivalent"
    assert stats.margin_verdict(-0.99, -0.84, -0.95, 0.1) == "undetermined"   # 0.01 past the margin
    assert stats.margin_verdict(-0.6, -0.5, -0.95, 0.1) == "not equivalent"
    assert stats.margin_verdict(-0.95, -0.9, -1.0, 0.0) == "not equivalent"   # margin 0: a difference test
    with pytest.raises(ValueError, match="lo <= hi"):
        stats.margin_verdict(1.0, 0.0, 0.5, 0.1)
    with pytest.raises(ValueError, match="ref"):
        stats.margin_verdict(0.0, 1.0, float("nan"), 0.1)


def test_family_levels_are_bonferroni_for_tost_and_difference_tests():
    f = stats.Family(18)
    assert f.per_test == pytest.approx(0.05 / 18)
    assert f.tost_level == pytest.approx(1 - 0.1 / 18) and f.diff_level == pytest.approx(1 - 0.05 / 18)
    with pytest.raises(ValueError, match="m must"):
        stats.Family(0)
    with pytest.raises(ValueError, match="alpha"):
        stats.Family(3, alpha=0.6)


class _Fixed:
    """An estimate whose interval at any level is [estimate - w(level), estimate + w(level)]."""

    def __init__(self, estimate, width):
        self.estimate, self.width = estimate, width

    def interval(self, level):
        w = self.width * (1 + (level - 0.95) * 20)     # wider at higher levels
        return self.estimate - w, self.estimate + w


def test_run_family_reads_each_claim_at_its_corrected_level():
    claims = [stats.Hypothesis("close", "equivalent", _Fixed(-0.95, 0.02), -1.0, margin=0.1),
              stats.Hypothesis("far", "equivalent", _Fixed(-0.5, 0.02), -1.0, margin=0.1),
              stats.Hypothesis("straddles", "equivalent", _Fixed(-0.9, 0.05), -1.0, margin=0.1),
              stats.Hypothesis("differs", "differs", _Fixed(-0.9, 0.02), -1.0),
              stats.Hypothesis("above", "above", _Fixed(0.0, 0.01), _Fixed(-1.0, 0.05)),
              stats.Hypothesis("not below", "below", _Fixed(-0.99, 0.05), _Fixed(-1.0, 0.05))]
    res = stats.run_family(claims)
    fam = stats.Family(6)
    assert [r.level for r in res] == [fam.tost_level] * 3 + [fam.diff_level] * 3
    assert [r.word for r in res] == ["equivalent", "not equivalent", "undetermined", "shown", "shown", "not shown"]
    assert [r.shown for r in res] == [True, False, False, True, True, False]
    table = stats.family_markdown(res)
    assert table.count("\n") == 7 and "**undetermined**" in table


def test_replicates_give_t_intervals_at_any_level_and_claims_check_their_kind():
    r = stats.Replicates([1.0, 2.0, 3.0])
    assert r.estimate == 2.0 and r.interval(0.95) == pytest.approx((-0.4841, 4.4841), abs=1e-4)
    with pytest.raises(ValueError, match="kind"):
        stats.Hypothesis("x", "similar", r, 1.0)
    with pytest.raises(ValueError, match="margin"):
        stats.Hypothesis("x", "equivalent", r, 1.0)


def test_above_a_number_is_read_from_the_difference_interval():
    res = stats.run_family([stats.Hypothesis("gain", "above", stats.Replicates([1.9, 2.0, 2.1]), 0.0),
                            stats.Hypothesis("no gain", "above", stats.Replicates([-1.0, 0.5, 2.0]), 0.0)])
    assert [r.shown for r in res] == [True, False] and res[0].ref_text == "0.000"


def test_onset_reads_nan_ends_as_undecided_and_sorts_the_depths():
    from resdecay_lib.stats.inference import ONSET_READINGS, onset
    o = onset([16, 4, 8], [0.02, -0.02, 0.03], [0.05, 0.0, 0.06], 0.01)
    assert (o.depth, o.reading, o.undecided) == (8, ONSET_READINGS[0], ())
    nan = float("nan")
    o = onset([4, 8], [-0.03, nan], [0.0, nan], 0.01)
    assert o.depth is None and o.reading == ONSET_READINGS[2] and o.undecided == (8,)
    assert onset([4, 8], [-0.03, -0.02], [0.0, 0.005], 0.01).reading == ONSET_READINGS[1]
    with pytest.raises(ValueError, match="distinct positive ints"):
        onset([4, 4], [0.0, 0.0], [0.1, 0.1], 0.01)
    with pytest.raises(ValueError, match="one end per depth"):
        onset([4, 8], [0.0], [0.1, 0.1], 0.01)
    with pytest.raises(ValueError, match="margin"):
        onset([4], [0.0], [0.1], 0.0)


def test_power_above_matches_a_simulation_of_the_t_intervals_lower_end():
    from scipy.stats import t
    rng = np.random.default_rng(1)
    n, effect, sd, level, thr = 3, 0.06, 0.025, 0.99, 0.01
    x = rng.normal(effect, sd, (200_000, n))
    lo = x.mean(1) - t.ppf((1 + level) / 2, n - 1) * x.std(1, ddof=1) / np.sqrt(n)
    sim = (lo > thr).mean()
    assert stats.power_above(effect, sd, n, level, thr) == pytest.approx(sim, abs=4 * np.sqrt(sim * (1 - sim) / 200_000))
    assert stats.power_above(thr, sd, n, level, thr) < (1 - level) / 2 + 1e-12    # no effect: at most the test's size
