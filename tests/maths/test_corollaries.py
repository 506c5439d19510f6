"""Corollaries 3.4 and 3.5 (resdecay_lib.maths.corollaries, Chapters 3 and 4)."""
import pytest
import sympy as sp

from resdecay_lib.maths import corollaries as cor
from resdecay_lib.maths.theorem import first_valid_k, omega_sq


# ---- Chapter 3: Corollary 3.4 -------------------------------------------------------
def test_mean_abs_change_is_sqrt_two_over_pi_times_omega():
    expr, w = cor.derive_mean_abs_gaussian()
    assert sp.simplify(expr - sp.sqrt(2 / sp.pi) * w) == 0
    for k in (2, 5, 24):
        assert sp.simplify(cor.mean_abs_change(k) - expr.subs(w, cor.omega(k))) == 0


def test_mean_abs_change_embedding_convention_shifts_the_index():
    assert sp.simplify(cor.mean_abs_change(3, embedding_counted=True) - cor.mean_abs_change(4)) == 0


@pytest.mark.parametrize("counted", [False, True])
def test_mean_abs_change_rejects_index_below_first_valid_naming_convention(counted):
    kmin = first_valid_k(counted)
    with pytest.raises(ValueError, match=f"smallest valid k is {kmin}") as err:
        cor.mean_abs_change(kmin - 1, embedding_counted=counted)
    assert "convention" in str(err.value)


@pytest.mark.parametrize("bad", [2.5, "3", None, True])
def test_mean_abs_change_rejects_non_integer_k(bad):
    with pytest.raises(TypeError, match="k must be an integer"):
        cor.mean_abs_change(bad)


def test_closed_form_and_series_agree_with_omega():
    for k in (2, 3, 10, 100):
        assert abs(float(cor.omega_closed_form(k) - cor.omega(k))) < 1e-14
    assert abs(float(cor.omega_series(1000, 4) - cor.omega(1000))) < 1e-12


def test_series_coefficients_are_positive_with_the_proved_ratio():
    ratio, m = cor.remainder_coefficient_ratio()
    assert sp.simplify(ratio - (2 * m - 1) * (2 * m + 1) / (4 * (m + 1) * (m + 2))) == 0
    assert [cor.omega_series_coefficient(j) for j in (1, 2, 3, 5)] == [1, 0, sp.Rational(1, 8), sp.Rational(7, 128)]


def test_remainder_bound_holds_and_is_attained_at_k2():
    C = float(cor.remainder_constant())
    vals = [(float(cor.omega(k)) - k**-0.5) * k**1.5 for k in range(2, 400)]
    assert abs(vals[0] - C) < 1e-14 and max(vals) <= C + 1e-14 and min(vals) > 1 / 8


def test_unit_fraction_denominator_rounds_the_reciprocal():
    assert cor.unit_fraction_denominator(1 / 24**0.5) == 5
    with pytest.raises(ValueError, match="ratio must be in"):
        cor.unit_fraction_denominator(1.5)


# ---- Chapter 4: Corollary 3.5 -------------------------------------------------------
def test_output_change_variance_is_theorem_at_k_equals_N():
    expr, N = cor.derive_output_change_var()
    for n in (2, 7, 50):
        assert abs(float(expr.subs(N, n) - omega_sq(n))) < 1e-14
        assert cor.output_change_var(n) == omega_sq(n)


def test_output_change_var_rejects_small_N_naming_it():
    with pytest.raises(ValueError, match="smallest valid N is 2"):
        cor.output_change_var(1)
    with pytest.raises(ValueError, match="^M must be"):
        cor.derive_output_change_var(0)


@pytest.mark.parametrize("call, exc, name", [
    (lambda: cor.omega_series(10, 0), ValueError, "n_terms"),
    (lambda: cor.omega_series_coefficient(0), ValueError, "m"),
    (lambda: cor.output_change_sq_finite_d(1, 64), ValueError, "N"),
])
def test_new_functions_reject_bad_input_naming_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()
