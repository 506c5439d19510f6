"""The Gaussian-stream simulator (resdecay_lib.maths.gaussian)."""
import numpy as np
import pytest

from resdecay_lib.maths.gaussian import layer_norm, simulate
from resdecay_lib.maths.theory import omega_sq


def test_simulate_is_reproducible_for_a_seed_and_differs_across_seeds():
    a, b, c = simulate(8, 16, 50, seed=3), simulate(8, 16, 50, seed=3), simulate(8, 16, 50, seed=4)
    np.testing.assert_array_equal(a.mean_sq_change, b.mean_sq_change)
    assert not np.array_equal(a.mean_sq_change, c.mean_sq_change)


def test_simulate_reports_k_from_2_to_depth_in_the_seed_convention():
    r = simulate(6, 8, 10)
    np.testing.assert_array_equal(r.k, [2, 3, 4, 5, 6])
    assert r.mean_sq_change.shape == r.stderr.shape == (5,)


def test_simulate_agrees_with_theorem_at_large_width_within_standard_errors():
    r = simulate(16, 2048, 200, seed=1)
    theory = np.array([float(omega_sq(int(k))) for k in r.k])
    # finite-d bias is O(1/d) ~ 5e-4 relative here, far below 5 standard errors
    assert np.all(np.abs(r.mean_sq_change - theory) < 5 * r.stderr)


def test_layer_norm_centres_and_scales_like_torch_without_affine():
    x = np.random.default_rng(0).standard_normal((3, 7)) * 4 + 2
    y = layer_norm(x)
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose((y ** 2).mean(-1), x.var(-1) / (x.var(-1) + 1e-5))


@pytest.mark.parametrize("kwargs, name", [
    (dict(depth=1, d=4, n_samples=4), "depth"),
    (dict(depth=4, d=1, n_samples=4), "d"),
    (dict(depth=4, d=4, n_samples=1), "n_samples"),
    (dict(depth=4.0, d=4, n_samples=4), "depth"),
    (dict(depth=4, d="8", n_samples=4), "d"),
])
def test_simulate_rejects_bad_arguments_naming_the_parameter(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=f"^{name} must be an integer (>= |in \\[)"):
        simulate(**kwargs)


# ---- Chapters 3-5: E|.|, heteroscedastic blocks, (r, c) steps, feedback streams, z_crit ----
from resdecay_lib.maths import gaussian  # noqa: E402
from resdecay_lib.maths import theory  # noqa: E402


def test_sigma_of_ones_reproduces_the_default_call_bit_for_bit():
    a = simulate(7, 12, 30, seed=5)
    b = simulate(7, 12, 30, seed=5, sigma=np.ones(7))
    np.testing.assert_array_equal(a.mean_sq_change, b.mean_sq_change)
    np.testing.assert_array_equal(a.mean_abs_change, b.mean_abs_change)


def test_common_scale_of_sigma_leaves_the_change_unchanged_up_to_eps():
    a = simulate(6, 32, 20, seed=2)
    b = simulate(6, 32, 20, seed=2, sigma=np.full(6, 3.0))
    np.testing.assert_allclose(a.mean_sq_change, b.mean_sq_change, rtol=1e-4)


@pytest.mark.parametrize("sigma, exc", [
    (np.ones(5), ValueError), (np.ones((6, 1)), ValueError), ([1, 1, 1, 0, 1, 1], ValueError),
    ([1, 1, 1, np.inf, 1, 1], ValueError), ([1, 1, 1, -1, 1, 1], ValueError), ("abcdef", TypeError),
])
def test_simulate_rejects_bad_sigma_naming_it_and_the_expected_length(sigma, exc):
    with pytest.raises(exc, match="^sigma must") as err:
        simulate(6, 8, 4, sigma=sigma)
    assert "6" in str(err.value)


def test_mean_abs_change_matches_the_gaussian_limit_at_large_width():
    r = simulate(12, 1024, 100, seed=4)
    pred = np.array([theory.mean_abs_finite_d(1 / np.sqrt(k - 1), 0.0, 1024) for k in r.k])
    assert np.all(np.abs(r.mean_abs_change - pred) < 5 * r.stderr_abs)


def test_simulate_rc_per_sample_change_is_the_rc_formula_of_its_realised_r_and_c():
    res = gaussian.simulate_rc(0.7, -0.4, 64, 50, seed=1)
    exact = theory.change_sq_rc(res.r_real, res.c_real)
    # only LayerNorm's eps separates them: relative effect below ~ 4 eps / var(x) ~ 1e-4
    np.testing.assert_allclose(res.per_sample, exact, rtol=1e-3, atol=1e-9)
    assert abs(res.r_real.mean() - 0.7) < 0.1 and abs(res.c_real.mean() + 0.4) < 0.1


@pytest.mark.parametrize("kwargs, name", [
    (dict(r=-0.1, c=0.0, d=8, n_samples=4), "r"), (dict(r=0.5, c=1.5, d=8, n_samples=4), "c"),
    (dict(r=0.5, c="0", d=8, n_samples=4), "c"), (dict(r=0.5, c=0.0, d=1, n_samples=4), "d"),
])
def test_simulate_rc_rejects_bad_arguments_naming_the_parameter(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=f"^{name} must be"):
        gaussian.simulate_rc(**kwargs)


def test_feedback_with_a_zero_is_the_independent_stream_in_law():
    r = gaussian.simulate_feedback(10, 512, 100, a=0.0, b=1.0, seed=0)
    pred = np.array([theory.change_sq_finite_d(1 / np.sqrt(k - 1), 0.0, 512) for k in r.k])
    assert np.all(np.abs(r.mean_sq_change - pred) < 5 * r.stderr)


def test_feedback_rejects_zero_b():
    with pytest.raises(ValueError, match="^b must be"):
        gaussian.simulate_feedback(4, 8, 4, a=0.5, b=0.0)


def test_bonferroni_z_crit_matches_known_normal_quantiles():
    assert abs(gaussian.bonferroni_z_crit(1, 0.05) - 1.959963985) < 1e-9
    assert abs(gaussian.normal_quantile(0.995) - 2.575829304) < 1e-9
    assert gaussian.bonferroni_z_crit(10, 0.01) > gaussian.bonferroni_z_crit(1, 0.01)


@pytest.mark.parametrize("call", [lambda: gaussian.normal_quantile(1.0), lambda: gaussian.bonferroni_z_crit(0),
                                  lambda: gaussian.bonferroni_z_crit(3, alpha=1.5)])
def test_quantile_helpers_reject_out_of_range_arguments(call):
    with pytest.raises(ValueError, match="must be"):
        call()
