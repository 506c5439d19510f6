"""The run store, without torch: where results live, how they are written and read, and what
every record says of where it was made.

* Writing: :func:`write_atomic` (text or bytes) and :func:`write_json_atomic` are the one
  atomic write of the library; :func:`replacing` is the temporary path they (and the training
  loop's checkpoints) write to: ``.<name>.<pid>.<thread>.<random>.tmp`` beside the target, so
  two processes or threads never share one, replaced into place with ``os.replace`` only when
  the write finished, and removed when it failed. A file is complete or absent.
* Reading a sweep: :func:`load_sweep` (a sweep file validated whole), :func:`sweep_runs` (its
  configurations), :func:`run_id`, :func:`result_path`, :func:`read_result`, :func:`plan_of`.
* Claims: :func:`claim` and :func:`release`, so two sweeps on one folder never run one
  configuration twice (``O_CREAT | O_EXCL``; a claim of a dead process, or one not refreshed
  for :data:`STALE_AFTER_S`, is taken over).
* Provenance: :func:`code_version`, :func:`library_versions`, :func:`machine`,
  :func:`cpu_model`, :func:`cpu_capability` (torch is imported only by the last two, when
  called).

The analysis and the book read stored results through this module, so it imports neither
torch nor the training loop (``tests/package/test_layers.py`` checks it).
"""
from __future__ import annotations

import contextlib
import json
import math
import numbers
import os
import platform
import re
import secrets
import socket
import subprocess
import threading
import time
import tomllib
from dataclasses import asdict, fields
from importlib.metadata import PackageNotFoundError, version as _package_version
from pathlib import Path

from .. import __version__
from ..checks import (ArgumentTypeError, DeviceName, Instance, Name, PathArg, Real, accepts, check_in_file, check_out_dir,
                      check_out_file, one_line, show)
from ..nn.config import ARCH_NAMES, GPTConfig, validate_config
from .plan import RunPlan, TrainConfig
from .records import RunRecord
from .engines import check_slurm

__all__ = ["SPEC_KEYS", "STALE_AFTER_S", "SweepSpec", "load_sweep", "sweep_runs", "run_id", "result_path",
           "plan_of", "replacing", "write_atomic", "write_json_atomic", "read_result", "load_run",
           "pid_alive", "claim",
           "release", "code_version", "library_versions", "cpu_model", "cpu_capability", "machine",
           "peak_rss_mib", "measurement_provenance"]

#: the top-level keys of a sweep file (``depths`` may be a list or a table per placement)
SPEC_KEYS = {"name": str, "out": str, "archs": list, "depths": (list, dict), "seeds": list,
             "lrs": list, "base": dict, "arch": dict, "plan": dict, "pilot": dict, "slurm": dict}
#: a claim not refreshed for this long belongs to a process that is gone
STALE_AFTER_S = 300.0

#: the domains several functions here share, declared once
_SPEC = Instance(dict, "a sweep (a dict, as load_sweep returns it)")
_CFG = Instance(TrainConfig, "a TrainConfig")
_ROOT = PathArg()


# ----------------------------------------------------------------------------- reading a sweep

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
    ``nn.config.ARCH_NAMES``), ``depths`` (a list, or a table ``arch -> list``), ``seeds``;
    optional ``name``, ``[base]`` (TrainConfig fields but arch, n_layer, seed),
    ``[arch.<name>]`` (per-placement TrainConfig fields), ``[plan]`` (RunPlan fields),
    ``[pilot]`` (free-form notes of how the overrides were chosen), ``[slurm]`` (partition,
    timeout_min, cpus_per_task, folder of the slurm engine: :mod:`resdecay_lib.training.engines`), ``lrs`` (a list of peak
    learning rates: a learning-rate pilot; every configuration runs once per rate, and the
    run's name ends in ``_lr<rate>``).
    """
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
        if a not in ARCH_NAMES:
            raise ValueError(f"{where}: archs holds {a!r}; valid placements: {sorted(ARCH_NAMES)}")
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
        check_slurm(spec["slurm"], where)
    res = SweepSpec(spec)
    res["depths"], res["seeds"] = depths, seeds
    # build every configuration now: a bad value fails here, naming its field, before any run
    for cfg in sweep_runs(res):
        plan_of(res).resolve(cfg.steps)
        # the model's sizes too (vocab_size: a byte-sized stand-in for the corpus's 85)
        validate_config(GPTConfig(arch=cfg.arch, n_layer=cfg.n_layer, d_model=cfg.d_model,
                            n_head=cfg.n_head, vocab_size=256, block_size=cfg.block_size,
                            seed=cfg.seed))
    return res


@accepts(spec=_SPEC)
def plan_of(spec) -> RunPlan:
    """The sweep's measurement plan, a :class:`~resdecay_lib.training.plan.RunPlan`."""
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


# ----------------------------------------------------------------------------- writing

@contextlib.contextmanager
def replacing(path: str | Path):
    """A temporary path beside ``path`` to write to; on a clean exit it replaces ``path``
    atomically (``os.replace``), and it is removed whatever happens.

    Its name, ``.<name>.<pid>.<thread>.<random>.tmp``, is this call's own: two processes, two
    threads or two calls never share one (a killed writer's leftovers are recognised by the
    process id: :func:`resdecay_lib.training.train.clean_checkpoint_temporaries`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(4)}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():       # a failed write (disk full, interrupted) leaves no temporary
            tmp.unlink()


@accepts(path=PathArg())
def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` (str as UTF-8, or bytes) to ``path`` atomically: through
    :func:`replacing`, flushed and synced before the rename, so a reader sees the old file or
    the new one, never a part."""
    if not isinstance(data, (str, bytes)):
        raise ArgumentTypeError(f"data must be str or bytes, got {type(data).__name__}")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())


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
    """Write JSON to ``path`` atomically (:func:`write_atomic`), compact.

    Non-finite floats are written as ``null`` (standard JSON); the temporary file is removed
    if serialisation fails, and the target is then left as it was. A path that cannot be a
    file (a folder, a file among its parents) raises ``ValueError`` before anything is written.
    """
    path = check_out_file("path", path)
    try:
        text = json.dumps(_json_safe(obj), separators=(",", ":"), allow_nan=False)
    except TypeError as exc:
        raise ArgumentTypeError(f"obj must be JSON-ready (dicts, lists, str, numbers, bool, None): {exc}") from None
    write_atomic(path, text)


#: a result file's name as the store gives it (:func:`run_id`): ``<arch>_L<depth>_s<seed>[_lr<rate>].json``
_RUN_FILE = re.compile(rf"({'|'.join(map(re.escape, sorted(ARCH_NAMES)))})_L[0-9]+_s[0-9]+(_lr[0-9.e+-]+)?\.json")


def _result_problem(res, cfg: TrainConfig | None = None):
    """``(record, None)`` for a valid parsed result, else ``(None, what is wrong)``, naming the
    field: what :meth:`~resdecay_lib.training.records.RunRecord.from_dict` refuses (a sweep counts a
    result that reads as done and never runs it again, and the analysis reads these fields), or,
    with ``cfg``, a record of another configuration."""
    if not isinstance(res, dict):
        return None, f"it must be a JSON object (a result record), got {type(res).__name__}"
    missing = [k for k in ("config", "status") if k not in res]
    if missing:
        return None, f"it lacks {missing}"
    try:
        rec = RunRecord.from_dict(res)
    except (ArgumentTypeError, ValueError) as exc:
        return None, one_line(exc).split(": ", 1)[-1]
    if cfg is not None and res["config"] != json.loads(json.dumps(asdict(cfg))):
        return None, f"it holds another configuration: {show(res['config'], 300)}"
    return rec, None


def _aside(path: Path) -> Path:
    """``<path>.corrupt``, or the first ``<path>.corrupt.N`` free: an earlier quarantined file is kept."""
    aside, n = path.with_name(path.name + ".corrupt"), 0
    while os.path.lexists(aside):
        n += 1
        aside = path.with_name(f"{path.name}.corrupt.{n}")
    return aside


@accepts(path=PathArg(), cfg=Instance(TrainConfig, "a TrainConfig", none=True))
def read_result(path: Path, cfg: TrainConfig | None = None):
    """The stored result at ``path`` and a note: ``(result, None)`` when it is a valid result
    (:func:`_result_problem`; of ``cfg``'s configuration when ``cfg`` is given), ``(None, None)``
    when nothing is there, ``(None, reason)`` when the file is the library's own result but not
    a usable one: the reason names the path and the field, and the file is moved aside
    (quarantined) to ``<path>.corrupt`` (or ``.corrupt.N``, keeping an earlier one), so the
    run is done again and the bad file kept for a look.

    What is the library's own, and may be moved: a file that parses as a result record (a
    JSON object with ``config`` and ``status``: what :func:`resdecay_lib.training.runs.run_result`
    writes), or one named as the store names results (:func:`run_id`:
    ``<arch>_L<depth>_s<seed>[_lr<rate>].json``, as a sweep's output folder holds them, even
    when truncated). Anything else is refused, never moved or removed: a folder, a FIFO, a
    socket or a device at ``path`` (:func:`resdecay_lib.checks.check_in_file`, looked at before
    it is opened), or a file that is neither (not JSON, or JSON of another kind, under another
    name) raises ``ValueError`` naming the path.

    Why the values are checked (a result whose ``final.val_loss.mean`` is a string, whose
    ``status`` is unknown, whose ``config`` is not a TrainConfig): a sweep counts a result that
    reads as done and never runs it again, and the analysis would fail on it, or read it."""
    path = check_in_file("path", path, missing_ok=True)
    if not os.path.exists(path):
        return None, None
    try:
        res, why = json.loads(path.read_text(encoding="utf-8")), None
    except (OSError, ValueError, UnicodeDecodeError) as exc:   # JSONDecodeError is a ValueError
        res, why = None, f"it is not JSON ({type(exc).__name__}: {one_line(exc)[:200]})"
    own = (isinstance(res, dict) and "config" in res and "status" in res) or _RUN_FILE.fullmatch(path.name)
    if why is None:
        rec, why = _result_problem(res, cfg)
        if why is None:
            return rec, None
    if not own:
        raise ValueError(f"path {str(path)!r} is not a result file ({why}) and not named as one: "
                         f"refused, left as it is")
    aside = _aside(path)
    try:
        os.replace(path, aside)
    except FileNotFoundError:      # another process moved it first
        return None, f"{path} was not a usable result ({why}); re-running"
    return None, f"{path} was not a usable result ({why}); moved to {aside.name}, re-running"


@accepts(path=PathArg(), name=Name())
def load_run(path, name: str = "path") -> RunRecord:
    """The stored run result at ``path`` (a JSON file), read and checked as a
    :class:`~resdecay_lib.training.records.RunRecord`; ValueError in one line naming ``name``
    (the parameter, or the command's argument), the path and the field when it is missing, not
    JSON, not a run result, or not one of :data:`~resdecay_lib.training.records.RUN_SCHEMA`. The
    analysis and the commands read every stored run through here (:func:`read_result` is the
    sweep's reader, which also moves a broken result aside)."""
    path = check_in_file(name, path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{name} {str(path)!r} is not JSON ({type(exc).__name__}: {one_line(exc)[:200]})") from None
    if not isinstance(raw, dict) or not {"config", "status"} <= set(raw):
        got = sorted(raw)[:8] if isinstance(raw, dict) else type(raw).__name__
        raise ValueError(f"{name} {str(path)!r} is not a run result (a JSON object with config and status, as "
                         f"train or a sweep writes it), got {show(got)}")
    try:
        return RunRecord.from_dict(raw)
    except (ArgumentTypeError, ValueError) as exc:
        raise ValueError(f"{name} {str(path)!r}: {one_line(exc)}") from None


# ----------------------------------------------------------------------------- claims

def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` lives on this machine (a process of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
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
            dead = (same_host and isinstance(held.get("pid"), int) and not pid_alive(held["pid"]))
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


# ----------------------------------------------------------------------------- provenance

def _version(package: str) -> str:
    try:
        return _package_version(package)
    except PackageNotFoundError:
        return "absent"


def code_version() -> str:
    """``git describe --always --dirty`` of the library's repository, else the package version."""
    try:
        here = Path(__file__).resolve().parent
        out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=here,
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            return "git:" + out.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return "resdecay_lib " + __version__


def library_versions() -> dict:
    """Python's, torch's and numpy's versions, as every stored result records them."""
    return {"python": platform.python_version(), "torch": _version("torch"), "numpy": _version("numpy")}


def cpu_model() -> str:
    """The CPU's model name: /proc/cpuinfo's "model name" where there is one (Linux), else
    ``platform.processor()`` (else the machine type)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def cpu_capability() -> str:
    """The CPU kernels torch runs (``torch.backends.cpu.get_cpu_capability()``: "AVX2",
    "AVX512", "DEFAULT", ...; ``ATEN_CPU_CAPABILITY`` can lower it). Float results depend on
    it in the last bits (TOOLCHAIN.md)."""
    import torch   # here, not at the top: the store's readers do not import torch
    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except (AttributeError, RuntimeError):
        return "unknown"


@accepts(device=DeviceName())
def machine(device: str = "cpu") -> dict:
    """Where a measurement ran: the device (a CUDA device's name, or the CPU's architecture),
    the CPU model, torch's CPU capability and the platform. ``device``: "cpu", "cuda",
    "cuda:N" or "auto" (:func:`resdecay_lib.nn.device.resolve_device`)."""
    import torch   # here, not at the top: the store's readers do not import torch
    from ..nn.device import resolve_device
    dev = resolve_device(device)
    return {"device": (torch.cuda.get_device_name(dev) if dev.type == "cuda"
                       else f"cpu ({platform.machine()}, {platform.processor() or 'unknown'})"),
            "cpu_model": cpu_model(), "cpu_capability": cpu_capability(),
            "platform": platform.platform()}


def peak_rss_mib() -> float:
    """This process's peak resident memory so far, in MiB (Linux reports ru_maxrss in KiB)."""
    import resource
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


@accepts(start=Real(0), seeds=Instance((dict, str), "a dict or a sentence (what was drawn, with which seeds)"))
def measurement_provenance(start: float, seeds) -> dict:
    """What a stored measurement of a model records of how it was made: the code version, the
    wall time since ``start`` (a ``time.time()``), torch's threads, the library versions, the
    machine (:func:`machine` on the CPU), the peak memory (:func:`peak_rss_mib`) and ``seeds``
    (what was drawn, and with which seeds, or why nothing was)."""
    import time

    import torch   # here, not at the top: the store's readers do not import torch
    return {"code_version": code_version(), "wall_s": round(time.time() - start, 1),
            "threads": torch.get_num_threads(), "library_versions": library_versions(), **machine("cpu"),
            "peak_rss_mib": peak_rss_mib(), "seeds": seeds}
