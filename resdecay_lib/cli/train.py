"""The ``train`` command: one model trained, measured through training, its result written.

``resdecay train [--OPTION VALUE ...] [--checkpoint FILE] [--out FILE] [--keep-weights]`` builds a
:class:`~resdecay_lib.training.plan.TrainConfig` from one option per field (``--help`` lists
each one's valid values and default, and the placements ``--arch`` takes), runs it with
:func:`resdecay_lib.training.runs.run_result`, writes the result JSON atomically (to ``--out``,
by default ``runs/<run name>.json`` under the current folder) and prints the final validation
loss, the exponent of the per-layer change at the last measured step beside the theorem's
(:func:`~resdecay_lib.training.runs.stored_exponent`,
:func:`~resdecay_lib.training.runs.exponent_lines`) and where the result went. ``--keep-weights``
also stores the finished run's final weights beside the result, ``<out stem>.weights.pt``
(:mod:`resdecay_lib.training.weights`; the result JSON is the same with or without them).

Every option and path is checked before any work (one line, exit code 2). A checkpoint the
library wrote that cannot be read is discarded and the run starts over, as a sweep does; one it
did not write, or one of another configuration, is refused (exit code 2). A run whose loss
turns non-finite writes its result and exits 1; a result that cannot be written goes to stdout
(exit code 1), since it cost a whole run.
"""
from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from ..checks import check_out_file, one_line
from ..nn.device import resolve_device
from ..training.plan import TrainConfig
from ..training.runs import K_MIN, LEVEL, exponent_lines, part_read, run_result, stored_exponent
from ..training.records import RunRecord
from ..training.store import load_run, write_json_atomic
from ..training.train import CheckpointMismatch, CheckpointUnreadable, ForeignCheckpoint, discard_checkpoint
from ..training.weights import weights_path

__all__ = ["DEFAULT_OUT_DIR", "register_cli"]

#: where ``train`` writes its result without ``--out``: ``runs/<run name>.json`` under the
#: current folder (made when absent; a result of the same configuration there is replaced)
DEFAULT_OUT_DIR = "runs"


def _exponent_lines(res: RunRecord, name: str) -> list[str]:
    """What ``train`` prints of its run's exponent: at the last measured step, k = 2..L, or why
    there is none (a run of fewer than four blocks, a fit the data refuse)."""
    L, steps = res.n_layer, res.measured_steps
    part = part_read(res.arch)
    head = (f"exponent at step {max(steps) if steps else '?'} (the last measured) of the per-layer change omega_k^2"
            + ("" if part == "stream" else f" of the {part!r} part (the stream the blocks read)") + ":")
    if L < K_MIN + 2:
        return [f"fit: none (k = {K_MIN}..L needs L >= {K_MIN + 2} blocks for three points; {name} has {L})"]
    try:
        e = stored_exponent(res, k_min=K_MIN, level=LEVEL)
    except ValueError as exc:
        return [f"fit: none ({' '.join(str(exc).split())})"]
    return [head] + exponent_lines(e)


def _run(args) -> int:
    kw = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)
          if getattr(args, f.name, None) is not None}
    try:   # every option and path before any work: one line and exit code 2 on a bad one
        cfg = TrainConfig.from_dict(kw)
        resolve_device(cfg.device)
        if args.out is not None:
            out = check_out_file("--out", args.out)
        else:   # the default, checked as --out is: a folder, a FIFO or an unwritable folder there exits 2
            default = Path(DEFAULT_OUT_DIR) / f"{cfg.run_name()}.json"
            out = check_out_file(f"--out (not given: the default {str(default)!r})", default)
        ck = check_out_file("--checkpoint", args.checkpoint) if args.checkpoint is not None else None
        if ck is not None and out.resolve() == ck.resolve():
            raise ValueError(f"--out and --checkpoint must be two files, got {str(out)!r} for both")
        wts = None
        if args.keep_weights:
            wts = check_out_file(f"--keep-weights (beside --out: {str(weights_path(out))!r})", weights_path(out))
            if ck is not None and wts.resolve() == ck.resolve():
                raise ValueError(f"--keep-weights writes {str(wts)!r}, which is --checkpoint: name another "
                                 f"--checkpoint")
    except ValueError as exc:
        print(f"train: {exc}", file=sys.stderr)
        return 2
    try:
        try:
            res = run_result(cfg, checkpoint=ck, weights=wts)
        except CheckpointUnreadable as exc:   # as the sweep does: start over, and say so
            if isinstance(exc, ForeignCheckpoint):
                raise                            # not the library's file: refused, left as it is
            print(f"train: {exc}; {discard_checkpoint(ck)}, restarting the run from step 0", file=sys.stderr)
            res = run_result(cfg, checkpoint=ck, weights=wts)
    except (CheckpointMismatch, ForeignCheckpoint) as exc:
        print(f"train: {' '.join(str(exc).split())}"[:500], file=sys.stderr)
        return 2
    try:
        write_json_atomic(res, out)           # write_json_atomic makes the folder
    except (OSError, ValueError) as exc:     # keep the result: it cost a whole run
        print(f"train: cannot write --out {str(out)!r} ({exc}); the result follows on stdout",
              file=sys.stderr)
        print(json.dumps(res))
        return 1
    try:
        res = load_run(out)                     # what the store reads back, checked
    except ValueError as exc:
        print(f"train: result written to {out}, but the store cannot read it back: {one_line(exc)}", file=sys.stderr)
        return 1
    if res.status != "ok":
        print(f"{cfg.run_name()}: non-finite loss at step {res.failed_step}; result written to {out}",
              file=sys.stderr)
        return 1
    print(f"{cfg.run_name()}: val loss {res.final.val_loss.mean:.4f} "
          f"(step 0: {res.val_curve[0].mean:.4f}), {res.wall_time_s:.0f} s")
    for line in _exponent_lines(res, cfg.run_name()):
        print(line)
    print(f"result written to {out}" + (f"; final weights to {wts}" if wts is not None else ""))
    return 0


def _describe_options(parser) -> None:
    """``train --help``: each TrainConfig option's valid values (its declared domain) and
    default, and for ``--arch`` the placements of the models registry."""
    from ..nn.models import ARCHS
    defaults = {f.name: f.default for f in dataclasses.fields(TrainConfig)}
    for action in parser._actions:
        name = action.dest
        if name not in TrainConfig.DOMAINS or name not in defaults:
            continue
        if name == "arch":
            action.metavar = "ARCH"
            action.help = (f"the norm placement, one of {', '.join(ARCHS)} (resdecay_lib.nn.models.ARCHS); "
                           f"default {defaults[name]!r}")
        else:
            action.help = f"{TrainConfig.DOMAINS[name].describe()}; default {defaults[name]!r}"
        action.help = action.help.replace("%", "%%")


def register_cli(subparsers) -> None:
    """Add ``train`` to the ``python -m resdecay_lib`` parser."""
    p = subparsers.add_parser(
        "train", help="train one model, measured through training; write its result JSON and print its exponent",
        description="Train one model, measure it through training and write its result JSON (to --out, by "
                    f"default {DEFAULT_OUT_DIR}/<run name>.json under the current folder, e.g. "
                    f"{DEFAULT_OUT_DIR}/pre_ln_L6_s0.json; the folder is made, a result there replaced). "
                    "It then prints the final validation loss, the exponent of the per-layer change omega_k^2 "
                    f"at the last measured step over k = {K_MIN}..L with its {LEVEL:.0%} bootstrap interval over "
                    "the measured sequences, the theorem's exponent over the same k in the convention the "
                    "measured rho chooses, the reading (Chapter 7's fit; a run of fewer than "
                    f"{K_MIN + 2} blocks has none) and where the result was written. "
                    "'resdecay analyse RUN.json' reads the exponent of any measured step later.")
    for f in dataclasses.fields(TrainConfig):
        p.add_argument("--" + f.name.replace("_", "-"), dest=f.name, type=type(f.default),
                       default=None, help=f"default {f.default!r}")
    p.add_argument("--checkpoint", default=None, help="checkpoint file (resumes if it exists)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help=f"result JSON file (default {DEFAULT_OUT_DIR}/<run name>.json under the current folder)")
    p.add_argument("--keep-weights", action="store_true",
                   help="also store the finished run's final weights (float32 state_dict, with its config and "
                        "provenance; resdecay_lib.training.weights.load_weights reads them) beside the result: "
                        "<out stem>.weights.pt; the result JSON is the same without")
    p.set_defaults(func=_run)
    _describe_options(p)
