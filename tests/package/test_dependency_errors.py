"""Bad arguments are refused by the library, in one line naming the parameter, before a
dependency (matplotlib, numpy, math) sees them."""
import math

import matplotlib
import numpy as np
import pytest

from resdecay_lib.book import plots
from resdecay_lib.checks import ArgumentTypeError
from resdecay_lib.maths import beyond, finite_d

matplotlib.use("Agg")
K = np.arange(2, 10)

PLOT_CASES = {
    "ragged curves": (lambda: plots.remainder_panels([[1, 2], [3]], {"a": K}, K, {}), "k"),
    "curve of another length": (lambda: plots.remainder_panels(K, {"a": K[:-1]}, K, {}), "curves['a']"),
    "non-numeric remainder": (lambda: plots.remainder_panels(K, {"a": K}, ["x"] * 8, {}), "remainder"),
    "NaN level": (lambda: plots.remainder_panels(K, {"a": K}, K, {"C": math.nan}), "levels['C']"),
    "label not a string": (lambda: plots.remainder_panels(K, {1: K}, K, {}), "curves"),
    "NaN k": (lambda: plots.sublayer_changes({"m": (np.r_[np.nan, K[1:]], K, K)}), "panels['m'][0]"),
    "empty line": (lambda: plots.line_panels({"m": [{"k": [], "y": []}]}, "y"), "panels['m'][0]['k']"),
    "line without y": (lambda: plots.line_panels({"m": [{"k": K}]}, "y"), "panels['m'][0]"),
    "negative error bars": (lambda: plots.simulation_vs_prediction({"a": (K, K, -K, K)}, "y"), "series['a'][2]"),
    "ylabel not text": (lambda: plots.simulation_vs_prediction({"a": (K, K, K, K)}, 3), "ylabel"),
    "loss steps None": (lambda: plots.loss_curves({"a": (None, K)}, {}), "curves['a'][0]"),
    "baseline None": (lambda: plots.loss_curves({"a": (K, K)}, {"b": None}), "baselines['b']"),
    "matrix 1-D": (lambda: plots.correlation_maps({"t": K}), "mats['t']"),
    "interval out of order": (lambda: plots.depth_curves({"t": {"a": (K, K, K + 1, K)}}), "panels['t']['a']"),
    "change curves short": (lambda: plots.change_curves({"a": {"w": (K, K)}}, {}, 9), "curves['a']['w'][0]"),
    "NaN skip cost": (lambda: plots.skip_costs({"m": (K, np.r_[np.nan, K[1:]], K, "y")}), "panels['m'][1]"),
    "forest row of two": (lambda: plots.forest({"r": (1.0, 2.0)}, "x"), "rows['r']"),
    "band NaN": (lambda: plots.pruning_curves({"m": ({"change": (K, K)}, math.nan, "y")}), "panels['m'][1]"),
    "not a figure": (lambda: plots.data_digest("fig"), "fig"),
    "width a string": (lambda: plots.column_panels(1, width="6"), "width"),
    "log axis of None": (lambda: plots.log_k_axis(None, 24), "ax"),
    "steps NaN": (lambda: plots.exponent_through_training({"a": [(math.nan, 1, 0, 2, 1)]}, "t"), "rows['a']'s steps"),
}


@pytest.mark.parametrize("case", sorted(PLOT_CASES))
def test_a_plot_refuses_bad_data_in_one_line_naming_the_parameter(case):
    call, name = PLOT_CASES[case]
    with pytest.raises(ValueError) as info:       # ArgumentTypeError is a ValueError too
        call()
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(name), msg
    assert type(info.value) in (ValueError, ArgumentTypeError)


def test_a_plot_still_draws_nan_as_a_gap_and_a_nan_forest_row_as_its_label():
    fig = plots.remainder_panels(K, {"a": np.r_[np.nan, K[1:]]}, K, {"C": 1.0})
    plots.close(fig)
    fig = plots.forest({"r": (math.nan, math.nan, math.nan), "s": (1.0, 0.5, 1.5)}, "x")
    plots.close(fig)


MATH_CASES = {
    "geometric_change": (lambda: beyond.geometric_change(1e308), r"g must be in \(1, 1\.34078e\+154\]"),
    "feedback_fixed_point big": (lambda: beyond.feedback_fixed_point(-1e200, 1.0), "a must be at most"),
    "feedback_fixed_point tiny": (lambda: beyond.feedback_fixed_point(-1e-200, 1e-200), "a and b"),
    "feedback_recursion": (lambda: beyond.feedback_recursion(1e308, 1.0, 5), "a and b must be smaller"),
    "stream_writes_change": (lambda: beyond.stream_writes_change(1e308, [1e308], [1e308]), "a and b_sq"),
    "change_sq_rc": (lambda: beyond.change_sq_rc(1e308, 0.5), "r must be at most"),
    "omega_sq_hetero": (lambda: beyond.omega_sq_hetero([1e308] * 3), "s2 must sum"),
    "change_sq_finite_d": (lambda: finite_d.change_sq_finite_d(1e150, 0.5, 16), "r must be at most"),
}


@pytest.mark.parametrize("case", sorted(MATH_CASES))
def test_an_input_that_would_overflow_is_a_value_error_naming_its_range(case):
    call, match = MATH_CASES[case]
    with pytest.raises(ValueError, match=match) as info:
        call()
    assert "\n" not in str(info.value) and type(info.value) is ValueError


def test_the_largest_valid_inputs_still_give_finite_numbers():
    assert beyond.geometric_change(beyond.MAX_GROWTH) == pytest.approx(2.0)
    assert math.isfinite(beyond.change_sq_rc(finite_d.MAX_R, 0.5))
    assert all(math.isfinite(v) for v in beyond.feedback_fixed_point(-beyond.MAX_AB, 1.0))
    assert np.all(np.isfinite(beyond.feedback_recursion(-1e308, 1e308, 5)))    # cancels: no overflow


def test_family_markdown_refuses_what_is_not_a_list_of_results():
    from resdecay_lib.stats import inference
    for bad in ("x", [[1, 2], [3]], {1: 2}, [object()]):
        with pytest.raises(ValueError, match=r"^results"):
            inference.family_markdown(bad)
