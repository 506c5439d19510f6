"""A grid of training runs from a TOML file, over any ``concurrent.futures.Executor``.

A sweep file names the output folder, the placements, the depths (one list for all, or
one per placement), the seeds, the shared ``[base]`` configuration, per-placement
overrides (``[arch.<name>]``, e.g. the learning rate a pilot chose) and the measurement
``[plan]`` (:class:`resdecay_lib.runs.RunPlan`). :func:`load_sweep` validates it whole,
before any work starts, naming the key and the valid keys on any error.

The store (one folder): each run writes ``<out>/<arch>_L<depth>_s<seed>.json``
atomically (a temporary file with the process id in its name, then ``os.replace``), so a
result file is complete or absent. Before it starts, a run *claims* its name by creating
``<out>/.claims/<name>.claim`` with ``O_CREAT | O_EXCL``; the claim holds the host and
process id and is refreshed every 30 s while the run lives, so two sweeps on one folder
never run one configuration twice, and a claim whose process is dead (same host) or that
has not been refreshed for :data:`STALE_AFTER_S` is taken over. A result file that cannot
be read, or that holds another configuration, is reported by name, moved aside
(``.corrupt``) and re-run, never read as a result. A run killed half-way resumes from its
checkpoint in ``$RESDECAY_CACHE/checkpoints/``.

Command line::

    python -m resdecay_lib sweep configs/train_long.toml [--root DIR]
        [--executor local|dask|slurm] [--workers N] [--scheduler ADDRESS] [--device cuda]

``--device cuda`` runs the same sweep on a GPU, stored apart (:func:`on_device`).

The engines (a local process pool, a Dask cluster, SLURM through submitit) are
:mod:`resdecay_lib.engines`; the result files do not depend on which one ran them.
"""
from __future__ import annotations

import concurrent.futures as cf
import glob
import hashlib
import json
import math
import multiprocessing
import numbers
import os
import signal
import socket
import sys
import threading
import time
import tomllib
from dataclasses import asdict, fields
from pathlib import Path

from ._checks import (Callable, Flag, Instance, Int, Name, OneOf, PathArg, Text, accepts, check_out_dir,
                      check_out_file, show)
from ._checks import cli_int as _cli_int
from .data import cache_dir
from .runs import RunPlan, code_version, run_result
from .train import TrainConfig, clean_checkpoint_temporaries

__all__ = ["SPEC_KEYS", "STALE_AFTER_S", "SweepSpec", "DEVICES", "on_device", "load_sweep", "sweep_runs", "run_id", "result_path",
           "write_json_atomic", "read_result", "claim", "release", "run_one", "run_sweep",
           "unfinished", "local_executor", "register_cli", "plan_of", "CLAIMED", "MAX_WORKERS"]

#: the top-level keys of a sweep file (``depths`` may be a list or a table per placement)
SPEC_KEYS = {"name": str, "out": str, "archs": list, "depths": (list, dict), "seeds": list,
             "lrs": list, "base": dict, "arch": dict, "plan": dict, "pilot": dict, "slurm": dict}
#: a claim not refreshed for this long belongs to a process that is gone
STALE_AFTER_S = 300.0
_HEARTBEAT_S = 30.0
#: the largest --workers the command line accepts (and local_executor)
MAX_WORKERS = 1024

#: the domains several functions here share, declared once
_SPEC = Instance(dict, "a sweep (a dict, as load_sweep returns it)")
_CFG = Instance(TrainConfig, "a TrainConfig")
_ROOT = PathArg()


class SweepSpec(dict):
    """A validated sweep file (a dict with the keys of :data:`SPEC_KEYS`)."""


def _int_list(key, v, lo):
    if not isinstance(v, list) or not v:
        raise ValueError(f"{key} must be a non-empty list of integers >= {lo}, got {v!r}")
    for x in v:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < lo:
            raise ValueError(f"{key} must be a list of integers >= {lo}, got the entry {x!r}")
    if len(set(v)) != len(v):
        raise ValueError(f"{key} must not repeat an entry, got {v!r}")
    return [int(x) for x in v]


@accepts(path_or_dict=Instance((dict, str, os.PathLike), "a sweep file's path or a dict of the same shape"))
def load_sweep(path_or_dict) -> SweepSpec:
    """Read and validate a sweep file (or a dict of the same shape).

    Keys: ``out`` (a folder relative to the root, inside it), ``archs`` (keys of
    ``models.ARCHS``), ``depths`` (a list, or a table ``arch -> list``), ``seeds``;
    optional ``name``, ``[base]`` (TrainConfig fields but arch, n_layer, seed),
    ``[arch.<name>]`` (per-placement TrainConfig fields), ``[plan]`` (RunPlan fields),
    ``[pilot]`` (free-form notes of how the overrides were chosen), ``[slurm]`` (partition,
    timeout_min, cpus_per_task, folder of the slurm engine: :mod:`resdecay_lib.engines`), ``lrs`` (a list of peak
    learning rates: a learning-rate pilot; every configuration runs once per rate, and the
    run's name ends in ``_lr<rate>``).
    """
    from .models import ARCHS
    if isinstance(path_or_dict, dict):
        spec, where = dict(path_or_dict), "the sweep"
    else:
        p = Path(path_or_dict)
        if not p.is_file():
            raise ValueError(f"sweep file {p} does not exist (or is not a file)")
        try:
            with open(p, "rb") as f:
                spec = tomllib.load(f)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"sweep file {p} is not valid TOML: {exc}") from exc
        where = f"sweep file {p}"
    unknown = set(spec) - set(SPEC_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}; valid keys: {sorted(SPEC_KEYS)}")
    for key in ("out", "archs", "depths", "seeds"):
        if key not in spec:
            raise ValueError(f"{where} lacks the key {key!r}")
    for key, typ in SPEC_KEYS.items():
        if key in spec and not isinstance(spec[key], typ):
            raise ValueError(f"{where}: {key} must be of type {typ}, got {type(spec[key]).__name__}")
    out = Path(spec["out"])
    if out.is_absolute() or ".." in out.parts or not spec["out"].strip():
        raise ValueError(f"{where}: out must be a folder inside the root (relative, no '..'), "
                         f"got {spec['out']!r}")
    archs = spec["archs"]
    if not archs or len(set(archs)) != len(archs):
        raise ValueError(f"{where}: archs must be a non-empty list without repeats, got {archs!r}")
    for a in archs:
        if a not in ARCHS:
            raise ValueError(f"{where}: archs holds {a!r}; valid placements: {sorted(ARCHS)}")
    if isinstance(spec["depths"], dict):
        extra = set(spec["depths"]) - set(archs)
        missing = set(archs) - set(spec["depths"])
        if extra or missing:
            raise ValueError(f"{where}: depths must have one list per placement of archs; "
                             f"extra {sorted(extra)}, missing {sorted(missing)}")
        depths = {a: _int_list(f"depths.{a}", spec["depths"][a], 1) for a in archs}
    else:
        d = _int_list("depths", spec["depths"], 1)
        depths = {a: d for a in archs}
    seeds = _int_list("seeds", spec["seeds"], 0)
    if "lrs" in spec:
        lrs = spec["lrs"]
        if not lrs or len(set(lrs)) != len(lrs) or not all(
                isinstance(x, float) and math.isfinite(x) and x > 0 for x in lrs):
            raise ValueError(f"{where}: lrs must be a non-empty list of distinct positive floats, got {lrs!r}")
    valid = {f.name for f in fields(TrainConfig)} - {"arch", "n_layer", "seed"}
    base = spec.get("base", {})
    bad = set(base) - valid
    if bad:
        raise ValueError(f"{where}: [base] has unknown or reserved keys {sorted(bad)}; valid: {sorted(valid)}")
    over = spec.get("arch", {})
    for a, tab in over.items():
        if a not in archs:
            raise ValueError(f"{where}: [arch.{a}] names a placement not in archs {archs}")
        if not isinstance(tab, dict) or set(tab) - valid:
            raise ValueError(f"{where}: [arch.{a}] has unknown or reserved keys "
                             f"{sorted(set(tab) - valid) if isinstance(tab, dict) else tab!r}; valid: {sorted(valid)}")
    plan = spec.get("plan", {})
    bad = set(plan) - {f.name for f in fields(RunPlan)}
    if bad:
        raise ValueError(f"{where}: [plan] has unknown keys {sorted(bad)}; valid: "
                         f"{sorted(f.name for f in fields(RunPlan))}")
    if "slurm" in spec:
        from .engines import check_slurm
        check_slurm(spec["slurm"], where)
    res = SweepSpec(spec)
    res["depths"], res["seeds"] = depths, seeds
    # build every configuration now: a bad value fails here, naming its field, before any run
    from .models import GPTConfig, _validate
    for cfg in sweep_runs(res):
        plan_of(res).resolve(cfg.steps)
        # the model's sizes too (vocab_size: a byte-sized stand-in for the corpus's 85)
        _validate(GPTConfig(arch=cfg.arch, n_layer=cfg.n_layer, d_model=cfg.d_model,
                            n_head=cfg.n_head, vocab_size=256, block_size=cfg.block_size,
                            seed=cfg.seed))
    return res


@accepts(spec=_SPEC)
def plan_of(spec) -> RunPlan:
    """The sweep's measurement plan, a :class:`~resdecay_lib.runs.RunPlan`."""
    if not isinstance(spec.get("plan", {}), dict):
        raise ValueError(f"spec's plan must be a table of RunPlan fields, got {show(spec.get('plan'))}")
    p = dict(spec.get("plan", {}))
    if "measure_steps" in p:
        p["measure_steps"] = tuple(p["measure_steps"])
    return RunPlan(**p)


def _need(spec, *keys) -> None:
    missing = [k for k in keys if k not in spec]
    if missing:
        raise ValueError(f"spec must be a sweep (load_sweep's) holding {list(keys)}: it lacks {missing}")


@accepts(spec=_SPEC)
def sweep_runs(spec) -> list[TrainConfig]:
    """Every configuration: seed by seed, deepest first within a seed.

    That order finishes one complete seed of the grid before the next starts, and the
    longest runs before the short ones, so a sweep cut short by time still has every
    configuration once.
    """
    _need(spec, "archs", "depths", "seeds")
    base = dict(spec.get("base", {}))
    over = spec.get("arch", {})
    depths = spec["depths"]
    if not isinstance(depths, dict):
        depths = {a: depths for a in spec["archs"]}
    out = []
    for s in spec["seeds"]:
        cells = sorted(((L, i, a) for i, a in enumerate(spec["archs"]) for L in depths[a]),
                       key=lambda t: (-t[0], t[1]))
        for L, _, a in cells:
            for lr in spec.get("lrs", [None]):
                lr = {} if lr is None else {"lr": lr}
                out.append(TrainConfig.from_dict({**base, **over.get(a, {}), "arch": a,
                                                  "n_layer": int(L), "seed": int(s), **lr}))
    return out


@accepts(spec=_SPEC, cfg=_CFG)
def run_id(spec, cfg: TrainConfig) -> str:
    """The run's name in the store: ``<arch>_L<depth>_s<seed>``, then ``_lr<rate>`` in a pilot."""
    return cfg.run_name() + (f"_lr{cfg.lr:g}" if "lrs" in spec else "")


@accepts(spec=_SPEC, cfg=_CFG, root=_ROOT)
def result_path(spec, cfg: TrainConfig, root=".") -> Path:
    """``<root>/<out>/<run id>.json``: where the run's result is stored."""
    _need(spec, "out")
    return Path(root) / spec["out"] / f"{run_id(spec, cfg)}.json"


def _json_safe(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


@accepts(path=PathArg())
def write_json_atomic(obj, path: str | Path) -> None:
    """Write JSON to ``path`` through a per-process temporary file and ``os.replace``.

    Non-finite floats are written as ``null`` (standard JSON); the temporary file is removed
    if serialisation fails, and the target is then left as it was. A path that cannot be a
    file (a folder, a file among its parents) raises ``ValueError`` before anything is written.
    """
    path = check_out_file("path", path)
    try:
        text = json.dumps(_json_safe(obj), separators=(",", ":"), allow_nan=False)
    except TypeError as exc:
        raise TypeError(f"obj must be JSON-ready (dicts, lists, str, numbers, bool, None): {exc}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


@accepts(path=PathArg(), cfg=Instance(TrainConfig, "a TrainConfig", none=True))
def read_result(path: Path, cfg: TrainConfig | None = None):
    """The stored result at ``path``, or None when it is absent, unreadable or of another
    configuration (then it is moved aside to ``<path>.corrupt`` and the reason returned as
    the second element)."""
    path = Path(path)
    if not path.exists():
        return None, None
    try:
        res = json.loads(path.read_text())
        if not isinstance(res, dict) or "config" not in res or "status" not in res:
            raise ValueError("it lacks 'config' or 'status'")
        if cfg is not None and res["config"] != json.loads(json.dumps(asdict(cfg))):
            raise ValueError(f"it holds another configuration: {res['config']}")
        return res, None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        aside = path.with_name(path.name + ".corrupt")
        os.replace(path, aside)
        return None, f"{path} was not a usable result ({exc}); moved to {aside.name}, re-running"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@accepts(claim_dir=PathArg(), name=Name())
def claim(claim_dir: Path, name: str) -> Path | None:
    """Claim the run ``name`` (a plain name: the claim stays inside ``claim_dir``): the claim
    file, or None when a live process holds it."""
    claim_dir = check_out_dir("claim_dir", claim_dir)
    claim_dir.mkdir(parents=True, exist_ok=True)
    path = claim_dir / f"{name}.claim"
    me = {"host": socket.gethostname(), "pid": os.getpid(), "time": time.time()}
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                held = json.loads(path.read_text())
                age = time.time() - path.stat().st_mtime
            except (OSError, ValueError):
                held, age = {}, STALE_AFTER_S + 1  # a half-written claim of a dead process
            same_host = held.get("host") == me["host"]
            dead = (same_host and isinstance(held.get("pid"), int) and not _pid_alive(held["pid"]))
            if not (dead or age > STALE_AFTER_S):
                return None
            # take over a stale claim: rename it away first, so two takers cannot both win
            try:
                os.replace(path, path.with_name(path.name + f".stale.{os.getpid()}"))
                os.unlink(path.with_name(path.name + f".stale.{os.getpid()}"))
            except FileNotFoundError:
                pass
            continue
        with os.fdopen(fd, "w") as f:
            json.dump(me, f)
        return path
    return None


@accepts(path=PathArg())
def release(path: Path) -> None:
    """Give a claim back (remove its file)."""
    Path(path).unlink(missing_ok=True)


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
    """Remove the temporaries (``.<name>.<pid>.<thread>.tmp``) that killed writers of the result
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
    a finished run its checkpoint, and the sweep's checkpoint folder once it is empty.
    """
    from .train import CheckpointUnreadable, discard_checkpoint
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
        except CheckpointUnreadable as exc:
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


@accepts(root=_ROOT, executor=_Executor(), log=Callable("a callable log(line)"), progress=Flag(none=True))
def run_sweep(spec_or_path, root: str | Path = ".", executor: cf.Executor | None = None,
              log=print, progress=None) -> list[tuple[str, str]]:
    """Run every configuration of the sweep that has no result yet, through ``executor``.

    ``executor``: any ``concurrent.futures.Executor`` (a process pool, Dask's
    ``Client.get_executor()``, submitit's executor); None runs them one after another in
    this process. The result files do not depend on the executor. Returns (name, what
    happened) per configuration, in the sweep's order.
    """
    spec = load_sweep(spec_or_path)
    code = code_version()
    args = [(dict(spec), asdict(c), str(root), code) for c in sweep_runs(spec)]
    log(f"sweep {spec.get('name') or spec['out']}: {len(args)} runs, results in {Path(root) / spec['out']}")
    done = []
    if executor is None:
        for i, a in enumerate(args):
            done.append(run_one(*a, progress=progress))
            log(f"[{i + 1}/{len(args)}] {done[-1][0]}: {done[-1][1]}")
        return done
    futs = [executor.submit(run_one, *a) for a in args]
    for i, f in enumerate(futs):
        done.append(f.result())
        log(f"[{i + 1}/{len(args)}] {done[-1][0]}: {done[-1][1]}")
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


def _die_with_parent(parent: int) -> None:
    """Worker initializer: on Linux, ask the kernel to send SIGTERM to this worker when the
    process that started it dies (prctl PR_SET_PDEATHSIG), so killing a sweep -- even with
    SIGKILL -- takes its workers down; their runs resume from their checkpoints. A parent
    that died while this worker was still importing cannot signal it any more: then it
    leaves at once."""
    if sys.platform.startswith("linux"):
        import ctypes
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os._exit(1)


@accepts(workers=Int(1, MAX_WORKERS))
def local_executor(workers: int) -> cf.Executor:
    """A pool of ``workers`` fresh (spawned) processes: no torch state crosses a fork, and
    no worker outlives the sweep that started it (:func:`_die_with_parent`)."""
    return cf.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                  initializer=_die_with_parent, initargs=(os.getpid(),))


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
    from .engines import ENGINES, EngineUnavailable, check_scheduler, open_executor
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
            done = run_sweep(spec, root=root, executor=ex)
    except EngineUnavailable as exc:
        print(f"sweep: {exc}", file=sys.stderr)
        return 2
    print(_summary_table(spec, root, done))
    missing = unfinished(spec, root, done)
    if missing:   # exit 0 means every result is on disk
        print(f"sweep: {len(missing)} run(s) skipped because another live process claims them have no "
              f"result yet: {', '.join(missing)}; run the sweep again once that process has ended "
              f"(it resumes them if they are still missing)", file=sys.stderr)
        return 1
    return 0


def _summary_table(spec, root, done=()) -> str:
    """The table a sweep prints at its end: each run of ``spec`` with the status and final
    validation loss of its stored result under ``root`` (read only: nothing is moved) and, from
    ``done`` (run_sweep's (name, what happened)), what this sweep did with it."""
    what = dict(done)
    rows = [("run", "status", "final val loss", "this sweep")]
    for c in sweep_runs(spec):
        name, path = run_id(spec, c), result_path(spec, c, root)
        status, loss = "no result", "-"
        try:
            r = json.loads(path.read_text())
            status = str(r.get("status", "?"))
            if status == "non_finite":
                status += f" at step {r.get('failed_step')}"
            v = ((r.get("final") or {}).get("val_loss") or {}).get("mean")
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                loss = f"{v:.4f}"
        except (OSError, ValueError, AttributeError):
            pass
        rows.append((name, status, loss, what.get(name, "")))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return f"results in {Path(root) / spec['out']}:\n" + "\n".join(
        f"{r[0]:{widths[0]}}  {r[1]:{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}".rstrip() for r in rows)


@accepts(spec=_SPEC, root=_ROOT)
def unfinished(spec, root, done) -> list[str]:
    """The runs of ``done`` (run_sweep's (name, what happened)) that were skipped as claimed by
    another process and still have no result under ``root``, in the sweep's order."""
    claimed = {name for name, what in done if what == CLAIMED}
    return [run_id(spec, c) for c in sweep_runs(spec)
            if run_id(spec, c) in claimed and not result_path(spec, c, root).is_file()]   # atomic: whole or absent


def register_cli(sub) -> None:
    """Add ``sweep`` to the ``python -m resdecay_lib`` parser."""
    q = sub.add_parser("sweep", help="run a grid of training runs from a TOML file (resumable)")
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
    q.set_defaults(func=_cmd_sweep)
