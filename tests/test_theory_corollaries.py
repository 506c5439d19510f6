"""Corollaries 3.4, 3.5 and the beyond-independence formulas (resdecay_lib.maths.theory, Chapters 3-5)."""
import math

import numpy as np
import pytest
import sympy as sp

from resdecay_lib.maths import theory as th


# ---- Chapter 3: Corollary 3.4 -------------------------------------------------------
def test_mean_abs_change_is_sqrt_two_over_pi_times_omega():
    expr, w = th.derive_mean_abs_gaussian()
    assert sp.simplify(expr - sp.sqrt(2 / sp.pi) * w) == 0
    for k in (2, 5, 24):
        assert sp.simplify(th.mean_abs_change(k) - expr.subs(w, th.omega(k))) == 0


def test_mean_abs_change_embedding_convention_shifts_the_index():
    assert sp.simplify(th.mean_abs_change(3, embedding_counted=True) - th.mean_abs_change(4)) == 0


@pytest.mark.parametrize("counted", [False, True])
def test_mean_abs_change_rejects_index_below_first_valid_naming_convention(counted):
    kmin = th.first_valid_k(counted)
    with pytest.raises(ValueError, match=f"smallest valid k is {kmin}") as err:
        th.mean_abs_change(kmin - 1, embedding_counted=counted)
    assert "convention" in str(err.value)


@pytest.mark.parametrize("bad", [2.5, "3", None, True])
def test_mean_abs_change_rejects_non_integer_k(bad):
    with pytest.raises(TypeError, match="k must be an integer"):
        th.mean_abs_change(bad)


def test_closed_form_and_series_agree_with_omega():
    for k in (2, 3, 10, 100):
        assert abs(float(th.omega_closed_form(k) - th.omega(k))) < 1e-14
    assert abs(float(th.omega_series(1000, 4) - th.omega(1000))) < 1e-12


def test_series_coefficients_are_positive_with_the_proved_ratio():
    ratio, m = th.remainder_coefficient_ratio()
    assert sp.simplify(ratio - (2 * m - 1) * (2 * m + 1) / (4 * (m + 1) * (m + 2))) == 0
    assert [th.omega_series_coefficient(j) for j in (1, 2, 3, 5)] == [1, 0, sp.Rational(1, 8), sp.Rational(7, 128)]


def test_remainder_bound_holds_and_is_attained_at_k2():
    C = float(th.remainder_constant())
    vals = [(float(th.omega(k)) - k**-0.5) * k**1.5 for k in range(2, 400)]
    assert abs(vals[0] - C) < 1e-14 and max(vals) <= C + 1e-14 and min(vals) > 1 / 8


def test_unit_fraction_denominator_rounds_the_reciprocal():
    assert th.unit_fraction_denominator(1 / 24**0.5) == 5
    with pytest.raises(ValueError, match="ratio must be in"):
        th.unit_fraction_denominator(1.5)


# ---- Chapter 4: Corollary 3.5 -------------------------------------------------------
def test_output_change_variance_is_theorem_at_k_equals_N():
    expr, N = th.derive_output_change_var()
    for n in (2, 7, 50):
        assert abs(float(expr.subs(N, n) - th.omega_sq(n))) < 1e-14
        assert th.output_change_var(n) == th.omega_sq(n)


def test_output_change_var_rejects_small_N_naming_it():
    with pytest.raises(ValueError, match="smallest valid N is 2"):
        th.output_change_var(1)
    with pytest.raises(ValueError, match="^M must be"):
        th.derive_output_change_var(0)


# ---- Chapter 5 -----------------------------------------------------------------------
def test_change_sq_rc_derivation_matches_the_closed_form_and_small_r_series():
    expr, r, c = th.derive_change_sq_rc()
    assert sp.simplify(expr - th.change_sq_rc(r, c)) == 0
    series, r2, c2 = th.change_sq_rc_series(3)
    assert sp.simplify(series - r2**2 * (1 - c2**2)) == 0


def test_change_sq_rc_with_independent_blocks_is_omega_sq():
    for k in (2, 5, 30):
        assert abs(th.change_sq_rc(1 / math.sqrt(k - 1), 0.0) - float(th.omega_sq(k))) < 1e-14


def test_change_sq_rc_accepts_arrays():
    out = th.change_sq_rc(np.array([0.1, 0.5]), np.array([0.0, 0.9]))
    assert out.shape == (2,) and np.all(out > 0)


@pytest.mark.parametrize("r, c, name", [(-1.0, 0.0, "r"), (0.5, 1.2, "c"), (1.0, -1.0, "r = 1"), (np.inf, 0, "r")])
def test_change_sq_rc_rejects_out_of_range(r, c, name):
    with pytest.raises(ValueError, match=name):
        th.change_sq_rc(r, c)


def test_finite_d_terms_have_the_stated_closed_forms():
    F, m1, h1, r, c = th.finite_d_terms()
    Q = 1 + 2 * r * c + r**2
    assert sp.simplify(m1 - r**2 * (1 - c**2) * (1 + r * c) / Q**sp.Rational(3, 2)) == 0
    for rv, cv in [(0.3, 0.0), (1.2, -0.5), (0.1, 0.9)]:
        want = -rv**2 * (1 - cv**2) * math.sqrt(float(F.subs({r: rv, c: cv}))) / (8 * (1 + 2 * rv * cv + rv**2))
        assert abs(float(h1.subs({r: rv, c: cv})) - want) < 1e-12


def test_omega_sq_hetero_reduces_to_theorem_for_equal_variances_and_is_scale_free():
    w = th.omega_sq_hetero(np.ones(30))
    np.testing.assert_allclose(w, [float(th.omega_sq(k)) for k in range(2, 31)], rtol=1e-13)
    np.testing.assert_allclose(th.omega_sq_hetero(7.0 * np.ones(30)), w, rtol=1e-13)
    expr, S, s2 = th.derive_omega_sq_hetero()
    assert sp.simplify(expr - 2 * (1 - sp.sqrt(S / (S + s2)))) == 0


@pytest.mark.parametrize("bad", [[1.0], [1.0, -1.0], [[1.0, 2.0]], [1.0, np.nan]])
def test_omega_sq_hetero_rejects_bad_variances_naming_s2(bad):
    with pytest.raises(ValueError, match="^s2 must"):
        th.omega_sq_hetero(bad)


def test_power_law_and_geometric_limits():
    lim, beta = th.derive_power_law_limit()
    assert sp.simplify(lim - (beta + 1)) == 0
    lim_q, q = th.derive_geometric_limit()
    assert sp.simplify(lim_q.subs(q, 2) - (2 - sp.sqrt(2))) == 0
    s2 = 2.0 ** np.arange(1, 41)
    assert abs(th.omega_sq_hetero(s2)[-1] - (2 - math.sqrt(2))) < 1e-9


def test_feedback_recursion_reaches_its_fixed_point():
    v, w2 = th.feedback_fixed_point(-0.5, 1.0)
    assert abs(th.feedback_recursion(-0.5, 1.0, 200)[-1] - w2) < 1e-12
    with pytest.raises(ValueError, match="a must be < 0"):
        th.feedback_fixed_point(0.5, 1.0)


def test_finite_d_term_agrees_with_chapter_2_for_independent_blocks():
    chapter2 = getattr(th, "omega_sq_finite_d", None)
    if chapter2 is None:
        pytest.skip("Chapter 2's omega_sq_finite_d is not in theory.py")
    for k, d in [(2, 16), (5, 64), (30, 1024)]:
        ours = th.change_sq_finite_d(1 / math.sqrt(k - 1), 0.0, d)
        assert abs(ours - float(chapter2(k, d))) < 1e-12


@pytest.mark.parametrize("call, exc, name", [
    (lambda: th.change_sq_rc("0.5", 0.0), TypeError, "r"),
    (lambda: th.change_sq_rc(0.5, None), TypeError, "c"),
    (lambda: th.change_sq_finite_d(0.5, 0.0, 1), ValueError, "d"),
    (lambda: th.mean_abs_finite_d(0.5, 0.0, 2.0), TypeError, "d"),
    (lambda: th.feedback_fixed_point("x", 1.0), TypeError, "a"),
    (lambda: th.feedback_recursion(0.5, 1.0, 1), ValueError, "depth"),
    (lambda: th.omega_series(10, 0), ValueError, "n_terms"),
    (lambda: th.omega_series_coefficient(0), ValueError, "m"),
    (lambda: th.rc_hetero("abc"), TypeError, "s2"),
    (lambda: th.output_change_sq_finite_d(1, 64), ValueError, "N"),
])
def test_new_functions_reject_bad_input_naming_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()
