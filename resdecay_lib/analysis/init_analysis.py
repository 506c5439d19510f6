"""The zoo at initialisation: the analysis Chapter 6 rests on.

* :func:`profile_at_init` -- a placement's stream at initialisation, one freshly built model
  per seed: omega_k^2 per sequence at block and sublayer granularity, the embedding's and the
  increments' variances, and the blocks' gradient norms;
* :func:`output_change_at_init` -- Corollary 3.5 at initialisation: the change of a Pre-LN
  model's output across its last block, one fresh model per depth.

Models are built (:func:`resdecay_lib.nn.models.build`) and measured
(:mod:`resdecay_lib.nn.probe`); the models do not know they are measured.
"""
from __future__ import annotations

import numpy as np
import torch

from ..checks import ArgumentTypeError, Int, Ints, Real, Text, accepts
from ..nn.models import build, stream_parts
from ..nn.probe import block_grad_norms, layer_change, residual_stream, sublayer_stream

__all__ = ["profile_at_init", "output_change_at_init"]


def _check_tokens(tokens, seeds) -> None:
    if not isinstance(tokens, dict):
        raise ArgumentTypeError(f"tokens must be a dict {{seed: token ids [B, T]}}, got {type(tokens).__name__}")
    missing = [s for s in seeds if s not in tokens]
    if missing:
        raise ValueError(f"tokens must hold the windows of every seed: it lacks seeds {missing[:10]}")


@accepts(arch=Text(), seeds=Ints(0, min_len=1), n_layer=Int(1), d_model=Int(1), n_head=Int(1),
         vocab_size=Int(1), block_size=Int(1), init_std=Real(0, lo_open=True))
def profile_at_init(arch: str, seeds, tokens, n_layer: int, d_model: int, n_head: int, vocab_size: int,
                    block_size: int, init_std: float = 0.02) -> dict:
    """A placement's stream at initialisation, one freshly built model per seed (Chapter 6).

    ``tokens``: ``{seed: ids [B, T]}``, the windows each seed's model reads. Per seed the
    model is :func:`resdecay_lib.nn.models.build` with that seed, and its sublayer stream
    (:func:`resdecay_lib.nn.hooks.sublayer_stream`) gives, over the placement's main part
    (Post-LN's x_a for ResiDual):

    * ``blk``, ``sub``: per-sequence omega_sq at block and sublayer granularity
      (:func:`resdecay_lib.nn.metrics.layer_change`), and ``dual`` the same for ResiDual's x_d at block granularity;
    * ``emb_var``: the embedding's variance per coordinate (over the d coordinates, mean over
      tokens); ``inc_var``, ``blk_inc_var``: the same of each sublayer's and each block's
      increment of the stream;
    * ``grad``: :func:`resdecay_lib.nn.probe.block_grad_norms` of the next-token loss on the windows.

    Returns each as an array over seeds (``blk``, ``sub``, ``dual``: sequences of all seeds
    stacked, seed by seed).
    """
    _check_tokens(tokens, seeds)
    out = {"blk": [], "sub": [], "dual": [], "grad": [], "emb_var": [], "inc_var": [], "blk_inc_var": []}
    for seed in seeds:
        model = build(arch, n_layer, d_model, n_head, vocab_size, block_size, seed=seed, device="cpu",
                      init_std=init_std)
        idx = tokens[seed]
        parts = stream_parts(model)
        main = parts.get("post_ln", parts.get("stream"))
        sub = sublayer_stream(model, idx)
        stream = sub.part(main)
        out["blk"].append(layer_change(stream.block_inputs).per_sequence["omega_sq"])
        out["sub"].append(layer_change(stream.tensor).per_sequence["omega_sq"])
        if "dual" in parts:
            out["dual"].append(layer_change(sub.part(parts["dual"]).block_inputs).per_sequence["omega_sq"])
        x = stream.tensor.double()
        out["emb_var"].append(x[0].var(-1, unbiased=False).mean().item())
        out["inc_var"].append((x[1:] - x[:-1]).var(-1, unbiased=False).mean((1, 2)).numpy())
        out["blk_inc_var"].append((x[2::2] - x[:-2:2]).var(-1, unbiased=False).mean((1, 2)).numpy())
        out["grad"].append(block_grad_norms(model, idx))
    return {k: np.concatenate(v) if k in ("blk", "sub", "dual") and v else np.array(v)
            for k, v in out.items()}


@accepts(depths=Ints(1, min_len=1), seeds=Ints(0, min_len=1), d_model=Int(1), n_head=Int(1),
         vocab_size=Int(1), block_size=Int(1), seed_offset=Int(0))
def output_change_at_init(depths, seeds, tokens, d_model: int, n_head: int, vocab_size: int,
                          block_size: int, seed_offset: int = 100) -> np.ndarray:
    """Corollary 3.5 at initialisation: how much adding block N changes a Pre-LN model's output.

    For each N in ``depths`` and each seed, a fresh N-block Pre-LN model
    (:func:`resdecay_lib.nn.models.build`, seed ``seed_offset + seed``) reads ``tokens[seed]``
    [B, T]; the change is (1/D) ||LN_f(x_{N+1}) - LN_f(x_N)||^2 per token, with LN_f the model's
    final LayerNorm and x_N, x_{N+1} the stream entering and leaving its last block, averaged
    over tokens per sequence (float64). Every N is a separate model, so the points are
    independent across N. Returns [S * B, len(depths)]: sequences of all seeds stacked, seed by
    seed.
    """
    depths, seeds = [int(n) for n in depths], list(seeds)
    _check_tokens(tokens, seeds)
    rows = []
    for seed in seeds:
        per_n = []
        for n in depths:
            model = build("pre_ln", n, d_model, n_head, vocab_size, block_size, seed=seed_offset + seed,
                          device="cpu")
            stream = residual_stream(model, tokens[seed])
            with torch.no_grad():
                y_prev, y = model.ln_f(stream[n - 1]).double(), model.ln_f(stream[n]).double()
            per_n.append(((y - y_prev) ** 2).mean(-1).mean(-1).numpy())      # [B]
        rows.append(np.stack(per_n, axis=1))                                  # [B, len(depths)]
    return np.concatenate(rows)
