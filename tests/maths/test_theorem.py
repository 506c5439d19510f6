"""Theorem 3.3's closed form, its index conventions, its derivation and the LayerNorm identity
(resdecay_lib.maths.theorem, Chapters 1 and 2)."""
import pytest
import sympy as sp

from resdecay_lib.maths.theorem import (derive_omega_sq, first_valid_k, layer_norm_eps_error,
                                        layer_norm_identity_residual, omega_sq)


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


# --- Chapter 2: the derivation; Chapter 1: the LayerNorm identity ---


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
