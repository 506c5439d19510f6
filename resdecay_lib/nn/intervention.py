"""The front intervention: scale the sum of the first blocks' outputs and run the rest.

For a model whose blocks 1..m form the *front*, write x_1 for the stream entering block 1
(the embedding) and F = x_{m+1} - x_1 = u_1 + ... + u_m for the sum of the front's outputs.
The intervention sets the stream entering block m+1 to

    x'_{m+1} = x_1 + alpha F,                                   alpha >= 0,

and then either

* (a) *arithmetic* -- keeps every later block's output u_k (k > m) as recorded, so only the
  sum changes: x'_k = x_k + (alpha - 1) F for k > m (:func:`arithmetic_stream`); or
* (b) *real* -- runs blocks m+1..L on the new stream (:func:`front_scaled`, a hook on block
  m+1's input), so that each later block reads, and writes from, what the smaller or larger
  front leaves it.

Under (a) the later blocks write as before and omega_k^2 moves only because the stream they
are added to moved; under (b) they may write more or less. The card's mechanism ("there is
progressively less for it to act on") is the arithmetic of the sum; how far (b) departs from
(a) is what :mod:`resdecay_lib.analysis.intervention` measures. The patch is a forward
pre-hook, removed when the ``with`` ends, also when the forward raises.

Index convention: 0-based stream entries as :func:`resdecay_lib.nn.hooks.residual_stream`
returns them, entry j = the stream entering block j+1 (entry 0 = x_1), entry L = the output
of the last block; the front of m blocks ends at entry m.
"""
from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn

from ..checks import ArgumentTypeError, check_int, check_real, show

__all__ = ["front_scaled", "arithmetic_stream", "ALPHA_MAX"]

#: the largest front scale accepted: beyond it the stream is the front alone, to float precision
ALPHA_MAX = 1e3


def _first_tensor(value, where: str) -> torch.Tensor:
    """The stream in a block's input or output: the tensor, or the first of a tuple (Hugging Face)."""
    first = value[0] if isinstance(value, (tuple, list)) and value else value
    if not isinstance(first, torch.Tensor):
        raise ArgumentTypeError(f"cannot find the residual stream in {where}: expected a tensor or a tuple whose "
                                f"first element is a tensor, got {type(value).__name__}")
    return first


def _n_blocks(blocks) -> int:
    """How many blocks ``blocks`` (a sequence of modules, not one module nor a string) holds, at least one."""
    if isinstance(blocks, (str, bytes)) or (isinstance(blocks, nn.Module) and not isinstance(blocks, nn.ModuleList)) \
            or not (hasattr(blocks, "__len__") and hasattr(blocks, "__getitem__")) or len(blocks) == 0:
        raise ArgumentTypeError(f"blocks must be a non-empty list of modules (a model's blocks), got "
                                f"{type(blocks).__name__}")
    return len(blocks)


def _check_front(m, n_blocks: int) -> None:
    """m: the front's block count, an integer in [1, L - 1] (a front, and at least one later block)."""
    check_int("m", m, 1, n_blocks - 1)


def _check_alpha(alpha) -> float:
    check_real("alpha", alpha, 0.0, ALPHA_MAX)
    return float(alpha)


def _stream_of(args, kwargs, where: str):
    if args:
        return _first_tensor(args[0], where), "arg"
    if "hidden_states" in kwargs:
        return _first_tensor(kwargs["hidden_states"], where), "kw"
    raise ArgumentTypeError(f"{where} was called without a positional input or a hidden_states keyword; "
                            f"cannot find the stream")


@contextmanager
def front_scaled(blocks, m: int, alpha: float):
    """For one ``with``: every forward through ``blocks`` enters block m+1 (``blocks[m]``) with
    x_1 + alpha (x_{m+1} - x_1) in place of x_{m+1}, x_1 the input of ``blocks[0]`` in the same
    forward.

    ``blocks``: the model's residual blocks in stream order (``model.blocks``, or
    ``Pretrained.blocks``), each taking the stream as its first positional argument or as the
    keyword ``hidden_states``. ``m``: an integer in [1, L - 1]; ``alpha``: a real in
    [0, :data:`ALPHA_MAX`] (alpha = 1 leaves every value as it is, bit for bit: the hook then
    changes nothing). Both are checked before any hook is placed; the hooks are removed when
    the ``with`` ends, whether or not the body raised.

    >>> from resdecay_lib.nn.models import build
    >>> g = build("pre_ln", n_layer=3, d_model=8, n_head=2, vocab_size=5, block_size=4, device="cpu")
    >>> with front_scaled(g.blocks, 1, 0.5):
    ...     _ = g(torch.zeros(1, 4, dtype=torch.long))
    >>> len(g.blocks[1]._forward_pre_hooks)
    0
    """
    n = _n_blocks(blocks)
    for i in range(n):
        if not isinstance(blocks[i], nn.Module):
            raise ArgumentTypeError(f"blocks[{i}] must be a torch.nn.Module, got {type(blocks[i]).__name__}")
    _check_front(m, n)
    a = _check_alpha(alpha)
    seen: dict = {}

    def record_x1(module, args, kwargs):
        seen["x1"] = _stream_of(args, kwargs, "blocks[0]")[0]

    def scale_front(module, args, kwargs):
        if "x1" not in seen:
            raise RuntimeError(f"blocks[{m}] ran before blocks[0] in this forward: the blocks are not in stream order")
        x, where = _stream_of(args, kwargs, f"blocks[{m}]")
        x1 = seen.pop("x1")
        if a == 1.0:              # the identity, exactly (x1 + (x - x1) is not x in floating point)
            return None
        new = x1 + a * (x - x1)
        if where == "arg":
            first = args[0]
            first = new if isinstance(first, torch.Tensor) else (new,) + tuple(first[1:])
            return (first,) + tuple(args[1:]), kwargs
        return args, {**kwargs, "hidden_states": new}

    handles = []
    try:
        handles.append(blocks[0].register_forward_pre_hook(record_x1, with_kwargs=True))
        handles.append(blocks[m].register_forward_pre_hook(scale_front, with_kwargs=True))
        yield
    finally:
        for h in handles:
            h.remove()


def arithmetic_stream(stream: torch.Tensor, m: int, alpha: float) -> torch.Tensor:
    """(a): the stream [L+1, ...] with the front's sum scaled and every later output kept.

    x'_j = x_j for j < m and x'_j = x_j + (alpha - 1) (x_m - x_0) for j >= m (0-based
    entries: x_0 = x_1 of the book, x_m the stream entering block m+1), so that the summands
    are those of the recorded stream except the front's sum, which is alpha F. Returns a new
    tensor of the stream's dtype (float64 arithmetic); alpha = 1 returns an equal copy."""
    if not isinstance(stream, torch.Tensor) or not stream.is_floating_point() or stream.dim() < 2:
        raise ValueError(f"stream must be a floating-point tensor [L+1, ...], got {type(stream).__name__} "
                         f"{show(getattr(stream, 'shape', None))}")
    L = stream.shape[0] - 1
    if L < 2:
        raise ValueError(f"stream must hold at least 3 states (a front and a later block), got {L + 1}")
    _check_front(m, L)
    a = _check_alpha(alpha)
    out = stream.clone()
    if a == 1.0:
        return out
    x = stream.double()
    shift = (a - 1.0) * (x[m] - x[0])
    out[m:] = (x[m:] + shift).to(stream.dtype)
    return out
