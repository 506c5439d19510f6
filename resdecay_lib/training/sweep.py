"""A grid of training runs from a TOML file, over any ``concurrent.futures.Executor``.

A sweep file names the output folder, the placements, the depths (one list for all, or
one per placement), the seeds, the shared ``[base]`` configuration, per-placement
overrides (``[arch.<name>]``, e.g. the learning rate a pilot chose) and the measurement
``[plan]`` (:class:`resdecay_lib.training.plan.RunPlan`). :func:`load_sweep` validates it whole,
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

Weights (``keep_weights``, the ``sweep`` command's ``--keep-weights``): each run this sweep
finishes also stores its final weights beside its result, ``<out>/<run id>.weights.pt``
(:mod:`resdecay_lib.training.weights`), written before the result, so a result this sweep wrote
has its weights; the result files are the same with or without. A run already stored is
skipped as always: its weights are not made after the fact (a sweep into a fresh ``--root``
trains and keeps them).

The ``sweep`` command (:mod:`resdecay_lib.cli.sweep`) runs a sweep file from the command
line, on a device of choice (:func:`on_device`), and prints a table of its runs.

The engines (a local process pool, a Dask cluster, SLURM through submitit) are
:mod:`resdecay_lib.training.engines`; the result files do not depend on which one ran them.
"""
from __future__ import annotations

import concurrent.futures as cf
import glob
import hashlib
import json
import os
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

from ..checks import Callable, Flag, Instance, OneOf, PathArg, Text, accepts, check_out_dir, one_line
from ..nn.device import cache_dir
from .plan import TrainConfig
from .data import CorpusUnavailable, cache_folder, shakespeare_text
from .runs import run_result
from .store import (SweepSpec, claim, code_version, load_run, load_sweep, plan_of, read_result, release,
                    result_path, run_id, sweep_runs, write_json_atomic)
from .train import CheckpointUnreadable, ForeignCheckpoint, clean_checkpoint_temporaries, discard_checkpoint
from .weights import weights_path

__all__ = ["DEVICES", "on_device", "run_one", "run_sweep", "check_sweep", "unfinished", "CLAIMED",
           "WAIT_FIRST_S", "WAIT_MAX_S"]

_HEARTBEAT_S = 30.0
#: the first pause (seconds) before a sweep looks again at runs another live process holds;
#: each later pause doubles, up to :data:`WAIT_MAX_S`
WAIT_FIRST_S = 1.0
#: the longest pause between two looks at the runs a sweep waits for
WAIT_MAX_S = 10.0

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
         progress=Flag(none=True), keep_weights=Flag())
def run_one(spec: dict, cfg_dict: dict, root: str, code: str, progress=None,
            keep_weights: bool = False) -> tuple[str, str]:
    """Run one configuration of a sweep unless it is done or claimed: (name, what happened).
    ``keep_weights``: a run trained here also stores its final weights beside its result
    (:func:`~resdecay_lib.training.weights.weights_path`, written before the result).

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
        if keep_weights and not weights_path(path).is_file():   # said, so --keep-weights is not read as done
            return run_id(spec, cfg), "done, skipped (stored before, without weights: not kept)"
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
        wts = weights_path(path) if keep_weights else None
        try:
            res = run_result(cfg, plan_of(spec), checkpoint=ck, progress=progress, code=code, weights=wts)
        except ForeignCheckpoint:
            raise                       # not the library's file: refused and left as it is, never removed
        except CheckpointUnreadable as exc:   # a truncated checkpoint of its own: removed, the run starts over
            print(f"{name}: {exc}; {discard_checkpoint(ck)}, restarting the run from step 0", file=sys.stderr)
            res = run_result(cfg, plan_of(spec), checkpoint=ck, progress=progress, code=code, weights=wts)
        write_json_atomic(res, path)
        try:
            res = load_run(path)                # what the store reads back, checked
        except ValueError as exc:
            return name, (note + "; " if note else "") + f"written, but the store cannot read it back: {one_line(exc)}"
        if res.status == "ok":
            ck.unlink(missing_ok=True)  # a non-finite run keeps its last good checkpoint
            _remove_if_empty(ck.parent)
        else:
            note = (note + "; " if note else "") + f"failed at step {res.failed_step}"
        kept = f", weights in {wts.name}" if wts is not None and res.status == "ok" else ""
        return name, (note + "; " if note else "") + f"{res.status}, {res.wall_time_s:.0f} s{kept}"
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


@accepts(spec=_SPEC, root=_ROOT, local=Flag())
def check_sweep(spec, root, local: bool = True) -> Path:
    """What a sweep needs before its first run, checked without creating anything:
    ``<root>/<out>`` (with its ``.claims``) a folder this process can write and, with ``local``
    (the runs go in processes of this machine), the cache folder and its ``checkpoints``
    writable and the Shakespeare corpus prepared when a run trains on it. Returns
    ``<root>/<out>``; ValueError in one line naming what is wrong otherwise. :func:`run_sweep`
    calls it, and the ``sweep`` command before it starts an engine."""
    out = Path(root) / spec["out"]
    check_out_dir(f"the sweep's out folder {str(out)!r} (root / out)", out)
    check_out_dir(f"the sweep's claims folder {str(out / '.claims')!r}", out / ".claims")
    if local:
        cache = cache_folder()
        check_out_dir(f"the checkpoints folder {str(cache / 'checkpoints')!r} ($RESDECAY_CACHE/checkpoints)",
                      cache / "checkpoints")
        if any(c.corpus == "shakespeare" for c in sweep_runs(spec)):
            try:
                shakespeare_text()
            except CorpusUnavailable as exc:
                raise ValueError(one_line(exc)) from None
    return out


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
            yield i, run_one(*a[:4], progress=progress, keep_weights=a[4])
        return
    futs = [executor.submit(run_one, *a[:4], None, a[4]) for a in args]   # positional: submit(fn, *args) only
    for i, f in enumerate(futs):
        yield i, f.result()


@accepts(root=_ROOT, executor=_Executor(), log=Callable("a callable log(line)"), progress=Flag(none=True),
         wait=Flag(), keep_weights=Flag())
def run_sweep(spec_or_path, root: str | Path = ".", executor: cf.Executor | None = None,
              log=print, progress=None, wait: bool = True, keep_weights: bool = False) -> list[tuple[str, str]]:
    """Run every configuration of the sweep that has no result yet, through ``executor``.

    ``executor``: any ``concurrent.futures.Executor`` (a process pool, Dask's
    ``Client.get_executor()``, submitit's executor); None runs them one after another in
    this process. The result files do not depend on the executor. Returns (name, what
    happened) per configuration, in the sweep's order.

    Before any run, ``<root>/<out>`` must be a folder this process can write (and, with
    ``executor`` None, the cache usable and the corpus prepared; :func:`check_sweep`):
    ValueError in one line otherwise, with nothing trained.

    ``wait`` (the default): a run another live process holds (:data:`CLAIMED`) is waited
    for, with one log line naming what is waited for (again whenever that changes), looked at
    after :data:`WAIT_FIRST_S` seconds and then at pauses doubling up to :data:`WAIT_MAX_S`,
    until its result is on disk (``"done, skipped"``) or its holder is gone (dead on this
    host, or its claim not refreshed for ``STALE_AFTER_S``): the claim is then taken over
    and the run trained here. A holder that lives and keeps its claim fresh is waited for as
    long as it runs. ``wait=False``: such runs are left :data:`CLAIMED` (see
    :func:`unfinished`).

    ``keep_weights``: every run trained by this call also stores its final weights beside its
    result (``<out>/<run id>.weights.pt``, :mod:`resdecay_lib.training.weights`); runs already
    stored are skipped without weights.
    """
    spec = load_sweep(spec_or_path)
    out = check_sweep(spec, root, local=executor is None)
    code = code_version()
    args = [(dict(spec), asdict(c), str(root), code, keep_weights) for c in sweep_runs(spec)]
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
                                                          if res[1].startswith("done, skipped") else ""))
        held = [i for i in held if done[i][1] == CLAIMED]
    return done


#: the devices :func:`on_device` moves a sweep to (the ``sweep`` command's ``--device``)
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


@accepts(spec=_SPEC, root=_ROOT)
def unfinished(spec, root, done) -> list[str]:
    """The runs of ``done`` (run_sweep's (name, what happened)) that were skipped as claimed by
    another process and still have no result under ``root``, in the sweep's order."""
    claimed = {name for name, what in done if what == CLAIMED}
    return [run_id(spec, c) for c in sweep_runs(spec)
            if run_id(spec, c) in claimed and not result_path(spec, c, root).is_file()]   # atomic: whole or absent
