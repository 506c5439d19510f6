"""What a training run is, without torch: :class:`TrainConfig` (one run) and :class:`RunPlan`
(when it is measured), so that the run store (:mod:`resdecay_lib.training.store`) reads and
checks stored runs where torch is not imported. The loop that trains a configuration is
:mod:`resdecay_lib.training.train`; the run that measures it :mod:`resdecay_lib.training.runs`.
"""
from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass

from ..checks import (ArgumentTypeError, DeviceName, Int, Ints, OneOf, Real, accepts, check_fields, declare,
                      show)
from ..nn.config import ARCH_NAMES, MAX_SIZES

__all__ = ["TrainConfig", "RunPlan"]


@declare
@dataclass(frozen=True)
class TrainConfig:
    """One training run. Defaults: the book's model (width, heads, context, batch) with a short
    150-step schedule; the stored sweep (configs/train_long.toml) sets every field it uses, and
    runs two one-thread processes side by side. Each field's valid values: :attr:`DOMAINS`."""
    arch: str = "pre_ln"          # one of nn.config.ARCH_NAMES (models.ARCHS's keys)
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

    #: every field's valid values (the sizes' upper bounds: models.MAX_SIZES, and bounds far
    #: above any run of the book, so a typo fails here instead of exhausting the memory)
    DOMAINS = {
        "arch": OneOf(ARCH_NAMES),
        **{n: Int(1, MAX_SIZES[n]) for n in ("n_layer", "d_model", "n_head", "block_size")},
        "batch_size": Int(1, 2**20), "steps": Int(1, 10**9),
        "lr": Real(0, lo_open=True), "warmup": Int(0), "min_lr_frac": Real(0, 1),
        "weight_decay": Real(0), "beta1": Real(0, 1, hi_open=True), "beta2": Real(0, 1, hi_open=True),
        "grad_clip": Real(0),                                           # 0: no clipping
        "seed": Int(0, 2**64 - 1), "threads": Int(1, 4096), "device": DeviceName(),
        "eval_windows": Int(1, 2**20), "measure_windows": Int(1, 2**20),
        "corpus": OneOf(("shakespeare",)),                             # the only training corpus
    }

    def __post_init__(self):
        # ValueError alone: a configuration comes from a file or the command line, whose
        # readers catch ValueError
        check_fields(self, self.DOMAINS, error=ValueError)
        if self.d_model % self.n_head:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_head={self.n_head}")

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        if not isinstance(d, dict):
            raise ArgumentTypeError(f"d must be a dict of TrainConfig fields, got {type(d).__name__} {show(d)}")
        unknown = set(d) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"unknown TrainConfig fields {sorted(unknown)}; valid: "
                             f"{[f.name for f in dataclasses.fields(cls)]}")
        return cls(**d)

    def run_name(self) -> str:
        return f"{self.arch}_L{self.n_layer}_s{self.seed}"


@declare
@dataclass(frozen=True)
class RunPlan:
    """When a run is measured.

    measure_steps : step counts at which the stream is probed and the validation loss taken;
        must start at 0 and end at the run's last step (log-spaced: the change moves fastest
        early). Empty: :meth:`default_measure_steps`.
    eval_every : the validation loss is also taken every ``eval_every`` steps (the loss
        curve, and the convergence criterion); 0: steps // 10.
    """
    measure_steps: tuple = ()
    eval_every: int = 0

    DOMAINS = {"measure_steps": Ints(0), "eval_every": Int(0)}

    def __post_init__(self):
        check_fields(self, self.DOMAINS)

    @staticmethod
    @accepts(steps=Int(1))
    def default_measure_steps(steps: int) -> tuple:
        """0, then about x2.5 apart (20, 50, 150, 400, 1000, ...) below ``steps``, then ``steps``."""
        pts, s = [0], 20
        while s < steps:
            pts.append(s)
            s = {2: 5, 5: 15, 1: 4, 4: 10}[int(str(s)[0])] * 10 ** (len(str(s)) - 1)
        return tuple(pts + [steps])

    @accepts(steps=Int(1))
    def resolve(self, steps: int) -> tuple[tuple, tuple]:
        """(measure steps, evaluation steps) for a run of ``steps`` steps, validated."""
        raw = self.measure_steps
        if not isinstance(raw, (tuple, list)) or any(
                isinstance(s, bool) or not isinstance(s, numbers.Integral) for s in raw):
            raise ValueError(f"measure_steps must be a list of integer steps, got {raw!r}")
        ms = tuple(int(s) for s in raw) or self.default_measure_steps(steps)
        if ms[0] != 0 or ms[-1] != steps or any(a >= b for a, b in zip(ms, ms[1:])):
            raise ValueError(f"measure_steps must rise strictly from 0 to steps={steps}, got {ms}")
        if isinstance(self.eval_every, bool) or not isinstance(self.eval_every, numbers.Integral) \
                or self.eval_every < 0:
            raise ValueError(f"eval_every must be a non-negative integer, got {self.eval_every!r}")
        every = self.eval_every or max(1, steps // 10)
        ev = sorted(set(ms) | set(range(every, steps + 1, every)))
        return ms, tuple(ev)
