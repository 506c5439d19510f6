"""Power-law fits with bootstrap intervals (resdecay_lib.stats.fit)."""
import numpy as np
import pytest

from resdecay_lib.stats.fit import loglog_slope, power_law


def noisy(p, S=60, K=12, sd=0.1, seed=0):
    k = np.arange(1, K + 1)
    rng = np.random.default_rng(seed)
    return k, 2.0 * k ** p * np.exp(sd * rng.standard_normal((S, K)))


def test_exact_power_law_is_recovered():
    k = np.arange(2, 30)
    f = power_law(k, 0.7 * k ** -1.3)
    assert f.exponent == pytest.approx(-1.3, abs=1e-12)
    assert f.prefactor == pytest.approx(0.7, rel=1e-12)
    assert f.lo is None and f.hi is None and f.n_boot == 0 and not f.has_interval   # no interval, not NaN


def test_interval_covers_the_true_exponent_at_about_the_stated_rate():
    hits = 0
    for s in range(40):
        k, y = noisy(-0.5, seed=s)
        f = power_law(k, y, n_boot=300)
        hits += f.lo <= -0.5 <= f.hi
    # binomial(40, 0.95): below 33 has probability < 0.5%
    assert hits >= 33


def test_bootstrap_is_reproducible_for_a_seed():
    k, y = noisy(-1.0)
    assert power_law(k, y, seed=3) == power_law(k, y, seed=3)
    assert power_law(k, y, seed=3).lo != power_law(k, y, seed=4).lo


def test_fit_range_is_respected():
    k = np.arange(1, 21)
    y = np.where(k < 5, 1.0, k ** -1.0)
    f = power_law(k, y, k_min=5, k_max=20)
    assert (f.k_min, f.k_max, f.n_points) == (5, 20, 16)
    assert f.exponent == pytest.approx(-1.0)


def test_groups_give_a_wider_interval_when_groups_differ():
    k = np.arange(1, 11)
    rng = np.random.default_rng(0)
    slopes = np.repeat(-1 + 0.2 * rng.standard_normal(5), 20)  # 5 seeds, 20 rows each
    y = k[None] ** slopes[:, None] * np.exp(0.01 * rng.standard_normal((100, 10)))
    groups = np.repeat(np.arange(5), 20)
    flat = power_law(k, y)
    grouped = power_law(k, y, groups=groups)
    assert grouped.n_groups == 5
    assert grouped.hi - grouped.lo > 2 * (flat.hi - flat.lo)


def test_loglog_slope():
    k = np.arange(1, 5)
    assert loglog_slope(k, k ** 2.0)[0] == pytest.approx(2.0)


@pytest.mark.parametrize("kw, match", [
    (dict(k_min=5, k_max=3), "k_min must be below k_max"),
    (dict(k_min=1, k_max=2), "at least 3"),
    (dict(k_min=50, k_max=60), "at least 3"),
    (dict(n_boot=0), "n_boot"),
    (dict(level=1.5), "level"),
    (dict(groups=np.zeros(3)), "groups"),
])
def test_bad_ranges_and_options_raise(kw, match):
    k, y = noisy(-1.0)
    with pytest.raises(ValueError, match=match):
        power_law(k, y, **kw)


def test_non_positive_curve_and_bad_k_raise():
    k = np.arange(1, 6)
    with pytest.raises(ValueError, match="positive"):
        power_law(k, np.array([1.0, 0.5, 0.0, 0.2, 0.1]))
    with pytest.raises(ValueError, match="positive and finite"):
        power_law(np.arange(0, 5), np.ones(5))
    with pytest.raises(ValueError, match="columns"):
        power_law(k, np.ones((3, 4)))


def test_interval_at_another_level_reads_the_same_replicates():
    k = np.arange(1, 11)
    rng = np.random.default_rng(1)
    y = k ** -1.0 * np.exp(0.1 * rng.standard_normal((30, 10)))
    f95 = power_law(k, y, n_boot=2000, level=0.95, seed=3)
    f99 = power_law(k, y, n_boot=2000, level=0.99, seed=3)
    assert f95.interval(0.95) == (f95.lo, f95.hi)
    assert f95.interval(0.99) == (f99.lo, f99.hi)       # same seed: same replicates
    lo, hi = f95.interval(0.999)
    assert lo < f99.lo and f99.hi < hi
    with pytest.raises(ValueError, match="level"):
        f95.interval(1.0)
    with pytest.raises(ValueError, match="no bootstrap replicates"):
        power_law(k, y.mean(0)).interval(0.95)


def test_dropped_replicates_are_counted():
    k = np.arange(1, 6)
    y = np.tile(k ** -1.0, (6, 1))
    y[0] = -3 * k ** -1.0        # a row that makes some resampled means negative
    f = power_law(k, y, n_boot=500, seed=0)
    assert 0 < f.n_dropped < 500 and f.slopes.size == 500 - f.n_dropped
    assert power_law(k, np.abs(y), n_boot=500).n_dropped == 0
