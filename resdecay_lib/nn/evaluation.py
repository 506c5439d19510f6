"""Validation losses of a character model, intact and with one block removed.

* :func:`window_losses` -- the mean next-character cross-entropy (nats/char) of each fixed
  evaluation window, float64 [n].
* :func:`evaluate` -- their mean and standard error over windows.
* :func:`ablation_losses` -- the loss with block k removed (its residual update dropped:
  it returns its input, :func:`resdecay_lib.nn.hooks.patched_blocks`), k = 1..L, paired with
  the intact loss on the same windows.

The model is only called; nothing here knows how it was trained.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from ..checks import ArgumentTypeError, Instance, Int, Tensor, accepts
from .hooks import patched_blocks
from .models import check_token_ids, vocab_size_of

#: the domains of the windows' parameters, declared once for every function here
_MODEL = Instance(torch.nn.Module, "a torch.nn.Module")
_IDS = Tensor("an integer tensor of token ids [n, T]", dtype="int", ndim=2)

__all__ = ["window_losses", "evaluate", "ablation_losses", "sig"]


@accepts(digits=Int(1, 17))
def sig(a, digits: int = 6):
    """Round to ``digits`` significant digits, for small JSON (nested lists; NaN -> None)."""
    if isinstance(a, (str, bytes)) or np.iscomplexobj(a):
        raise ValueError(f"a must be a real number or a (nested) list of them, got {type(a).__name__} {a!r}")
    try:
        np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a must be a real number or a (nested) list of them, got {type(a).__name__}") from exc
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 0:
        v = float(a)
        return float(f"{v:.{digits}g}") if math.isfinite(v) else None
    return [sig(v, digits) for v in a]


def _check_windows(model, x, y, min_windows=1):
    """What the declared domains cannot say alone: a model with parameters, x and y of one
    shape [n, T] with n >= min_windows, ids in the model's vocabulary."""
    if next(model.parameters(), None) is None:
        raise ValueError("model must have parameters (its device is theirs)")
    vocab = vocab_size_of(model)
    for name, t in (("x", x), ("y", y)):
        if t.shape[0] < min_windows:
            raise ValueError(f"{name} must hold at least {min_windows} window(s) of at least one token, "
                             f"got shape {tuple(t.shape)}")
        if vocab is not None:
            check_token_ids(name, t, vocab)
        elif int(t.min()) < 0:
            raise ValueError(f"{name} must hold token ids in [0, vocab), got ids from {int(t.min())} "
                             f"to {int(t.max())}")
    if x.shape != y.shape:
        raise ValueError(f"x and y must have one shape [n, T], got {tuple(x.shape)} and {tuple(y.shape)}")


@accepts(model=_MODEL, x=_IDS, y=_IDS, chunk=Int(1, 2**20))
@torch.no_grad()
def window_losses(model, x, y, chunk: int = 32) -> np.ndarray:
    """Mean cross-entropy of each window: ``x``, ``y`` int64 [n, T] -> float64 [n]."""
    _check_windows(model, x, y)
    dev = next(model.parameters()).device
    out = []
    for i in range(0, len(x), chunk):
        try:
            logits = model(x[i:i + chunk].to(dev))
        except NotImplementedError as exc:         # torch: a Module without forward
            raise ArgumentTypeError(f"model must be a callable module (its forward is missing): {exc}") from exc
        ce = F.cross_entropy(logits.transpose(1, 2), y[i:i + chunk].to(dev), reduction="none")
        out.append(ce.double().mean(1).cpu())
    return torch.cat(out).numpy()


@accepts(model=_MODEL, x=_IDS, y=_IDS)
def evaluate(model, x, y) -> dict:
    """Loss over fixed windows: ``mean``, ``se`` (over windows) and ``per_window`` values."""
    _check_windows(model, x, y, min_windows=2)  # a standard error needs two windows
    per = window_losses(model, x, y)
    return {"mean": float(per.mean()), "se": float(per.std(ddof=1) / math.sqrt(len(per))),
            "per_window": per.tolist()}


@accepts(model=_MODEL, x=_IDS, y=_IDS)
def ablation_losses(model, x, y) -> dict:
    """Loss with block k removed (it returns its input: :func:`~resdecay_lib.nn.hooks.patched_blocks`), k = 1..L.

    Returns per-k mean losses ``loss``, the increase over the intact model ``delta`` and its
    standard error ``delta_se`` over windows (paired: the same windows with and without the
    block), and the per-window increases ``delta_per_window`` [L][n].
    """
    _check_windows(model, x, y, min_windows=2)
    blocks = getattr(model, "blocks", None)
    if not isinstance(blocks, (torch.nn.ModuleList, list, tuple)) or len(blocks) == 0:
        raise ValueError("model must have a non-empty list of residual blocks, model.blocks")
    base = window_losses(model, x, y)
    loss, delta, delta_se, per_window = [], [], [], []
    for k in range(len(blocks)):
        with patched_blocks(blocks, removed={k}):
            per = window_losses(model, x, y)
        d = per - base
        loss.append(float(per.mean()))
        delta.append(float(d.mean()))
        delta_se.append(float(d.std(ddof=1) / math.sqrt(len(d))))
        per_window.append(sig(d, 5))
    return {"loss": loss, "delta": delta, "delta_se": delta_se, "delta_per_window": per_window}
