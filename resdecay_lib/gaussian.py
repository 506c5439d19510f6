"""Monte Carlo of the idealised Pre-LN stream of Theorem 3.3, with a real LayerNorm.

The stream is x^a_{k+1} = x^a_k + x^f_k with x^f_k ~ N(0, I_d) independent over k
(sigma = 1 loses nothing: LayerNorm is scale-invariant up to eps). LayerNorm here is
the real one, not the theorem's idealisation: it centres over the d coordinates,
divides by the biased standard deviation, and adds eps = 1e-5 inside the square root,
exactly as ``torch.nn.LayerNorm`` without affine parameters.

Indices follow the seed's convention (``theory.CONVENTIONS[False]``): x^a_k is the
sum of k - 1 block outputs, so the change at k is defined for k >= 2.

The simulation streams over k: only the current state and its normalisation are kept,
so memory does not grow with depth. This module knows nothing of torch.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["LN_EPS", "SimResult", "layer_norm", "simulate"]

#: LayerNorm's eps, as in torch.nn.LayerNorm
LN_EPS = 1e-5


def layer_norm(x: np.ndarray, eps: float = LN_EPS) -> np.ndarray:
    """Parameter-free LayerNorm over the last axis: (x - mean) / sqrt(var + eps).

    ``var`` is the biased (population) variance, as in ``torch.nn.LayerNorm``.
    Shape: (..., d) -> (..., d).
    """
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = np.mean(xc * xc, axis=-1, keepdims=True)
    return xc / np.sqrt(var + eps)


@dataclass(frozen=True)
class SimResult:
    """Per-k statistics of the simulated change; all arrays have shape (depth - 1,).

    k : block index k = 2..depth (seed's convention)
    mean_sq_change : per-coordinate mean square of LN(x^a_{k+1}) - LN(x^a_k)
    stderr : standard error of ``mean_sq_change`` over the independent samples
    """
    k: np.ndarray
    mean_sq_change: np.ndarray
    stderr: np.ndarray
    d: int
    n_samples: int
    seed: int


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def simulate(depth: int, d: int, n_samples: int, seed: int = 0) -> SimResult:
    """Simulate ``n_samples`` independent streams of ``depth`` blocks in dimension ``d``.

    For k = 2..depth, the per-coordinate mean square of LN(x^a_{k+1}) - LN(x^a_k),
    where x^a_k is the sum of k - 1 iid N(0, I_d) block outputs (Theorem 3.3's model;
    its prediction is ``theory.omega_sq(k)``).

    Each sample contributes one number per k (its mean over the d coordinates); the
    standard error is the sample standard deviation of those numbers over sqrt(n_samples).

    Parameters
    ----------
    depth : int >= 2
        Number of blocks N; changes are reported at k = 2..N.
    d : int >= 2
        Width of the stream (LayerNorm needs at least two coordinates to centre).
    n_samples : int >= 2
        Independent streams (two are needed for a standard error).
    seed : int >= 0
        Seed of ``numpy.random.default_rng``; results are bitwise reproducible.
    """
    depth = _check_int("depth", depth, 2)
    d = _check_int("d", d, 2)
    n_samples = _check_int("n_samples", n_samples, 2)
    seed = _check_int("seed", seed, 0)

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_samples, d))   # x^a_2 = x^f_1, shape (n, d)
    ln_prev = layer_norm(x)
    ks = np.arange(2, depth + 1)
    mean = np.empty(len(ks))
    err = np.empty(len(ks))
    for i in range(len(ks)):
        x += rng.standard_normal((n_samples, d))   # x^a_{k+1} = x^a_k + x^f_k
        ln_next = layer_norm(x)
        per_sample = np.mean((ln_next - ln_prev) ** 2, axis=-1)   # (n,)
        mean[i] = per_sample.mean()
        err[i] = per_sample.std(ddof=1) / np.sqrt(n_samples)
        ln_prev = ln_next
    return SimResult(k=ks, mean_sq_change=mean, stderr=err, d=d, n_samples=n_samples, seed=seed)
