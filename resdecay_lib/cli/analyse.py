"""The ``analyse`` command: a stored training run's exponent, the theorem's, and the reading.

``resdecay analyse RUN.json [--step N] [--k-min K]`` reads one result file (what ``train``
or a sweep wrote: :func:`resdecay_lib.training.runs.run_result`'s record) and prints, at the
measured step ``--step`` (default the last), the fitted exponent of the per-layer change
omega_k^2 over k = ``--k-min``..L (default 2, Chapter 7's range) with its 95% percentile
bootstrap interval over the measured sequences, the theorem's exponent over the same k in the
convention the stored rho chooses, and the reading
(:func:`~resdecay_lib.training.runs.stored_exponent`,
:func:`~resdecay_lib.training.runs.exponent_lines`).

The file is only read, never moved or changed. Bad input exits 2 with one line before any
fit: a missing path, a folder, a FIFO, a device (:func:`resdecay_lib.checks.check_in_file`,
looked at before it is opened), a file that is not JSON, JSON that is not a run result (no
``config`` of TrainConfig fields, no ``status``, no ``checkpoints``), a step that was not
measured, a ``--k-min`` that leaves fewer than three blocks, or a malformed measurement (the
message names the field).
"""
from __future__ import annotations

import sys

from ..checks import cli_int, one_line
from ..training.runs import K_MIN, LEVEL, exponent_lines, part_read, stored_exponent
from ..training.store import load_run

__all__ = ["register_cli"]

#: the largest --step and --k-min the command parses (a step far beyond any run's is refused
#: by the result's own list of measured steps)
MAX_STEP = 10**9


def _run(args) -> int:
    try:   # every option and the file before the fit: one line and exit code 2 on a bad one
        step = None if args.step is None else cli_int("--step", args.step, 0, MAX_STEP)
        k_min = cli_int("--k-min", args.k_min, 1, MAX_STEP)
        res = load_run(args.run, name="RUN.json")
        try:
            e = stored_exponent(res, step=step, k_min=k_min, level=LEVEL)
        except ValueError as exc:            # name the options, not the function's parameters
            msg = one_line(exc)
            for param, option in (("step", "--step"), ("k_min", "--k-min")):
                if msg.startswith(param + " "):
                    msg = option + msg[len(param):]
            raise ValueError(f"RUN.json {args.run!r}: {msg}") from None
    except ValueError as exc:
        print(f"analyse: {one_line(exc)}", file=sys.stderr)
        return 2
    cfg, measured = res.config, res.measured_steps
    at = step if step is not None else max(measured)
    part = part_read(cfg.arch)
    print(f"{res.name}: {cfg.arch}, {cfg.n_layer} blocks, d={cfg.d_model}, status "
          f"{res.status}; step {at} of {cfg.steps} (measured at {measured}), {e.n} {e.over}; "
          f"change = omega_k^2 of the {'stream' if part == 'stream' else repr(part) + ' part, the stream the blocks read'}")
    for line in exponent_lines(e):
        print(line)
    return 0


def register_cli(subparsers) -> None:
    """Add ``analyse RUN.json [--step N] [--k-min K]``."""
    p = subparsers.add_parser(
        "analyse", help="a stored training run's exponent, the theorem's over the same k, and the reading",
        description="Read a result file of train or a sweep and print the fitted exponent of the per-layer "
                    f"change omega_k^2 at a measured step over k = K..L with its {LEVEL:.0%} percentile bootstrap "
                    "interval over the measured sequences, the theorem's exponent over the same k in the "
                    "convention the stored rho chooses, and the reading (Chapter 7's fit; "
                    "resdecay_lib.training.runs.stored_exponent). The file is only read.")
    p.add_argument("run", metavar="RUN.json", help="a result file (train's --out, a sweep's <out>/<run>.json)")
    p.add_argument("--step", default=None, metavar="N",
                   help="a measured step of the run (default: the last measured)")
    p.add_argument("--k-min", default=str(K_MIN), metavar="K",
                   help=f"the fit's first block, k = K..L (default {K_MIN}; the fit needs three blocks)")
    p.set_defaults(func=_run)
