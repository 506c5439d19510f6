"""The training loop: one configuration, AdamW, a schedule, checkpoints, a NaN guard.

:func:`train` trains ``models.build(cfg.arch, ...)`` on the Shakespeare corpus of
:mod:`resdecay_lib.training.data` with AdamW (decoupled weight decay on matrices and embeddings
only), a linear warm-up then a cosine decay to ``min_lr_frac * lr``, and gradient-norm
clipping; the batch of step s is a pure function of (seed, s).

Reproducibility: on the CPU the run pins its thread count (``cfg.threads``, via
:func:`resdecay_lib.nn.device.pin_threads`), because float32 reductions split by thread and
the last bits of a trained model depend on the thread count; with the count pinned, a run
gives the same bits on any machine of the same CPU family, whatever its core count.

Checkpoints (``torch.save``; loaded with ``torch.load(..., weights_only=True)``) hold the
model, the optimiser, the scheduler, torch's RNG states, the step (which is the data
position: batches are indexed by step), the loss history and the caller's ``log`` (a JSON
list, e.g. the measurements taken so far), so a run stopped after n steps and resumed
ends with parameters bit-identical to an uninterrupted run. A non-finite loss stops the
run with :class:`NonFiniteLoss` naming the step; the checkpoint on disk is then the last
one written before it, from finite parameters. A checkpoint that cannot be read raises
:class:`CheckpointUnreadable` naming the file.

Whose file: the library writes, replaces or removes only checkpoints it wrote. Each holds the
marker ``"format": CHECKPOINT_FORMAT``; a checkpoint of an older version (without it) is
recognised by its keys (config, model, optimizer, step). :func:`checkpoint_is_ours` reads
only the head of the file (the pickle torch writes first in its zip archive), so a truncated
checkpoint is still recognised. Anything else at a checkpoint path (a text or JSON file, a
zip or torch file of another program, an empty file, a folder, a FIFO, a device) raises
:class:`ForeignCheckpoint` before any work and is never removed, moved or overwritten: the
user removes it or names another path. A recognised checkpoint that cannot be read (a
truncated one) raises :class:`CheckpointUnreadable`, and :func:`discard_checkpoint` may then
remove it so the run starts over (the sweep and the train command do, and say so).

What a run measures and stores is :mod:`resdecay_lib.training.runs`; grids of runs are
:mod:`resdecay_lib.training.sweep`.
"""
from __future__ import annotations

import dataclasses
import glob
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from ..checks import (Callable, DeviceName, Flag, Instance, Int, Ints, OneOf, PathArg, Real, Tensor, accepts, check_fields,
                      check_out_file, declare, one_line, path_kind, show)
from .data import load_corpus, train_batch
from ..nn.device import manual_seed_all, pin_threads, resolve_device
from ..nn.models import check_token_ids, next_token_loss, vocab_size_of
from .plan import TrainConfig
from .store import pid_alive, replacing

__all__ = ["NonFiniteLoss", "CheckpointUnreadable", "CheckpointMismatch", "TrainState", "lr_factor",
           "train", "next_char_loss", "prepare_checkpoint", "clean_checkpoint_temporaries",
           "discard_checkpoint", "CHECKPOINT_FORMAT"]

#: the marker of a checkpoint this library wrote (its "format" key)
CHECKPOINT_FORMAT = "resdecay-checkpoint/1"
#: the keys by which a checkpoint of an older version (without the marker) is recognised
_OLD_CHECKPOINT_KEYS = ("config", "model", "optimizer", "step")


class NonFiniteLoss(RuntimeError):
    """The training loss became NaN or infinite; ``step`` is the step that produced it."""

    def __init__(self, step: int, loss: float, checkpoint: Path | None, last_good: int | None):
        self.step, self.loss, self.checkpoint, self.last_good = step, loss, checkpoint, last_good
        where = (f"; the last good checkpoint ({checkpoint}, step {last_good}) is kept"
                 if checkpoint is not None and last_good is not None else "")
        super().__init__(f"non-finite training loss {loss} at step {step}{where}")


@accepts(step=Int(0), cfg=Instance(TrainConfig, "a TrainConfig"))
def lr_factor(step: int, cfg: TrainConfig) -> float:
    """Learning-rate multiplier at ``step`` (0-based): linear warm-up, then cosine to min_lr_frac.

    factor(s) = (s + 1) / warmup for s < warmup; else
    min_lr_frac + (1 - min_lr_frac) (1 + cos(pi p)) / 2 with p = (s - warmup) / max(1, steps - warmup - 1).
    """
    if step < cfg.warmup:
        return (step + 1) / cfg.warmup
    p = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup - 1))
    return cfg.min_lr_frac + (1 - cfg.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * p))


def _build_model(cfg: TrainConfig, vocab_size: int, device):
    from ..nn.models import build
    return build(cfg.arch, cfg.n_layer, cfg.d_model, cfg.n_head, vocab_size, cfg.block_size,
                 seed=cfg.seed, device=device)


def _optimizer(model, cfg: TrainConfig):
    decay = [p for p in model.parameters() if p.dim() >= 2]     # matrices and embeddings
    no_decay = [p for p in model.parameters() if p.dim() < 2]   # biases, LayerNorm gains
    groups = [{"params": decay, "weight_decay": cfg.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    # fused: the whole AdamW update of all tensors in one kernel, on the CPU as on CUDA: about
    # 4 times faster than foreach and 8 times the plain loop at the sweep's size
    # (benchmarks/bench_train.py measures the step). It is not bit-identical to the loop the
    # stored runs used (git:c9faccc): it agrees to float32 rounding (tests/training/test_train.py
    # bounds it), and the chapters' live re-runs check the stored results within their
    # standard errors
    opt = torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(s, cfg))
    return opt, sched


@accepts(model=Instance(torch.nn.Module, "a torch.nn.Module (a model of resdecay_lib.nn.models)"),
         x=Tensor("an integer tensor of token ids [B, T]", dtype="int", ndim=2),
         y=Tensor("an integer tensor of token ids [B, T]", dtype="int", ndim=2))
def next_char_loss(model, x, y):
    """Mean next-character cross-entropy (nats) of ``model(x)`` [B, T, V] against ``y`` [B, T].

    Token ids outside [0, vocab_size) raise ``ValueError`` naming their range.
    Module-level so tests can inject a NaN.
    """
    vocab = vocab_size_of(model)
    if vocab is not None:
        check_token_ids("x", x, vocab)
        check_token_ids("y", y, vocab)
    return next_token_loss(model(x), y)


class CheckpointUnreadable(RuntimeError):
    """A checkpoint file exists but cannot be read (truncated, empty, a folder, not torch's).
    Raised as itself only for a checkpoint the library recognises as its own
    (:func:`checkpoint_is_ours`), which :func:`discard_checkpoint` may remove; anything else is
    a :class:`ForeignCheckpoint`."""


class ForeignCheckpoint(CheckpointUnreadable, ValueError):
    """Something at a checkpoint path that the library did not write, or cannot recognise as
    its own (:func:`checkpoint_is_ours`): a text or JSON file, another program's zip or torch
    file, an empty file, a folder, a FIFO, a device. Refused before any work, never removed,
    moved or overwritten; a ``ValueError`` too, so a caller that checks paths catches it. A
    corrupt zip at a checkpoint path cannot be told from another program's: it is foreign."""


class CheckpointMismatch(ValueError):
    """A checkpoint belongs to another configuration than the run that would resume from it."""


@dataclass
class TrainState:
    """What :func:`train` returns: the trained model and the per-step training losses.

    ``wall_s`` is this call's time; ``prior_wall_s`` the time the earlier segments of a resumed
    run spent, as its checkpoint recorded it (0 for a fresh run; None for a checkpoint written
    before checkpoints recorded it), and ``resumed_from`` the step it resumed from (0: fresh)."""
    model: torch.nn.Module
    train_loss: list
    step: int
    wall_s: float
    log: list = dataclasses.field(default_factory=list)
    prior_wall_s: float | None = 0.0
    resumed_from: int = 0


def _save_checkpoint(path: Path, step, model, opt, sched, train_loss, cfg, log, elapsed_s=None):
    state = {"format": CHECKPOINT_FORMAT,   # first: its pickle opens the file (checkpoint_is_ours)
             "step": int(step), "model": model.state_dict(), "optimizer": opt.state_dict(),
             "elapsed_s": elapsed_s,   # the run's training time so far, over all its segments
             "scheduler": sched.state_dict(), "rng_cpu": torch.get_rng_state(),
             "rng_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
             "train_loss": torch.tensor(train_loss, dtype=torch.float64),
             "config": asdict(cfg), "log": json.dumps(log)}
    # a sweep removes its checkpoint folder when it is empty, which it is for a moment while
    # another of its runs has made the folder but not yet opened its first checkpoint: should
    # the folder vanish in that moment, make it again and write again (replacing makes it)
    for attempt in range(3):
        try:
            with replacing(path) as tmp:   # atomic: a crash mid-write leaves the previous checkpoint
                torch.save(state, tmp)
            return
        except (RuntimeError, FileNotFoundError):
            if attempt == 2 or path.parent.is_dir():
                raise                      # not the vanished folder


@accepts(path=PathArg(), every=Flag())
def clean_checkpoint_temporaries(path, every: bool = False) -> list[Path]:
    """Remove the temporaries a killed writer of the checkpoint ``path`` left beside it
    (:func:`resdecay_lib.training.store.replacing`'s ``.<name>.<pid>.<thread>.<random>.tmp``, or
    an older writer's ``.<name>.<pid>.tmp``): those of processes that are gone (on this machine), or with
    ``every`` all but this process's own (for a caller that holds the run's claim, so no
    other process writes it). Returns the removed paths."""
    path = Path(path)
    removed = []
    prefix = f".{path.name}."
    if not path.parent.is_dir():
        return removed
    for tmp in path.parent.glob(f"{glob.escape(prefix)}*.tmp"):
        pid = tmp.name[len(prefix):-len(".tmp")].split(".")[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        if every or not pid_alive(int(pid)):
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed


def _pickled(text: str) -> tuple[bytes, ...]:
    raw = text.encode()
    return (b"X" + len(raw).to_bytes(4, "little") + raw,      # BINUNICODE (torch's protocol 2)
            b"\x8c" + bytes([len(raw)]) + raw)                # SHORT_BINUNICODE (protocol 4)


#: how much of a checkpoint's head :func:`checkpoint_is_ours` reads
_HEAD_BYTES = 1 << 20


def checkpoint_is_ours(path) -> bool:
    """Whether ``path`` is a regular file that this library wrote as a checkpoint, from its head
    alone (so a truncated checkpoint is still recognised; nothing is unpickled).

    torch saves a zip archive whose first entry is ``<archive>/data.pkl``, the pickle of the
    saved dict, stored uncompressed. A checkpoint is ours when the file opens with that entry
    and the pickle holds the marker :data:`CHECKPOINT_FORMAT` as a pickled string, or (a
    checkpoint written before the marker) each of the keys config, model, optimizer and step.
    A folder, a FIFO, a device, an empty file or any other file is not (False); the path is
    looked at with ``os.stat`` before it is opened, so a FIFO never blocks."""
    if path_kind(path) != "a regular file":
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
    except (OSError, ValueError):
        return False
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        return False
    n, extra = int.from_bytes(head[26:28], "little"), int.from_bytes(head[28:30], "little")
    name = head[30:30 + n]
    if not name.endswith(b"data.pkl"):
        return False
    size = int.from_bytes(head[18:22], "little")     # 0 or 0xFFFFFFFF when not in the local header
    body = head[30 + n + extra:]
    if 0 < size < 0xFFFFFFFF:
        body = body[:size]
    if any(m in body for m in _pickled(CHECKPOINT_FORMAT)):
        return True
    return all(any(m in body for m in _pickled(k)) for k in _OLD_CHECKPOINT_KEYS)


def _foreign(path: Path, what: str) -> ForeignCheckpoint:
    return ForeignCheckpoint(f"checkpoint {str(path)!r} is {what}, not a checkpoint this library wrote: "
                             f"refused and left as it is; remove it or choose another checkpoint path")


def _check_ours(path: Path) -> None:
    """Raise :class:`ForeignCheckpoint` unless ``path`` is absent or a checkpoint of ours."""
    kind = path_kind(path)
    if kind is None and not os.path.lexists(path):
        return
    if kind is None:
        raise _foreign(path, "a link to nothing")
    if kind != "a regular file":
        raise _foreign(path, kind)
    if not checkpoint_is_ours(path):
        raise _foreign(path, "a file of another kind (not a torch archive holding the library's marker or keys)")


@accepts(path=PathArg())
def prepare_checkpoint(path) -> Path:
    """Check a checkpoint path before any work, and make its folder: anything at ``path`` but a
    checkpoint this library wrote (:func:`checkpoint_is_ours`; a folder, a FIFO, a device, a
    text or JSON file, an empty file) raises :class:`ForeignCheckpoint` naming it, and is left
    as it is; a path that cannot be written (a file among its parents, a folder without write
    access) ``ValueError``. Stale temporaries of dead writers are removed. Returns the path."""
    path = Path(path)
    _check_ours(path)
    check_out_file("checkpoint", path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_checkpoint_temporaries(path)
    return path


@accepts(path=PathArg())
def discard_checkpoint(path) -> str:
    """Remove an unreadable checkpoint of this library's own (:func:`checkpoint_is_ours`: a
    truncated one) so the run can start over. Returns what was done, for the message. Anything
    else at ``path`` (a folder, a FIFO, a file the library did not write) raises
    :class:`ForeignCheckpoint` naming it and is neither removed nor moved."""
    path = Path(path)
    _check_ours(path)
    if not os.path.lexists(path):      # absent, or under a file, where nothing can be
        return "nothing was there"
    path.unlink()
    return "removed it"


def _load_checkpoint(path: Path, dev) -> dict:
    _check_ours(path)
    try:
        state = torch.load(path, map_location=dev, weights_only=True)
    except Exception as exc:  # torch raises RuntimeError, EOFError, pickle errors, ...
        raise CheckpointUnreadable(f"checkpoint {path} cannot be read ({type(exc).__name__}: "
                                   f"{one_line(exc)[:200]}); remove it to restart the run") from exc
    if not isinstance(state, dict) or any(k not in state for k in _OLD_CHECKPOINT_KEYS + (
            "scheduler", "rng_cpu", "rng_cuda", "train_loss")):
        raise CheckpointUnreadable(f"checkpoint {path} cannot be read (it lacks the keys of a checkpoint); "
                                   f"remove it to restart the run")
    return state


@accepts(cfg=Instance(TrainConfig, "a TrainConfig"), checkpoint=PathArg(none=True),
         checkpoint_every=Int(1), stop_after=Int(1, none=True), progress=Flag(none=True),
         model=Instance(torch.nn.Module, "a torch.nn.Module", none=True),
         on_step=Callable("a callable on_step(step, model, log)", none=True), callback_steps=Ints(1),
         log=Instance(list, "a list (JSON-ready records)", none=True))
def train(cfg: TrainConfig, checkpoint: str | Path | None = None, checkpoint_every: int = 100,
          stop_after: int | None = None, progress: bool | None = None,
          model: torch.nn.Module | None = None, on_step=None, callback_steps=(),
          log: list | None = None) -> TrainState:
    """Train (or resume) one run.

    Parameters
    ----------
    checkpoint : path, optional
        Where to keep the run's checkpoint. If the file exists, the run resumes from it
        (its config must equal ``cfg``). Written every ``checkpoint_every`` steps, at
        ``stop_after`` and at the end. Anything at the path but a checkpoint the library
        wrote (a text file, a folder, a FIFO) raises :class:`ForeignCheckpoint` before any
        work and is left as it is; a truncated checkpoint of its own raises
        :class:`CheckpointUnreadable` (:func:`discard_checkpoint` may remove it).
    stop_after : int, optional
        Stop after this many steps in total (for splitting a run; ``cfg.steps`` still sets
        the schedule).
    progress : bool or None
        Progress (:func:`resdecay_lib.nn.probe.progress_bar`): a tqdm bar on a terminal, a line
        every 30 s in a log, a ``tqdm.auto`` bar in Jupyter with True only (None shows nothing
        there); False shows nothing. Unless False, a resumed run says "resumed from step N".
    model : nn.Module, optional
        Start from this model instead of building one (must match ``cfg``).
    on_step, callback_steps, log
        ``on_step(step, model, log)`` is called after each step count in ``callback_steps``
        has been reached (the model in training mode; the callback may switch it and must
        switch it back); ``log`` is a JSON-ready list it may append to. The log is saved in
        every checkpoint (one is written right after each callback) and restored on resume,
        so what a callback measured survives a kill.
    """
    t0 = time.perf_counter()
    ckpt = prepare_checkpoint(checkpoint) if checkpoint is not None else None  # before any work
    dev = resolve_device(cfg.device)
    if dev.type == "cpu":
        pin_threads(cfg.threads)
    corpus = load_corpus(cfg.corpus)
    manual_seed_all(cfg.seed)
    if model is None:
        model = _build_model(cfg, corpus.vocab.size, dev)
    opt, sched = _optimizer(model, cfg)
    start, train_loss, prior = 0, [], 0.0
    log = [] if log is None else log
    callback_steps = set(int(s) for s in callback_steps)
    last_good = None
    if ckpt is not None and ckpt.exists():
        state = _load_checkpoint(ckpt, dev)
        if state["config"] != asdict(cfg):
            raise CheckpointMismatch(f"checkpoint {ckpt} belongs to another config: {state['config']}")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng_cpu"])
        if state["rng_cuda"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["rng_cuda"])
        start, train_loss = int(state["step"]), state["train_loss"].tolist()
        prior = state.get("elapsed_s")   # None: an older checkpoint that did not record it
        log[:] = json.loads(state.get("log", "[]"))
        last_good = start
        if progress is not False:
            print(f"{cfg.run_name()}: resumed from step {start} of {cfg.steps} ({ckpt})", file=sys.stderr,
                  flush=True)
    end = cfg.steps if stop_after is None else min(cfg.steps, stop_after)
    model.train()
    from ..nn.progress import progress_bar     # terminal bar, log lines or Jupyter bar
    bar = progress_bar(range(start, end), end, cfg.run_name(), progress, initial=start)
    for step in bar:
        x, y = train_batch(corpus.train, step, cfg.batch_size, cfg.block_size, cfg.seed)
        loss = next_char_loss(model, x.to(dev), y.to(dev))
        value = float(loss.detach())
        if not math.isfinite(value):
            bar.close()
            raise NonFiniteLoss(step, value, ckpt if last_good is not None else None, last_good)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip, foreach=True)
        opt.step()
        sched.step()
        train_loss.append(value)
        if step % 10 == 0:
            bar.set_postfix(loss=f"{value:.3f}")
        done = step + 1
        called = done in callback_steps and on_step is not None
        if called:
            on_step(done, model, log)
        if ckpt is not None and (called or done % checkpoint_every == 0 or done == end):
            elapsed = None if prior is None else prior + time.perf_counter() - t0
            _save_checkpoint(ckpt, done, model, opt, sched, train_loss, cfg, log, elapsed)
            last_good = done
    bar.close()
    model.eval()
    return TrainState(model, train_loss, end, time.perf_counter() - t0, log, prior, start)
