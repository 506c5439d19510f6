"""Where a sweep's runs execute: local processes, a Dask cluster, or SLURM through submitit.

:func:`resdecay_lib.training.sweep.run_sweep` submits the module-level
:func:`resdecay_lib.training.sweep.run_one` with plain data to anything that has
``submit(fn, *args)`` returning an object with ``result()``: a
``concurrent.futures.Executor`` (a spawn process pool, Dask's ``Client.get_executor()``)
or submitit's executor (its jobs have ``result()``). Every run pins its own thread count
and seed, and the store (one folder, claims, atomic result files) is the same whatever
the engine, so the result files do not depend on it; only ``wall_time_s`` and the
provenance fields (``code_version``, ``platform``, ``device``) differ.

Engines (:func:`open_executor`):

* ``local``: a pool of ``workers`` spawned processes (one worker: the runs one after
  another in this process).
* ``dask``: with a scheduler address, the workers of a cluster someone started
  (``dask scheduler`` and ``dask worker ADDRESS --nthreads 1``); without one, a
  ``distributed.LocalCluster`` of ``workers`` one-thread processes. Needs ``dask`` and
  ``distributed`` (requirements.txt).
* ``slurm``: one SLURM job per configuration through ``submitit.AutoExecutor``, with the
  partition, time limit, CPUs and log folder of the sweep file's optional ``[slurm]``
  table (:data:`SLURM_KEYS`). Needs ``submitit`` (``pip install .[slurm]``).

On a cluster the sweep's root must be a folder every worker sees at the same path (a
shared file system): results, claims and checkpoints are written there and under
``$RESDECAY_CACHE``, which the workers must also share or set.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import numbers
import os
import re
import signal
import sys
from pathlib import Path

from ..checks import Instance, Int, OneOf, PathArg, Real, Text, accepts

__all__ = ["ENGINES", "SLURM_KEYS", "SLURM_DEFAULTS", "EngineUnavailable", "check_slurm",
           "check_scheduler", "open_executor", "local_executor", "MAX_WORKERS"]

#: the engines :func:`open_executor` knows
ENGINES = ("local", "dask", "slurm")
#: keys of a sweep file's optional ``[slurm]`` table and their types
SLURM_KEYS = {"partition": str, "timeout_min": int, "cpus_per_task": int, "folder": str}
#: what a ``[slurm]`` table leaves out (cpus_per_task: the runs' ``threads``; folder: beside
#: the claims, ``<root>/<out>/.submitit``; no partition: the cluster's default one)
SLURM_DEFAULTS = {"timeout_min": 120}
#: Dask's scheduler protocols
_PROTOCOLS = ("tcp", "tls", "ws", "wss", "inproc", "ucx")


class EngineUnavailable(RuntimeError):
    """The engine cannot be used here: its package is missing or its scheduler unreachable."""


@accepts(where=Text())
def check_slurm(table, where: str = "the sweep") -> dict:
    """Validate a ``[slurm]`` table: ``{key: value}`` of :data:`SLURM_KEYS`, each named on error."""
    if not isinstance(table, dict):
        raise ValueError(f"{where}: [slurm] must be a table, got {type(table).__name__}")
    bad = set(table) - set(SLURM_KEYS)
    if bad:
        raise ValueError(f"{where}: [slurm] has unknown keys {sorted(bad)}; valid: {sorted(SLURM_KEYS)}")
    for key, value in table.items():
        if SLURM_KEYS[key] is int:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 < value <= 10**6:
                raise ValueError(f"{where}: slurm.{key} must be an integer from 1 to 1000000, got {value!r}")
        elif not isinstance(value, str) or not value.strip():
            raise ValueError(f"{where}: slurm.{key} must be a non-empty string, got {value!r}")
    return dict(table)


def check_scheduler(address) -> str:
    """A Dask scheduler address: ``PROTOCOL://HOST:PORT`` (tcp, tls, ws, wss, ucx; inproc) or
    ``HOST:PORT``, the port from 1 to 65535. Returned unchanged."""
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"--scheduler must be an address like tcp://HOST:PORT, got {address!r}")
    proto, sep, rest = address.partition("://")
    if not sep:
        proto, rest = "tcp", address
    if proto not in _PROTOCOLS:
        raise ValueError(f"--scheduler must use one of the protocols {list(_PROTOCOLS)} "
                         f"(like tcp://HOST:PORT), got {address!r}")
    if proto != "inproc":
        m = re.fullmatch(r"(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.\-]+):(\d+)", rest)
        if not m or not 1 <= int(m.group(2)) <= 65535:
            raise ValueError(f"--scheduler must be PROTOCOL://HOST:PORT with a port from 1 to "
                             f"65535, got {address!r}")
    return address


@contextlib.contextmanager
def _dask(workers: int, scheduler: str | None, connect_timeout: float):
    try:
        import distributed
    except ImportError as exc:
        raise EngineUnavailable("the dask engine needs dask and distributed: pip install "
                                "dask==2026.8.0 distributed==2026.8.0") from exc
    cluster = None
    if scheduler is not None:
        try:
            client = distributed.Client(scheduler, timeout=connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise EngineUnavailable(f"cannot reach the Dask scheduler at {scheduler} within "
                                    f"{connect_timeout:g} s ({exc}); start it with "
                                    f"'dask scheduler' and its workers with 'dask worker "
                                    f"{scheduler} --nthreads 1', or check the address") from exc
    else:
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
    try:
        with client.get_executor(pure=False) as ex:
            yield ex
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _slurm(spec: dict, root: Path, cluster: str | None):
    try:
        import submitit
    except ImportError as exc:
        raise EngineUnavailable("the slurm engine needs submitit: pip install '.[slurm]' "
                                "(submitit==1.5.4)") from exc
    table = {**SLURM_DEFAULTS, **check_slurm(spec.get("slurm", {}))}
    folder = Path(table.get("folder") or Path(root) / spec["out"] / ".submitit")
    if not folder.is_absolute():
        folder = Path(root) / folder
    if cluster is None and submitit.AutoExecutor.which() != "slurm":
        raise EngineUnavailable("--executor slurm needs SLURM, and there is none here (no sbatch "
                                "on PATH); run it on the cluster's login node, or use "
                                "--executor local or dask")
    ex = submitit.AutoExecutor(folder=folder / "%j", cluster=cluster)
    params = {"timeout_min": table["timeout_min"], "name": spec.get("name") or "resdecay-sweep",
              "cpus_per_task": table.get("cpus_per_task",
                                         int(spec.get("base", {}).get("threads", 1))),
              "nodes": 1, "tasks_per_node": 1}
    if "partition" in table and ex.cluster == "slurm":
        params["slurm_partition"] = table["partition"]
    ex.update_parameters(**params)
    return ex


#: the largest --workers the command line accepts (and local_executor)
MAX_WORKERS = 1024


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


@accepts(engine=OneOf(ENGINES), workers=Int(1), scheduler=Text(none=True),
         spec=Instance(dict, "a sweep (load_sweep's)", none=True), root=PathArg(),
         connect_timeout=Real(0, 3600, lo_open=True), slurm_cluster=Text(none=True))
@contextlib.contextmanager
def open_executor(engine: str = "local", workers: int = 1, scheduler: str | None = None,
                  spec: dict | None = None, root: str | Path = ".", connect_timeout: float = 10.0,
                  slurm_cluster: str | None = None):
    """The executor of ``engine`` (see the module docstring), closed on exit.

    ``workers``: processes of the local pool or of a Dask ``LocalCluster`` (ignored with a
    ``scheduler``, whose workers are the cluster's); ``spec``: the validated sweep, read by
    the slurm engine for its ``[slurm]`` table; ``slurm_cluster``: submitit's cluster
    (None: SLURM, required to be present; ``"local"``: submitit's local processes, for
    tests). Yields None for a one-worker local run (the runs then go one after another in
    this process). Raises :class:`EngineUnavailable` when the engine cannot run here.
    """
    if engine == "local":
        if workers == 1:
            yield None
        else:
            with local_executor(workers) as ex:
                yield ex
    elif engine == "dask":
        if scheduler is not None:
            check_scheduler(scheduler)
        with _dask(workers, scheduler, connect_timeout) as ex:
            yield ex
    else:
        yield _slurm(spec or {}, Path(root), slurm_cluster)
