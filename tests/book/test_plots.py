"""Tests of resdecay_lib.book.plots: each figure kind draws what it is given, refuses nothing to draw,
and is drawn for the book's column: a grid, not a strip, no wider than the column,
and no text under MIN_FONT_PT as a reader sees it."""
import itertools
import json
import pathlib
import re

import matplotlib
import numpy as np
import pytest

from resdecay_lib.book import plots

matplotlib.use("Agg")
ROOT = pathlib.Path(__file__).resolve().parents[2]


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


# --- sizes: every figure kind the chapters draw, with small synthetic data shaped
# like theirs (the chapters' labels, titles, depths and numbers of panels) ---------------------

ARCHS = ["pre_ln", "post_ln", "peri_ln", "resi_dual", "ln_scaling", "deepnorm", "mix_ln"]
MODELS = ["SmolLM2-135M (pre-RMSNorm)", "Qwen2.5-Coder-0.5B (pre-RMSNorm)", "Gemma-3-270M (sandwich)",
          "all-MiniLM-L6 (post-LN)"]


def _k(L):
    return np.arange(1, L + 1)


def cases():
    """{name: () -> (args, kwargs)}: the name is the plots function (a suffix tells two uses apart)."""
    rng = np.random.default_rng(0)
    k24, k48 = _k(24), _k(48)
    c = {}
    c["theorem_simulation"] = lambda: ((np.arange(2, 65), 1 / np.arange(2, 65)),
        dict(shown={d: (np.arange(2, 65), 1.05 / np.arange(2, 65), 0.01 / np.arange(2, 65)) for d in (16, 4096)},
             rel={d: (np.arange(2, 65), np.full(63, 0.01), np.full(63, 0.002), np.full(63, 0.01), np.full(63, 0.011))
                  for d in (16, 64, 256, 1024, 4096)}))
    ks = np.arange(2, 2001)
    c["remainder_panels"] = lambda: ((ks, {r"$E|\cdot| = \sqrt{2/\pi}\,\omega_k$": 0.8 / np.sqrt(ks),
                                           r"$\sqrt{2/\pi}\,k^{-1/2}$": 0.79 / np.sqrt(ks)},
                                      0.1 + 0 * ks, {"$C$": 0.12, "$1/8$": 1 / 8}), {})
    c["scaled_simulation"] = lambda: (({d: (np.arange(2, 65), np.ones(63), 0.1 * np.ones(63)) for d in (16, 256, 4096)},
                                       (np.arange(2, 65), np.ones(63), r"$\sqrt{k}\,\sqrt{2/\pi}\,\omega_k$ (large $d$)"),
                                       (0.79, r"limit $\sqrt{2/\pi}$")),
                                      dict(xlabel="block index $k$ (seed convention)",
                                           ylabel=r"$\sqrt{k}\;E|\cdot|$ per coordinate"))
    N = np.arange(2, 129)
    c["scaled_simulation (log N)"] = lambda: (({d: (N, np.ones(127), 0.1 * np.ones(127)) for d in (16, 256, 4096)},
                                               (N, np.ones(127), r"$\sqrt{N}\,\omega_N$ (large $d$)"), (1, "limit 1")),
                                              dict(xlabel="number of blocks $N$ (seed convention)",
                                                   ylabel=r"$\sqrt{N}\;\mathrm{sd}(y_N - y_{N-1})_i$", log_x=True))
    K = np.arange(2, 100_001)
    c["limit_curves"] = lambda: (({fr"$\beta = {b:g}$": (K, np.sqrt(1 + b) + 0 * K if b > -1 else 1 / K, np.sqrt(b + 1) if b > -1 else None)
                                   for b in (2.0, 1.0, 0.0, -0.5, -1.0, -2.0)},
                                  {"geometric, $q = 2$": (np.arange(2, 61), np.ones(59))}),
                                 dict(ylabel=r"$\sqrt{k}\,\omega_k$"))
    c["simulation_vs_prediction"] = lambda: (({f"simulation, a = {a:g}": (k48, 1 / k48, 0.01 / k48, 1 / k48) for a in (0.5, -0.5)},),
                                             dict(ylabel=r"mean square change $\omega_k^2$"))
    c["init_curves"] = lambda: (({a: 1 / k24 for a in ARCHS}, {a: 1 / _k(48) for a in ARCHS},
                                 {"blk": 1 / k24, "seed": np.r_[np.nan, 1 / k24[1:]], "sub": 1 / _k(48)}),
                                dict(dual=1 / k24))
    c["grad_profiles"] = lambda: (({a: 1 / k24 for a in ARCHS},), {})
    curves = {f"{a}, L = 24, seed 0": (np.r_[0, np.geomspace(10, 3600, 8)], np.linspace(3.5, 1.6, 9)) for a in
              ["Pre-LN", "Post-LN", "Peri-LN", "ResiDual", "LN-Scaling"]}
    c["loss_curves"] = lambda: ((curves, {"bigram": 2.5, "trigram": 2.1, "4-gram": 1.9}), {})
    rows = {f"{n}, L = 24": [(s, -0.5, -0.6, -0.4, -0.55) for s in (0, 30, 100, 300, 1000, 3600)]
            for n in ["Pre-LN", "Post-LN", "Peri-LN", "ResiDual"]}
    rows["LN-Scaling, L = 16, not-converged put back"] = rows["Pre-LN, L = 24"]
    c["exponent_through_training"] = lambda: ((rows, "each placement at its deepest depth with 3 kept seeds "
                                               "(or as labelled), fit over 2 <= k <= L; dotted: theorem, same range and convention"), {})
    th = {"theorem, embedding-counted (Pre-LN's rho chooses it at steps [0, 30, 100])": 1 / k24,
          "theorem, seed convention (at steps [300, 1000, 3600])": np.r_[np.nan, 1 / k24[1:]]}
    cc = {a: {f"step {s}, L = 24": (1 / k24, 0.01 / k24) for s in (0, 300, 3600)} for a in ARCHS[:5]}
    c["change_curves"] = lambda: ((cc, th, 24), {})
    c["correlation_maps"] = lambda: (({f"Pre-LN, L = 24, step {s}": np.eye(25) for s in (0, 3600)},), {})
    c["rc_profiles"] = lambda: (({f"step {s}": (1 / np.sqrt(k24), 0.1 + 0 * k24, k24 * 1.0) for s in (0, 3600)}, 24), {})
    c["ablation_profiles"] = lambda: (({f"{n}, L = 16": (np.r_[1.5, 0.01 * np.ones(15)], 0.003 * np.ones(16))
                                        for n in ["Pre-LN", "Post-LN", "Peri-LN", "ResiDual", "LN-Scaling"]},), {})
    dc = {a: ([2, 4, 8, 16, 24], [2, 1.9, 1.8, 1.75, 1.74], [1.9, 1.8, 1.7, 1.7, 1.7], [2.1, 2, 1.9, 1.8, 1.8]) for a in ARCHS[:5]}
    c["depth_curves"] = lambda: (({"after 3600 steps, kept runs": dc, "after 3600 steps, not-converged put back": dc,
                                   "at depth 8's compute, not-converged put back": dc},), {})
    kk = {m: _k(L) for m, L in zip(MODELS, (30, 24, 18, 6))}
    lp = {m: [{"k": kk[m], "y": 1 / kk[m], "yerr": 0.01 / kk[m], "fmt": "o-", "label": "Shakespeare"},
              {"k": kk[m], "y": 1.1 / kk[m], "yerr": 0.01 / kk[m], "fmt": "s-", "label": "pydoc"},
              {"k": kk[m], "y": 1 / kk[m], "fmt": "k-", "label": "theorem, embedding-counted"},
              {"k": kk[m][1:], "y": 1 / kk[m][1:], "fmt": "k--", "label": "theorem, seed convention"},
              {"k": kk[m][1:], "y": 1 / kk[m][1:], "fmt": ":", "color": "C3", "label": f"fit $k^{{-{i + 3}.12}}$ (Shakespeare)"}]
          for i, m in enumerate(MODELS)}
    c["line_panels"] = lambda: ((lp, r"change $\frac{1}{d}\|\mathrm{LN}_0(x_{k+1})-\mathrm{LN}_0(x_k)\|^2$"), {})
    lg = {m: [{"k": kk[m], "y": 1 / kk[m], "fmt": "o-", "label": "measured change"},
              {"k": kk[m], "y": 1 / kk[m], "fmt": "s--", "label": r"geometric reading $2(1-1/g_k)$"},
              {"k": kk[m], "y": 1 / kk[m], "fmt": "^:", "label": r"from $r_k, c_k$"}] for m in MODELS}
    c["line_panels (growth)"] = lambda: ((lg, "change"), dict(log_k=False, sharey=False))
    nr = {m.split(" (")[0]: ({"centred LN (theorem)": (kk[m], 1 / kk[m]), "RMSNorm, no gain": (kk[m], 1 / kk[m]),
                              "RMSNorm with the reader's gain": (kk[m], 1 / kk[m])} if i < 2 else
                             {"centred LN (theorem)": (kk[m], 1 / kk[m]), "what the block reads: the stream": (kk[m], 1 / kk[m])})
          for i, m in enumerate(MODELS)}
    c["norm_readings"] = lambda: ((nr,), {})
    c["sublayer_changes"] = lambda: (({m.split(" (")[0]: (kk[m], 1 / kk[m], 1 / kk[m]) for m in MODELS},), {})
    c["skip_costs"] = lambda: (({m: (kk[m], np.r_[1.0, 0.01 * np.ones(len(kk[m]) - 2), -0.001], 0.001 * np.ones(len(kk[m])),
                                     "loss increase (nats/token)" if i < 3 else "1 - cos(pooled output)")
                                 for i, m in enumerate(MODELS)},), {})
    fr = np.linspace(0, 0.5, 8)
    c["pruning_curves"] = lambda: (({m: ({r: (fr, fr ** 2) for r in ("change", "influence", "angular", "relative", "deepest")},
                                         0.01, "loss increase" if i < 3 else "1 - cos") for i, m in enumerate(MODELS)},), {})
    c["forest"] = lambda: (({f"claim {i}: some evidence value, L = 24": (0.5, 0.4, 0.6) for i in range(8)}, "exponent"),
                           dict(refs={"theorem": 0.5, "margin": 0.6}))
    return c


CASES = cases()


def _draw(name):
    args, kwargs = CASES[name]()
    return getattr(plots, name.split(" ")[0])(*args, **kwargs)


def test_every_figure_kind_the_chapters_draw_has_a_case():
    used = set()
    for nb in sorted((ROOT / "chapters").glob("*.ipynb")):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                used |= set(re.findall(r"plots\.(\w+)\(", "".join(cell["source"])))
    kinds = used - {"glue_figure", "close", "log_k_axis", "data_digest"}
    assert kinds, "no chapter draws a figure?"
    assert kinds <= {n.split(" ")[0] for n in CASES}, f"figure kinds without a case here: {sorted(kinds - set(CASES))}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_figure_is_drawn_for_the_column_with_no_text_under_the_minimum(name):
    """The stored PNG is at most the column's width (so the page never scales it down), and
    every visible text's effective size (font size x COLUMN_IN / shown width, when wider) is at
    least MIN_FONT_PT."""
    fig = _draw(name)
    try:
        width = plots.shown_width(fig)
        assert width <= plots.COLUMN_IN + 0.01, f"{name}: PNG {width:.2f} in wide, column {plots.COLUMN_IN} in"
        sizes = plots.effective_sizes(fig)
        assert sizes, "no text found: the check would pass vacuously"
        small = [(text, round(size, 2)) for text, size in sizes if size < plots.MIN_FONT_PT - 1e-6]
        assert not small, f"{name}: texts under {plots.MIN_FONT_PT} pt: {small[:5]}"
    finally:
        plots.close(fig)


@pytest.mark.parametrize("name", sorted(CASES))
def test_figure_panels_form_a_grid_not_a_strip(name):
    """Three or more panels go two to a row."""
    fig = _draw(name)
    try:
        panels = [ax for ax in fig.get_axes() if ax.get_subplotspec() is not None and ax.get_label() != "<colorbar>"]
        cols = {ax.get_subplotspec().colspan.start for ax in panels}
        assert len(cols) <= 2, f"{name}: {len(panels)} panels in {len(cols)} columns"
    finally:
        plots.close(fig)


def _overlaps(boxes):
    return [(a, b) for (a, ba), (b, bb) in itertools.combinations(boxes, 2) if ba.overlaps(bb)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_two_tick_labels_overlap(name):
    fig = _draw(name)
    try:
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        for ax in fig.get_axes():
            for axis in (ax.xaxis, ax.yaxis):
                lo, hi = sorted(axis.get_view_interval())
                boxes = [(t.label1.get_text(), t.label1.get_window_extent(r))
                         for t in axis.get_major_ticks() + axis.get_minor_ticks()
                         if t.label1.get_visible() and t.label1.get_text() and lo <= t.get_loc() <= hi]
                assert not _overlaps(boxes), f"{name}: tick labels overlap: {_overlaps(boxes)[:3]}"
    finally:
        plots.close(fig)


@pytest.mark.parametrize("L", [2, 3, 5, 6, 7, 12, 24, 30, 48, 96])
def test_log_k_axis_labels_are_plain_and_apart_at_any_depth(L):
    """The measure command's 6-block case and the deep runs' 48 and 96 included: plain labels
    (no 2 x 10^0), none overlapping in a half-column panel."""
    fig, axes = plots.column_panels(2)
    ax = axes[0]
    ax.plot(np.arange(1, L + 1), 1 / np.arange(1, L + 1))
    plots.log_k_axis(ax, L)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    labels = [(t.label1.get_text(), t.label1.get_window_extent(r)) for t in ax.xaxis.get_major_ticks() + ax.xaxis.get_minor_ticks()
              if t.label1.get_visible() and t.label1.get_text()]
    shown = [int(text) for text, _ in labels]
    assert shown and shown[0] == 1 and all(t in plots.K_TICKS and t <= L for t in shown)
    assert all(b / a >= 1.5 for a, b in zip(shown, shown[1:]))
    assert not _overlaps(labels)
    plots.close(fig)


def test_the_size_check_can_fail():
    """A strip of panels wider than the column, or a small font, is caught."""
    import matplotlib.pyplot as plt
    wide, axes = plt.subplots(1, 4, figsize=(14, 3))
    for ax in axes:
        ax.set_title("a title")
    assert plots.shown_width(wide) > plots.COLUMN_IN
    assert min(s for _, s in plots.effective_sizes(wide)) < plots.MIN_FONT_PT
    plt.close(wide)
    small, ax = plt.subplots(figsize=(4, 3))
    ax.text(0.5, 0.5, "tiny", fontsize=6)
    assert ("tiny", 6) in [(t, round(s)) for t, s in plots.effective_sizes(small)]
    plt.close(small)


def test_column_panels_has_exactly_n_axes_and_refuses_a_figure_wider_than_the_column():
    fig, axes = plots.column_panels(5)
    assert len(axes) == len(fig.get_axes()) == 5       # the grid's sixth cell is removed (data digest)
    plots.close(fig)
    with pytest.raises(ValueError, match="column"):
        plots.column_panels(2, width=plots.COLUMN_IN + 1)
