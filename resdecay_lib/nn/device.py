"""Where torch runs, how many threads it uses, and where its files are cached.

* :func:`resolve_device` turns ``"auto"`` / ``"cpu"`` / ``"cuda"`` / a ``torch.device`` into a
  ``torch.device`` ("auto": CUDA when present, else the CPU).
* :func:`pin_threads` fixes torch's intra-op (and, where still allowed, inter-op) thread
  count. Float32 reductions split their work by thread, so the last bits of a loss or a
  measurement depend on the thread count (measured on the book's reference machine: 150 AdamW steps ended at loss 0.8730
  with 1 thread and 0.8839 with 2). The library's runs and every chapter therefore pin
  :data:`DEFAULT_THREADS` = 2 threads: the book's reference machine has 2 cores, so 2 is the
  fastest setting that is the same on every machine with at least 2 cores (a machine with
  one core still computes the same bits with 2 threads, only slower).
* :func:`manual_seed_all` seeds Python's, NumPy's and torch's (CPU and CUDA) generators.
* :func:`cache_dir`: the cache folder of corpora, models and checkpoints, and
  :func:`sha256_file`, the digest every cached file is checked by before use.
"""
from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import numpy as np
import torch

from ..checks import check_in_file, check_int

__all__ = ["DEFAULT_THREADS", "resolve_device", "pin_threads", "manual_seed_all", "cache_dir", "checked_cache_dir", "sha256_file"]

#: thread count pinned by :func:`pin_threads` when called without an argument
DEFAULT_THREADS = 2
#: the most threads :func:`pin_threads` accepts (the command line's bound too)
MAX_THREADS = 1024


def resolve_device(device="auto") -> torch.device:
    """Return the ``torch.device`` to run on.

    ``device`` is ``"auto"`` (CUDA if available, else CPU), ``"cpu"``, ``"cuda"``,
    ``"cuda:N"`` or a ``torch.device``. Asking for CUDA where there is none raises.

    >>> resolve_device("cpu")
    device(type='cpu')
    """
    if isinstance(device, torch.device):
        dev = device
    elif isinstance(device, str):
        if device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        try:
            dev = torch.device(device)
        except RuntimeError as exc:
            raise ValueError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:N' or a torch.device, "
                             f"got {device!r}") from exc
    else:
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:N' or a torch.device, "
                         f"got {type(device).__name__} {device!r}")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be a CPU or CUDA device, got {device!r}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} asks for CUDA, but torch sees no CUDA device here")
    return dev


def pin_threads(n: int = DEFAULT_THREADS) -> int:
    """Fix torch's thread count to ``n`` (intra-op; inter-op too while torch still allows it).

    Returns ``n``. Inter-op threads can only be set before torch's first parallel work;
    after that the call leaves them alone (they do not change float results: they run
    independent operators side by side, never split one reduction).
    """
    check_int("n", n, 1, MAX_THREADS)
    torch.set_num_threads(int(n))
    try:
        torch.set_num_interop_threads(int(n))
    except RuntimeError:
        pass  # already started: torch allows setting it only once, before parallel work
    return int(n)


def manual_seed_all(seed: int) -> None:
    """Seed Python's ``random``, NumPy's global generator and torch (CPU and every CUDA device)."""
    check_int("seed", seed, 0, 2**64 - 1)   # torch's range
    random.seed(int(seed))
    np.random.seed(int(seed) % 2**32)
    torch.manual_seed(int(seed))  # also seeds every CUDA device


def cache_dir() -> Path:
    """The cache folder: ``$RESDECAY_CACHE`` if set, else ``~/.cache/resdecay`` (created)."""
    where = os.environ.get("RESDECAY_CACHE")
    path = Path(where or Path.home() / ".cache" / "resdecay")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError, PermissionError) as exc:
        # a file in its place or among its parents: one line naming the setting, not mkdir's traceback
        what = f"$RESDECAY_CACHE ({where!r})" if where else f"the cache folder {str(path)!r}"
        raise ValueError(f"{what} must be a folder this process can write: {exc.strerror or exc}") from None
    return path


def checked_cache_dir() -> tuple[Path, str]:
    """The cache folder (:func:`cache_dir`), created, as a folder this process can write, and
    the name a message calls it by; ``ValueError`` in one line naming ``$RESDECAY_CACHE`` when
    it is not (a file in its place or among its parents, a folder that is not writable). The
    one check of the cache that the corpus's and the models' commands make before any work."""
    from ..checks import check_out_dir, one_line
    where = os.environ.get("RESDECAY_CACHE")
    name = f"$RESDECAY_CACHE ({where!r})" if where else "the cache folder (~/.cache/resdecay, $RESDECAY_CACHE unset)"
    if where:
        check_out_dir(name, where)
    try:
        path = cache_dir()
    except (OSError, ValueError) as exc:
        raise ValueError(f"{name} cannot be made: {one_line(exc)}") from None
    return check_out_dir(name, path), name


def sha256_file(path) -> str:
    """The SHA-256 hex digest of the file at ``path``, read in 1 MiB blocks (a model's GGUF is
    gigabytes: never whole in memory). The corpus tarball and the packaged models are checked
    by it against their pinned digests.

    ``path``: a str or ``os.PathLike`` naming a regular file (:func:`resdecay_lib.checks.check_in_file`,
    before anything is opened): an ``int`` is refused, not taken for an open file descriptor
    (which ``open()`` would hash and close), and a FIFO, a device or a folder is refused, not
    read (a FIFO would block forever)."""
    path = check_in_file("path", path)
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
