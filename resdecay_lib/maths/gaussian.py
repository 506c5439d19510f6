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

Beyond the theorem (Chapter 5): ``simulate(..., sigma=...)`` gives block j the standard
deviation sigma_j (heteroscedastic blocks); :func:`simulate_rc` draws one step with a
prescribed norm ratio r and alignment c between update and stream; :func:`simulate_feedback`
runs a stream whose blocks read it (x^f_k = a LN(x^a_k) + b z_k). :func:`bonferroni_z_crit`
gives the critical value the chapters compare z-scores with.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..checks import ArgumentTypeError, check_int, check_real

__all__ = ["LN_EPS", "MAX_ELEMENTS", "MAX_DEPTH", "SimResult", "layer_norm", "simulate", "RcResult", "simulate_rc",
           "simulate_feedback", "normal_quantile", "bonferroni_z_crit"]

#: LayerNorm's eps, as in torch.nn.LayerNorm
LN_EPS = 1e-5
#: largest n_samples * d of one simulation (each state is a float64 array of that many
#: entries, 512 MiB at the bound; the chapters use up to 2**18)
MAX_ELEMENTS = 2**26
#: largest depth of one simulation (its time grows with depth; the chapters use up to 128)
MAX_DEPTH = 100_000


def _check_sizes(depth, d, n_samples, with_depth=True):
    """depth (when ``with_depth``), d and n_samples checked as integers, with the bounds above."""
    if with_depth:
        depth = check_int("depth", depth, 2, MAX_DEPTH)
    d = check_int("d", d, 2, MAX_ELEMENTS // 2)
    n_samples = check_int("n_samples", n_samples, 2, MAX_ELEMENTS // 2)
    if n_samples * d > MAX_ELEMENTS:
        raise ValueError(f"n_samples * d must be at most MAX_ELEMENTS = {MAX_ELEMENTS} (the size "
                         f"of one state), got n_samples={n_samples} x d={d} = {n_samples * d}")
    return depth, d, n_samples


def layer_norm(x: np.ndarray, eps: float = LN_EPS) -> np.ndarray:
    """Parameter-free LayerNorm over the last axis: (x - mean) / sqrt(var + eps).

    ``var`` is the biased (population) variance, as in ``torch.nn.LayerNorm``.
    Shape: (..., d) -> (..., d). ``x`` real and finite with d >= 1; ``eps`` finite, >= 0.
    """
    check_real("eps", eps, 0.0)
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    if x.dtype.kind not in "fiu" or x.ndim < 1 or x.shape[-1] < 1:
        raise ArgumentTypeError(f"x must be a real array of shape (..., d) with d >= 1, got "
                        f"{'dtype ' + str(x.dtype) if x.dtype.kind not in 'fiu' else 'shape ' + str(x.shape)}")
    if not np.isfinite(x).all():
        raise ValueError("x must be finite (it holds NaN or an infinity)")
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
    mean_abs_change : per-coordinate mean of |LN(x^a_{k+1}) - LN(x^a_k)| (Corollary 3.4)
    stderr_abs : its standard error over the independent samples
    sigma : the per-block standard deviations used, shape (depth,), or None (all 1)
    """
    k: np.ndarray
    mean_sq_change: np.ndarray
    stderr: np.ndarray
    d: int
    n_samples: int
    seed: int
    mean_abs_change: np.ndarray | None = None
    stderr_abs: np.ndarray | None = None
    sigma: np.ndarray | None = None


def _check_sigma(sigma, depth: int) -> np.ndarray | None:
    if sigma is None:
        return None
    try:
        arr = np.array(sigma, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"sigma must be an array of {depth} positive finite per-block standard deviations "
                        f"(length depth), got {type(sigma).__name__}") from None
    if arr.shape != (depth,):
        raise ValueError(f"sigma must have length depth = {depth} (one standard deviation per block), "
                         f"got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"sigma must hold {depth} positive finite standard deviations")
    arr.setflags(write=False)
    return arr


def simulate(depth: int, d: int, n_samples: int, seed: int = 0, *, sigma=None) -> SimResult:
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
    sigma : array of shape (depth,), optional, keyword only
        Standard deviation sigma_j of block j's output x^f_j, j = 1..depth (positive,
        finite). None (the default) is the theorem's sigma_j = 1 and draws exactly the
        same numbers as before this option existed. Prediction:
        ``theory.omega_sq_hetero(sigma**2)``.
    """
    depth, d, n_samples = _check_sizes(depth, d, n_samples)
    seed = check_int("seed", seed, 0)
    sigma = _check_sigma(sigma, depth)

    def block_output(j):   # x^f_j, j = 1..depth; unscaled when sigma is None (bit-for-bit default)
        z = rng.standard_normal((n_samples, d))
        return z if sigma is None else sigma[j - 1] * z

    rng = np.random.default_rng(seed)
    x = block_output(1)   # x^a_2 = x^f_1, shape (n, d)
    ln_prev = layer_norm(x)
    ks = np.arange(2, depth + 1)
    mean, err = np.empty(len(ks)), np.empty(len(ks))
    mean_abs, err_abs = np.empty(len(ks)), np.empty(len(ks))
    for i, k in enumerate(ks):
        x += block_output(k)   # x^a_{k+1} = x^a_k + x^f_k
        ln_next = layer_norm(x)
        diff = ln_next - ln_prev
        per_sample = np.mean(diff ** 2, axis=-1)   # (n,)
        mean[i] = per_sample.mean()
        err[i] = per_sample.std(ddof=1) / np.sqrt(n_samples)
        per_sample_abs = np.mean(np.abs(diff), axis=-1)   # (n,)
        mean_abs[i] = per_sample_abs.mean()
        err_abs[i] = per_sample_abs.std(ddof=1) / np.sqrt(n_samples)
        ln_prev = ln_next
    return SimResult(k=ks, mean_sq_change=mean, stderr=err, d=d, n_samples=n_samples, seed=seed,
                     mean_abs_change=mean_abs, stderr_abs=err_abs, sigma=sigma)


@dataclass(frozen=True)
class RcResult:
    """One step x -> x + f with prescribed population (r, c); per-sample arrays have shape (n_samples,).

    mean_sq_change, stderr : per-coordinate mean square of LN(x + f) - LN(x), and its standard error
    per_sample : that mean square for each sample
    r_real, c_real : |f_c|/|x_c| and cos(x_c, f_c) of each sample's centred vectors
    var_x : biased variance |x_c|^2 / d of each sample's x (LayerNorm's eps acts relative to it)
    """
    r: float
    c: float
    mean_sq_change: float
    stderr: float
    per_sample: np.ndarray
    r_real: np.ndarray
    c_real: np.ndarray
    var_x: np.ndarray
    d: int
    n_samples: int
    seed: int


def simulate_rc(r: float, c: float, d: int, n_samples: int, seed: int = 0) -> RcResult:
    """Draw x ~ N(0, I_d) and f = r (c x + sqrt(1 - c^2) h), h ~ N(0, I_d); measure LN(x + f) - LN(x).

    r and c are the population norm ratio |f|/|x| and cosine cos(x, f); the realised
    values of each sample's centred vectors are returned beside the change
    (prediction: ``theory.change_sq_finite_d(r, c, d)``; per sample, exactly
    ``theory.change_sq_rc(r_real, c_real)`` up to LayerNorm's eps).

    Parameters: r in [0, 1e6]; c in [-1, 1]; d >= 2; n_samples >= 2; seed >= 0.
    """
    r = check_real("r", r, 0.0, 1e6)
    c = check_real("c", c, -1.0, 1.0)
    _, d, n_samples = _check_sizes(None, d, n_samples, with_depth=False)
    seed = check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_samples, d))
    h = rng.standard_normal((n_samples, d))
    f = r * (c * x + math.sqrt(1 - c * c) * h)
    per_sample = np.mean((layer_norm(x + f) - layer_norm(x)) ** 2, axis=-1)
    xc = x - x.mean(-1, keepdims=True)
    fc = f - f.mean(-1, keepdims=True)
    nx, nf = np.linalg.norm(xc, axis=-1), np.linalg.norm(fc, axis=-1)
    c_real = np.einsum("nd,nd->n", xc, fc) / (nx * nf) if r > 0 else np.zeros(n_samples)
    return RcResult(r=r, c=c, mean_sq_change=float(per_sample.mean()),
                    stderr=float(per_sample.std(ddof=1) / math.sqrt(n_samples)),
                    per_sample=per_sample, r_real=nf / nx, c_real=c_real, var_x=nx**2 / d,
                    d=d, n_samples=n_samples, seed=seed)


def simulate_feedback(depth: int, d: int, n_samples: int, a: float, b: float, seed: int = 0) -> SimResult:
    """A stream whose blocks read it: x^f_1 = z_1, x^f_k = a LN(x^a_k) + b z_k (k >= 2), z_k ~ N(0, I_d).

    a > 0 reinforces the stream's own direction, a < 0 cancels part of it, a = 0 is the
    theorem's model with sigma = |b| after block 1. Seed convention as :func:`simulate`;
    large-d prediction: ``theory.feedback_recursion(a, b, depth)``.
    Parameters: depth, d, n_samples >= 2; a in [-10, 10]; b in [-10, 10], nonzero; seed >= 0.
    """
    depth, d, n_samples = _check_sizes(depth, d, n_samples)
    a = check_real("a", a, -10.0, 10.0)
    b = check_real("b", b, -10.0, 10.0)
    if b == 0:
        raise ValueError("b must be a nonzero real number in [-10, 10], got 0.0")
    seed = check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_samples, d))
    ln_prev = layer_norm(x)
    ks = np.arange(2, depth + 1)
    mean, err = np.empty(len(ks)), np.empty(len(ks))
    for i in range(len(ks)):
        x += a * ln_prev + b * rng.standard_normal((n_samples, d))
        ln_next = layer_norm(x)
        per_sample = np.mean((ln_next - ln_prev) ** 2, axis=-1)
        mean[i] = per_sample.mean()
        err[i] = per_sample.std(ddof=1) / np.sqrt(n_samples)
        ln_prev = ln_next
    return SimResult(k=ks, mean_sq_change=mean, stderr=err, d=d, n_samples=n_samples, seed=seed)


def normal_quantile(p: float) -> float:
    """Phi^{-1}(p) of the standard normal: :meth:`statistics.NormalDist.inv_cdf` (Wichura's
    AS241, relative error below 1e-15). ``p`` in the open interval (0, 1)."""
    return NormalDist().inv_cdf(check_real("p", p, 0.0, 1.0, lo_open=True, hi_open=True))


def bonferroni_z_crit(n_tests: int, alpha: float = 0.01) -> float:
    """Two-sided critical |z| for ``n_tests`` z-tests at family-wise level ``alpha`` (Bonferroni).

    Phi^{-1}(1 - alpha / (2 n_tests)): if every null holds, P(any |z| > this) <= alpha,
    whatever the dependence between the tests. ``n_tests`` >= 1, ``alpha`` in (0, 1).
    """
    n_tests = check_int("n_tests", n_tests, 1)
    alpha = check_real("alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
    return normal_quantile(1 - alpha / (2 * n_tests))
