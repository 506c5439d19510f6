"""Tests of resdecay_lib.plots: each figure kind draws what it is given, and refuses nothing to draw."""
import numpy as np
import pytest

from resdecay_lib import plots


def test_init_curves_draws_every_placement_and_the_theory_at_both_granularities():
    k = np.arange(1, 5)
    blk = {"pre_ln": 1 / k, "resi_dual": np.ones(4)}
    sub = {"pre_ln": 1 / np.arange(1, 9)}
    theory = {"blk": 1 / k, "seed": np.r_[np.nan, 1 / k[1:]], "sub": 1 / np.arange(1, 9)}
    fig = plots.init_curves(blk, sub, theory, dual=1 / k)
    left, right = fig.axes
    assert len(left.lines) == 2 + 3 and len(right.lines) == 1 + 1     # curves, theorem (+ seed, dual)
    assert left.lines[1].get_linestyle() == "--"                        # ResiDual's x_a, on Post-LN's
    plots.close(fig)
    with pytest.raises(ValueError, match="empty"):
        plots.init_curves({}, sub, theory)


def test_grad_profiles_draws_one_line_per_placement():
    fig = plots.grad_profiles({"pre_ln": np.array([3.0, 2.0, 1.0]), "post_ln": np.ones(3)})
    assert len(fig.axes[0].lines) == 2
    plots.close(fig)
    with pytest.raises(TypeError, match="dict"):
        plots.grad_profiles([1.0])


def test_sublayer_changes_draws_attention_and_mlp_per_model():
    k = np.arange(1, 7)
    fig = plots.sublayer_changes({"A": (k, 1 / k, np.ones(6)), "B": (k, 1 / k, 2 / k)})
    assert len(fig.axes) == 2 and all(len(ax.lines) == 2 for ax in fig.axes)
    plots.close(fig)


def test_line_panels_draws_lines_and_error_bars_per_panel():
    k = np.arange(1, 5)
    fig = plots.line_panels({"A": [{"k": k, "y": 1 / k, "yerr": 0.1 / k, "fmt": "o-", "label": "measured"},
                                   {"k": k, "y": 2 / k, "fmt": "k--", "label": "theory"}],
                             "B": [{"k": k, "y": np.ones(4)}]}, "change")
    a, b = fig.axes
    assert len(a.lines) >= 2 and len(a.containers) == 1 and len(b.lines) == 1
    assert a.get_yscale() == "log" and a.get_xscale() == "log"
    plots.close(fig)


def test_theorem_simulation_draws_the_theorem_the_shown_widths_and_every_widths_departure():
    k = np.arange(2, 9)
    om = 1 / k
    shown = {16: (k, 1.1 * om, 0.01 * om), 4096: (k, om, 0.01 * om)}
    rel = {d: (k, np.full(7, 0.01), np.full(7, 0.005), np.full(7, 0.01), np.full(7, 0.011)) for d in (16, 64, 4096)}
    fig = plots.theorem_simulation(k, om, shown, rel)
    left, right = fig.axes
    assert len(left.lines) == 2 + 2             # theorem, 1/k; one line per shown width (bars are collections)
    assert len(right.lines) == 3 * (1 + 2) + 1  # per width: points and two predictions; the zero line
    plots.close(fig)
    with pytest.raises(TypeError, match=r"rel\[16\]"):
        plots.theorem_simulation(k, om, shown, {16: (k, om)})


def test_remainder_panels_draws_each_curve_and_each_level():
    k = np.arange(2, 50)
    fig = plots.remainder_panels(k, {"a": 1 / k, "b": 1 / np.sqrt(k)}, 0.1 + 0 * k, {"C": 0.2, "1/8": 0.125})
    left, right = fig.axes
    assert len(left.lines) == 2 and left.lines[1].get_linestyle() == "--"
    assert len(right.lines) == 1 + 2
    plots.close(fig)


def test_scaled_simulation_draws_points_per_width_the_curve_and_its_limit_on_the_asked_axis():
    k = np.arange(2, 10)
    fig = plots.scaled_simulation({64: (k, np.ones(8), 0.1 * np.ones(8))}, (k, np.ones(8), "large d"),
                                  (1.0, "limit"), xlabel="k", ylabel="y", log_x=True)
    ax, = fig.axes
    assert ax.get_xscale() == "log" and ax.get_lines()[-1].get_linestyle() == ":"
    plots.close(fig)
    with pytest.raises(TypeError, match="limit"):
        plots.scaled_simulation({64: (k, k, k)}, (k, k, "c"), 1.0, xlabel="k", ylabel="y")


def test_limit_curves_draws_a_limit_only_where_one_is_given():
    k = np.arange(2, 10)
    fig = plots.limit_curves({"b=1": (k, np.ones(8), 1.4), "b=-1": (k, 1 / k, None)}, {"geo": (k, 2 / k)}, "y")
    ax, = fig.axes
    assert len(ax.lines) == 2 + 1 + 1          # two curves, one limit, the dashed curve
    plots.close(fig)


def test_simulation_vs_prediction_draws_points_and_a_line_per_series():
    k = np.arange(2, 10)
    fig = plots.simulation_vs_prediction({"a = 0.5": (k, 1 / k, 0.01 / k, 1 / k)}, "y")
    ax, = fig.axes
    assert ax.get_yscale() == "log" and len(ax.lines) == 1 + 1
    plots.close(fig)
    with pytest.raises(ValueError, match="empty"):
        plots.simulation_vs_prediction({}, "y")
