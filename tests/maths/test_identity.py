"""The LayerNorm change on the raw quantities a measurement records (resdecay_lib.maths.identity)."""
import math

import numpy as np
import pytest
import sympy as sp

from resdecay_lib.maths import beyond, gaussian, identity

#: float64 unit roundoff
U = np.finfo(float).eps


def _raw(x, f):
    """The raw per-token quantities the measurement records, from two vectors."""
    X, F = np.linalg.norm(x), np.linalg.norm(f)
    return F / X, float(x @ f / (X * F)), X, float(x.mean()), float(f.mean())


def _rounding_tolerance(x, f, r, c, r_t, c_t, direct):
    """What float64 rounding allows between the raw formula and a direct LN_0: each raw sum
    carries about one ulp; the centring |x|^2 - D mean^2 amplifies it by kappa = |x|^2 / |x~|^2
    (and the same for f), the Gram determinant (the 1 - c^2 it holds) by 1 / (1 - |c|) for the
    raw and the centred cosine, and the direct LN_0 differences add an ulp per coordinate,
    2 u sqrt(omega^2) in the mean square. 8 covers the few operations each term passes."""
    kappa = max(np.sum(x * x) / np.sum((x - x.mean()) ** 2), np.sum(f * f) / np.sum((f - f.mean()) ** 2))
    # in D = 2 the centred cosine is +-1 exactly and change_sq_raw uses that (no determinant
    # computed), so the centred cosine's conditioning does not enter
    centred = 0.0 if x.size == 2 else r * r / max(1 - abs(c_t), 1e-300)
    return 8 * U * kappa * (r * r / (1 - abs(c)) + centred + math.sqrt(direct))


@pytest.mark.parametrize("D", [2, 3, 5, 8, 64, 1024, 4096])
def test_change_sq_raw_matches_a_direct_layer_norm_with_means_and_eps(D):
    rng = np.random.default_rng(D)
    eps_mattered = 0
    for _ in range(60):
        scale = 10 ** rng.uniform(-3, 1)       # down to var ~ 1e-6 ~ eps: eps then matters
        x = scale * (rng.standard_normal(D) + rng.uniform(-2, 2))
        f = 10 ** rng.uniform(-3, 0.3) * scale * (rng.standard_normal(D) + rng.uniform(-2, 2))
        direct = float(np.mean((gaussian.layer_norm(x + f) - gaussian.layer_norm(x)) ** 2))
        r, c, X, mx, mf = _raw(x, f)
        got = identity.change_sq_raw(r, c, X, mx, mf, D)
        r_t, c_t = identity.centred_rc(r, c, X, mx, mf, D)
        tol = _rounding_tolerance(x, f, r, c, r_t, c_t, direct)
        assert abs(got - direct) <= tol, (D, got, direct, tol)
        without_eps = float(np.mean((gaussian.layer_norm(x + f, 0.0) - gaussian.layer_norm(x, 0.0)) ** 2))
        eps_mattered += abs(without_eps - direct) > 10 * tol
    assert eps_mattered > 0          # the draws reach streams where eps changes the answer


def test_change_sq_raw_broadcasts_over_tokens():
    rng = np.random.default_rng(0)
    D = 16
    xs, fs = rng.standard_normal((5, D)) + 0.3, 0.2 * rng.standard_normal((5, D)) - 0.1
    raw = [_raw(x, f) for x, f in zip(xs, fs)]
    got = identity.change_sq_raw(*[np.array(v) for v in zip(*raw)], D)
    one_by_one = [identity.change_sq_raw(*q, D) for q in raw]
    assert got.shape == (5,)
    np.testing.assert_allclose(got, one_by_one, rtol=4 * U)


def test_change_sq_raw_without_means_and_eps_is_change_sq_rc():
    r = np.linspace(0, 3, 61)[:, None]
    c = np.linspace(-1, 1, 81)[None, :]
    r, c = np.broadcast_arrays(r, c)
    keep = ~((r == 1) & (c == -1))                      # x + f = 0 there
    exact = beyond.change_sq_rc(r[keep], c[keep])
    got = identity.change_sq_raw(r[keep], c[keep], 2.5, 0.0, 0.0, 32, eps=0.0)
    # change_sq_rc forms s^2 = 1 + 2rc + r^2 = |x + f|^2 / |x|^2 from terms up to (1 + r)^2, so
    # its relative rounding is a few ulp of (1 + r)^2 / s^2 (large where x + f nearly cancels)
    rk, ck = r[keep], c[keep]
    assert np.all(np.abs(got - exact) <= 16 * U * (1 + rk) ** 2 / (1 + 2 * rk * ck + rk**2))


def test_change_sq_raw_with_eps_zero_is_change_sq_rc_of_the_centred_pair():
    rng = np.random.default_rng(1)
    for D in (3, 10, 300):
        x = rng.standard_normal(D) + 1.5
        f = 0.4 * rng.standard_normal(D) - 0.7
        q = _raw(x, f)
        r_t, c_t = identity.centred_rc(*q, D)
        xc, fc = x - x.mean(), f - f.mean()
        assert abs(r_t - np.linalg.norm(fc) / np.linalg.norm(xc)) < 64 * U
        assert abs(c_t - xc @ fc / (np.linalg.norm(xc) * np.linalg.norm(fc))) < 64 * U
        assert abs(identity.change_sq_raw(*q, D, eps=0.0) - beyond.change_sq_rc(r_t, c_t)) < 64 * U


def test_derived_raw_expression_reduces_to_the_centred_identity():
    expr, s = identity.derive_change_sq_raw()
    centred, r, c = beyond.derive_change_sq_rc()
    reduced = expr.subs({s["mean_x"]: 0, s["mean_f"]: 0, s["eps"]: 0}).subs({s["r"]: r, s["c"]: c})
    assert sp.simplify(reduced - centred) == 0


def test_derived_raw_expression_evaluates_to_change_sq_raw():
    expr, s = identity.derive_change_sq_raw()
    point = {"D": 7, "eps": 1e-3, "x_norm": 0.9, "r": 0.3, "c": 0.2, "mean_x": 0.1, "mean_f": -0.02}
    value = float(expr.subs({s[k]: v for k, v in point.items()}))
    args = [point[k] for k in ("r", "c", "x_norm", "mean_x", "mean_f", "D")]
    assert abs(identity.change_sq_raw(*args, eps=point["eps"]) - value) < 64 * U


def test_eps_relative_correction_is_the_first_order_term_in_eps():
    expr, s = identity.derive_change_sq_raw()
    point = {s["D"]: 5, s["x_norm"]: sp.Rational(3, 2), s["r"]: sp.Rational(1, 3), s["c"]: sp.Rational(1, 4),
             s["mean_x"]: sp.Rational(1, 10), s["mean_f"]: sp.Rational(1, 20)}
    at = expr.subs(point)
    slope = sp.diff(at, s["eps"]).subs(s["eps"], 0) / at.subs(s["eps"], 0)
    D, X, r, c, mx, mf = (point[s[k]] for k in ("D", "x_norm", "r", "c", "mean_x", "mean_f"))
    xx, ff, xf = X**2 - D * mx**2, r**2 * X**2 - D * mf**2, r * c * X**2 - D * mx * mf
    var_x, var_y = xx / D, (xx + 2 * xf + ff) / D
    per_eps = identity.eps_relative_correction(float(var_x), float(var_y), eps=1.0)
    assert abs(float(slope) - per_eps) < 64 * U * abs(per_eps)


def test_remainder_cubic_coefficient_and_sharp_constant():
    d = identity.derive_remainder_constant()
    c = d["c"]
    assert sp.simplify(d["cubic_coefficient"] + 2 * c * (1 - c**2)) == 0
    # the largest |2c(1 - c^2)| on [-1, 1] is at c = 1/sqrt(3)
    assert sp.simplify(d["sharp_small_r"] - 2 / sp.sqrt(3) * (1 - sp.Rational(1, 3))) == 0
    assert d["positive_side"] == sp.Rational(9, 8)
    a = d["a"]
    assert sp.simplify((d["a_star"]**4 - 6 * d["a_star"]**3 + 12 * d["a_star"]**2 - 4)) == 0
    # K is F's maximum on [0, 1]: no grid point of F exceeds it
    F = sp.lambdify(a, 2 * a * (1 - a**2) * (4 - a) / (2 - a) ** 2, "numpy")
    grid = np.linspace(0, 1, 100_001)
    assert F(grid).max() <= identity.REMAINDER_CONSTANT * (1 + 4 * U)
    assert identity.REMAINDER_CONSTANT == pytest.approx(float(d["K_exact"]), rel=4 * U)


def _dense_remainder_ratio():
    """max over c of |change_sq_rc - r^2 (1 - c^2)| / (K r^3), per r of a dense grid on (0, 1/2]."""
    r = np.linspace(1e-3, 0.5, 1500)[:, None]
    c = np.linspace(-1, 1, 4001)[None, :]
    remainder = np.abs(beyond.change_sq_rc(*np.broadcast_arrays(r, c)) - identity.leading_order_change_sq(*np.broadcast_arrays(r, c)))
    return (remainder / identity.leading_order_bound(r)).max(axis=1)


def test_leading_order_bound_holds_on_a_dense_grid_and_is_within_a_factor_two():
    ratio = _dense_remainder_ratio()
    # the remainder's own rounding (a few ulp of 1) is below 1e-6 of K r^3 at r >= 1e-3
    assert ratio.max() <= 1
    # the stated looseness: K is at most 1.81 times the sharp small-r constant 4/(3 sqrt 3)
    assert ratio.min() >= 1 / 2


def test_half_the_remainder_constant_is_violated_on_the_grid():
    assert (2 * _dense_remainder_ratio()).max() > 1


def test_leading_order_bound_refuses_r_above_one_half():
    with pytest.raises(ValueError, match="r must be in .*change_sq_raw, the exact form, elsewhere"):
        identity.leading_order_bound(0.51)
    with pytest.raises(ValueError, match="r must be"):
        identity.leading_order_bound(np.array([0.1, -0.1]))


GOOD = dict(r=0.1, c=0.2, x_norm=1.0, mean_x=0.01, mean_f=0.0, D=8)


@pytest.mark.parametrize("name, bad", [
    ("r", -0.1), ("r", float("nan")), ("r", "0.1"), ("c", 1.5), ("c", None), ("x_norm", 0.0),
    ("x_norm", float("inf")), ("mean_x", 1.0), ("mean_f", 0.5), ("D", 1), ("D", 8.0), ("D", True),
    ("eps", -1e-5), ("eps", float("nan")),
])
def test_change_sq_raw_bad_input_names_the_parameter(name, bad):
    kwargs = {**GOOD, name: bad}
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        identity.change_sq_raw(**kwargs)


def test_change_sq_raw_refuses_a_cosine_the_centred_vectors_cannot_have():
    # D = 4, |x| = |f| = 1, x.f = 0, means 0.4 and -0.4: |x~|^2 = |f~|^2 = 0.36 but
    # <x~, f~> = 0.64, past Cauchy-Schwarz
    with pytest.raises(ValueError, match=r"\bc must be consistent"):
        identity.change_sq_raw(1.0, 0.0, 1.0, 0.4, -0.4, 4)


def test_change_sq_raw_needs_eps_for_a_constant_stream():
    with pytest.raises(ValueError, match=r"\beps must be > 0"):
        identity.change_sq_raw(0.5, 1.0, 1.0, 1 / math.sqrt(4), 0.5 / math.sqrt(4), 4, eps=0.0)
    assert identity.change_sq_raw(0.5, 1.0, 1.0, 1 / math.sqrt(4), 0.5 / math.sqrt(4), 4) == 0.0


def test_centred_rc_refuses_a_constant_x():
    with pytest.raises(ValueError, match=r"\bmean_x must satisfy"):
        identity.centred_rc(0.1, 0.0, 2.0, 1.0, 0.0, 4)


@pytest.mark.parametrize("name, bad", [("var_x", 0.0), ("var_y", -1.0), ("eps", -1.0), ("var_x", "1")])
def test_eps_relative_correction_bad_input_names_the_parameter(name, bad):
    kwargs = {"var_x": 1.0, "var_y": 1.0, "eps": 1e-5, name: bad}
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        identity.eps_relative_correction(**kwargs)
