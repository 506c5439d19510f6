"""The ``sweep`` command: a grid of training runs from a TOML file, then a table of their exponents.

::

    python -m resdecay_lib sweep configs/train_long.toml [--root DIR]
        [--executor local|dask|slurm] [--workers N] [--scheduler ADDRESS] [--device cuda]
        [--connect-timeout S] [--no-wait] [--keep-weights]

The work is :mod:`resdecay_lib.training.sweep` (:func:`~resdecay_lib.training.sweep.run_sweep`
over an executor of :mod:`resdecay_lib.training.engines`); this module parses the options,
checks them, the store and the cache before any engine starts
(:func:`~resdecay_lib.training.sweep.check_sweep`), and prints the table of the sweep's runs at
its end. ``--device cuda`` runs the same sweep on a GPU, stored apart
(:func:`~resdecay_lib.training.sweep.on_device`). ``--keep-weights``: each run this sweep
trains also stores its final weights beside its result, ``<out>/<run id>.weights.pt``
(:mod:`resdecay_lib.training.weights`); the result files are the same with or without, and runs
already stored are skipped without weights (run into a fresh ``--root`` to have them).

Exit codes: 0, every result of the sweep is on disk (whoever trained it); 2, a bad option, path,
cache or engine, before any run; 3 (:data:`EXIT_HELD`), with ``--no-wait``, runs another live
process holds have no result yet (run the sweep again later: it resumes them); 1, a run failed
with an error (a traceback).
"""
from __future__ import annotations

import math
import os
import sys
from pathlib import Path

from ..checks import check_out_dir, cli_int, one_line
from ..training.engines import ENGINES, MAX_WORKERS, EngineUnavailable, check_scheduler, open_executor
from ..training.runs import K_MIN, LEVEL, stored_exponent
from ..training.store import load_run, load_sweep, result_path, run_id, sweep_runs
from ..training.sweep import check_sweep, on_device, run_sweep, unfinished

__all__ = ["EXIT_HELD", "register_cli"]

#: the sweep command's exit code when, with ``--no-wait``, runs another live process holds
#: have no result yet (0: every result is on disk; 2: a bad option or path, before any run)
EXIT_HELD = 3


def _cli_float(option: str, text, lo: float, hi: float) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and lo < value <= hi):
        raise ValueError(f"{option} must be a number of seconds in ({lo:g}, {hi:g}], got {text!r}")
    return value


def _run(args) -> int:
    try:
        engine = args.executor
        if engine is None:
            engine = "dask" if args.scheduler is not None else "local"
        if engine not in ENGINES:
            raise ValueError(f"--executor must be one of {', '.join(ENGINES)}, got {engine!r}")
        if args.scheduler is not None:
            if engine != "dask":
                raise ValueError(f"--scheduler is the address of a Dask scheduler: it goes with "
                                 f"--executor dask (or alone), not with --executor {engine}")
            check_scheduler(args.scheduler)
        workers = None
        if args.workers is not None:
            workers = cli_int("--workers", args.workers, 1, MAX_WORKERS)
            if engine == "slurm" or args.scheduler is not None:
                raise ValueError("--workers sets the processes of --executor local or of a "
                                 "Dask LocalCluster; with "
                                 + ("--scheduler the cluster's workers run the sweep"
                                    if engine == "dask" else "--executor slurm every "
                                    "configuration is a SLURM job of its own"))
        timeout = _cli_float("--connect-timeout", args.connect_timeout, 0, 3600)
        root = check_out_dir("--root", args.root)       # not '' (the current folder by accident)
        spec = load_sweep(args.config)
        if args.device is not None:
            spec = on_device(spec, args.device)
            if args.device == "cuda":
                import torch
                if not torch.cuda.is_available():
                    raise ValueError("--device cuda: CUDA is not available here "
                                     "(torch.cuda.is_available() is False)")
        # before any run, not after the first; the cache too where the runs' processes are this machine's
        check_sweep(spec, root, local=engine == "local" or (engine == "dask" and args.scheduler is None))
    except ValueError as exc:
        print(f"sweep: {exc}", file=sys.stderr)
        return 2
    if workers is None:
        workers = max(1, (os.cpu_count() or 1) // int(spec.get("base", {}).get("threads", 1)))
    # workers elsewhere (another process, node or folder) must find the store by its full path
    root = root.resolve()
    try:
        with open_executor(engine, workers, args.scheduler, spec, root,
                           connect_timeout=timeout) as ex:
            done = run_sweep(spec, root=root, executor=ex, wait=not args.no_wait, keep_weights=args.keep_weights)
    except EngineUnavailable as exc:
        print(f"sweep: {exc}", file=sys.stderr)
        return 2
    print(_summary_table(spec, root, done))
    missing = unfinished(spec, root, done)
    if missing:   # exit 0 means every result is on disk, whoever trained it
        print(f"sweep: {len(missing)} run(s) held by another live process have no result yet (--no-wait): "
              f"{', '.join(missing)}; run the sweep again once that process has ended (it resumes "
              f"them if they are still missing)", file=sys.stderr)
        return EXIT_HELD
    return 0


def _exponent_cells(r) -> tuple[str, str, str]:
    """A stored result's exponent for the sweep's table: (the fit with its interval, the
    theorem's exponent over the same k in the convention rho chooses, the reading), at the last
    measured step over k = 2..L (:func:`~resdecay_lib.training.runs.stored_exponent`), or
    ("-", "-", why not)."""
    if r.status != "ok":
        return "-", "-", "none (the run did not finish)"
    if r.n_layer < K_MIN + 2:
        return "-", "-", f"none (L = {r.n_layer} < {K_MIN + 2})"
    try:
        e = stored_exponent(r, k_min=K_MIN, level=LEVEL)
    except (ValueError, TypeError, KeyError, AttributeError):
        return "-", "-", "none (no measurement to fit)"
    fit = f"{e.exponent:.3f}" + (f" [{e.lo:.3f}, {e.hi:.3f}]" if e.lo is not None and e.hi is not None else "")
    return fit, f"{e.reference:.3f} {e.convention}", e.reading.split(" (")[0]


def _summary_table(spec, root, done=()) -> str:
    """The table a sweep prints at its end: each run of ``spec`` with the status and final
    validation loss of its stored result under ``root`` (read only: nothing is moved), its
    exponent at the last measured step with its interval, the theorem's exponent over the same
    k in the convention rho chooses and the reading (:func:`_exponent_cells`) and, from
    ``done`` (run_sweep's (name, what happened)), what this sweep did with it; a legend last."""
    what = dict(done)
    rows = [("run", "status", "final val loss", f"exponent [{LEVEL:.0%}]", "theorem", "reading", "this sweep")]
    for c in sweep_runs(spec):
        name, path = run_id(spec, c), result_path(spec, c, root)
        status, loss, cells = "no result", "-", ("-", "-", "-")
        try:
            r = load_run(path)
        except ValueError as exc:               # read only: a broken file is the sweep's to move aside
            if path.exists():
                why = one_line(exc)
                why = why.split("': ", 1)[1] if why.startswith("path '") and "': " in why else why
                status = f"unreadable ({why[:80]})"
        else:
            status = r.status + (f" at step {r.failed_step}" if r.status == "non_finite" else "")
            if r.final is not None:
                loss = f"{r.final.val_loss.mean:.4f}"
            cells = _exponent_cells(r)
        rows.append((name, status, loss, *cells, what.get(name, "")))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    right = {2, 3}                            # the numbers
    lines = ["  ".join(f"{r[i]:>{widths[i]}}" if i in right else f"{r[i]:{widths[i]}}" for i in range(len(widths)))
             + f"  {r[-1]}" for r in rows]
    legend = (f"exponent: omega_k^2 ~ k^p fitted over k = {K_MIN}..L at each run's last measured step, "
              f"{LEVEL:.0%} percentile bootstrap over the measured sequences; theorem: its exponent over the same "
              "k, in the convention the measured rho chooses (resdecay analyse RUN.json for any step)")
    return f"results in {Path(root) / spec['out']}:\n" + "\n".join(line.rstrip() for line in lines) + "\n" + legend


def register_cli(subparsers) -> None:
    """Add ``sweep`` to the ``python -m resdecay_lib`` parser."""
    q = subparsers.add_parser(
        "sweep", help="run a grid of training runs from a TOML file (resumable); print a table of their exponents",
        description="Run every configuration of a sweep file that has no result yet, then print a table of "
                    "its runs: status, final validation loss, the exponent of the per-layer change omega_k^2 "
                    f"at the last measured step over k = {K_MIN}..L with its {LEVEL:.0%} bootstrap interval, the "
                    "theorem's exponent over the same k in the convention the measured rho chooses, and the "
                    "reading (a run of fewer than four blocks has none). Two sweeps on "
                    "one folder share the work: a run another live process holds is waited for "
                    "(or taken over if that process dies). Exit codes: 0, every result of the sweep "
                    "is on disk (whoever trained it); 2, a bad option, path, cache or engine, found "
                    f"before any run; {EXIT_HELD}, with --no-wait, runs another live process holds "
                    "have no result yet; 1, a run failed with an error.")
    q.add_argument("config", help="sweep TOML file, e.g. configs/train_long.toml")
    q.add_argument("--root", default=".", help="folder the sweep's 'out' is relative to")
    q.add_argument("--executor", default=None, metavar="{local,dask,slurm}",
                   help="where the runs execute: local processes (default), a Dask cluster, "
                        "SLURM jobs (submitit)")
    q.add_argument("--workers", default=None, metavar="N",
                   help=f"local processes, or Dask LocalCluster workers, side by side (1 to "
                        f"{MAX_WORKERS}; default: cores / threads per run)")
    q.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 "
                        "(implies --executor dask)")
    q.add_argument("--device", default=None, metavar="{cpu,cuda}",
                   help="run the same sweep on this device, stored apart (out_<device>/)")
    q.add_argument("--connect-timeout", default="10", metavar="S",
                   help="seconds to wait for the Dask scheduler (default 10)")
    q.add_argument("--no-wait", action="store_true",
                   help="do not wait for runs another live process holds: report them and end "
                        f"with exit code {EXIT_HELD} if any still has no result")
    q.add_argument("--keep-weights", action="store_true",
                   help="each run this sweep trains also stores its final weights beside its result: "
                        "<out>/<run id>.weights.pt (runs already stored are skipped without weights)")
    q.set_defaults(func=_run)
