"""The ``measure`` command: ``measure MODEL --text FILE``, the per-layer change of a pretrained model.

``measure`` loads a packaged model or a local Hugging Face folder
(:func:`resdecay_lib.nn.pretrained.load`) onto ``--device`` in ``--dtype``, samples windows of a
text, measures the per-layer change (:func:`resdecay_lib.nn.probe.measure`) and, with
``--skip-cost``, the cost of skipping each block (:func:`resdecay_lib.analysis.pruning.skip_costs`),
prints the table, the fitted exponent with its interval, the theorem's exponent over the same
range in the convention the measured rho chooses (:func:`resdecay_lib.nn.probe.exponent`) and a
one-line reading, then writes a CSV table and a figure. The packaged GGUF models are
converted into the cache once, at set-up, by ``prepare-models``
(:mod:`resdecay_lib.cli.prepare_models`).
"""
from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

import numpy as np
import torch

from ..checks import check_in_file, check_out_dir, check_out_file, one_line
from ..checks import cli_int as _cli_int
from ..nn.device import resolve_device
from ..nn.pretrained import PACKAGED, UNKNOWN_MODEL, MissingPackage, load, model_cache_dir, sample_inputs
from ..nn.probe import exponent, measure
from ..training.runs import exponent_lines

__all__ = ["register_cli"]


_TABLE_COLUMNS = ("k", "omega_sq", "omega_sq_se", "rel_update", "rel_update_se",
                  "alignment", "alignment_se", "norm", "norm_se")

#: the --dtype values: the weights and the forward in that floating type (the probe's sums are
#: float64 whatever it is)
DTYPES = {"float32": "float32", "bfloat16": "bfloat16", "float16": "float16", "float64": "float64"}
#: the fit range's start and the interval's level the command reports
K_MIN, LEVEL = 2, 0.95


def _print_exponent(ch, stream, mask) -> None:
    """The fit, the theorem's exponent over the same range and convention, and the reading."""
    L = len(ch.k)
    if L < K_MIN + 2:
        print(f"fit: none (k = {K_MIN}..L needs L >= {K_MIN + 2} blocks for three points; this model has {L})")
        return
    try:
        e = exponent(ch, k_min=K_MIN, level=LEVEL, stream=stream, mask=mask)
    except ValueError as exc:
        print(f"fit: none ({one_line(exc)})")
        return
    for line in exponent_lines(e):
        print(line)


def _stem(model: str) -> str:
    """The name the output files start with: the model's (:attr:`Pretrained.name`, a packaged
    name or the folder's name), known before it is loaded."""
    return (model if model in PACKAGED else Path(model).name).replace("/", "_")


def _read_text(path: Path, n_seq: int, n_tokens: int) -> str:
    """The text of ``--text`` (a regular file, checked), non-empty and at least ``n_seq *
    n_tokens`` characters (what :func:`~resdecay_lib.nn.pretrained.sample_inputs` needs at
    the least); ValueError in one line naming ``--text`` otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--text {str(path)!r} cannot be read as UTF-8 text: {one_line(exc)}") from None
    if not text.strip():
        raise ValueError(f"--text {str(path)!r} is empty: give a text to run the model on")
    if len(text) < n_seq * n_tokens:
        raise ValueError(f"--text {str(path)!r} has {len(text)} characters; --n-seq {n_seq} sequences of "
                         f"--n-tokens {n_tokens} tokens needs at least {n_seq * n_tokens} (far more in practice)")
    return text


def _run_measure(args) -> int:
    from ..nn.device import pin_threads
    try:  # every option and path before any work (and any model): one line and exit code 2 on a bad one
        threads = _cli_int("--threads", args.threads, 1, 1024)
        n_seq = _cli_int("--n-seq", args.n_seq, 1, 100_000)
        n_tokens = _cli_int("--n-tokens", args.n_tokens, 1, 1_000_000)
        batch_size = _cli_int("--batch-size", args.batch_size, 1, 100_000)
        if not args.model.strip():
            raise ValueError(f"MODEL must be one of {', '.join(PACKAGED)} or a local Hugging Face folder, got ''")
        if args.model not in PACKAGED and not Path(args.model).exists():   # a Hub id, a typo
            raise ValueError(UNKNOWN_MODEL.format(name=args.model))
        out = check_out_dir("--out", args.out)          # the check record makes too
        for suffix in ("_layers.csv", "_layers.png"):  # a folder (or a FIFO) there fails after the whole measurement
            check_out_file("--out", out / f"{_stem(args.model)}{suffix}")
        text_path = check_in_file("--text", args.text)  # a FIFO would block the read for ever
        if args.dtype not in DTYPES:
            raise ValueError(f"--dtype must be one of {', '.join(DTYPES)}, got {args.dtype!r}")
        try:
            device = resolve_device(args.device)
        except ValueError as exc:
            raise ValueError(f"--device: {one_line(exc)}") from None
        if args.skip_cost and device.type != "cpu":
            raise ValueError(f"--skip-cost runs on the CPU only (resdecay_lib.analysis.pruning); drop it or use "
                             f"--device cpu, got --device {args.device}")
        text = _read_text(text_path, n_seq, n_tokens)
        if args.model in PACKAGED and PACKAGED[args.model].kind != "folder":
            model_cache_dir()                           # converted into the cache: usable?
    except ValueError as exc:
        print(f"measure: {one_line(exc)}", file=sys.stderr)
        return 2
    if device.type == "cpu":
        pin_threads(threads)
    try:
        pre = load(args.model, progress=True)
        pre.model.to(device=device, dtype=getattr(torch, DTYPES[args.dtype]))   # in place: body and blocks too
        inputs, mask = sample_inputs(pre.tokenizer, text, n_seq, n_tokens)
        stream, ch = measure(pre.body, inputs, mask, blocks=pre.blocks, batch_size=batch_size, progress=True,
                             desc=pre.name)
        skip = None
        if args.skip_cost:
            from ..analysis.pruning import skip_costs
            print(f"skipping each of the {pre.n_layer} blocks in turn", file=sys.stderr, flush=True)
            skip = skip_costs(pre, inputs, mask, batch_size=batch_size, progress=True)
    except (MissingPackage, FileNotFoundError, ValueError) as exc:
        print(f"measure: {one_line(exc)}", file=sys.stderr)
        return 2
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"measure: --out {args.out!r} cannot be made: {one_line(exc)}", file=sys.stderr)
        return 2
    stem = pre.name.replace("/", "_")
    columns = _TABLE_COLUMNS + (("skip_cost", "skip_cost_se") if skip is not None else ())
    rows = [[int(ch.k[i])] + [float(getattr(ch, c)[i]) for c in _TABLE_COLUMNS[1:]]
            + ([float(skip.mean[i]), float(skip.se[i])] if skip is not None else [])
            for i in range(len(ch.k))]
    csv_path = out / f"{stem}_layers.csv"
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        w.writerows(rows)
    print(f"{pre.name}: {pre.n_layer} blocks, d={pre.d_model}, {ch.n_sequences} sequences x "
          f"{n_tokens} tokens, {args.dtype} on {device}; k = block index, change = (1/d)|LN(x_k+1) - LN(x_k)|^2")
    print(f"{'k':>4} {'change':>10} {'r_k':>10} {'c_k':>10} {'norm':>10}"
          + (f" {'skip cost':>10}" if skip is not None else ""))
    for i in range(len(ch.k)):
        print(f"{int(ch.k[i]):>4} {ch.omega_sq[i]:>10.3g} {ch.rel_update[i]:>10.3g} "
              f"{ch.alignment[i]:>10.3g} {ch.norm[i]:>10.3g}"
              + (f" {skip.mean[i]:>10.3g}" if skip is not None else ""))
    _print_exponent(ch, stream, mask)
    del stream
    fig_path = out / f"{stem}_layers.png"
    _save_figure(ch, pre.name, fig_path, skip)
    print(f"wrote {csv_path} and {fig_path}")
    return 0


def _save_figure(ch, title, path, skip=None):
    """The measure command's figure: the change beside the theorem's curve in both index
    conventions, r_k on a log axis (block 1's r_k, the update of the bare embedding, is often
    ten times the rest) with c_k, the stream norm, and the skip cost when it was computed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from ..book import plots
    from ..maths import theory
    n = 4 if skip is not None else 3
    fig, axes = plots.column_panels(n)      # a grid for the column, the book's font sizes
    k = np.asarray(ch.k)
    axes[0].errorbar(k, ch.omega_sq, yerr=2 * np.nan_to_num(ch.omega_sq_se), marker="o", ms=3,
                     lw=1, label="measured")
    axes[0].plot(k, [float(theory.omega_sq(int(j), embedding_counted=True)) for j in k], "k-", lw=1,
                 label="theorem, embedding-counted")
    axes[0].plot(k[1:], [float(theory.omega_sq(int(j))) for j in k[1:]], "k--", lw=1,
                 label="theorem, seed convention")
    axes[0].set(yscale="log", xlabel="block k", ylabel="change (omega_sq)")
    plots.log_k_axis(axes[0], int(k.max()))   # plain labels at 1, 2, 4, ...: no overlap at 6 blocks
    axes[0].legend(fontsize=7)
    axes[1].plot(k, ch.rel_update, "o-", ms=3, label="r_k")
    axes[1].set(yscale="log", xlabel="block k", ylabel="r_k = |x_k+1 - x_k| / |x_k| (log)")
    twin = axes[1].twinx()
    twin.plot(k, ch.alignment, "s:", ms=3, color="C1", label="c_k")
    twin.set_ylabel("c_k (linear)", color="C1")
    axes[2].plot(k, ch.norm, "o-", ms=3)
    axes[2].set(yscale="log", xlabel="block k", ylabel="stream norm |x_k|")
    if skip is not None:
        axes[3].errorbar(k, skip.mean, yerr=2 * np.nan_to_num(skip.se), marker="o", ms=3, lw=1)
        axes[3].axhline(0, color="k", lw=0.5)
        axes[3].set(xlabel="block k skipped", ylabel="loss increase (nats/token)"
                    if skip.kind == "next_token" else "1 - cos of the pooled output")
    fig.suptitle(title)
    plots.finish(fig)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def register_cli(subparsers) -> None:
    """Add ``measure MODEL --text FILE``."""
    p = subparsers.add_parser(
        "measure", help="per-layer change of a pretrained model's residual stream on a text",
        description="Measure the per-layer change, r_k, c_k and stream norm of a model, and the change's "
                    "exponent against the theorem's: MODEL is a local Hugging Face folder or one of "
                    f"{', '.join(PACKAGED)} (nothing is downloaded).")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("--text", required=True, metavar="FILE", help="UTF-8 text to run the model on")
    p.add_argument("--n-seq", default="16", metavar="N", help="sequences (default 16)")
    p.add_argument("--n-tokens", default="128", metavar="N", help="text tokens per sequence (default 128)")
    p.add_argument("--batch-size", default="8", metavar="N", help="sequences per forward (default 8)")
    # the default honours OMP_NUM_THREADS, which the Makefile sets to 1 so that two processes on two
    # cores (make test's workers) do not spin against each other; a bad value is refused like --threads
    p.add_argument("--threads", default=os.environ.get("OMP_NUM_THREADS", "2"), metavar="N",
                   help="torch threads on the CPU, 1 to 1024 (default $OMP_NUM_THREADS if set, else 2)")
    p.add_argument("--device", default="cpu", metavar="DEVICE",
                   help="where the model runs: cpu, cuda, cuda:N or auto (CUDA when present; default cpu)")
    p.add_argument("--dtype", default="float32", metavar="DTYPE",
                   help=f"the model's floating type, one of {', '.join(DTYPES)} (default float32)")
    p.add_argument("--out", default=".", help="folder for the CSV and the figure (default .)")
    p.add_argument("--skip-cost", action="store_true",
                   help="also measure the cost of skipping each block (about half a forward per block)")
    p.set_defaults(func=_run_measure)
