"""The training loop: one configuration, AdamW, a schedule, checkpoints, a NaN guard.

:func:`train` trains ``models.build(cfg.arch, ...)`` on the Shakespeare corpus of
:mod:`resdecay_lib.data` with AdamW (decoupled weight decay on matrices and embeddings
only), a linear warm-up then a cosine decay to ``min_lr_frac * lr``, and gradient-norm
clipping; the batch of step s is a pure function of (seed, s).

Reproducibility: on the CPU the run pins its thread count (``cfg.threads``, via
:func:`resdecay_lib.device.pin_threads`), because float32 reductions split by thread and
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

What a run measures and stores is :mod:`resdecay_lib.runs`; grids of runs are
:mod:`resdecay_lib.sweep`.
"""
from __future__ import annotations

import dataclasses
import json
import math
import numbers
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm import tqdm  # the plain bar: quiet (disable=None) when stderr is not a terminal

from .data import load_corpus, train_batch
from .device import manual_seed_all, pin_threads, resolve_device
from .models import next_token_loss

__all__ = ["TrainConfig", "NonFiniteLoss", "CheckpointUnreadable", "TrainState", "lr_factor",
           "train", "next_char_loss"]


@dataclass(frozen=True)
class TrainConfig:
    """One training run. Defaults: the book's model (width, heads, context, batch) with a short
    150-step schedule; the stored sweep (configs/train_long.toml) sets every field it uses, and
    runs two one-thread processes side by side."""
    arch: str = "pre_ln"          # a key of models.ARCHS
    n_layer: int = 6
    d_model: int = 64
    n_head: int = 4
    block_size: int = 64          # context length in characters
    batch_size: int = 16
    steps: int = 150
    lr: float = 3e-3              # peak learning rate
    warmup: int = 15              # linear warm-up steps
    min_lr_frac: float = 0.1      # cosine decays to min_lr_frac * lr at the last step
    weight_decay: float = 0.1     # on matrices and embeddings only (not biases, not LayerNorm)
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0        # max global gradient norm; 0 turns clipping off
    seed: int = 0                 # initialisation and data order
    threads: int = 2              # CPU threads, pinned (results depend on it in the last bits)
    device: str = "auto"          # "auto": CUDA when present, else the CPU; or "cpu", "cuda"
    eval_windows: int = 64        # validation windows for losses (fixed, the same for every run)
    measure_windows: int = 32     # validation windows fed to the probe
    corpus: str = "shakespeare"

    def __post_init__(self):
        from .models import ARCHS
        if self.arch not in ARCHS:
            raise ValueError(f"arch must be one of {sorted(ARCHS)}, got {self.arch!r}")
        from .models import MAX_SIZES
        upper = {**{n: MAX_SIZES[n] for n in ("n_layer", "d_model", "n_head", "block_size")},
                 "batch_size": 2**20, "steps": 10**9, "threads": 4096, "eval_windows": 2**20,
                 "measure_windows": 2**20}
        for name, hi in upper.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= v <= hi:
                raise ValueError(f"{name} must be an integer in [1, {hi}], got {v!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, numbers.Integral) or self.warmup < 0:
            raise ValueError(f"warmup must be a non-negative integer, got {self.warmup!r}")
        def real(name, lo, hi, lo_open=False, hi_open=False):
            v = getattr(self, name)
            ok = isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) \
                and (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
            if not ok:
                raise ValueError(f"{name} must be a finite number in {'(' if lo_open else '['}{lo}, "
                                 f"{hi}{')' if hi_open else ']'}, got {v!r}")
        real("lr", 0, math.inf, lo_open=True, hi_open=True)
        real("min_lr_frac", 0, 1)
        real("weight_decay", 0, math.inf, hi_open=True)
        real("grad_clip", 0, math.inf, hi_open=True)  # 0: no clipping
        real("beta1", 0, 1, hi_open=True)
        real("beta2", 0, 1, hi_open=True)
        if not isinstance(self.device, str):
            raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {self.device!r}")
        if self.device != "auto" and not (self.device == "cpu" or self.device == "cuda"
                                          or (self.device.startswith("cuda:") and self.device[5:].isdigit())):
            raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {self.device!r}")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_head={self.n_head}")
        if self.corpus != "shakespeare":
            raise ValueError(f"corpus must be 'shakespeare' (the only training corpus), got {self.corpus!r}")

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        unknown = set(d) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"unknown TrainConfig fields {sorted(unknown)}; valid: "
                             f"{[f.name for f in dataclasses.fields(cls)]}")
        return cls(**d)

    def run_name(self) -> str:
        return f"{self.arch}_L{self.n_layer}_s{self.seed}"


class NonFiniteLoss(RuntimeError):
    """The training loss became NaN or infinite; ``step`` is the step that produced it."""

    def __init__(self, step: int, loss: float, checkpoint: Path | None, last_good: int | None):
        self.step, self.loss, self.checkpoint, self.last_good = step, loss, checkpoint, last_good
        where = (f"; the last good checkpoint ({checkpoint}, step {last_good}) is kept"
                 if checkpoint is not None and last_good is not None else "")
        super().__init__(f"non-finite training loss {loss} at step {step}{where}")


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
    from .models import build
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
    # stored runs used (git:c9faccc): it agrees to float32 rounding (tests/test_train.py
    # bounds it), and the chapters' live re-runs check the stored results within their
    # standard errors
    opt = torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(s, cfg))
    return opt, sched


def next_char_loss(model, x, y):
    """Mean next-character cross-entropy (nats) of ``model(x)`` [B, T, V] against ``y`` [B, T].

    Module-level so tests can inject a NaN.
    """
    return next_token_loss(model(x), y)


class CheckpointUnreadable(RuntimeError):
    """A checkpoint file exists but cannot be read (truncated, empty, a folder, not torch's)."""


@dataclass
class TrainState:
    """What :func:`train` returns: the trained model and the per-step training losses."""
    model: torch.nn.Module
    train_loss: list
    step: int
    wall_s: float
    log: list = dataclasses.field(default_factory=list)


def _save_checkpoint(path: Path, step, model, opt, sched, train_loss, cfg, log):
    state = {"step": int(step), "model": model.state_dict(), "optimizer": opt.state_dict(),
             "scheduler": sched.state_dict(), "rng_cpu": torch.get_rng_state(),
             "rng_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
             "train_loss": torch.tensor(train_loss, dtype=torch.float64),
             "config": asdict(cfg), "log": json.dumps(log)}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # per process: two writers never share it
    torch.save(state, tmp)
    os.replace(tmp, path)  # atomic: a crash mid-write leaves the previous checkpoint


def _load_checkpoint(path: Path, dev) -> dict:
    if path.is_dir():
        raise CheckpointUnreadable(f"checkpoint {path} is a folder, not a file: remove it to "
                                   f"restart the run")
    try:
        return torch.load(path, map_location=dev, weights_only=True)
    except Exception as exc:  # torch raises RuntimeError, EOFError, pickle errors, ...
        raise CheckpointUnreadable(f"checkpoint {path} cannot be read ({type(exc).__name__}: "
                                   f"{str(exc)[:200]}); remove it to restart the run") from exc


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
        ``stop_after`` and at the end.
    stop_after : int, optional
        Stop after this many steps in total (for splitting a run; ``cfg.steps`` still sets
        the schedule).
    progress : bool or None
        tqdm bar; None shows it only on a terminal.
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
    dev = resolve_device(cfg.device)
    if dev.type == "cpu":
        pin_threads(cfg.threads)
    if isinstance(checkpoint_every, bool) or not isinstance(checkpoint_every, numbers.Integral) \
            or checkpoint_every < 1:
        raise ValueError(f"checkpoint_every must be a positive integer, got {checkpoint_every!r}")
    if stop_after is not None and not (isinstance(stop_after, numbers.Integral) and 0 < stop_after):
        raise ValueError(f"stop_after must be a positive integer or None, got {stop_after!r}")
    corpus = load_corpus(cfg.corpus)
    manual_seed_all(cfg.seed)
    if model is None:
        model = _build_model(cfg, corpus.vocab.size, dev)
    opt, sched = _optimizer(model, cfg)
    start, train_loss = 0, []
    log = [] if log is None else log
    callback_steps = set(int(s) for s in callback_steps)
    ckpt = Path(checkpoint) if checkpoint is not None else None
    last_good = None
    if ckpt is not None and ckpt.exists():
        state = _load_checkpoint(ckpt, dev)
        if state["config"] != asdict(cfg):
            raise ValueError(f"checkpoint {ckpt} belongs to another config: {state['config']}")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng_cpu"])
        if state["rng_cuda"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["rng_cuda"])
        start, train_loss = int(state["step"]), state["train_loss"].tolist()
        log[:] = json.loads(state.get("log", "[]"))
        last_good = start
    end = cfg.steps if stop_after is None else min(cfg.steps, stop_after)
    model.train()
    bar = tqdm(range(start, end), initial=start, total=end, desc=cfg.run_name(),
               disable=(None if progress is None else not progress), leave=False)
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
            _save_checkpoint(ckpt, done, model, opt, sched, train_loss, cfg, log)
            last_good = done
    bar.close()
    model.eval()
    return TrainState(model, train_loss, end, time.perf_counter() - t0, log)
