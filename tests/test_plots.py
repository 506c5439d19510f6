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
