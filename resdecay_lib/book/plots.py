"""The book's figure kinds, for the theory, training and pretrained chapters: one function per kind.

Each function takes plain arrays and dicts (what :mod:`resdecay_lib.analysis.training_analysis` computes) and
returns a matplotlib Figure; the chapters glue it. Nothing here computes a result.
"""
from __future__ import annotations

import matplotlib

# no backend is forced: in a notebook the inline backend renders a glued figure as PNG,
# and a script without a display gets matplotlib's non-interactive default
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..checks import (Array, ArgumentTypeError, Flag, Instance, Real, Text, accepts, check_int,  # noqa: E402
                      check_items, check_real, show)

__all__ = ["NAMES", "K_TICKS", "log_k_axis", "close", "COLUMN_IN", "MIN_FONT_PT", "PANEL_H", "PAD_IN", "column_panels",
           "legend_below", "share_ylabel", "finish", "shown_width", "effective_sizes", "DIGEST_DIGITS", "data_digest", "glue_figure", "forest", "init_curves", "grad_profiles", "sublayer_changes", "line_panels", "exponent_through_training", "change_curves", "loss_curves",
           "ablation_profiles", "depth_curves", "correlation_maps", "rc_profiles", "skip_costs",
           "pruning_curves", "norm_readings", "theorem_simulation", "remainder_panels",
           "scaled_simulation", "limit_curves", "simulation_vs_prediction"]

def _check_panels(name: str, value, labels: bool = False) -> None:
    """A figure's data: a non-empty dict (one entry a line, a panel or a placement); with
    ``labels``, its keys are the text the figure shows (a legend's or a panel's), so strings."""
    if not isinstance(value, dict):
        raise ArgumentTypeError(f"{name} must be a dict (see the function's docstring), got {type(value).__name__}")
    if not value:
        raise ValueError(f"{name} must not be empty: nothing to draw")
    if labels:
        _check_labels(name, value)


def _check_labels(name: str, value: dict) -> None:
    """The keys of ``value`` label lines or panels: each a str."""
    for key in value:
        if not isinstance(key, str):
            raise ArgumentTypeError(f"{name}'s keys must be strings (they label the figure), got "
                                    f"{type(key).__name__} {show(key)}")


#: where the data sit on the axes (block indices, depths, steps, fractions): finite
_X = Array(ndim=1, what="a 1-D array of finite real numbers, at least one")
#: what is drawn against them: NaN is a gap in the line (the chapters glue NaN at k = 1 in the
#: seed convention, and pad shorter runs with it)
_Y = Array(ndim=1, finite=False, what="a 1-D array of real numbers (NaN draws a gap), at least one")
_LEVEL = Real()
_TEXT = Text(empty=True)


def _x(name: str, value) -> int:
    """``value`` is finite 1-D data that places the points; its length."""
    _X.check(name, value)
    return len(np.asarray(value))


def _y(name: str, value, n: int | None = None, *, errors: bool = False) -> None:
    """``value`` is 1-D data of ``n`` points (NaN a gap); ``errors``: error-bar half-widths
    (a scalar allowed, none negative)."""
    if errors and not isinstance(value, (list, tuple, np.ndarray)):
        _LEVEL.check(name, value)
        if value < 0:
            raise ValueError(f"{name} must be >= 0 (error-bar half-widths), got {show(value)}")
        return
    _Y.check(name, value)
    a = np.asarray(value, dtype=float)
    if n is not None and len(a) != n:
        raise ValueError(f"{name} must have one value per point: {n}, got {len(a)}")
    if errors and np.any(a[~np.isnan(a)] < 0):
        raise ValueError(f"{name} must be >= 0 (error-bar half-widths), got a negative value")


def _level(name: str, value) -> None:
    """A number drawn as a line across the panel: finite."""
    _LEVEL.check(name, value)


def _text(name: str, value) -> None:
    _TEXT.check(name, value)


def _entry(name: str, value, n: int) -> tuple:
    """An entry of a figure's dict that holds ``n`` things: a tuple or list of ``n``."""
    if not isinstance(value, (tuple, list)) or len(value) != n:
        raise ArgumentTypeError(f"{name} must be a tuple of {n} (see the function's docstring), got "
                                f"{type(value).__name__} {show(value, 60)}")
    return tuple(value)


_FIG = Instance("matplotlib.figure.Figure", "a matplotlib Figure")
_AX = Instance("matplotlib.axes.Axes", "a matplotlib Axes")


#: display names of the placements
NAMES = {"pre_ln": "Pre-LN", "post_ln": "Post-LN", "peri_ln": "Peri-LN",
         "resi_dual": "ResiDual", "ln_scaling": "LN-Scaling", "deepnorm": "DeepNorm",
         "mix_ln": "Mix-LN"}


#: the block indices a log k axis labels
K_TICKS = (1, 2, 4, 8, 16, 24, 32, 64)


@accepts(ax=_AX, ticks=Array(ndim=1, positive=True))
def log_k_axis(ax, L: int, ticks=K_TICKS) -> None:
    """A log axis of block indices 1..L with plain labels at ``ticks`` (no 2 x 10^0, no
    crowded minor labels); of two ticks closer than a factor 1.5 the smaller is dropped (24
    beside 32 when L >= 32: their labels would touch in a half-column panel).

    >>> fig, (ax,) = column_panels(1); log_k_axis(ax, 48); [int(t) for t in ax.get_xticks()]
    [1, 2, 4, 8, 16, 32]
    >>> log_k_axis(ax, 24); [int(t) for t in ax.get_xticks()]
    [1, 2, 4, 8, 16, 24]
    >>> close(fig)
    """
    check_int("L", L, 1)
    ax.set_xscale("log")
    kept = []
    for t in sorted((t for t in ticks if t <= L), reverse=True):
        if not kept or kept[-1] / t >= 1.5:
            kept.append(t)
    ax.set_xticks(kept[::-1])
    ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def _color(arch: str) -> str:
    """One colour per placement in every figure (its place in NAMES)."""
    return f"C{list(NAMES).index(arch) % 10}" if arch in NAMES else "k"


@accepts(fig=_FIG)
def close(fig) -> None:
    """Close a figure once it is glued, so the notebook does not show it a second time."""
    plt.close(fig)


# --- sizes: every figure is drawn at the size it is shown ------------------------------------

#: the book's column for a figure, in inches of a PNG drawn at matplotlib's 100 dpi (what the
#: notebooks store): sphinx-book-theme 1.3 gives a figure's image at most 672 CSS px at a 1280 px
#: window (688 px of text less the figure's padding; 740 px and more at other window widths),
#: measured with headless Chromium, so a PNG up to 6.7 in (670 px) is shown 1:1 and a wider one
#: is scaled down. A CSS px is 1/96 in, so 1:1 shows a figure's 9 pt as 9.4 pt. The PDF's column
#: (``tools/pdf.py``) is wider, so there a figure is never scaled down either.
COLUMN_IN = 6.7
#: the smallest font size, in points, of any text in a figure shown at the column's width
MIN_FONT_PT = 9.0
#: each panel's height in a grid of panels (inches)
PANEL_H = 2.5
#: the white margin a notebook's PNG adds on each side (``savefig.pad_inches``, with ``bbox_inches="tight"``)
PAD_IN = 0.1

_RC = {"font.size": MIN_FONT_PT, "axes.titlesize": MIN_FONT_PT + 1, "axes.labelsize": MIN_FONT_PT,
       "xtick.labelsize": MIN_FONT_PT, "ytick.labelsize": MIN_FONT_PT, "legend.fontsize": MIN_FONT_PT,
       "legend.title_fontsize": MIN_FONT_PT, "figure.titlesize": MIN_FONT_PT + 1,
       "figure.labelsize": MIN_FONT_PT, "legend.handlelength": 1.8, "legend.columnspacing": 1.2}


def column_panels(n: int = 1, *, ncols: int | None = None, panel_height: float = PANEL_H,
                  width: float = COLUMN_IN - 2 * PAD_IN, height: float | None = None, **subplot_kw):
    """A figure for the book's column: ``n`` panels in a grid of ``ncols`` columns (default: one
    panel alone, two side by side, more in two columns, never a strip), ``width`` inches wide (at
    most :data:`COLUMN_IN`), with constrained layout and the book's font sizes; returns
    ``(fig, axes)``, axes a flat list of ``n`` (a grid's unused cells are removed, so the figure
    has exactly ``n`` axes). The default width leaves room for the PNG's margins (:data:`PAD_IN`),
    so the stored image is the column's width. Every figure function draws into it and ends
    with :func:`finish`.

    >>> fig, axes = column_panels(4)
    >>> len(axes), fig.get_size_inches().round(2).tolist()
    (4, [6.5, 5.0])
    >>> close(fig)
    """
    check_int("n", n, 1)
    if ncols is not None:
        check_int("ncols", ncols, 1)
    check_real("panel_height", panel_height, 0, lo_open=True)
    check_real("width", width, 0, lo_open=True)
    if height is not None:
        check_real("height", height, 0, lo_open=True)
    if width > COLUMN_IN - 2 * PAD_IN + 1e-9:
        raise ValueError(f"width must be at most the column's {COLUMN_IN} in less the PNG's margins, got {width}")
    ncols = ncols or min(n, 2)
    nrows = -(-n // ncols)
    with plt.rc_context(_RC):
        fig, grid = plt.subplots(nrows, ncols, squeeze=False, layout="constrained",
                                 figsize=(width, height or panel_height * nrows), **subplot_kw)
    axes = list(grid.ravel())
    for ax in axes[n:]:
        fig.delaxes(ax)
    for ax in axes[:n]:
        _floor_ticks(ax)
    return fig, axes[:n]


def _floor_ticks(ax) -> None:
    """Tick labels made later (at draw time, outside this module's rc) keep the book's size."""
    for axis in (ax.xaxis, ax.yaxis):
        for which in ("major", "minor"):
            axis.set_tick_params(which=which, labelsize=max(MIN_FONT_PT, _tick_size(axis, which)))


def _tick_size(axis, which: str) -> float:
    ticks = axis.get_major_ticks() if which == "major" else axis.get_minor_ticks()
    return ticks[0].label1.get_fontsize() if ticks else MIN_FONT_PT


@accepts(fig=_FIG, loc=Text())
def legend_below(fig, axes, ncol: int = 2, loc: str = "outside lower center", only=None, **kw):
    """One legend for the whole figure, under its panels (outside them, so it hides no data):
    the labelled lines of ``axes`` (an axes or a list), each label once, in order (``only``: a
    set of the labels to show)."""
    check_int("ncol", ncol, 1)
    for i, ax in enumerate(np.atleast_1d(np.asarray(axes, dtype=object))):
        _AX.check(f"axes[{i}]", ax)
    seen = {}
    for ax in np.atleast_1d(axes):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in seen and (only is None or lab in only):
                seen[lab] = h
    if not seen:
        return None
    return fig.legend(list(seen.values()), list(seen), loc=loc, ncol=min(ncol, len(seen)),
                      fontsize=MIN_FONT_PT, **kw)


@accepts(fig=_FIG, ax=_AX)
def share_ylabel(fig, ax) -> None:
    """With panels in more than one row, the first panel's y label (the one its data digest
    reads) is drawn once for the whole figure, beside every row."""
    if len({a.get_subplotspec().rowspan.start for a in fig.get_axes() if a.get_subplotspec()}) > 1:
        fig.supylabel(ax.get_ylabel(), fontsize=MIN_FONT_PT)
        ax.yaxis.label.set_visible(False)


@accepts(fig=_FIG)
def finish(fig):
    """The last step of every figure function: no text smaller than :data:`MIN_FONT_PT` (a floor
    on every text the figure holds, tick labels made later included); returns ``fig``."""
    import matplotlib.text
    for t in fig.findobj(matplotlib.text.Text):
        if t.get_fontsize() < MIN_FONT_PT:
            t.set_fontsize(MIN_FONT_PT)
    for ax in fig.get_axes():
        _floor_ticks(ax)
        ax.title.set_wrap(True)       # a long title breaks into lines at draw time; its text is unchanged
    return fig


@accepts(fig=_FIG)
def shown_width(fig) -> float:
    """Width in inches of the PNG a notebook stores for ``fig`` (``bbox_inches="tight"``, padded
    by 0.1 in each side): what the column scales down when it is wider than :data:`COLUMN_IN`."""
    fig.canvas.draw()
    return fig.get_tightbbox(fig.canvas.get_renderer()).width + 2 * PAD_IN


@accepts(fig=_FIG)
def effective_sizes(fig) -> list[tuple[str, float]]:
    """(text, size in points as a reader sees it) for every visible text of ``fig`` once drawn:
    its font size times COLUMN_IN / the shown width when the PNG is wider than the column (the
    page scales it down), else its font size (a narrower PNG is shown at its size)."""
    import matplotlib.text
    scale = min(1.0, COLUMN_IN / shown_width(fig))
    renderer = fig.canvas.get_renderer()
    out = []
    for t in fig.findobj(matplotlib.text.Text):
        if not t.get_visible() or not t.get_text().strip():
            continue
        if t.get_window_extent(renderer).width <= 0:
            continue
        out.append((t.get_text(), t.get_fontsize() * scale))
    return out


#: significant digits of a figure's data digest: what survives another CPU's last bits
DIGEST_DIGITS = 3


def _num(v: float, digits: int) -> str:
    return "nan" if not np.isfinite(v) else f"{v:.{digits}g}"


def _summary(values, digits: int) -> str:
    a = np.asarray(values, dtype=np.float64).ravel()
    a = a[np.isfinite(a)]
    if a.size == 0:
        return "no finite values"
    return (f"n={a.size} min={_num(a.min(), digits)} max={_num(a.max(), digits)} "
            f"mean={_num(a.mean(), digits)}")


@accepts(fig=_FIG)
def data_digest(fig, digits: int = DIGEST_DIGITS) -> str:
    """What a figure shows, as text: per panel its title and labels, and per line, image and
    marker set its label and a summary of its data (count, min, max, mean of the y values, or
    of the image's values), each to ``digits`` significant digits.

    nbval compares this text instead of the PNG's bytes, which change with the last bits of
    the CPU's arithmetic (AVX2, AVX-512 or torch's portable kernels); a change to what the figure shows changes the digest."""
    check_int("digits", digits, 1, 17)
    lines = []
    for i, ax in enumerate(fig.get_axes()):
        head = f"panel {i + 1}: {ax.get_title()!r} x {ax.get_xlabel()!r} y {ax.get_ylabel()!r}"
        lines.append(head)
        for ln in ax.get_lines():
            x, y = ln.get_xdata(), ln.get_ydata()
            if np.size(y) == 0:
                continue
            lines.append(f"  line {ln.get_label()!r}: x {_summary(x, digits)}; y {_summary(y, digits)}")
        for im in ax.get_images():
            lines.append(f"  image {np.shape(im.get_array())}: {_summary(im.get_array(), digits)}")
        for c in ax.collections:
            off = np.asarray(c.get_offsets())
            if off.size:
                lines.append(f"  markers {c.get_label()!r}: y {_summary(off[:, -1], digits)}")
        for p in ax.patches:
            if hasattr(p, "get_height"):
                lines.append(f"  patch: height {_num(p.get_height(), digits)}")
    return "\n".join(lines)


@accepts(fig=_FIG)
def glue_figure(name: str, fig, digits: int = DIGEST_DIGITS) -> None:
    """Glue ``fig`` under ``name`` (myst-nb, not displayed), glue its :func:`data_digest` under
    ``name + "-data"`` (the text nbval compares; not displayed either), and close the figure.

    It returns nothing, so a cell that ends with it shows no machinery in the book: the digest
    is compared as a stored glue record, never printed (``data_digest(fig)`` gives it)."""
    from myst_nb import glue
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a figure label, got {name!r}")
    digest = data_digest(fig, digits)
    glue(name, fig, display=False)
    glue(name + "-data", digest, display=False)
    close(fig)


def init_curves(blk: dict, sub: dict, theory: dict, dual=None):
    """Chapter 6: the per-layer change at initialisation, blocks (left) and sublayers (right).

    ``blk``, ``sub``: {arch: mean curve over k = 1..L (resp. 1..2L)}; ``theory``: {"blk": w_k^2
    embedding-counted, "seed": the seed convention (NaN at k = 1), "sub": sublayer w_k^2};
    ``dual``: ResiDual's x_d at block granularity. ResiDual's x_a is dashed: it lies on Post-LN's.
    """
    _check_panels("blk", blk, labels=True)
    _check_panels("sub", sub, labels=True)
    if not isinstance(theory, dict) or not {"blk", "seed", "sub"} <= set(theory):
        raise ValueError(f"theory must be a dict with the curves 'blk', 'seed' and 'sub', got {show(theory, 60)}")
    _y("theory['blk']", theory["blk"])
    n, m = len(theory["blk"]), (_y("theory['sub']", theory["sub"]) or len(theory["sub"]))
    _y("theory['seed']", theory["seed"], n)
    for arch, y in blk.items():
        _y(f"blk[{arch!r}]", y, n)
    for arch, y in sub.items():
        _y(f"sub[{arch!r}]", y, m)
    if dual is not None:
        _y("dual", dual, n)
    fig, axes = column_panels(2, height=4.3, sharey=True)
    for ax, curves, w, title in ((axes[0], blk, theory["blk"], "block granularity"),
                                 (axes[1], sub, theory["sub"], "sublayer granularity")):
        k = np.arange(1, len(w) + 1)
        for arch, y in curves.items():
            ax.plot(k, y, color=_color(arch), lw=1.5, label=arch, ls="--" if arch == "resi_dual" else "-")
        ax.plot(k, w, color="k", lw=2.5, alpha=0.4, label="theory $w_k^2$ (embedding-counted)")
        if curves is blk:
            ax.plot(k, theory["seed"], color="k", lw=1, ls=":", label="theory $w_k^2$ (seed convention)")
            if dual is not None:
                ax.plot(k, dual, color=_color("resi_dual"), lw=1, ls=":", label="resi_dual, dual stream $x_d$")
        ax.set(xscale="log", yscale="log", title=title,
               xlabel="$k$ (block)" if curves is blk else "$k$ (residual addition)")
        log_k_axis(ax, len(w))
    axes[0].set_ylabel(r"$\|\mathrm{LN}_0(x_{k+1}) - \mathrm{LN}_0(x_k)\|^2 / d$")
    legend_below(fig, axes[0], ncol=3)
    return finish(fig)


def grad_profiles(grads: dict):
    """Chapter 6: {arch: mean gradient norm of block k's parameters, k = 1..L} on log axes."""
    _check_panels("grads", grads, labels=True)
    for arch, g in grads.items():
        _y(f"grads[{arch!r}]", g)
    fig, (ax,) = column_panels(1, width=5.6, height=3.6)
    for arch, g in grads.items():
        ax.plot(np.arange(1, len(g) + 1), g, color=_color(arch), label=arch,
                ls="--" if arch == "resi_dual" else "-")
    ax.set(xscale="log", yscale="log", xlabel="block $k$", ylabel="gradient norm of block $k$'s parameters")
    ax.legend(ncol=2)
    return finish(fig)


@accepts(ticks=Array(ndim=1, positive=True))
def sublayer_changes(panels: dict, ticks=K_TICKS):
    """Chapter 9: {title: (k, attention-step change, MLP-step change)}, one log-log panel each."""
    _check_panels("panels", panels, labels=True)
    for title, v in panels.items():
        k, att, mlp = _entry(f"panels[{title!r}]", v, 3)
        n = _x(f"panels[{title!r}][0]", k)
        _y(f"panels[{title!r}][1]", att, n)
        _y(f"panels[{title!r}][2]", mlp, n)
    fig, axes = column_panels(len(panels), sharey=True)
    for ax, (title, (k, att, mlp)) in zip(axes, panels.items()):
        ax.plot(k, att, "o-", ms=3, label="attention step")
        ax.plot(k, mlp, "s-", ms=3, label="MLP step")
        ax.set(xscale="log", yscale="log", xlabel="block $k$", title=title)
        log_k_axis(ax, int(np.max(k)), ticks)
    axes[0].set_ylabel("change per sublayer")
    share_ylabel(fig, axes[0])
    legend_below(fig, axes[0])
    return finish(fig)


@accepts(ylabel=_TEXT, log_k=Flag(), ticks=Array(ndim=1, positive=True), sharey=Flag())
def line_panels(panels: dict, ylabel: str, log_k: bool = True, ticks=K_TICKS, sharey: bool = True,
                ncols: int | None = None):
    """Panels of lines against block k, two to a row (Chapter 9's per-model figures).

    ``panels``: {title: [line, ...]}, each line a dict with ``k``, ``y`` and optionally
    ``yerr`` (drawn as error bars), ``fmt`` (a matplotlib format string), ``label``, ``color``.
    ``log_k``: a log k axis with plain labels at ``ticks``; y is always logarithmic. ``ncols``:
    the grid's columns (default two, :func:`column_panels`'); three keep seven panels on one page.
    """
    _check_panels("panels", panels, labels=True)
    for title, lines in panels.items():
        lines = check_items(f"panels[{title!r}]", lines, dict, "a dict (a line)")
        if not lines:
            raise ValueError(f"panels[{title!r}] must hold at least one line, got none")
        for j, ln in enumerate(lines):
            where = f"panels[{title!r}][{j}]"
            if "k" not in ln or "y" not in ln:
                raise ValueError(f"{where} must have 'k' and 'y', got the keys {sorted(map(str, ln))}")
            n = _x(f"{where}['k']", ln["k"])
            _y(f"{where}['y']", ln["y"], n)
            if ln.get("yerr") is not None:
                _y(f"{where}['yerr']", ln["yerr"], n, errors=True)
            for key in ("fmt", "label", "color"):
                if ln.get(key) is not None:
                    _text(f"{where}[{key!r}]", ln[key])
    fig, axes = column_panels(len(panels), sharey=sharey, ncols=ncols)
    for ax, (title, lines) in zip(axes, panels.items()):
        kmax = 1
        for ln in lines:
            k, y = np.asarray(ln["k"]), np.asarray(ln["y"], float)
            kmax = max(kmax, int(np.max(k)))
            style = {"label": ln.get("label"), **({"color": ln["color"]} if ln.get("color") else {})}
            if ln.get("yerr") is not None:
                ax.errorbar(k, y, yerr=ln["yerr"], fmt=ln.get("fmt", "o-"), ms=3, lw=1, capsize=2, **style)
            else:
                ax.plot(k, y, ln.get("fmt", "-"), ms=3, lw=1.5 if ":" in ln.get("fmt", "-") else 1, **style)
        ax.set(yscale="log", xlabel="block $k$", title=title)
        if log_k:
            log_k_axis(ax, kmax, ticks)
    axes[0].set_ylabel(ylabel)
    share_ylabel(fig, axes[0])
    # labels every panel has go under the figure; a panel's own (a fit naming its exponent) in it
    labels = [set(ax.get_legend_handles_labels()[1]) for ax in axes]
    shared = set.intersection(*labels)
    legend_below(fig, axes[0], only=shared)
    for ax, own in zip(axes, labels):
        if own - shared:
            hl = [(h, lab) for h, lab in zip(*ax.get_legend_handles_labels()) if lab not in shared]
            ax.legend(*zip(*hl), loc="lower left" if sharey else "best")
    return finish(fig)


def exponent_through_training(rows: dict, title: str):
    """rows: {arch: [(step, mean, lo, hi, reference), ...]} -> exponent of omega_k^2 vs step."""
    _check_panels("rows", rows, labels=True)
    if not isinstance(title, str):
        raise ArgumentTypeError(f"title must be a str, got {type(title).__name__}")
    for a, pts in rows.items():
        if not isinstance(pts, (list, tuple)):
            raise ArgumentTypeError(f"rows[{a!r}] must be a list of (step, mean, lo, hi, reference), got "
                                    f"{type(pts).__name__} {show(pts, 60)}")
        if not pts:
            raise ValueError(f"rows[{a!r}] must hold at least one point, got none")
        for j, p in enumerate(pts):
            _entry(f"rows[{a!r}][{j}]", p, 5)
        _x(f"rows[{a!r}]'s steps", [p[0] for p in pts])
        for j, what in ((1, "means"), (2, "lower ends"), (3, "upper ends"), (4, "references")):
            _y(f"rows[{a!r}]'s {what}", [p[j] for p in pts])
    fig, (ax,) = column_panels(1, height=4.4)
    for i, (a, pts) in enumerate(rows.items()):
        st = np.array([p[0] for p in pts], float)
        x = np.where(st == 0, st[1] / 3 if len(st) > 1 else 1, st) * (1 + 0.04 * (i - 2))
        m, lo, hi = (np.array([p[j] for p in pts]) for j in (1, 2, 3))
        ax.errorbar(x, m, yerr=[m - lo, hi - m], fmt="o-", ms=3, lw=1, capsize=2,
                    color=f"C{i}", label=NAMES.get(a, a))
        ax.plot(x, [p[4] for p in pts], ":", color=f"C{i}", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("training step (step 0 drawn at the left)")
    ax.set_ylabel(r"exponent of $\omega_k^2$")
    ax.set_title(title, fontsize=MIN_FONT_PT, wrap=True)
    legend_below(fig, ax, ncol=2)
    return finish(fig)


def change_curves(curves: dict, theory: dict, L: int):
    """curves: {arch: {label: (mean, se)}} over k = 1..L; theory: {label: curve}."""
    _check_panels("curves", curves, labels=True)
    if not isinstance(theory, dict):
        raise ArgumentTypeError(f"theory must be a dict {{label: curve}}, got {type(theory).__name__}")
    check_int("L", L, 1)
    _check_labels("theory", theory)
    for a, byw in curves.items():
        _check_panels(f"curves[{a!r}]", byw, labels=True)
        for w, v in byw.items():
            m, se = _entry(f"curves[{a!r}][{w!r}]", v, 2)
            _y(f"curves[{a!r}][{w!r}][0]", m, L)
            _y(f"curves[{a!r}][{w!r}][1]", se, L, errors=True)
    for lab, y in theory.items():
        _y(f"theory[{lab!r}]", y)
        if len(y) < L:
            raise ValueError(f"theory[{lab!r}] must have at least L = {L} values, got {len(y)}")
    fig, axes = column_panels(len(curves), panel_height=2.1, sharey=True)
    k = np.arange(1, L + 1)
    for ax, (a, byw) in zip(axes, curves.items()):
        for j, (w, (m, se)) in enumerate(byw.items()):
            ax.errorbar(k, m, yerr=2 * np.asarray(se), fmt="o-", ms=2, lw=0.8,
                        color=str(0.65 - 0.6 * j / max(1, len(byw) - 1)) if j < len(byw) - 1 else "C0",
                        label=w)
        for st, (lab, y) in zip(("k--", "k:"), theory.items()):
            ax.plot(k, y[:L], st, lw=1, label=lab)
        log_k_axis(ax, L)
        ax.set_yscale("log")
        ax.set_title(NAMES.get(a, a))
        ax.set_xlabel("block k")
    axes[0].set_ylabel(r"$\omega_k^2$ measured")
    share_ylabel(fig, axes[0])
    legend_below(fig, axes[0], ncol=1)
    return finish(fig)


def loss_curves(curves: dict, baselines: dict):
    """curves: {label: (steps, loss)}; baselines: {label: loss} drawn as horizontal lines."""
    _check_panels("curves", curves, labels=True)
    if not isinstance(baselines, dict):
        raise ArgumentTypeError(f"baselines must be a dict {{label: loss}}, got {type(baselines).__name__}")
    for lab, v in curves.items():
        st, y = _entry(f"curves[{lab!r}]", v, 2)
        _y(f"curves[{lab!r}][1]", y, _x(f"curves[{lab!r}][0]", st))
    _check_labels("baselines", baselines)
    for lab, v in baselines.items():
        _level(f"baselines[{lab!r}]", v)
    fig, (ax,) = column_panels(1, height=4.0)
    for i, (lab, (s, y)) in enumerate(curves.items()):
        ax.plot(np.maximum(s, 1), y, "-", lw=1, color=f"C{i % 10}", label=lab)
    for j, (lab, v) in enumerate(baselines.items()):
        ax.axhline(v, color="0.5", lw=0.8, ls=("--", ":", "-.", (0, (1, 3)))[j % 4])
        ax.text(1.05, v, lab, fontsize=MIN_FONT_PT, va="bottom", color="0.3")
    ax.set_xscale("log")
    ax.set_xlabel("training step")
    ax.set_ylabel("validation loss (nats/char)")
    ax.set_ylim(1.4, 3.6)
    legend_below(fig, ax, ncol=2)
    return finish(fig)


def ablation_profiles(profiles: dict):
    """profiles: {title: (delta_mean [L], se [L])}: loss increase from removing block k."""
    _check_panels("profiles", profiles, labels=True)
    for t, v in profiles.items():
        m, se = _entry(f"profiles[{t!r}]", v, 2)
        _y(f"profiles[{t!r}][0]", m)
        _y(f"profiles[{t!r}][1]", se, len(m), errors=True)
    fig, axes = column_panels(len(profiles), panel_height=2.3)
    for ax, (t, (m, se)) in zip(axes, profiles.items()):
        k = np.arange(1, len(m) + 1)
        ax.bar(k[1:], m[1:], yerr=2 * np.asarray(se[1:]), color="C0", width=0.7)
        ax.set_title(f"{t}\nblock 1: {m[0]:.2f}", fontsize=MIN_FONT_PT)
        ax.axhline(0, color="k", lw=0.5)
        ax.set_xlabel("block k removed (k >= 2)")
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))   # blocks, not 2.5
    axes[0].set_ylabel("validation loss increase")
    share_ylabel(fig, axes[0])
    return finish(fig)


def depth_curves(panels: dict):
    """panels: {title: {arch: (depths, mean, lo, hi)}}: validation loss against depth."""
    _check_panels("panels", panels, labels=True)
    for t, byarch in panels.items():
        _check_panels(f"panels[{t!r}]", byarch, labels=True)
        for a, v in byarch.items():
            where = f"panels[{t!r}][{a!r}]"
            d, m, lo, hi = _entry(where, v, 4)
            n = _x(f"{where}[0]", d)
            for j, y in ((1, m), (2, lo), (3, hi)):
                _y(f"{where}[{j}]", y, n)
            m, lo, hi = (np.asarray(y, dtype=float) for y in (m, lo, hi))
            with np.errstate(invalid="ignore"):
                if np.any((m < lo) | (hi < m)):
                    raise ValueError(f"{where} must have lo <= mean <= hi at every depth")
    fig, axes = column_panels(len(panels), panel_height=2.6)
    for ax, (t, byarch) in zip(axes, panels.items()):
        for i, (a, (d, m, lo, hi)) in enumerate(byarch.items()):
            m, lo, hi = map(np.asarray, (m, lo, hi))
            ax.errorbar(np.asarray(d) * (1 + 0.02 * (i - 2)), m, yerr=[m - lo, hi - m], fmt="o-",
                        ms=3, capsize=2, lw=1, color=_color(a), label=NAMES.get(a, a))
        ax.set_xscale("log")
        ax.set_xticks(sorted({x for v in byarch.values() for x in v[0]}))
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.get_xaxis().set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("depth L")
        ax.set_title(t, fontsize=MIN_FONT_PT, wrap=True)
    axes[0].set_ylabel("validation loss (nats/char)")
    share_ylabel(fig, axes[0])
    # every placement once, for all panels (each panel draws those it has)
    legend_below(fig, axes, ncol=5)
    return finish(fig)


def correlation_maps(mats: dict):
    """mats: {title: correlation matrix}: the summands' correlations."""
    _check_panels("mats", mats, labels=True)
    for t, C in mats.items():
        Array(ndim=2, finite=False, what="a 2-D array of real numbers (a matrix)").check(f"mats[{t!r}]", C)
    fig, axes = column_panels(len(mats), panel_height=3.0)
    for ax, (t, C) in zip(axes, mats.items()):
        im = ax.imshow(C, vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set_title(t, fontsize=MIN_FONT_PT)
        ax.set_xlabel("summand j (0 = embedding)")
    axes[0].set_ylabel("summand i")
    share_ylabel(fig, axes[0])
    cb = fig.colorbar(im, ax=axes, shrink=0.8, label="correlation")
    _floor_ticks(cb.ax)
    return finish(fig)


def rc_profiles(prof: dict, L: int):
    """prof: {label: (r [L], c [L], s2 [L])}: block output variance, r_k and c_k against k."""
    _check_panels("prof", prof, labels=True)
    check_int("L", L, 1)
    for lab, v in prof.items():
        for j, y in enumerate(_entry(f"prof[{lab!r}]", v, 3)):
            _y(f"prof[{lab!r}][{j}]", y, L)
    fig, axes = column_panels(3)
    k = np.arange(1, L + 1)
    for i, (lab, (r, c, s2)) in enumerate(prof.items()):
        axes[0].plot(k, s2, "o-", ms=2, lw=0.8, color=f"C{i}", label=lab)
        axes[1].plot(k, r, "o-", ms=2, lw=0.8, color=f"C{i}", label=lab)
        axes[2].plot(k, c, "o-", ms=2, lw=0.8, color=f"C{i}", label=lab)
    axes[1].plot(k, 1 / np.sqrt(k), "k--", lw=1, label=r"$1/\sqrt{k}$ (theorem)")
    axes[1].plot(k, 1 / k, "k:", lw=1, label=r"$1/k$ (feedback, Chapter 5)")
    axes[0].set_yscale("log")
    axes[0].set_ylabel(r"$s_k^2$ (block output variance)")
    for ax in axes[:2]:
        log_k_axis(ax, L)
    axes[1].set_yscale("log")
    axes[1].set_ylabel(r"$r_k$ = |block output| / |stream|")
    axes[2].axhline(0, color="k", lw=0.6)
    axes[2].set_ylabel(r"$c_k$ = cos(stream, block output)")
    for ax in axes:
        ax.set_xlabel("block k")
    # the fourth cell of the grid holds the legend: the runs, then the theory's lines
    legend_below(fig, axes[:2], ncol=1, bbox_to_anchor=(0.75, 0.25), loc="center")
    return finish(fig)


#: line style of each ranking in the pruning figure (pruning.RANKINGS)
_RANKING_STYLE = {"change": ("C3", "o-"), "influence": ("C0", "s-"), "angular": ("C2", "^-"),
                  "relative": ("C4", "v-"), "deepest": ("k", "x--")}


def skip_costs(panels: dict):
    """panels: {title: (k [L], mean [L], se [L], ylabel)} -> the cost of skipping each block,
    +-2 standard errors over sequences, one panel per model; log y (block 1 often costs ten
    times the rest), so a non-positive mean is drawn at the axis floor as an open marker."""
    _check_panels("panels", panels, labels=True)
    for title, v in panels.items():
        k, mean, se, ylabel = _entry(f"panels[{title!r}]", v, 4)
        n = _x(f"panels[{title!r}][0]", k)
        # a NaN mean has no place on the log axis: it would be drawn as a non-positive one
        _X.check(f"panels[{title!r}][1]", mean)
        _y(f"panels[{title!r}][1]", mean, n)
        _y(f"panels[{title!r}][2]", se, n, errors=True)
        _text(f"panels[{title!r}][3]", ylabel)
    fig, axes = column_panels(len(panels))
    for ax, (title, (k, mean, se, ylabel)) in zip(axes, panels.items()):
        k, mean, se = (np.asarray(v, float) for v in (k, mean, se))
        pos = mean > 0
        floor = mean[pos].min() / 3 if pos.any() else 1e-4
        ax.errorbar(k[pos], mean[pos], yerr=np.minimum(2 * se[pos], 0.999 * mean[pos]), fmt="o", ms=3,
                    lw=1, capsize=2)
        ax.plot(k[~pos], np.full((~pos).sum(), floor), "o", mfc="none", ms=4, color="C0")
        ax.set(yscale="log", xlabel="block $k$ skipped", title=title, ylabel=ylabel)
        ax.set_ylim(bottom=floor / 2)
        log_k_axis(ax, int(k.max()))
    return finish(fig)


def pruning_curves(panels: dict):
    """panels: {title: ({ranking: (fraction removed [n], mean increase [n])}, band, ylabel)}
    -> the cost as blocks are removed by each ranking, with the noise band (dotted)."""
    _check_panels("panels", panels, labels=True)
    for title, v in panels.items():
        curves, band, ylabel = _entry(f"panels[{title!r}]", v, 3)
        _check_panels(f"panels[{title!r}][0]", curves, labels=True)
        for name, c in curves.items():
            frac, mean = _entry(f"panels[{title!r}][0][{name!r}]", c, 2)
            _y(f"panels[{title!r}][0][{name!r}][1]", mean, _x(f"panels[{title!r}][0][{name!r}][0]", frac))
        _level(f"panels[{title!r}][1]", band)
        _text(f"panels[{title!r}][2]", ylabel)
    fig, axes = column_panels(len(panels))
    for ax, (title, (curves, band, ylabel)) in zip(axes, panels.items()):
        for name, (frac, mean) in curves.items():
            color, style = _RANKING_STYLE.get(name, ("C7", "o-"))
            # the change drawn on top and wider: ShortGPT's ranking often removes the same blocks
            wide = name == "change"
            ax.plot(frac, mean, style, color=color, ms=5 if wide else 3, lw=2.5 if wide else 1,
                    label=name, zorder=3 if wide else 4, alpha=0.6 if wide else 1)
        ax.axhline(band, color="0.5", ls=":", lw=1, label="noise band")
        ax.set_yscale("symlog", linthresh=max(band, 1e-3))
        ax.set(xlabel="fraction of blocks removed", title=title, ylabel=ylabel)
        ax.set_ylim(bottom=0)
    legend_below(fig, axes[0], ncol=3)
    return finish(fig)


def norm_readings(panels: dict):
    """panels: {title: {label: (k [L], change [L])}} -> the change through each normaliser."""
    _check_panels("panels", panels, labels=True)
    for title, lines in panels.items():
        _check_panels(f"panels[{title!r}]", lines, labels=True)
        for label, v in lines.items():
            k, y = _entry(f"panels[{title!r}][{label!r}]", v, 2)
            _y(f"panels[{title!r}][{label!r}][1]", y, _x(f"panels[{title!r}][{label!r}][0]", k))
    fig, axes = column_panels(len(panels), sharey=False)
    for ax, (title, lines) in zip(axes, panels.items()):
        L = 2
        for (label, (k, y)), style in zip(lines.items(), ("o-", "s--", "^:", "k-")):
            ax.plot(k, y, style, ms=3, lw=1, label=label)
            L = max(L, int(np.max(k)))
        ax.set(yscale="log", xlabel="block $k$", title=title)
        log_k_axis(ax, L)
    axes[0].set_ylabel("change")
    share_ylabel(fig, axes[0])
    # every panel's readings (a style can mean another reading in a model without RMSNorm)
    legend_below(fig, axes, ncol=2)
    return finish(fig)


# --- the theory chapters (2-5): simulations of the Gaussian model against the theory ---------


def _check_pair(name: str, value, n: int) -> None:
    """A tuple of ``n`` arrays (what each entry of a theory figure's dict holds)."""
    if not isinstance(value, tuple) or len(value) != n:
        raise ArgumentTypeError(f"{name} must be a tuple of {n} arrays (see the function's docstring), got {value!r:.60}")


def theorem_simulation(k, omega, shown: dict, rel: dict):
    """Chapter 2: the simulated mean square change against the theorem's omega_k^2 (left) and
    every width's relative departure from it with the finite-width predictions (right).

    ``k``, ``omega``: the theorem's omega_k^2 at blocks k (seed convention); ``shown``:
    {width: (k, mean square change, error-bar half-width)}, the widths drawn on the left;
    ``rel``: {width: (k, simulation / omega - 1, its half-width, first-order prediction / omega
    - 1, exact prediction / omega - 1)}, every width on the right.
    """
    _check_panels("shown", shown)
    _check_panels("rel", rel)
    for d, v in shown.items():
        _check_pair(f"shown[{d!r}]", v, 3)
    for d, v in rel.items():
        _check_pair(f"rel[{d!r}]", v, 5)
    n = _x("k", k)
    _y("omega", omega, n)
    for d, (ks, m, h) in shown.items():
        nk = _x(f"shown[{d!r}][0]", ks)
        _y(f"shown[{d!r}][1]", m, nk)
        _y(f"shown[{d!r}][2]", h, nk, errors=True)
    for d, (ks, y, h, first, exact) in rel.items():
        nk = _x(f"rel[{d!r}][0]", ks)
        _y(f"rel[{d!r}][1]", y, nk)
        _y(f"rel[{d!r}][2]", h, nk, errors=True)
        _y(f"rel[{d!r}][3]", first, n)
        _y(f"rel[{d!r}][4]", exact, n)
    k = np.asarray(k)
    fig, (ax0, ax1) = column_panels(2, height=4.4)
    ax0.loglog(k, omega, color="black", lw=1.2, label=r"theorem $\omega_k^2$")
    ax0.loglog(k, 1 / k, color="grey", lw=0.8, ls=":", label=r"$1/k$")
    for (d, (ks, m, h)), marker in zip(shown.items(), ("o", "s", "^", "D")):
        ax0.errorbar(ks, m, yerr=h, fmt=marker, ms=3, lw=0.8, label=f"simulation, d = {d}")
    ax0.set_xlabel("block k (seed convention)")
    ax0.set_ylabel("mean square change per coordinate")
    ax0.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1)
    for i, (d, (ks, y, h, first, exact)) in enumerate(rel.items()):
        color = f"C{i % 10}"
        ax1.errorbar(ks, y, yerr=h, fmt="o", ms=2.5, lw=0.6, color=color, label=f"d = {d}")
        ax1.plot(k, first, color=color, lw=1.2, ls="--")
        ax1.plot(k, exact, color=color, lw=0.8)
    ax1.axhline(0, color="black", lw=0.8)
    ax1.set_xlabel("block k (seed convention)")
    ax1.set_ylabel(r"simulation / $\omega_k^2$ - 1")
    ax1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3,
               title="dashed: first order; solid: exact")
    for ax in (ax0, ax1):
        log_k_axis(ax, int(k.max()), (2, 4, 8, 16, 32, 64))
    ax0.set_yticks([0.02, 0.05, 0.1, 0.2, 0.5])
    ax0.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax0.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    return finish(fig)


def remainder_panels(k, curves: dict, remainder, levels: dict):
    """Chapter 3: a quantity against its leading term (left, log-log) and the scaled remainder
    against its bounds (right, log k).

    ``curves``: {label: y over ``k``} (the first solid, the rest dashed); ``remainder``: the
    scaled remainder over ``k``; ``levels``: {label: value} drawn as horizontal lines.
    """
    _check_panels("curves", curves, labels=True)
    if not isinstance(levels, dict):
        raise ArgumentTypeError(f"levels must be a dict {{label: value}}, got {type(levels).__name__}")
    n = _x("k", k)
    for label, y in curves.items():
        _y(f"curves[{label!r}]", y, n)
    _y("remainder", remainder, n)
    _check_labels("levels", levels)
    for label, v in levels.items():
        _level(f"levels[{label!r}]", v)
    fig, (ax0, ax1) = column_panels(2, height=3.2)
    for i, (label, y) in enumerate(curves.items()):
        ax0.loglog(k, y, "-" if i == 0 else "--", label=label)
    ax0.set_xlabel("block index $k$ (seed convention)")
    ax0.set_ylabel("mean absolute change per coordinate")
    ax0.legend()
    ax1.semilogx(k, remainder, label=r"$k^{3/2}(\omega_k - k^{-1/2})$")
    for (label, v), (color, ls) in zip(levels.items(), (("C3", "--"), ("C2", ":"), ("C4", "-."))):
        ax1.axhline(v, color=color, ls=ls, label=label)
    ax1.set_xlabel("block index $k$ (seed convention)")
    ax1.legend()
    return finish(fig)


@accepts(xlabel=_TEXT, ylabel=_TEXT, log_x=Flag())
def scaled_simulation(points: dict, line: tuple, limit: tuple, xlabel: str, ylabel: str, log_x: bool = False):
    """Chapters 3 and 4: scaled simulated changes per width against the large-width curve and
    its limit.

    ``points``: {width: (k, y, error-bar half-width)}; ``line``: (k, y, label), the large-d
    curve; ``limit``: (value, label), drawn dotted.
    """
    _check_panels("points", points)
    _check_pair("line", line, 3)
    _check_pair("limit", limit, 2)
    for d, v in points.items():
        k, y, h = _entry(f"points[{d!r}]", v, 3)
        nk = _x(f"points[{d!r}][0]", k)
        _y(f"points[{d!r}][1]", y, nk)
        _y(f"points[{d!r}][2]", h, nk, errors=True)
    _y("line[1]", line[1], _x("line[0]", line[0]))
    _text("line[2]", line[2])
    _level("limit[0]", limit[0])
    _text("limit[1]", limit[1])
    fig, (ax,) = column_panels(1, width=5.6, height=3.6)
    for i, (d, (k, y, h)) in enumerate(points.items()):
        ax.errorbar(k, y, yerr=h, fmt="o", ms=2.5, color=f"C{i % 10}",
                    label=f"simulation, d = {d}")
    ax.plot(line[0], line[1], "k-", label=line[2])
    ax.axhline(limit[0], color="k", ls=":", label=limit[1])
    if log_x:
        # plain labels at powers of two: matplotlib labels the minor ticks of a log axis under
        # two decades wide, and they overlap (3 x 10^0 on 4 x 10^0)
        log_k_axis(ax, int(max(np.max(p[0]) for p in points.values())), tuple(2 ** i for i in range(21)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    return finish(fig)


@accepts(ylabel=_TEXT)
def limit_curves(curves: dict, dashed: dict, ylabel: str):
    """Chapter 5: curves against block k (log-log), each with its limit, if any, drawn dotted
    in its colour; ``dashed`` curves in black.

    ``curves``: {label: (k, y, limit or None)}; ``dashed``: {label: (k, y)}.
    """
    _check_panels("curves", curves, labels=True)
    if not isinstance(dashed, dict):
        raise ArgumentTypeError(f"dashed must be a dict {{label: (k, y)}}, got {type(dashed).__name__}")
    for label, v in curves.items():
        _check_pair(f"curves[{label!r}]", v, 3)
        _y(f"curves[{label!r}][1]", v[1], _x(f"curves[{label!r}][0]", v[0]))
        if v[2] is not None:
            _level(f"curves[{label!r}][2]", v[2])
    _check_labels("dashed", dashed)
    for label, v in dashed.items():
        k, y = _entry(f"dashed[{label!r}]", v, 2)
        _y(f"dashed[{label!r}][1]", y, _x(f"dashed[{label!r}][0]", k))
    fig, (ax,) = column_panels(1, width=5.6, height=4.0)
    for i, (label, v) in enumerate(curves.items()):
        _check_pair(f"curves[{label!r}]", v, 3)
        k, y, lim = v
        ax.loglog(k, y, color=f"C{i % 10}", label=label)
        if lim is not None:
            ax.axhline(lim, color=f"C{i % 10}", ls=":", lw=0.8)
    for label, (k, y) in dashed.items():
        ax.loglog(k, y, "k--", label=label)
    ax.set_xlabel("block index $k$ (seed convention)")
    ax.set_ylabel(ylabel)
    legend_below(fig, ax, ncol=4)
    return finish(fig)


@accepts(ylabel=_TEXT)
def simulation_vs_prediction(series: dict, ylabel: str):
    """Chapter 5: simulated points with error bars against a predicted line, one colour each,
    log-log. ``series``: {label: (k, mean, error-bar half-width, prediction)}."""
    _check_panels("series", series, labels=True)
    for label, v in series.items():
        _check_pair(f"series[{label!r}]", v, 4)
        nk = _x(f"series[{label!r}][0]", v[0])
        _y(f"series[{label!r}][1]", v[1], nk)
        _y(f"series[{label!r}][2]", v[2], nk, errors=True)
        _y(f"series[{label!r}][3]", v[3], nk)
    fig, (ax,) = column_panels(1, width=5.6, height=3.6)
    for i, (label, v) in enumerate(series.items()):
        _check_pair(f"series[{label!r}]", v, 4)
        k, m, h, pred = v
        ax.errorbar(k, m, yerr=h, fmt="o", ms=2, color=f"C{i % 10}", label=label)
        ax.plot(k, pred, color=f"C{i % 10}", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("block index $k$ (seed convention)")
    ax.set_ylabel(ylabel)
    ax.legend()
    return finish(fig)


@accepts(xlabel=_TEXT)
def forest(rows: dict, xlabel: str, refs: dict | None = None):
    """Intervals one under another (a forest plot): ``rows`` {label: (value, lo, hi)}, drawn
    top to bottom in order; ``refs`` {label: x}: vertical reference lines, labelled. NaN rows
    are drawn as their label alone (no interval yet)."""
    _check_panels("rows", rows, labels=True)
    refs = {} if refs is None else refs
    if not isinstance(refs, dict):
        raise ArgumentTypeError(f"refs must be a dict {{label: x}}, got {type(refs).__name__}")
    for lab, v in rows.items():
        _y(f"rows[{lab!r}]", list(_entry(f"rows[{lab!r}]", v, 3)), 3)    # NaN: the label alone
    _check_labels("refs", refs)
    for lab, x in refs.items():
        _level(f"refs[{lab!r}]", x)
    n = len(rows)
    fig, (ax,) = column_panels(1, height=0.3 * n + 1.4)
    for i, (lab, (v, lo, hi)) in enumerate(rows.items()):
        y = n - 1 - i
        if np.isfinite(v):
            ax.errorbar([v], [y], xerr=[[v - lo], [hi - v]] if np.isfinite(lo) and np.isfinite(hi) else None,
                        fmt="o", ms=4, capsize=3, color="C0")
    for j, (lab, x) in enumerate(refs.items()):
        ax.axvline(x, color=f"C{j + 1}", ls=("--", ":", "-.")[j % 3], lw=1, label=lab)
    ax.set_yticks(range(n))
    ax.set_yticklabels(list(rows)[::-1], fontsize=MIN_FONT_PT)
    ax.set_xlabel(xlabel)
    if refs:
        legend_below(fig, ax, ncol=3)
    return finish(fig)
