"""Removing and replaying residual blocks: the one way the library changes what a block does.

A block is patched by replacing its ``forward`` for the length of a ``with`` (the instance
attribute shadows the class's method, and is deleted afterwards, so nothing is left behind,
even when the forward raises):

* a **removed** block returns its input, in the format of its output (a tensor for the
  library's blocks; ``(hidden, *rest)`` for a Hugging Face decoder layer, whose extra outputs
  are passed through as recorded): its residual update is dropped and it costs no compute;
* a **replayed** block returns an output recorded from an intact forward, so that a removal
  deep in the stack need not recompute the blocks before it.

Used by :func:`resdecay_lib.nn.evaluation.ablation_losses` (one block at a time, Chapters 7-8)
and :func:`resdecay_lib.analysis.depthcost.removal_costs` (sets of blocks, Chapter 9).
"""
from __future__ import annotations

from contextlib import contextmanager

__all__ = ["patched_blocks"]


@contextmanager
def patched_blocks(blocks, removed=(), replay=None, formats=None):
    """For one ``with``: the blocks at the 0-based indices ``removed`` return their input, those
    in ``replay`` ({index: output}) their recorded output.

    ``formats`` {index: tuple or None}: the rest of a removed block's output after the hidden
    state (None or absent: the block returns a bare tensor). A block's input is its first
    positional argument or its ``hidden_states`` keyword (Hugging Face layers).
    """
    replay, formats = replay or {}, formats or {}
    saved = {}

    def identity(j):
        def forward(*args, **kwargs):
            x = args[0] if args else kwargs["hidden_states"]
            rest = formats.get(j)
            return x if rest is None else (x,) + tuple(rest)
        return forward

    try:
        for j, out in replay.items():
            saved[j] = blocks[j].__dict__.get("forward")
            blocks[j].forward = (lambda o: (lambda *a, **k: o))(out)
        for j in removed:
            saved.setdefault(j, blocks[j].__dict__.get("forward"))
            blocks[j].forward = identity(j)
        yield
    finally:
        for j, f in saved.items():
            if f is None:
                del blocks[j].forward
            else:
                blocks[j].forward = f
