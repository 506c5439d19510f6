"""Theorem 3.3's closed form and its index conventions (resdecay_lib.maths.theory)."""
import pytest
import sympy as sp

from resdecay_lib.maths.theory import first_valid_k, omega_sq


def test_omega_sq_matches_the_papers_closed_form_symbolically():
    k = sp.Symbol("k", integer=True, positive=True)
    paper = 2 / (sp.sqrt(k) * (sp.sqrt(k - 1) + sp.sqrt(k)))
    assert sp.simplify(omega_sq(k) - paper) == 0


def test_embedding_counted_convention_shifts_the_index_by_one():
    for k in range(1, 20):
        assert sp.simplify(omega_sq(k, embedding_counted=True) - omega_sq(k + 1)) == 0


@pytest.mark.parametrize("counted", [False, True])
def test_integer_below_first_valid_index_raises_naming_convention(counted):
    kmin = first_valid_k(counted)
    omega_sq(kmin, embedding_counted=counted)
    with pytest.raises(ValueError, match=f"smallest valid k is {kmin}") as err:
        omega_sq(kmin - 1, embedding_counted=counted)
    assert "convention" in str(err.value)


@pytest.mark.parametrize("bad", [2.0, "3", None, True])
def test_non_integer_k_raises_type_error(bad):
    with pytest.raises(TypeError, match="k must be an integer"):
        omega_sq(bad)


# --- Chapter 2: the derivation, the LayerNorm identity, the finite-d correction ---

from resdecay_lib.maths.theory import correlation_rho, derive_omega_sq, eps_bias_bound, expected_cos_exact, expected_cos_exact_series, expected_cos_series, layer_norm_eps_error, layer_norm_identity_residual, omega_sq_exact_d, omega_sq_finite_d  # noqa: E402


@pytest.mark.parametrize("counted", [False, True])
def test_derivation_from_the_assumptions_reaches_the_closed_form(counted):
    derivation = derive_omega_sq(embedding_counted=counted)
    assert derivation.residual == 0
    assert derivation.sigma not in derivation.closed_form.free_symbols
    k = derivation.k
    assert sp.simplify(derivation.closed_form - omega_sq(k, embedding_counted=counted)) == 0
    assert [label for label, _ in derivation.steps][0] == "var(x^a_k)"


def test_derivation_rejects_a_non_boolean_convention():
    with pytest.raises(TypeError, match="embedding_counted"):
        derive_omega_sq(embedding_counted=1)


def test_layer_norm_identity_is_proved_symbolically_in_small_dimension():
    assert layer_norm_identity_residual(3) == 0


@pytest.mark.parametrize("bad", [1, 7, 2.0, True])
def test_layer_norm_identity_rejects_dimensions_outside_its_range(bad):
    with pytest.raises(ValueError, match="d must be an integer in 2..6"):
        layer_norm_identity_residual(bad)


def test_eps_error_factorisation_is_exact_and_bound_holds_at_sample_points():
    e = layer_norm_eps_error()
    assert e["residual"] == 0
    eps, va, vb, c = e["symbols"]
    for point in [(1e-5, 1.0, 2.0, -1.0), (1e-5, 1e-5, 3e-5, 0.3), (0.5, 0.01, 100.0, 0.99)]:
        values = dict(zip((eps, va, vb, c), point))
        assert abs(float(e["error"].subs(values))) <= float(e["bound"].subs(values)) * (1 + 1e-12)


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


def test_geometric_change_is_the_derived_limit_at_q_equal_g_squared():
    from resdecay_lib.maths import theory
    for g in (1.05, 1.3, 2.0):
        assert theory.geometric_change(g) == pytest.approx(2 * (1 - 1 / g), rel=1e-12)
    with pytest.raises(ValueError, match=r"g must be .* in \(1, inf\)"):
        theory.geometric_change(1.0)
