"""The Gaussian-stream simulator (resdecay_lib.gaussian)."""
import numpy as np
import pytest

from resdecay_lib.gaussian import layer_norm, simulate
from resdecay_lib.theory import omega_sq


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
    with pytest.raises((ValueError, TypeError), match=f"^{name} must be an integer >= "):
        simulate(**kwargs)
