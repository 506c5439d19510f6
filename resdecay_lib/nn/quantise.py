"""4-bit quantisation, simulated: the GGUF Q4_1 block format, round-tripped in float32.

:func:`quantize_q4_1_` round-trips a model's weights through the Q4_1 block format that
SmolLM2's file uses, so a float model can be measured before and after 4-bit quantisation,
and a quantised one after a second round-trip on shifted blocks (Chapter 9 bounds what
quantisation alone does to the per-layer curve); :func:`relative_weight_change` says how far
the weights moved.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from ..checks import ArgumentTypeError, Instance, Int, Tensor, accepts

_MODEL = Instance(nn.Module, "a torch.nn.Module")
_BLOCK = Int(2)          # weights per Q4_1 block (ggml's: 32)
_OFFSET = Int(0)         # shift of the block boundaries along a row

__all__ = ["relative_weight_change", "q4_1_roundtrip", "quantize_q4_1_"]


@accepts(model=_MODEL)
def relative_weight_change(model: nn.Module, reference) -> float:
    """How far ``model``'s weight matrices moved from ``reference``'s:
    sqrt(sum_W |W - W_ref|_F^2 / sum_W |W_ref|_F^2) over the 2-D parameters (float64 sums).

    ``reference``: a module with the same parameter names, or ``{name: tensor}`` of the
    matrices (e.g. clones taken before an in-place quantisation)."""
    ref = dict(reference.named_parameters()) if isinstance(reference, nn.Module) else reference
    if not isinstance(ref, dict):
        raise ArgumentTypeError(f"reference must be a module or a dict {{name: tensor}}, got {type(reference).__name__}")
    num = den = 0.0
    for name, w in model.named_parameters():
        if w.dim() == 2 and name in ref:
            w, r = w.detach(), ref[name].detach()
            num += float((w - r).double().pow(2).sum())   # the difference in the weights' dtype
            den += float(r.double().pow(2).sum())
    if den == 0:
        raise ValueError("reference has no non-zero weight matrix in common with model")
    return (num / den) ** 0.5


@accepts(weight=Tensor("a non-empty, finite floating-point matrix", ndim=2), block=_BLOCK, offset=_OFFSET)
def q4_1_roundtrip(weight: torch.Tensor, block: int = 32, offset: int = 0) -> torch.Tensor:
    """A weight matrix quantised to the GGUF Q4_1 format and back (float32, same shape).

    Q4_1 (ggml's ``quantize_row_q4_1_ref``, as ``gguf.quants.Q4_1``): each run of ``block`` = 32
    consecutive weights of a row has a scale d = (max - min)/15 and a minimum m; the 4-bit
    codes are q = trunc((w - m) (1/d) + 1/2) clipped to 0..15, computed with d and m in
    float32, and d and m are stored as float16; the weight is read back as fp16(d) q + fp16(m).
    With ``block`` = 32 and ``offset`` = 0 the result equals ``gguf.quants``' round trip bit
    for bit (``tests/nn/test_pretrained.py`` checks it). Rows whose length is not a multiple of
    ``block`` are rejected (ggml cannot quantise them either).

    ``offset`` shifts the block boundaries along the row (cyclically) by that many
    columns: a second round-trip with ``offset = block // 2`` re-quantises weights that are
    already Q4_1 on a grid they were not fitted to, adding an error of the same size as
    the first quantisation's.
    """
    rows, cols = weight.shape
    if cols % block:
        raise ValueError(f"the row length {cols} is not a multiple of block={block}")
    w = torch.roll(weight.detach().float(), -offset, dims=1).reshape(rows, cols // block, block)
    lo, hi = w.amin(-1, keepdim=True), w.amax(-1, keepdim=True)
    d = (hi - lo) / 15
    inv = torch.where(d == 0, torch.zeros_like(d), 1 / d)    # ggml multiplies by 1/d, in float32
    q = torch.clamp(torch.trunc((w - lo) * inv + 0.5), 0, 15)
    return torch.roll((d.half().float() * q + lo.half().float()).reshape(rows, cols), offset, dims=1)


@accepts(model=_MODEL, block=_BLOCK, offset=_OFFSET)
def quantize_q4_1_(model: nn.Module, block: int = 32, offset: int = 0) -> int:
    """Replace, in place, every ``nn.Linear`` and ``nn.Embedding`` weight whose rows are a
    multiple of ``block`` long by its Q4_1 round-trip (:func:`q4_1_roundtrip`), as a GGUF
    conversion does with the 2-D tensors; norms and biases stay float. A weight shared by
    two modules (tied embeddings) is quantised once. Returns the number of tensors quantised."""
    done = set()
    with torch.no_grad():
        for mod in model.modules():
            if (isinstance(mod, (nn.Linear, nn.Embedding)) and mod.weight.shape[1] % block == 0
                    and id(mod.weight) not in done):
                mod.weight.copy_(q4_1_roundtrip(mod.weight, block, offset))
                done.add(id(mod.weight))
    return len(done)
