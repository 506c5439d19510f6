"""Beyond independence (resdecay_lib.maths.beyond, Chapter 5): unequal variances, aligned
updates, feedback."""
import math

import numpy as np
import pytest
import sympy as sp

from resdecay_lib.maths import beyond
from resdecay_lib.maths.theorem import omega_sq


def test_change_sq_rc_derivation_matches_the_closed_form_and_small_r_series():
    expr, r, c = beyond.derive_change_sq_rc()
    assert sp.simplify(expr - beyond.change_sq_rc(r, c)) == 0
    series, r2, c2 = beyond.change_sq_rc_series(3)
    assert sp.simplify(series - r2**2 * (1 - c2**2)) == 0


def test_change_sq_rc_with_independent_blocks_is_omega_sq():
    for k in (2, 5, 30):
        assert abs(beyond.change_sq_rc(1 / math.sqrt(k - 1), 0.0) - float(omega_sq(k))) < 1e-14


def test_change_sq_rc_accepts_arrays():
    out = beyond.change_sq_rc(np.array([0.1, 0.5]), np.array([0.0, 0.9]))
    assert out.shape == (2,) and np.all(out > 0)


@pytest.mark.parametrize("r, c, name", [(-1.0, 0.0, "r"), (0.5, 1.2, "c"), (1.0, -1.0, "r = 1"), (np.inf, 0, "r")])
def test_change_sq_rc_rejects_out_of_range(r, c, name):
    with pytest.raises(ValueError, match=name):
        beyond.change_sq_rc(r, c)


def test_omega_sq_hetero_reduces_to_theorem_for_equal_variances_and_is_scale_free():
    w = beyond.omega_sq_hetero(np.ones(30))
    np.testing.assert_allclose(w, [float(omega_sq(k)) for k in range(2, 31)], rtol=1e-13)
    np.testing.assert_allclose(beyond.omega_sq_hetero(7.0 * np.ones(30)), w, rtol=1e-13)
    expr, S, s2 = beyond.derive_omega_sq_hetero()
    assert sp.simplify(expr - 2 * (1 - sp.sqrt(S / (S + s2)))) == 0


@pytest.mark.parametrize("bad", [[1.0], [1.0, -1.0], [[1.0, 2.0]], [1.0, np.nan]])
def test_omega_sq_hetero_rejects_bad_variances_naming_s2(bad):
    with pytest.raises(ValueError, match="^s2 must"):
        beyond.omega_sq_hetero(bad)


def test_power_law_and_geometric_limits():
    lim, beta = beyond.derive_power_law_limit()
    assert sp.simplify(lim - (beta + 1)) == 0
    lim_q, q = beyond.derive_geometric_limit()
    assert sp.simplify(lim_q.subs(q, 2) - (2 - sp.sqrt(2))) == 0
    s2 = 2.0 ** np.arange(1, 41)
    assert abs(beyond.omega_sq_hetero(s2)[-1] - (2 - math.sqrt(2))) < 1e-9


def test_geometric_change_is_the_derived_limit_at_q_equal_g_squared():
    for g in (1.05, 1.3, 2.0):
        assert beyond.geometric_change(g) == pytest.approx(2 * (1 - 1 / g), rel=1e-12)
    with pytest.raises(ValueError, match=r"g must be .* in \(1, inf\)"):
        beyond.geometric_change(1.0)


def test_feedback_recursion_reaches_its_fixed_point():
    v, w2 = beyond.feedback_fixed_point(-0.5, 1.0)
    assert abs(beyond.feedback_recursion(-0.5, 1.0, 200)[-1] - w2) < 1e-12
    with pytest.raises(ValueError, match="a must be < 0"):
        beyond.feedback_fixed_point(0.5, 1.0)


@pytest.mark.parametrize("call, exc, name", [
    (lambda: beyond.change_sq_rc("0.5", 0.0), TypeError, "r"),
    (lambda: beyond.change_sq_rc(0.5, None), TypeError, "c"),
    (lambda: beyond.feedback_fixed_point("x", 1.0), TypeError, "a"),
    (lambda: beyond.feedback_recursion(0.5, 1.0, 1), ValueError, "depth"),
    (lambda: beyond.rc_hetero("abc"), TypeError, "s2"),
])
def test_new_functions_reject_bad_input_naming_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()
