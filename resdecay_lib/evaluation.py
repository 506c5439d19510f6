"""Validation losses of a character model, intact and with one block removed.

* :func:`window_losses` -- the mean next-character cross-entropy (nats/char) of each fixed
  evaluation window, float64 [n].
* :func:`evaluate` -- their mean and standard error over windows.
* :func:`ablation_losses` -- the loss with block k removed (its residual update dropped:
  a forward hook returns the block's input), k = 1..L, paired with the intact loss on the
  same windows.

The model is only called; nothing here knows how it was trained.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["window_losses", "evaluate", "ablation_losses", "sig"]


def sig(a, digits: int = 6):
    """Round to ``digits`` significant digits, for small JSON (nested lists; NaN -> None)."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 0:
        v = float(a)
        return float(f"{v:.{digits}g}") if math.isfinite(v) else None
    return [sig(v, digits) for v in a]


@torch.no_grad()
def window_losses(model, x, y, chunk: int = 32) -> np.ndarray:
    """Mean cross-entropy of each window: ``x``, ``y`` int64 [n, T] -> float64 [n]."""
    dev = next(model.parameters()).device
    out = []
    for i in range(0, len(x), chunk):
        logits = model(x[i:i + chunk].to(dev))
        ce = F.cross_entropy(logits.transpose(1, 2), y[i:i + chunk].to(dev), reduction="none")
        out.append(ce.double().mean(1).cpu())
    return torch.cat(out).numpy()


def evaluate(model, x, y) -> dict:
    """Loss over fixed windows: ``mean``, ``se`` (over windows) and ``per_window`` values."""
    per = window_losses(model, x, y)
    return {"mean": float(per.mean()), "se": float(per.std(ddof=1) / math.sqrt(len(per))),
            "per_window": per.tolist()}


def ablation_losses(model, x, y) -> dict:
    """Loss with block k removed (a forward hook returns the block's input), k = 1..L.

    Returns per-k mean losses ``loss``, the increase over the intact model ``delta`` and its
    standard error ``delta_se`` over windows (paired: the same windows with and without the
    block), and the per-window increases ``delta_per_window`` [L][n].
    """
    base = window_losses(model, x, y)
    loss, delta, delta_se, per_window = [], [], [], []
    for block in model.blocks:
        handle = block.register_forward_hook(lambda m, args, out: args[0])
        try:
            per = window_losses(model, x, y)
        finally:
            handle.remove()
        d = per - base
        loss.append(float(per.mean()))
        delta.append(float(d.mean()))
        delta_se.append(float(d.std(ddof=1) / math.sqrt(len(d))))
        per_window.append(sig(d, 5))
    return {"loss": loss, "delta": delta, "delta_se": delta_se, "delta_per_window": per_window}
