"""The book's figure kinds, for the theory, training and pretrained chapters: one function per kind.

Each function takes plain arrays and dicts (what :mod:`resdecay_lib.results` computes) and
returns a matplotlib Figure; the chapters glue it. Nothing here computes a result.
"""
from __future__ import annotations

import matplotlib

# no backend is forced: in a notebook the inline backend renders a glued figure as PNG,
# and a script without a display gets matplotlib's non-interactive default
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ._checks import check_int  # noqa: E402

__all__ = ["NAMES", "K_TICKS", "log_k_axis", "close", "DIGEST_DIGITS", "data_digest", "glue_figure", "forest", "init_curves", "grad_profiles", "sublayer_changes", "line_panels", "exponent_through_training", "change_curves", "loss_curves",
           "ablation_profiles", "depth_curves", "correlation_maps", "rc_profiles", "skip_costs",
           "pruning_curves", "norm_readings", "theorem_simulation", "remainder_panels",
           "scaled_simulation", "limit_curves", "simulation_vs_prediction"]

def _check_panels(name: str, value) -> None:
    """A figure's data: a non-empty dict (one entry a line, a panel or a placement)."""
    if not isinstance(value, dict):
        raise TypeError(f"{name} must be a dict (see the function's docstring), got {type(value).__name__}")
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
    crowded minor labels)."""
    ax.set_xscale("log")
    ax.set_xticks([t for t in ticks if t <= L])
    ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def _color(arch: str) -> str:
    """One colour per placement in every figure (its place in NAMES)."""
    return f"C{list(NAMES).index(arch) % 10}" if arch in NAMES else "k"


def close(fig) -> None:
    """Close a figure once it is glued, so the notebook does not show it a second time."""
    plt.close(fig)


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
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
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
    axes[0].set_ylabel(r"$\|\mathrm{LN}_0(x_{k+1}) - \mathrm{LN}_0(x_k)\|^2 / d$")
    axes[0].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


def grad_profiles(grads: dict):
    """Chapter 6: {arch: mean gradient norm of block k's parameters, k = 1..L} on log axes."""
    _check_panels("grads", grads)
    fig, ax = plt.subplots(figsize=(6, 4))
    for arch, g in grads.items():
        ax.plot(np.arange(1, len(g) + 1), g, color=_color(arch), label=arch,
                ls="--" if arch == "resi_dual" else "-")
    ax.set(xscale="log", yscale="log", xlabel="block $k$", ylabel="gradient norm of block $k$'s parameters")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def sublayer_changes(panels: dict, ticks=K_TICKS):
    """Chapter 9: {title: (k, attention-step change, MLP-step change)}, one log-log panel each."""
    _check_panels("panels", panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(3.5 * len(panels), 3.4), sharey=True, squeeze=False)
    for ax, (title, (k, att, mlp)) in zip(axes[0], panels.items()):
        ax.plot(k, att, "o-", ms=3, label="attention step")
        ax.plot(k, mlp, "s-", ms=3, label="MLP step")
        ax.set(xscale="log", yscale="log", xlabel="block $k$", title=title)
        log_k_axis(ax, int(np.max(k)), ticks)
    axes[0][0].set_ylabel("change per sublayer")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def line_panels(panels: dict, ylabel: str, log_k: bool = True, ticks=K_TICKS, sharey: bool = True):
    """Side-by-side panels of lines against block k (Chapter 9's per-model figures).

    ``panels``: {title: [line, ...]}, each line a dict with ``k``, ``y`` and optionally
    ``yerr`` (drawn as error bars), ``fmt`` (a matplotlib format string), ``label``, ``color``.
    ``log_k``: a log k axis with plain labels at ``ticks``; y is always logarithmic.
    """
    _check_panels("panels", panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(3.5 * len(panels), 3.6), sharey=sharey, squeeze=False)
    for ax, (title, lines) in zip(axes[0], panels.items()):
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
    axes[0][0].set_ylabel(ylabel)
    axes[0][0].legend(fontsize=7, loc="lower left" if sharey else "best")
    fig.tight_layout()
    return fig


def exponent_through_training(rows: dict, title: str):
    """rows: {arch: [(step, mean, lo, hi, reference), ...]} -> exponent of omega_k^2 vs step."""
    _check_panels("rows", rows)
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, got {type(title).__name__}")
    fig, ax = plt.subplots(figsize=(6.8, 3.8))
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
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def change_curves(curves: dict, theory: dict, L: int):
    """curves: {arch: {label: (mean, se)}} over k = 1..L; theory: {label: curve}."""
    _check_panels("curves", curves)
    if not isinstance(theory, dict):
        raise TypeError(f"theory must be a dict {{label: curve}}, got {type(theory).__name__}")
    check_int("L", L, 1)
    fig, axes = plt.subplots(1, len(curves), figsize=(2.8 * len(curves), 3.0), sharey=True)
    axes = np.atleast_1d(axes)
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
        ax.set_title(NAMES.get(a, a), fontsize=9)
        ax.set_xlabel("block k")
    axes[0].set_ylabel(r"$\omega_k^2$ measured")
    axes[0].legend(fontsize=6)
    fig.tight_layout()
    return fig


def loss_curves(curves: dict, baselines: dict):
    """curves: {label: (steps, loss)}; baselines: {label: loss} drawn as horizontal lines."""
    _check_panels("curves", curves)
    if not isinstance(baselines, dict):
        raise TypeError(f"baselines must be a dict {{label: loss}}, got {type(baselines).__name__}")
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for i, (lab, (s, y)) in enumerate(curves.items()):
        ax.plot(np.maximum(s, 1), y, "-", lw=1, color=f"C{i % 10}", label=lab)
    for j, (lab, v) in enumerate(baselines.items()):
        ax.axhline(v, color="0.5", lw=0.8, ls=("--", ":", "-.", (0, (1, 3)))[j % 4])
        ax.text(1.05, v, lab, fontsize=7, va="bottom", color="0.3")
    ax.set_xscale("log")
    ax.set_xlabel("training step")
    ax.set_ylabel("validation loss (nats/char)")
    ax.set_ylim(1.4, 3.6)
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return fig


def ablation_profiles(profiles: dict):
    """profiles: {title: (delta_mean [L], se [L])}: loss increase from removing block k."""
    _check_panels("profiles", profiles)
    fig, axes = plt.subplots(1, len(profiles), figsize=(2.8 * len(profiles), 3.0))
    axes = np.atleast_1d(axes)
    for ax, (t, (m, se)) in zip(axes, profiles.items()):
        k = np.arange(1, len(m) + 1)
        ax.bar(k[1:], m[1:], yerr=2 * np.asarray(se[1:]), color="C0", width=0.7)
        ax.set_title(f"{t}\nblock 1: {m[0]:.2f}", fontsize=8)
        ax.axhline(0, color="k", lw=0.5)
        ax.set_xlabel("block k removed (k >= 2)")
    axes[0].set_ylabel("validation loss increase")
    fig.tight_layout()
    return fig


def depth_curves(panels: dict):
    """panels: {title: {arch: (depths, mean, lo, hi)}}: validation loss against depth."""
    _check_panels("panels", panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), sharey=False)
    axes = np.atleast_1d(axes)
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
        ax.set_title(t, fontsize=9)
    axes[0].set_ylabel("validation loss (nats/char)")
    for ax in axes:
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def correlation_maps(mats: dict):
    """mats: {title: correlation matrix}: the summands' correlations."""
    _check_panels("mats", mats)
    fig, axes = plt.subplots(1, len(mats), figsize=(3.8 * len(mats), 3.4))
    axes = np.atleast_1d(axes)
    for ax, (t, C) in zip(axes, mats.items()):
        im = ax.imshow(C, vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set_title(t, fontsize=9)
        ax.set_xlabel("summand j (0 = embedding)")
    axes[0].set_ylabel("summand i")
    fig.colorbar(im, ax=list(axes), shrink=0.8, label="correlation")
    return fig


def rc_profiles(prof: dict, L: int):
    """prof: {label: (r [L], c [L], s2 [L])}: block output variance, r_k and c_k against k."""
    _check_panels("prof", prof)
    check_int("L", L, 1)
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
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
    axes[1].legend(fontsize=6)
    axes[0].legend(fontsize=6)
    fig.tight_layout()
    return fig


#: line style of each ranking in the pruning figure (depthcost.RANKINGS)
_RANKING_STYLE = {"change": ("C3", "o-"), "influence": ("C0", "s-"), "angular": ("C2", "^-"),
                  "relative": ("C4", "v-"), "deepest": ("k", "x--")}


def skip_costs(panels: dict):
    """panels: {title: (k [L], mean [L], se [L], ylabel)} -> the cost of skipping each block,
    +-2 standard errors over sequences, one panel per model; log y (block 1 often costs ten
    times the rest), so a non-positive mean is drawn at the axis floor as an open marker."""
    _check_panels("panels", panels)
    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(3.3 * n, 3.2), squeeze=False)
    for ax, (title, (k, mean, se, ylabel)) in zip(axes[0], panels.items()):
        k, mean, se = (np.asarray(v, float) for v in (k, mean, se))
        pos = mean > 0
        floor = mean[pos].min() / 3 if pos.any() else 1e-4
        ax.errorbar(k[pos], mean[pos], yerr=np.minimum(2 * se[pos], 0.999 * mean[pos]), fmt="o", ms=3,
                    lw=1, capsize=2)
        ax.plot(k[~pos], np.full((~pos).sum(), floor), "o", mfc="none", ms=4, color="C0")
        ax.set(yscale="log", xlabel="block $k$ skipped", title=title, ylabel=ylabel)
        ax.set_ylim(bottom=floor / 2)
        log_k_axis(ax, int(k.max()))
    fig.tight_layout()
    return fig


def pruning_curves(panels: dict):
    """panels: {title: ({ranking: (fraction removed [n], mean increase [n])}, band, ylabel)}
    -> the cost as blocks are removed by each ranking, with the noise band (dotted)."""
    _check_panels("panels", panels)
    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(3.3 * n, 3.3), squeeze=False)
    for ax, (title, (curves, band, ylabel)) in zip(axes[0], panels.items()):
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
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def norm_readings(panels: dict):
    """panels: {title: {label: (k [L], change [L])}} -> the change through each normaliser."""
    _check_panels("panels", panels)
    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(3.3 * n, 3.2), squeeze=False)
    for ax, (title, lines) in zip(axes[0], panels.items()):
        L = 2
        for (label, (k, y)), style in zip(lines.items(), ("o-", "s--", "^:", "k-")):
            ax.plot(k, y, style, ms=3, lw=1, label=label)
            L = max(L, int(np.max(k)))
        ax.set(yscale="log", xlabel="block $k$", title=title)
        log_k_axis(ax, L)
    axes[0][0].set_ylabel("change")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


# --- the theory chapters (2-5): simulations of the Gaussian model against the theory ---------


def _check_pair(name: str, value, n: int) -> None:
    """A tuple of ``n`` arrays (what each entry of a theory figure's dict holds)."""
    if not isinstance(value, tuple) or len(value) != n:
        raise TypeError(f"{name} must be a tuple of {n} arrays (see the function's docstring), got {value!r:.60}")


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
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax0.loglog(k, omega, color="black", lw=1.2, label=r"theorem $\omega_k^2$")
    ax0.loglog(k, 1 / k, color="grey", lw=0.8, ls=":", label=r"$1/k$")
    for (d, (ks, m, h)), marker in zip(shown.items(), ("o", "s", "^", "D")):
        ax0.errorbar(ks, m, yerr=h, fmt=marker, ms=3, lw=0.8, label=f"simulation, d = {d}")
    ax0.set_xlabel("block k (seed convention)")
    ax0.set_ylabel("mean square change per coordinate")
    ax0.legend(fontsize=8)
    for i, (d, (ks, y, h, first, exact)) in enumerate(rel.items()):
        color = f"C{i % 10}"
        ax1.errorbar(ks, y, yerr=h, fmt="o", ms=2.5, lw=0.6, color=color, label=f"d = {d}")
        ax1.plot(k, first, color=color, lw=1.2, ls="--")
        ax1.plot(k, exact, color=color, lw=0.8)
    ax1.axhline(0, color="black", lw=0.8)
    ax1.set_xlabel("block k (seed convention)")
    ax1.set_ylabel(r"simulation / $\omega_k^2$ - 1")
    ax1.legend(fontsize=8, title="dashed: first order; solid: exact", title_fontsize=8)
    for ax in (ax0, ax1):
        log_k_axis(ax, int(k.max()), (2, 4, 8, 16, 32, 64))
    ax0.set_yticks([0.02, 0.05, 0.1, 0.2, 0.5])
    ax0.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax0.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    fig.tight_layout()
    return fig


def remainder_panels(k, curves: dict, remainder, levels: dict):
    """Chapter 3: a quantity against its leading term (left, log-log) and the scaled remainder
    against its bounds (right, log k).

    ``curves``: {label: y over ``k``} (the first solid, the rest dashed); ``remainder``: the
    scaled remainder over ``k``; ``levels``: {label: value} drawn as horizontal lines.
    """
    _check_panels("curves", curves)
    if not isinstance(levels, dict):
        raise TypeError(f"levels must be a dict {{label: value}}, got {type(levels).__name__}")
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(9, 3.4))
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
    fig.tight_layout()
    return fig


def scaled_simulation(points: dict, line: tuple, limit: tuple, xlabel: str, ylabel: str, log_x: bool = False):
    """Chapters 3 and 4: scaled simulated changes per width against the large-width curve and
    its limit.

    ``points``: {width: (k, y, error-bar half-width)}; ``line``: (k, y, label), the large-d
    curve; ``limit``: (value, label), drawn dotted.
    """
    _check_panels("points", points)
    _check_pair("line", line, 3)
    _check_pair("limit", limit, 2)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for i, (d, (k, y, h)) in enumerate(points.items()):
        ax.errorbar(k, y, yerr=h, fmt="o", ms=2.5, color=f"C{i % 10}",
                    label=f"simulation, d = {d}")
    ax.plot(line[0], line[1], "k-", label=line[2])
    ax.axhline(limit[0], color="k", ls=":", label=limit[1])
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def limit_curves(curves: dict, dashed: dict, ylabel: str):
    """Chapter 5: curves against block k (log-log), each with its limit, if any, drawn dotted
    in its colour; ``dashed`` curves in black.

    ``curves``: {label: (k, y, limit or None)}; ``dashed``: {label: (k, y)}.
    """
    _check_panels("curves", curves)
    if not isinstance(dashed, dict):
        raise TypeError(f"dashed must be a dict {{label: (k, y)}}, got {type(dashed).__name__}")
    fig, ax = plt.subplots(figsize=(6.2, 3.6))
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
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def simulation_vs_prediction(series: dict, ylabel: str):
    """Chapter 5: simulated points with error bars against a predicted line, one colour each,
    log-log. ``series``: {label: (k, mean, error-bar half-width, prediction)}."""
    _check_panels("series", series)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for i, (label, v) in enumerate(series.items()):
        _check_pair(f"series[{label!r}]", v, 4)
        k, m, h, pred = v
        ax.errorbar(k, m, yerr=h, fmt="o", ms=2, color=f"C{i % 10}", label=label)
        ax.plot(k, pred, color=f"C{i % 10}", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("block index $k$ (seed convention)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def forest(rows: dict, xlabel: str, refs: dict | None = None):
    """Intervals one under another (a forest plot): ``rows`` {label: (value, lo, hi)}, drawn
    top to bottom in order; ``refs`` {label: x}: vertical reference lines, labelled. NaN rows
    are drawn as their label alone (no interval yet)."""
    _check_panels("rows", rows)
    refs = {} if refs is None else refs
    if not isinstance(refs, dict):
        raise TypeError(f"refs must be a dict {{label: x}}, got {type(refs).__name__}")
    n = len(rows)
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * n + 1.2))
    for i, (lab, (v, lo, hi)) in enumerate(rows.items()):
        y = n - 1 - i
        if np.isfinite(v):
            ax.errorbar([v], [y], xerr=[[v - lo], [hi - v]] if np.isfinite(lo) and np.isfinite(hi) else None,
                        fmt="o", ms=4, capsize=3, color="C0")
    for j, (lab, x) in enumerate(refs.items()):
        ax.axvline(x, color=f"C{j + 1}", ls=("--", ":", "-.")[j % 3], lw=1, label=lab)
    ax.set_yticks(range(n))
    ax.set_yticklabels(list(rows)[::-1], fontsize=8)
    ax.set_xlabel(xlabel)
    if refs:
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig
