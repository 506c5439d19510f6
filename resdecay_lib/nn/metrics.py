"""Per-layer metrics of a captured residual stream: pure functions of the stream [L+1, B, T, D]
(what :mod:`resdecay_lib.nn.hooks` captures), the formulas the book's measurements compute.

* :func:`layer_change` -- per-layer change of the stream, a :class:`LayerChange`, accumulated in
  float64; :func:`change_from_sums` computes it from per-token sums instead of the stream (what
  :func:`resdecay_lib.nn.probe.measure` does with ``keep_stream=False``; public, not in ``__all__``).
* :func:`rms_change` -- the change block k makes to what the next reader sees through an
  RMSNorm, a :class:`NormChange`.
* :func:`angular_distances` -- the angular distance between every two states (Gromov et al.
  2024, arXiv:2403.17887).
* :func:`gram` -- the Gram matrix of the stream's summands, whose rho chooses the index
  convention (Chapter 6).

The metrics of :func:`layer_change` (x_k the stream entering block k, k = 1..L, per token):

* ``omega_sq``   (1/D) ||LN0(x_{k+1}) - LN0(x_k)||^2, LN0 the parameter-free LayerNorm with
  eps = 1e-5 (torch's default); Theorem 3.3 of Xie et al. (2023) predicts omega_k^2.
* ``rel_update`` r_k = ||x_{k+1} - x_k|| / ||x_k||
* ``alignment``  c_k = cos(x_k, x_{k+1} - x_k)
* ``angular``    arccos(cos(x_k, x_{k+1})) / pi (Gromov et al. 2024, arXiv:2403.17887)
* ``influence``  1 - cos(x_k, x_{k+1}), ShortGPT's block influence (Men et al. 2024,
  arXiv:2403.03853); per token a monotone function of ``angular``, but its token average
  ranks blocks differently
* ``norm``       ||x_k||, the stream's norm entering block k

Each is averaged over the (unmasked) tokens of each sequence, then over sequences; its
standard error is the standard deviation of the per-sequence means over sqrt(B).

The change also carries ``summand_sq`` [L+1], the diagonal of :func:`gram` over the same
tokens (the centred squared norm of the embedding x_1 and of each block output x_{k+1} - x_k,
per coordinate and token, summed per token from the exact float64 difference), from which
rho is read without the stream.

Everything is computed from per-token float64 sums (sum x, ||x||^2, <x_k, x_{k+1}>): the
product of two float32 numbers is exact in float64, so the only rounding is float64
accumulation, and the metrics cost about one pass over the stream. The price is
cancellation in ||x_{k+1} - x_k||^2 = ||x_k||^2 + ||x_{k+1}||^2 - 2 <x_k, x_{k+1}>: its
relative error is at most about 4 D eps_64 / r_k^2 (eps_64 = 1.1e-16), i.e. 1e-10 at
D = 1024 and r_k = 1e-2, 1e-2 only when a block changes the stream by r_k ~ 1e-6.

This module captures nothing: it imports neither :mod:`resdecay_lib.nn.hooks` nor
:mod:`resdecay_lib.nn.probe`, which re-exports its names.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ..checks import Flag, Real, Tensor, accepts
from ..maths.gaussian import LN_EPS  # eps of LN0, one constant for the simulator and the probe

#: a captured stream (rms_change, angular_distances): finite, at least two states
_STREAM = Tensor("a finite floating-point tensor [L+1, B, T, D] with L+1 >= 2", ndim=4, min_shape=(2,))

__all__ = ["LayerChange", "layer_change", "NormChange", "rms_change", "angular_distances", "gram"]


#: tokens per chunk of the Gram computation: [L+1, chunk, D] float64 stays cache-sized
_CHUNK = 128


def _token_sums(x: torch.Tensor):
    """Per-token float64 sums of a stream [L+1, N, D] (float32 or any float).

    Returns sum_i x_ki (L+1, N), ||x_k||^2 (L+1, N), <x_k, x_{k+1}> (L, N) and the centred
    squared norms of the summands, ||u_k - mean_i u_ki||^2 (L+1, N) with u_0 = x_1 and
    u_k = x_{k+1} - x_k (what :func:`gram`'s diagonal averages), float64.
    One chunk of tokens at a time: convert to float64 (exact), Gram matrix of the L+1
    states of each token by a batched matmul (float32 x float32 products are exact in
    float64; the sums carry float64 rounding only), so the cost is one pass over the stream;
    the summands are formed, centred and squared as :func:`gram` forms them.
    """
    L1, N, D = x.shape
    s = torch.empty(N, L1, dtype=torch.float64)
    q = torch.empty(N, L1, dtype=torch.float64)
    c = torch.empty(N, max(L1 - 1, 0), dtype=torch.float64)
    e = torch.empty(N, L1, dtype=torch.float64)
    for i in range(0, N, _CHUNK):
        a = x[:, i:i + _CHUNK].transpose(0, 1).to(torch.float64, memory_format=torch.contiguous_format)
        g = torch.bmm(a, a.transpose(1, 2))            # (n, L+1, L+1)
        s[i:i + _CHUNK] = a.sum(-1)
        q[i:i + _CHUNK] = g.diagonal(dim1=1, dim2=2)
        c[i:i + _CHUNK] = g.diagonal(offset=1, dim1=1, dim2=2)
        u = torch.cat([a[:, :1], a[:, 1:] - a[:, :-1]], 1)      # the summands (n, L+1, D)
        u = u - u.mean(-1, keepdim=True)
        e[i:i + _CHUNK] = (u * u).sum(-1)
    return s.T, q.T, c.T, e.T


@dataclass(frozen=True)
class LayerChange:
    """Per-layer statistics of a stream [L+1, B, T, D]; arrays of length L, float64.

    ``k`` is 1..L (the change made by block k: x_{k+1} - x_k, x_k the stream entering it).
    Each metric ``m`` has ``m`` (mean over sequences of the per-sequence token mean) and
    ``m_se`` (standard error over sequences; NaN when there is one sequence);
    ``per_sequence[m]`` holds the [B, L] per-sequence means (for bootstrap fits).

    ``summand_sq`` [L+1] (float64; None for a LayerChange built without it, e.g. by hand) is
    the diagonal of :func:`gram` over the same tokens: with the summands u_0 = x_1 (the
    embedding) and u_k = x_{k+1} - x_k (block k's output), each centred over its D
    coordinates,

        summand_sq[k] = G_kk = mean over the kept tokens of (1/D) ||u_k - mean_i u_ki||^2,

    the kept tokens being those the metrics average over (mask > 0, every token of every
    sequence with one), pooled, not averaged per sequence. It is what
    :func:`resdecay_lib.stats.exponents.rho` reads (G_00 / mean_k G_kk), so that
    :func:`resdecay_lib.nn.probe.exponent` can choose the index convention from a LayerChange
    alone. Left out of the repr and of :meth:`to_dict`.
    """
    k: np.ndarray
    omega_sq: np.ndarray
    omega_sq_se: np.ndarray
    rel_update: np.ndarray
    rel_update_se: np.ndarray
    alignment: np.ndarray
    alignment_se: np.ndarray
    angular: np.ndarray
    angular_se: np.ndarray
    influence: np.ndarray
    influence_se: np.ndarray
    norm: np.ndarray
    norm_se: np.ndarray
    n_sequences: int
    n_tokens: int
    per_sequence: dict = field(repr=False, default_factory=dict)
    summand_sq: np.ndarray | None = field(repr=False, default=None)

    METRICS = ("omega_sq", "rel_update", "alignment", "angular", "influence", "norm")

    def __repr__(self):
        """One line: depth, sequences, tokens and the range of the mean omega_sq over k."""
        om = np.asarray(self.omega_sq, dtype=np.float64)
        span = (f"omega_sq {np.nanmin(om):.3g} to {np.nanmax(om):.3g}" if np.isfinite(om).any()
                else "omega_sq undefined")
        return (f"LayerChange(L={len(self.k)}, {self.n_sequences} sequences, {self.n_tokens} tokens, "
                f"{span} over k = {int(self.k[0])}..{int(self.k[-1])})")

    def to_dict(self) -> dict:
        """The per-layer means and standard errors as plain lists (JSON-ready), one entry per
        k, with ``n_sequences`` and ``n_tokens``; ``per_sequence`` is left out (it is [B, L])."""
        out = {"k": [int(v) for v in self.k]}
        for m in self.METRICS:
            out[m] = [float(v) for v in getattr(self, m)]
            out[m + "_se"] = [float(v) for v in getattr(self, m + "_se")]
        out["n_sequences"], out["n_tokens"] = int(self.n_sequences), int(self.n_tokens)
        return out


@accepts(eps=Real(0))
def layer_change(stream: torch.Tensor, mask=None, eps: float = LN_EPS) -> LayerChange:
    """Per-layer change of a captured stream (see the module docstring for the formulas).

    Parameters
    ----------
    stream : Tensor [L+1, B, T, D] (or [L+1, B, D]), as returned by :func:`residual_stream`.
    mask : optional bool/0-1 tensor or array [B, T]; tokens where it is 0 are excluded
        (padding). Sequences with no token left are dropped; a mask that excludes every token
        raises (the one mask rule of this module, :func:`_token_weights`).

    >>> x = torch.zeros(3, 1, 1, 4); x[0, 0, 0] = torch.tensor([1., -1, 1, -1])
    >>> x[1] = x[0]; x[2] = 2 * x[0]
    >>> layer_change(x).rel_update
    array([0., 1.])
    """
    if not isinstance(stream, torch.Tensor):
        stream = torch.as_tensor(stream)
    if stream.dim() == 3:
        stream = stream.unsqueeze(2)
    if stream.dim() != 4:
        raise ValueError(f"stream must have shape [L+1, B, T, D], got {tuple(stream.shape)}")
    L1, B, T, D = stream.shape
    if L1 < 2:
        raise ValueError(f"stream must hold at least two states (L+1 >= 2), got {L1}")
    if B == 0 or T == 0 or D == 0:
        raise ValueError(f"stream must be non-empty, got shape {tuple(stream.shape)}")
    if not stream.is_floating_point():
        raise ValueError(f"stream must be floating point, got {stream.dtype}")
    x = stream.detach().to("cpu")
    if not torch.isfinite(x).all():
        bad = sorted({int(i) for i in torch.nonzero(~torch.isfinite(x))[:, 0].tolist()})
        raise ValueError(f"stream must be finite: it holds NaN or an infinity at state(s) {bad[:10]}")

    s, q, c, e = _token_sums(x.reshape(L1, B * T, D))
    s, q, c, e = (v.reshape(-1, B, T).numpy() for v in (s, q, c, e))
    return change_from_sums(s, q, c, D, mask, eps, e=e)


def change_from_sums(s, q, c, D, mask, eps, e=None) -> LayerChange:
    """:class:`LayerChange` from the per-token float64 sums [L+1, B, T] (``s``, ``q``) and
    [L, B, T] (``c``) of a stream of width ``D`` (:func:`_token_sums`,
    :class:`~resdecay_lib.nn.hooks.SumSink`). ``e`` [L+1, B, T], the summands' centred
    squared norms ||u_k - mean_i u_ki||^2 per token, gives ``summand_sq`` (None: left None)."""
    L1, B, T = q.shape
    if not np.all(np.isfinite(q)):                    # a NaN or an infinity makes its ||x||^2 so
        bad = sorted({int(i) for i in np.nonzero(~np.isfinite(q))[0]})
        raise ValueError(f"stream must be finite: it holds NaN or an infinity at state(s) {bad[:10]}")
    qa, qb = q[:-1], q[1:]
    na, nb = np.sqrt(qa), np.sqrt(qb)
    diff_sq = np.maximum(qa + qb - 2.0 * c, 0.0)         # ||x_{k+1} - x_k||^2
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.sqrt(diff_sq) / na
        align = (c - qa) / (na * np.sqrt(diff_sq))
        cos_ab = np.clip(c / (na * nb), -1.0, 1.0)
    angular = np.arccos(cos_ab) / np.pi
    # LN0 change: biased variance and covariance over the D coordinates
    mean = s / D
    var = q / D - mean ** 2
    var = np.maximum(var, 0.0)
    va, vb = var[:-1], var[1:]
    cov = c / D - mean[:-1] * mean[1:]
    omega = va / (va + eps) + vb / (vb + eps) - 2.0 * cov / np.sqrt((va + eps) * (vb + eps))
    omega = np.maximum(omega, 0.0)

    w, keep = _token_weights(mask, B, T)
    counts = w.sum(1)                                    # (B',)
    nseq = int(keep.sum())

    def stats(per_token):                                # (L, B, T) -> per-seq (B', L)
        v = per_token[:, keep]
        v = np.where(w[None] > 0, v, 0.0)                # a masked NaN must not leak in
        per_seq = (v * w[None]).sum(-1).T / counts[:, None]
        m = per_seq.mean(0)
        se = per_seq.std(0, ddof=1) / np.sqrt(nseq) if nseq > 1 else np.full(m.shape, np.nan)
        return m, se, per_seq

    out, per = {}, {}
    for name, val in (("omega_sq", omega), ("rel_update", rel), ("alignment", align),
                      ("angular", angular), ("influence", 1.0 - cos_ab), ("norm", na)):
        m, se, ps = stats(val)
        out[name], out[name + "_se"], per[name] = m, se, ps
    summand_sq = None
    if e is not None:                                    # the Gram's diagonal over the kept tokens
        e = np.asarray(e, dtype=np.float64)
        if e.shape != q.shape:
            raise ValueError(f"e must have the shape of q, [L+1, B, T] = {q.shape}, got {e.shape}")
        kept_tokens = w > 0                              # (B', T): the tokens gram(stream[:, mask]) keeps
        summand_sq = e[:, keep][:, kept_tokens].sum(1) / (int(kept_tokens.sum()) * D)
    return LayerChange(k=np.arange(1, L1, dtype=np.int64), n_sequences=nseq,
                       n_tokens=int(w.sum()), per_sequence=per, summand_sq=summand_sq, **out)


def _token_weights(mask, B, T) -> tuple[np.ndarray, np.ndarray]:
    """The one mask rule of every measurement here: (weights [B', T], kept [B] bool).

    ``mask`` [B, T] (None: every token) holds finite non-negative token weights, 0 excluding a
    token (padding); a sequence with no token left is dropped (``kept`` False: an empty text
    in a padded batch), and a mask that excludes every token raises ``ValueError``. The
    weights of the kept sequences are returned."""
    if mask is None:
        return np.ones((B, T)), np.ones(B, dtype=bool)
    w = np.asarray(mask.detach().cpu() if isinstance(mask, torch.Tensor) else mask, dtype=np.float64)
    if w.shape != (B, T):
        raise ValueError(f"mask must have shape [B, T] = {(B, T)}, got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("mask must hold finite non-negative weights (1: keep a token, 0: drop it)")
    kept = w.sum(1) > 0
    if not kept.any():
        raise ValueError("mask excludes every token")
    return w[kept], kept


def _check_stream(stream) -> torch.Tensor:
    _STREAM.check("stream", stream)     # the functions' declared domain, for a direct caller
    return stream.detach().to("cpu")


@dataclass(frozen=True)
class NormChange:
    """Per-block change of what the blocks read through the model's own norm; length L.

    ``change`` [L] (mean over sequences), ``change_se`` (standard error over sequences),
    ``per_sequence`` [B, L]; ``with_gain`` says whether the gains were applied.
    """
    k: np.ndarray
    change: np.ndarray
    change_se: np.ndarray
    per_sequence: np.ndarray = field(repr=False)
    with_gain: bool = False


@accepts(stream=_STREAM, eps=Real(0), normalise=Flag())
def rms_change(stream: torch.Tensor, gains=None, mask=None, eps: float = 1e-6,
               normalise: bool = True) -> NormChange:
    """The change block k makes to what the next reader sees through an RMSNorm.

    With u(x) = x / sqrt(mean_i x_i^2 + eps) (RMSNorm without its gain; u(x) = x with
    ``normalise=False``, for a Post-LN block, which reads the stream itself), the change at
    block k = 1..L is, per token,

        (1/D) sum_i gamma_{k,i}^2 (u(x_{k+1})_i - u(x_k)_i)^2,

    gamma_k [D] the gain of the norm that reads x_{k+1} (block k+1's input norm; the final
    norm for k = L), or 1 without ``gains``. Both states go through the *same* reader's norm,
    so the change is the block's, not the difference of two gains. Token means per sequence
    as in :func:`layer_change`.

    ``stream`` [L+1, B, T, D]; ``gains`` [L, D] or None; ``mask`` [B, T] or None.
    """
    x = _check_stream(stream)
    L1, B, T, D = x.shape
    if gains is None:
        g2 = torch.ones(L1 - 1, D, dtype=torch.float64)
    else:
        g = torch.as_tensor(np.asarray(gains, dtype=np.float64))
        if tuple(g.shape) != (L1 - 1, D) or not torch.isfinite(g).all():
            raise ValueError(f"gains must be a finite [L, D] = {(L1 - 1, D)} array (one reader's gain "
                             f"per block), got shape {tuple(g.shape)}")
        g2 = g * g
    w, kept = _token_weights(mask, B, T)
    seqs = np.flatnonzero(kept)
    per_token = np.empty((L1 - 1, len(seqs), T))
    for i, b in enumerate(seqs):             # one sequence at a time: [L+1, T, D] float64
        xb = x[:, int(b)].double()
        u = xb * torch.rsqrt(xb.pow(2).mean(-1, keepdim=True) + eps) if normalise else xb
        d2 = (u[1:] - u[:-1]).pow(2)                         # [L, T, D]
        per_token[:, i] = (d2 * g2[:, None, :]).mean(-1).numpy()
    per_seq = (per_token * w[None]).sum(-1).T / w.sum(1)[:, None]   # [B', L]
    n = len(seqs)
    se = per_seq.std(0, ddof=1) / np.sqrt(n) if n > 1 else np.full(L1 - 1, np.nan)
    return NormChange(np.arange(1, L1, dtype=np.int64), per_seq.mean(0), se, per_seq,
                      gains is not None)


@accepts(stream=_STREAM)
def angular_distances(stream: torch.Tensor, mask=None) -> np.ndarray:
    """Token mean of the angular distance arccos(cos(x_i, x_j)) / pi between every two states.

    Gromov et al. (2024, arXiv:2403.17887, eq. 7) prune the n consecutive blocks whose input
    x_l and output x_{l+n} are closest in this distance. Returns [L+1, L+1] (symmetric,
    zero diagonal), from ``stream`` [L+1, B, T, D] and an optional ``mask`` [B, T].
    """
    x = _check_stream(stream)
    L1, B, T, D = x.shape
    w_kept, kept = _token_weights(mask, B, T)
    w = np.zeros((B, T))
    w[kept] = w_kept                         # a dropped sequence weighs nothing
    w = w.reshape(-1)
    flat = x.reshape(L1, B * T, D)
    total = np.zeros((L1, L1))
    for i in range(0, B * T, _CHUNK):
        a = flat[:, i:i + _CHUNK].transpose(0, 1).double()   # (n, L+1, D)
        n = a.norm(dim=-1)
        cos = torch.bmm(a, a.transpose(1, 2)) / (n[:, :, None] * n[:, None, :])
        ang = torch.arccos(cos.clamp(-1, 1)) / np.pi
        total += np.einsum("n,nij->ij", w[i:i + _CHUNK], ang.numpy())
    out = total / w.sum()
    np.fill_diagonal(out, 0.0)
    return out


def gram(stream: torch.Tensor) -> np.ndarray:
    """Gram matrix of the stream's summands, per coordinate, of the centred vectors.

    Summands: u_0 = x_1 (the stream entering block 1: the embedding) and u_k = x_{k+1} - x_k
    (block k's output), k = 1..L; each centred over its D coordinates (LayerNorm removes the
    mean). G_ij = mean over tokens of <u_i, u_j> / D: [L+1, L+1] float64. G_kk is block k's
    output variance; G_ij / sqrt(G_ii G_jj) the correlation of two summands; G_00 / mean_k G_kk
    the embedding-to-block variance ratio rho that chooses the index convention (Chapter 6).

    >>> x = torch.zeros(3, 1, 1, 2); x[0, 0, 0] = torch.tensor([1., -1]); x[1] = 2 * x[0]; x[2] = x[1]
    >>> gram(x)
    array([[1., 1., 0.],
           [1., 1., 0.],
           [0., 0., 0.]])
    """
    if not isinstance(stream, torch.Tensor):
        try:
            stream = torch.as_tensor(stream)
        except (TypeError, ValueError, RuntimeError) as exc:
            raise ValueError(f"stream must be a float tensor [L+1, B, T, D], got {type(stream).__name__}") from exc
    if stream.dim() not in (3, 4) or not stream.is_floating_point():
        raise ValueError(f"stream must be a float tensor [L+1, B, T, D] (or [L+1, B, D]), got "
                         f"{stream.dtype} of shape {tuple(stream.shape)}")
    if stream.shape[0] < 2 or stream.numel() == 0 or stream.shape[-1] < 2:
        raise ValueError(f"stream must hold at least two states, one token and two coordinates, got "
                         f"shape {tuple(stream.shape)}")
    if not torch.isfinite(stream).all():
        raise ValueError("stream must be finite: it holds NaN or an infinity")
    x = torch.as_tensor(stream).double()                  # (L+1, B, T, D)
    u = torch.cat([x[:1], x[1:] - x[:-1]], 0)            # summands (L+1, B, T, D)
    u = u - u.mean(-1, keepdim=True)
    u = u.reshape(u.shape[0], -1, u.shape[-1])           # (L+1, N, D)
    n, d = u.shape[1], u.shape[2]
    g = torch.einsum("ind,jnd->ij", u, u) / (n * d)
    return g.numpy()
