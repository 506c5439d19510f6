"""A grid of training runs from a TOML file, over any ``concurrent.futures.Executor``.

A sweep file names the output folder, the placements, the depths (one list for all, or
one per placement), the seeds, the shared ``[base]`` configuration, per-placement
overrides (``[arch.<name>]``, e.g. the learning rate a pilot chose) and the measurement
``[plan]`` (:class:`resdecay_lib.training.config.RunPlan`). :func:`load_sweep` validates it whole,
before any work starts, naming the key and the valid keys on any error.

The store (one folder, :mod:`resdecay_lib.training.store`): each run writes
``<out>/<arch>_L<depth>_s<seed>.json`` atomically (:func:`~resdecay_lib.training.store.write_json_atomic`),
so a result file is complete or absent. Before it starts, a run *claims* its name by creating
``<out>/.claims/<name>.claim`` with ``O_CREAT | O_EXCL``; the claim holds the host and
process id and is refreshed every 30 s while the run lives, so two sweeps on one folder
never run one configuration twice, and a claim whose process is dead (same host) or that
has not been refreshed for :data:`resdecay_lib.training.store.STALE_AFTER_S` is taken over. A result file that cannot
be read, or that holds another configuration, is reported by name, moved aside
(``.corrupt``) and re-run, never read as a result. A run killed half-way resumes from its
checkpoint in ``$RESDECAY_CACHE/checkpoints/``.

Before any run starts, the sweep checks that ``<root>/<out>`` (and its ``.claims``) is a
folder it can write and, when the runs go in processes of this machine, that the cache
folder is usable and holds the prepared corpus: a bad one is one line, not a traceback after
the first run.

Two sweeps on one folder share the work: a run another live process holds is waited for
(:func:`run_sweep`'s ``wait``), polling at most every :data:`WAIT_MAX_S` seconds, until its
result appears or its holder dies (its claim is then taken over and the run trained here).

Command line::

    python -m resdecay_lib sweep configs/train_long.toml [--root DIR]
        [--executor local|dask|slurm] [--workers N] [--scheduler ADDRESS] [--device cuda]
        [--no-wait]

``--device cuda`` runs the same sweep on a GPU, stored apart (:func:`on_device`). Exit
codes: 0, every result of the sweep is on disk (whoever trained it); 2, a bad option, path,
cache or engine, before any run; 3 (:data:`EXIT_HELD`), with ``--no-wait``, runs another live
process holds have no result yet (run the sweep again later: it resumes them); 1, a run
failed with an error (a traceback).

The engines (a local process pool, a Dask cluster, SLURM through submitit) are
:mod:`resdecay_lib.training.engines`; the result files do not depend on which one ran them.
"""
from __future__ import annotations

import concurrent.futures as cf
import glob
import hashlib
import json
import math
import os
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

from ..checks import Callable, Flag, Instance, OneOf, PathArg, Text, accepts, check_out_dir, one_line
from ..checks import cli_int as _cli_int
from ..nn.device import cache_dir
from .config import TrainConfig
from .data import CorpusUnavailable, cache_folder, shakespeare_text
from .engines import ENGINES, MAX_WORKERS, EngineUnavailable, check_scheduler, open_executor
from .runs import K_MIN, LEVEL, run_result, stored_exponent
from .store import (SweepSpec, claim, code_version, load_sweep, plan_of, read_result, release, result_path, run_id,
                    sweep_runs, write_json_atomic)
from .train import CheckpointUnreadable, ForeignCheckpoint, clean_checkpoint_temporaries, discard_checkpoint

__all__ = ["DEVICES", "on_device", "run_one", "run_sweep", "unfinished", "register_cli", "CLAIMED",
           "EXIT_HELD", "WAIT_FIRST_S", "WAIT_MAX_S"]

_HEARTBEAT_S = 30.0
#: the first pause (seconds) before a sweep looks again at runs another live process holds;
#: each later pause doubles, up to :data:`WAIT_MAX_S`
WAIT_FIRST_S = 1.0
#: the longest pause between two looks at the runs a sweep waits for
WAIT_MAX_S = 10.0
#: the sweep command's exit code when, with ``--no-wait``, runs another live process holds
#: have no result yet (0: every result is on disk; 2: a bad option or path, before any run)
EXIT_HELD = 3

#: the domains several functions here share, declared once
_SPEC = Instance(dict, "a sweep (a dict, as load_sweep returns it)")
_CFG = Instance(TrainConfig, "a TrainConfig")
_ROOT = PathArg()


def _heartbeat(path: Path, stop: threading.Event):
    while not stop.wait(_HEARTBEAT_S):
        try:
            os.utime(path)
        except FileNotFoundError:
            return


def _checkpoint_dir(spec, root) -> Path:
    out = Path(root) / spec["out"]
    key = hashlib.sha1(str(out.resolve()).encode()).hexdigest()[:10]
    d = cache_dir() / "checkpoints" / f"{str(spec['out']).replace('/', '_')}-{key}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _clean_result_temporaries(path: Path) -> None:
    """Remove the temporaries (``.<name>.<pid>.<thread>.<random>.tmp``, :func:`~resdecay_lib.training.store.replacing`) that killed writers of the result
    ``path`` left; called by the holder of the run's claim, so no other process writes it."""
    if path.parent.is_dir():
        for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
            if not tmp.name.startswith(f".{path.name}.{os.getpid()}."):
                tmp.unlink(missing_ok=True)


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()      # only an empty folder; a run that writes into it later makes it again
    except OSError:
        pass


#: what run_one says of a run another live process holds
CLAIMED = "claimed by another live process, skipped"


@accepts(spec=_SPEC, cfg_dict=Instance(dict, "a dict of TrainConfig fields"), root=_ROOT, code=Text(),
         progress=Flag(none=True))
def run_one(spec: dict, cfg_dict: dict, root: str, code: str, progress=None) -> tuple[str, str]:
    """Run one configuration of a sweep unless it is done or claimed: (name, what happened).

    Module-level and taking plain data, so any executor can ship it to a worker. The holder
    of a run's claim removes the temporaries killed writers left (checkpoint and result), and
    a finished run its checkpoint, and the sweep's checkpoint folder once it is empty. What the
    library did not write is never removed: a foreign file at the checkpoint path raises
    :class:`~resdecay_lib.training.train.ForeignCheckpoint`, and a folder or FIFO at the
    result path ``ValueError`` (:func:`~resdecay_lib.training.store.read_result`), naming it.
    """
    cfg = TrainConfig.from_dict(cfg_dict)
    path = result_path(spec, cfg, root)
    res, note = read_result(path, cfg)
    if res is not None:
        return run_id(spec, cfg), "done, skipped"
    name = run_id(spec, cfg)
    held = claim(Path(root) / spec["out"] / ".claims", name)
    if held is None:
        return name, CLAIMED
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(held, stop), daemon=True)
    beat.start()
    try:
        res, _ = read_result(path, cfg)   # finished by another process between check and claim
        if res is not None:
            return name, "done, skipped"
        ck = _checkpoint_dir(spec, root) / f"{name}.pt"
        clean_checkpoint_temporaries(ck, every=True)   # this process holds the claim
        _clean_result_temporaries(path)
        try:
            res = run_result(cfg, plan_of(spec), checkpoint=ck, progress=progress, code=code)
        except ForeignCheckpoint:
            raise                       # not the library's file: refused and left as it is, never removed
        except CheckpointUnreadable as exc:   # a truncated checkpoint of its own: removed, the run starts over
            print(f"{name}: {exc}; {discard_checkpoint(ck)}, restarting the run from step 0", file=sys.stderr)
            res = run_result(cfg, plan_of(spec), checkpoint=ck, progress=progress, code=code)
        write_json_atomic(res, path)
        if res["status"] == "ok":
            ck.unlink(missing_ok=True)  # a non-finite run keeps its last good checkpoint
            _remove_if_empty(ck.parent)
        else:
            note = (note + "; " if note else "") + f"failed at step {res.get('failed_step')}"
        return name, (note + "; " if note else "") + f"{res['status']}, {res['wall_time_s']:.0f} s"
    finally:
        stop.set()
        release(held)


class _Executor(Instance):
    """Anything with ``submit(fn, *args)`` (a concurrent.futures.Executor, submitit's)."""

    def __init__(self):
        super().__init__(object, "an executor (with submit(fn, *args)) or None", none=True)

    def _check(self, name, value):
        if not callable(getattr(value, "submit", None)):
            self.wrong_kind(name, value)


def _check_store(spec, root) -> Path:
    """``<root>/<out>`` as a folder this process can write (with its ``.claims``), or
    ValueError in one line naming it; nothing is created."""
    out = Path(root) / spec["out"]
    check_out_dir(f"the sweep's out folder {str(out)!r} (root / out)", out)
    check_out_dir(f"the sweep's claims folder {str(out / '.claims')!r}", out / ".claims")
    return out


def _check_local(spec) -> None:
    """What runs in processes of this machine need from the cache, checked before the first:
    the cache folder and its ``checkpoints`` writable, and the Shakespeare corpus prepared when
    a run trains on it. ValueError in one line otherwise."""
    cache = cache_folder()
    check_out_dir(f"the checkpoints folder {str(cache / 'checkpoints')!r} ($RESDECAY_CACHE/checkpoints)",
                  cache / "checkpoints")
    if any(c.corpus == "shakespeare" for c in sweep_runs(spec)):
        try:
            shakespeare_text()
        except CorpusUnavailable as exc:
            raise ValueError(one_line(exc)) from None


def _worth_a_try(spec, cfg_dict, root) -> bool:
    """Whether a run that another live process held is worth handing to :func:`run_one` again:
    its result file has appeared, or its claim is free now (given back, or its holder gone).
    Looked at here, in the sweep's process, so a wait does not send one job per look to the
    executor (a SLURM job each, with submitit)."""
    cfg = TrainConfig.from_dict(cfg_dict)
    if result_path(spec, cfg, root).is_file():
        return True
    held = claim(Path(root) / spec["out"] / ".claims", run_id(spec, cfg))
    if held is None:
        return False
    release(held)      # run_one claims it again; if another process is quicker, it is waited for
    return True


def _run_all(args, executor, progress):
    """run_one of each of ``args`` (in this process, or through ``executor``), yielding (index, result)."""
    if executor is None:
        for i, a in enumerate(args):
            yield i, run_one(*a, progress=progress)
        return
    futs = [executor.submit(run_one, *a) for a in args]
    for i, f in enumerate(futs):
        yield i, f.result()


@accepts(root=_ROOT, executor=_Executor(), log=Callable("a callable log(line)"), progress=Flag(none=True),
         wait=Flag())
def run_sweep(spec_or_path, root: str | Path = ".", executor: cf.Executor | None = None,
              log=print, progress=None, wait: bool = True) -> list[tuple[str, str]]:
    """Run every configuration of the sweep that has no result yet, through ``executor``.

    ``executor``: any ``concurrent.futures.Executor`` (a process pool, Dask's
    ``Client.get_executor()``, submitit's executor); None runs them one after another in
    this process. The result files do not depend on the executor. Returns (name, what
    happened) per configuration, in the sweep's order.

    Before any run, ``<root>/<out>`` must be a folder this process can write (and, with
    ``executor`` None, the cache usable and the corpus prepared): ValueError in one line
    otherwise, with nothing trained.

    ``wait`` (the default): a run another live process holds (:data:`CLAIMED`) is waited
    for, with one log line naming what is waited for (again whenever that changes), looked at
    after :data:`WAIT_FIRST_S` seconds and then at pauses doubling up to :data:`WAIT_MAX_S`,
    until its result is on disk (``"done, skipped"``) or its holder is gone (dead on this
    host, or its claim not refreshed for ``STALE_AFTER_S``): the claim is then taken over
    and the run trained here. A holder that lives and keeps its claim fresh is waited for as
    long as it runs. ``wait=False``: such runs are left :data:`CLAIMED` (see
    :func:`unfinished`).
    """
    spec = load_sweep(spec_or_path)
    out = _check_store(spec, root)
    if executor is None:
        _check_local(spec)
    code = code_version()
    args = [(dict(spec), asdict(c), str(root), code) for c in sweep_runs(spec)]
    n = len(args)
    log(f"sweep {spec.get('name') or spec['out']}: {n} runs, results in {out}")
    done: list = [None] * n
    for i, res in _run_all(args, executor, progress):
        done[i] = res
        log(f"[{i + 1}/{n}] {res[0]}: " + ("claimed by another live process, waited for below"
                                           if wait and res[1] == CLAIMED else res[1]))
    held = [i for i in range(n) if done[i][1] == CLAIMED]
    pause, shown = WAIT_FIRST_S, None
    while wait and held:
        names = [done[i][0] for i in held]
        if names != shown:
            log(f"waiting for {len(names)} run(s) another live process holds: {', '.join(names)} "
                f"(looking again every {WAIT_MAX_S:g} s at most; taken over if that process ends "
                f"without a result)")
            shown = names
        time.sleep(pause)
        pause = min(2 * pause, WAIT_MAX_S)
        ready = [i for i in held if _worth_a_try(*args[i][:3])]
        for j, res in _run_all([args[i] for i in ready], executor, progress):
            i = ready[j]
            done[i] = res
            if res[1] != CLAIMED:
                log(f"[{i + 1}/{n}] {res[0]}: {res[1]}" + (" (by the other process)"
                                                          if res[1] == "done, skipped" else ""))
        held = [i for i in held if done[i][1] == CLAIMED]
    return done


#: devices a stored sweep can be moved to from the command line (``--device``)
DEVICES = ("cpu", "cuda")


@accepts(device=OneOf(DEVICES))
def on_device(spec_or_path, device: str) -> SweepSpec:
    """The same sweep on another device: every run's ``device`` set to ``device`` and the
    results stored apart (``out`` and ``name`` get the suffix ``_<device>``), so runs of two
    devices never share a folder or a checkpoint. Grid, seeds, steps, learning rates and
    measurement plan are unchanged (on CUDA the results agree with the CPU's only up to float
    tolerance, which is why they are kept apart)."""
    spec = json.loads(json.dumps(load_sweep(spec_or_path)))       # a deep, plain copy
    spec.setdefault("base", {})["device"] = device
    for table in spec.get("arch", {}).values():
        if "device" in table:
            table["device"] = device
    spec["out"] = f"{spec['out'].rstrip('/')}_{device}"
    spec["name"] = f"{spec.get('name') or Path(spec['out']).name}_{device}"
    return load_sweep(spec)


# ----------------------------------------------------------------------------- command line

def _cli_float(option: str, text, lo: float, hi: float) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and lo < value <= hi):
        raise ValueError(f"{option} must be a number of seconds in ({lo:g}, {hi:g}], got {text!r}")
    return value


def _cmd_sweep(args) -> int:
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
            workers = _cli_int("--workers", args.workers, 1, MAX_WORKERS)
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
        _check_store(spec, root)                        # before any run, not after the first
        if engine == "local" or (engine == "dask" and args.scheduler is None):
            _check_local(spec)                          # the runs' processes are this machine's
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
            done = run_sweep(spec, root=root, executor=ex, wait=not args.no_wait)
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
    try:
        if r.get("status") != "ok":
            return "-", "-", "none (the run did not finish)"
        L = r["config"]["n_layer"]
        if isinstance(L, int) and L < K_MIN + 2:
            return "-", "-", f"none (L = {L} < {K_MIN + 2})"
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
            r = json.loads(path.read_text())
            status = str(r.get("status", "?"))
            if status == "non_finite":
                status += f" at step {r.get('failed_step')}"
            v = ((r.get("final") or {}).get("val_loss") or {}).get("mean")
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                loss = f"{v:.4f}"
            cells = _exponent_cells(r)
        except (OSError, ValueError, AttributeError):
            pass
        rows.append((name, status, loss, *cells, what.get(name, "")))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    right = {2, 3}                            # the numbers
    lines = ["  ".join(f"{r[i]:>{widths[i]}}" if i in right else f"{r[i]:{widths[i]}}" for i in range(len(widths)))
             + f"  {r[-1]}" for r in rows]
    legend = (f"exponent: omega_k^2 ~ k^p fitted over k = {K_MIN}..L at each run's last measured step, "
              f"{LEVEL:.0%} percentile bootstrap over the measured sequences; theorem: its exponent over the same "
              "k, in the convention the measured rho chooses (resdecay analyse RUN.json for any step)")
    return f"results in {Path(root) / spec['out']}:\n" + "\n".join(line.rstrip() for line in lines) + "\n" + legend


@accepts(spec=_SPEC, root=_ROOT)
def unfinished(spec, root, done) -> list[str]:
    """The runs of ``done`` (run_sweep's (name, what happened)) that were skipped as claimed by
    another process and still have no result under ``root``, in the sweep's order."""
    claimed = {name for name, what in done if what == CLAIMED}
    return [run_id(spec, c) for c in sweep_runs(spec)
            if run_id(spec, c) in claimed and not result_path(spec, c, root).is_file()]   # atomic: whole or absent


def register_cli(sub) -> None:
    """Add ``sweep`` to the ``python -m resdecay_lib`` parser."""
    q = sub.add_parser(
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
    q.set_defaults(func=_cmd_sweep)
