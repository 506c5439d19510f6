"""Theorem 3.3's closed form and its index conventions (resdecay_lib.theory)."""
import pytest
import sympy as sp

from resdecay_lib.theory import first_valid_k, omega_sq


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
