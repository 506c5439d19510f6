"""The finite-width corrections (resdecay_lib.maths.finite_d): the theorem's stream at width d
(Chapter 2) and the delta method for any norm ratio and cosine (Chapters 3-5)."""
import math

import pytest
import sympy as sp

from resdecay_lib.maths import finite_d as fd
from resdecay_lib.maths.finite_d import (correlation_rho, eps_bias_bound, expected_cos_exact,
                                         expected_cos_exact_series, expected_cos_series, omega_sq_exact_d,
                                         omega_sq_finite_d)
from resdecay_lib.maths.theorem import omega_sq


# --- Chapter 2: the theorem's stream at width d ---


def test_finite_d_correction_reduces_to_the_theorem_as_d_grows():
    k, d = sp.symbols("k d", positive=True)
    for order in (1, 2):
        limit = sp.limit(omega_sq_finite_d(k, d, order=order), d, sp.oo)
        assert sp.simplify(limit - omega_sq(k)) == 0


def test_first_order_correction_is_rho_one_minus_rho_squared_over_d_minus_one():
    k, d = sp.symbols("k d", positive=True)
    rho = sp.sqrt((k - 1) / k)
    assert sp.simplify(omega_sq_finite_d(k, d) - omega_sq(k) - rho * (1 - rho**2) / (d - 1)) == 0
    # embedding-counted: the same at k + 1
    assert sp.simplify(omega_sq_finite_d(k, d, embedding_counted=True) - omega_sq_finite_d(k + 1, d)) == 0


def test_delta_method_series_matches_the_series_of_the_exact_mean():
    for order in (1, 2):
        assert sp.simplify(expected_cos_exact_series(order) - expected_cos_series(order)) == 0


def test_exact_mean_cosine_is_one_when_perfectly_correlated_and_remainder_shrinks_like_d_cubed():
    assert abs(float(expected_cos_exact(sp.Integer(1), 15)) - 1) < 1e-12
    # the order-2 series misses E cos by O(m^-3): the gap shrinks ~8x when m doubles
    gaps = [abs(float(omega_sq_exact_d(3, d) - omega_sq_finite_d(3, d, order=2))) for d in (65, 129)]
    assert 5 < gaps[0] / gaps[1] < 12


def test_correlation_rho_gives_the_theorem_as_two_times_one_minus_rho():
    for k in (2, 5, 40):
        assert sp.simplify(2 * (1 - correlation_rho(k)) - omega_sq(k)) == 0


@pytest.mark.parametrize("bad_d, error", [(1, ValueError), (2.5, TypeError), ("16", TypeError), (True, TypeError)])
def test_finite_d_rejects_bad_widths_naming_the_parameter(bad_d, error):
    with pytest.raises(error, match="d must be an integer"):
        omega_sq_finite_d(2, bad_d)


def test_finite_d_rejects_bad_order_and_bad_k():
    with pytest.raises(ValueError, match="order must be 1 or 2"):
        omega_sq_finite_d(2, 16, order=3)
    with pytest.raises(ValueError, match="smallest valid k is 2"):
        omega_sq_finite_d(1, 16)


def test_eps_bias_bound_value_and_input_checks():
    # 2 eps d/(d-3) (1/(k-1) + 1/k) at k = 2, d = 16, eps = 1e-5
    assert abs(float(eps_bias_bound(2, 16, eps=1e-5)) - 2e-5 * 16 / 13 * 1.5) < 1e-15
    with pytest.raises(ValueError, match="d must be an integer >= 4"):
        eps_bias_bound(2, 3)
    with pytest.raises(ValueError, match="eps must be"):
        eps_bias_bound(2, 16, eps=-1.0)
    with pytest.raises(ValueError, match="sigma must be"):
        eps_bias_bound(2, 16, sigma=0.0)


# --- any norm ratio r and cosine c, by the delta method ---


def test_finite_d_terms_have_the_stated_closed_forms():
    F, m1, h1, r, c = fd.finite_d_terms()
    Q = 1 + 2 * r * c + r**2
    assert sp.simplify(m1 - r**2 * (1 - c**2) * (1 + r * c) / Q**sp.Rational(3, 2)) == 0
    for rv, cv in [(0.3, 0.0), (1.2, -0.5), (0.1, 0.9)]:
        want = -rv**2 * (1 - cv**2) * math.sqrt(float(F.subs({r: rv, c: cv}))) / (8 * (1 + 2 * rv * cv + rv**2))
        assert abs(float(h1.subs({r: rv, c: cv})) - want) < 1e-12


def test_finite_d_term_agrees_with_chapter_2_for_independent_blocks():
    for k, d in [(2, 16), (5, 64), (30, 1024)]:
        ours = fd.change_sq_finite_d(1 / math.sqrt(k - 1), 0.0, d)
        assert abs(ours - float(fd.omega_sq_finite_d(k, d))) < 1e-12


@pytest.mark.parametrize("call, exc, name", [
    (lambda: fd.change_sq_finite_d(0.5, 0.0, 1), ValueError, "d"),
    (lambda: fd.mean_abs_finite_d(0.5, 0.0, 2.0), TypeError, "d"),
])
def test_new_functions_reject_bad_input_naming_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()
