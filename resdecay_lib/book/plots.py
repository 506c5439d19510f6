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

from ..checks import ArgumentTypeError, check_int  # noqa: E402

__all__ = ["NAMES", "K_TICKS", "log_k_axis", "close", "COLUMN_IN", "MIN_FONT_PT", "PANEL_H", "PAD_IN", "column_panels",
           "legend_below", "share_ylabel", "finish", "shown_width", "effective_sizes", "DIGEST_DIGITS", "data_digest", "glue_figure", "forest", "init_curves", "grad_profiles", "sublayer_changes", "line_panels", "exponent_through_training", "change_curves", "loss_curves",
           "ablation_profiles", "depth_curves", "correlation_maps", "rc_profiles", "skip_costs",
           "pruning_curves", "norm_readings", "theorem_simulation", "remainder_panels",
           "scaled_simulation", "limit_curves", "simulation_vs_prediction"]

def _check_panels(name: str, value) -> None:
    """A figure's data: a non-empty dict (one entry a line, a panel or a placement)."""
    if not isinstance(value, dict):
        raise ArgumentTypeError(f"{name} must be a dict (see the function's docstring), got {type(value).__name__}")
    if not value:
        raise ValueError(f"{name} must not be empty: nothing to draw")


#: display names of the placements
NAMES = {"pre_ln": "Pre-LN", "post_ln": "Post-LN", "peri_ln": "Peri-LN",
         "resi_dual": "ResiDual", "ln_scaling": "LN-Scaling", "deepnorm": "DeepNorm",
         "mix_ln": "Mix-LN"}


#: the block indices a log k axis labels
K_TICKS = (1, 2, 4, 8, 16, 24, 32, 64)


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


def legend_below(fig, axes, ncol: int = 2, loc: str = "outside lower center", only=None, **kw):
    """One legend for the whole figure, under its panels (outside them, so it hides no data):
    the labelled lines of ``axes`` (an axes or a list), each label once, in order (``only``: a
    set of the labels to show)."""
    seen = {}
    for ax in np.atleast_1d(axes):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in seen and (only is None or lab in only):
                seen[lab] = h
    if not seen:
        return None
    return fig.legend(list(seen.values()), list(seen), loc=loc, ncol=min(ncol, len(seen)),
                      fontsize=MIN_FONT_PT, **kw)


def share_ylabel(fig, ax) -> None:
    """With panels in more than one row, the first panel's y label (the one its data digest
    reads) is drawn once for the whole figure, beside every row."""
    if len({a.get_subplotspec().rowspan.start for a in fig.get_axes() if a.get_subplotspec()}) > 1:
        fig.supylabel(ax.get_ylabel(), fontsize=MIN_FONT_PT)
        ax.yaxis.label.set_visible(False)


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


def shown_width(fig) -> float:
    """Width in inches of the PNG a notebook stores for ``fig`` (``bbox_inches="tight"``, padded
    by 0.1 in each side): what the column scales down when it is wider than :data:`COLUMN_IN`."""
    fig.canvas.draw()
    return fig.get_tightbbox(fig.canvas.get_renderer()).width + 2 * PAD_IN


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


def data_digest(fig, digits: int = DIGEST_DIGITS) -> str:
    """What a figure shows, as text: per panel its title and labels, and per line, image and
    marker set its label and a summary of its data (count, min, max, mean of the y values, or
    of the image's values), each to ``digits`` significant digits.

    nbval compares this text instead of the PNG's bytes, which change with the last bits of
    the CPU's arithmetic (issue 20); a change to what the figure shows changes the digest."""
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


def glue_figure(name: str, fig, digits: int = DIGEST_DIGITS) -> str:
    """Glue ``fig`` under ``name`` (myst-nb, not displayed), glue its :func:`data_digest` under
    ``name + "-data"`` (the text nbval compares), close the figure, and return the digest."""
    from myst_nb import glue
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a figure label, got {name!r}")
    digest = data_digest(fig, digits)
    glue(name, fig, display=False)
    glue(name + "-data", digest, display=False)
    close(fig)
    return digest


def init_curves(blk: dict, sub: dict, theory: dict, dual=None):
    """Chapter 6: the per-layer change at initialisation, blocks (left) and sublayers (right).

    ``blk``, ``sub``: {arch: mean curve over k = 1..L (resp. 1..2L)}; ``theory``: {"blk": w_k^2
    embedding-counted, "seed": the seed convention (NaN at k = 1), "sub": sublayer w_k^2};
    ``dual``: ResiDual's x_d at block granularity. ResiDual's x_a is dashed: it lies on Post-LN's.
    """
    _check_panels("blk", blk)
    _check_panels("sub", sub)
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
    _check_panels("grads", grads)
    fig, (ax,) = column_panels(1, width=5.6, height=3.6)
    for arch, g in grads.items():
        ax.plot(np.arange(1, len(g) + 1), g, color=_color(arch), label=arch,
                ls="--" if arch == "resi_dual" else "-")
    ax.set(xscale="log", yscale="log", xlabel="block $k$", ylabel="gradient norm of block $k$'s parameters")
    ax.legend(ncol=2)
    return finish(fig)


def sublayer_changes(panels: dict, ticks=K_TICKS):
    """Chapter 9: {title: (k, attention-step change, MLP-step change)}, one log-log panel each."""
    _check_panels("panels", panels)
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


def line_panels(panels: dict, ylabel: str, log_k: bool = True, ticks=K_TICKS, sharey: bool = True):
    """Panels of lines against block k, two to a row (Chapter 9's per-model figures).

    ``panels``: {title: [line, ...]}, each line a dict with ``k``, ``y`` and optionally
    ``yerr`` (drawn as error bars), ``fmt`` (a matplotlib format string), ``label``, ``color``.
    ``log_k``: a log k axis with plain labels at ``ticks``; y is always logarithmic.
    """
    _check_panels("panels", panels)
    fig, axes = column_panels(len(panels), sharey=sharey)
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
    _check_panels("rows", rows)
    if not isinstance(title, str):
        raise ArgumentTypeError(f"title must be a str, got {type(title).__name__}")
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
    _check_panels("curves", curves)
    if not isinstance(theory, dict):
        raise ArgumentTypeError(f"theory must be a dict {{label: curve}}, got {type(theory).__name__}")
    check_int("L", L, 1)
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
    _check_panels("curves", curves)
    if not isinstance(baselines, dict):
        raise ArgumentTypeError(f"baselines must be a dict {{label: loss}}, got {type(baselines).__name__}")
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
    _check_panels("profiles", profiles)
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
    _check_panels("panels", panels)
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
    _check_panels("mats", mats)
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
    _check_panels("prof", prof)
    check_int("L", L, 1)
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


#: line style of each ranking in the pruning figure (depthcost.RANKINGS)
_RANKING_STYLE = {"change": ("C3", "o-"), "influence": ("C0", "s-"), "angular": ("C2", "^-"),
                  "relative": ("C4", "v-"), "deepest": ("k", "x--")}


def skip_costs(panels: dict):
    """panels: {title: (k [L], mean [L], se [L], ylabel)} -> the cost of skipping each block,
    +-2 standard errors over sequences, one panel per model; log y (block 1 often costs ten
    times the rest), so a non-positive mean is drawn at the axis floor as an open marker."""
    _check_panels("panels", panels)
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
    _check_panels("panels", panels)
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
    _check_panels("panels", panels)
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
    _check_panels("curves", curves)
    if not isinstance(levels, dict):
        raise ArgumentTypeError(f"levels must be a dict {{label: value}}, got {type(levels).__name__}")
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


def scaled_simulation(points: dict, line: tuple, limit: tuple, xlabel: str, ylabel: str, log_x: bool = False):
    """Chapters 3 and 4: scaled simulated changes per width against the large-width curve and
    its limit.

    ``points``: {width: (k, y, error-bar half-width)}; ``line``: (k, y, label), the large-d
    curve; ``limit``: (value, label), drawn dotted.
    """
    _check_panels("points", points)
    _check_pair("line", line, 3)
    _check_pair("limit", limit, 2)
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


def limit_curves(curves: dict, dashed: dict, ylabel: str):
    """Chapter 5: curves against block k (log-log), each with its limit, if any, drawn dotted
    in its colour; ``dashed`` curves in black.

    ``curves``: {label: (k, y, limit or None)}; ``dashed``: {label: (k, y)}.
    """
    _check_panels("curves", curves)
    if not isinstance(dashed, dict):
        raise ArgumentTypeError(f"dashed must be a dict {{label: (k, y)}}, got {type(dashed).__name__}")
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


def simulation_vs_prediction(series: dict, ylabel: str):
    """Chapter 5: simulated points with error bars against a predicted line, one colour each,
    log-log. ``series``: {label: (k, mean, error-bar half-width, prediction)}."""
    _check_panels("series", series)
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


def forest(rows: dict, xlabel: str, refs: dict | None = None):
    """Intervals one under another (a forest plot): ``rows`` {label: (value, lo, hi)}, drawn
    top to bottom in order; ``refs`` {label: x}: vertical reference lines, labelled. NaN rows
    are drawn as their label alone (no interval yet)."""
    _check_panels("rows", rows)
    refs = {} if refs is None else refs
    if not isinstance(refs, dict):
        raise ArgumentTypeError(f"refs must be a dict {{label: x}}, got {type(refs).__name__}")
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
