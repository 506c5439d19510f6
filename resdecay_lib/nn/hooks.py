"""Every capture, patch and ablation of a model's blocks: hooks that read the residual stream,
and patches that remove or replay blocks.

**Capture**, on any ``nn.Module`` (the zoo's models, Hugging Face models, anything whose
blocks map the stream to the stream); :mod:`resdecay_lib.nn.probe` re-exports it and measures
with it:

* :func:`residual_stream` -- the stream entering each of L blocks and leaving the last,
  [L+1, B, T, D].
* :func:`sublayer_stream` -- the same at sublayer granularity for the zoo's models
  (:mod:`resdecay_lib.nn.models`): after every residual addition, a :class:`SublayerStream`
  ([2L+1, B, T, D] with named views: ``block_inputs``, ``after_attention``, ``after_mlp``, and
  TransformerLens's hook-point names: ``stream["blocks.3.hook_resid_mid"]``, ``hook_dict``),
  since the theory's k counts residual additions.
* :func:`batches` -- token ids or a mapping of inputs in slices of ``batch_size`` sequences.

Hooks are global state on modules; every hook is removed in a ``finally`` so none outlives
the call, not even when the forward raises. The hooks return nothing, so the model's output
is unchanged; they only copy the stream into a preallocated float32 CPU buffer (a copy, so
a later in-place operation inside the model cannot alter what was captured), or, for
:func:`resdecay_lib.nn.probe.measure` with ``keep_stream=False``, reduce each state at once
to the per-token float64 sums the metrics read (:class:`SumSink`). What
:mod:`resdecay_lib.nn.probe`'s batched measurement shares with :func:`residual_stream` is
public but not in ``__all__``: :func:`capture` (the one hooked forward), :class:`SumSink`,
:func:`resolve_blocks`, :func:`check_ids`, :func:`check_inputs` and :func:`model_device`.

**Patching**: a block is patched by replacing its ``forward`` for the length of a ``with`` (the
instance attribute shadows the class's method, and is deleted afterwards, so nothing is left
behind, even when the forward raises):

* a **removed** block returns its input, in the format of its output (a tensor for the
  library's blocks; ``(hidden, *rest)`` for a Hugging Face decoder layer, whose extra outputs
  are passed through as recorded): its residual update is dropped and it costs no compute;
* a **replayed** block returns an output recorded from an intact forward, so that a removal
  deep in the stack need not recompute the blocks before it.

Used by :func:`resdecay_lib.nn.evaluation.ablation_losses` (one block at a time, Chapters 7-8)
and :func:`resdecay_lib.analysis.pruning.removal_costs` (sets of blocks, Chapter 9).
"""
from __future__ import annotations

from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn

from ..checks import Array, ArgumentTypeError, Instance, Int, accepts, check_int, show

#: the domains of parameters that several functions here share, declared once
_MODULE = Instance(nn.Module, "a torch.nn.Module")
_MODULE_OR_NONE = Instance(nn.Module, "a torch.nn.Module", none=True)
_BATCH = Int(1, 100_000)

__all__ = ["residual_stream", "SublayerStream", "sublayer_stream", "SUBLAYER_STEPS", "sublayer_steps",
           "steps_by_kind", "batches", "patched_blocks"]


# ----------------------------------------------------------------------------- capture

def _first_tensor(value, what):
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (tuple, list)) and value and isinstance(value[0], torch.Tensor):
        return value[0]  # Hugging Face blocks return (hidden_states, ...)
    raise ArgumentTypeError(f"cannot find the residual stream in the {what}: expected a tensor or a "
                    f"tuple whose first element is a tensor, got {type(value).__name__}")


def _call(model, inputs):
    if isinstance(inputs, Mapping):        # a dict, or a Hugging Face BatchEncoding (a UserDict)
        if not inputs:
            raise ValueError("inputs must not be empty: got an empty mapping")
        for name, v in inputs.items():
            if isinstance(v, torch.Tensor) and v.numel() == 0:
                raise ValueError(f"inputs[{name!r}] is empty (shape {tuple(v.shape)})")
        dev = model_device(model)
        kw = {k: (v.to(dev) if isinstance(v, torch.Tensor) else v) for k, v in inputs.items()}
        return model(**kw)
    if isinstance(inputs, torch.Tensor):
        if inputs.numel() == 0:
            raise ValueError(f"inputs must not be empty, got shape {tuple(inputs.shape)}")
        return model(inputs.to(model_device(model)))
    raise ArgumentTypeError(f"inputs must be a LongTensor of token ids or a mapping of keyword tensors (a dict, "
                    f"a Hugging Face BatchEncoding), got {type(inputs).__name__}")


def model_device(model):
    """Where ``model``'s inputs go: the device of its first parameter, else of its first buffer,
    else the CPU."""
    for p in model.parameters():
        return p.device
    for b in model.buffers():
        return b.device
    return torch.device("cpu")


def capture(model: nn.Module, inputs, entries: list[nn.Module], exit_module: nn.Module, sums: bool = False,
            copy_states: bool = False):
    """Run ``model`` once; return [len(entries)+1, ...]: the input of each entry module, in
    list order, then the output of ``exit_module``.

    With ``sums``, nothing is stacked: each hook reduces its state at once to the per-token
    float64 sums :func:`layer_change` reads (:class:`SumSink`) and keeps only the previous
    state (held, or with ``copy_states`` copied); returns ``(s, q, c, e, shape)``, numpy
    [L+1, N], [L+1, N], [L, N], [L+1, N] with N = B T, and the stream's shape. A model that
    changes a held state in place raises :class:`StreamChangedInPlace`."""
    if not isinstance(model, nn.Module):
        raise ArgumentTypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if len(entries) == 0:
        raise ValueError("blocks must hold at least one module")
    own = {id(m) for m in model.modules()}
    for i, m in enumerate(list(entries) + [exit_module]):
        if not isinstance(m, nn.Module) or id(m) not in own:
            raise ValueError(f"blocks[{i}] ({type(m).__name__}) is not a submodule of the model")
    if len({id(m) for m in entries}) != len(entries):
        raise ValueError("blocks must not list one module twice")

    n = len(entries) + 1
    store: dict = {"buf": None, "seen": [0] * n}
    sink = SumSink(n, copy_states) if sums else None

    def put(slot, x):
        x = x.detach()
        if sink is not None:
            store["seen"][slot] += 1
            if store["seen"][slot] == 1:        # a second run is reported after the forward
                sink.put(slot, x)
            return
        if store["buf"] is None:
            store["buf"] = torch.empty((n,) + tuple(x.shape), dtype=torch.float32)
        buf = store["buf"]
        if tuple(x.shape) != tuple(buf.shape[1:]):
            raise ValueError(f"the stream changes shape between hooked modules: "
                             f"{tuple(buf.shape[1:])} then {tuple(x.shape)} at position {slot}")
        store["seen"][slot] += 1
        buf[slot].copy_(x)  # converts to float32 and moves to the CPU

    def pre_hook(slot):
        def hook(module, args, kwargs):
            if args:
                x = args[0]
            elif "hidden_states" in kwargs:
                x = kwargs["hidden_states"]
            else:
                raise ArgumentTypeError(f"blocks[{slot}] was called without a positional input or a "
                                f"hidden_states keyword; cannot find the stream")
            put(slot, _first_tensor(x, f"input of blocks[{slot}]"))
        return hook

    def exit_hook(module, args, output):
        put(n - 1, _first_tensor(output, "output of the last block"))

    handles = []
    try:
        for i, m in enumerate(entries):
            handles.append(m.register_forward_pre_hook(pre_hook(i), with_kwargs=True))
        handles.append(exit_module.register_forward_hook(exit_hook))
        with torch.no_grad():
            try:
                _call(model, inputs)
            except NotImplementedError as exc:     # torch: a Module without forward
                raise ArgumentTypeError(f"model must be a callable module (its forward, or a block's, is missing): "
                                f"{exc}") from exc
    finally:
        for h in handles:
            h.remove()
    if any(c != 1 for c in store["seen"]) or (sink is None and store["buf"] is None):
        bad = [i for i, c in enumerate(store["seen"]) if c != 1]
        raise RuntimeError(f"each hooked module must run exactly once per forward; positions {bad} "
                           f"ran {[store['seen'][i] for i in bad]} times")
    return sink.result() if sink is not None else store["buf"]


class StreamChangedInPlace(RuntimeError):
    """The model changed a state :class:`SumSink` holds before the next hooked module ran."""


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal tensors, a NaN equal to a NaN (a non-finite stream is refused later, by name)."""
    return bool(((a == b) | (a.isnan() & b.isnan())).all())


_CHANGED = ("the model changed the stream of position {a} in place before position {b} ran; "
            "measure with copy_states=True")


class SumSink:
    """Per-token float64 sums of the stream, state by state, as the hooks see it: sum_i x_ki,
    ||x_k||^2, <x_{k-1}, x_k> (what :func:`resdecay_lib.nn.metrics._token_sums` computes from a
    stacked stream) and the centred squared norm of each summand, ||u_k - mean_i u_ki||^2 with
    u_0 = x_1 and u_k = x_{k+1} - x_k (the diagonal :func:`resdecay_lib.nn.metrics.gram`
    averages, for rho), holding one previous state instead of all L+1.

    Each state is first rounded to float32, as the stacked buffer stores it, and each of its
    values is then read into float64 (exact). The products of two float32 numbers are exact in
    float64, so the sums differ from the stacked computation's only in float64 rounding:

    * ``s`` = sum_i x_i, ``q`` = sum_i x_i^2 and ``c`` = <x_k, x_{k+1}>, summed directly;
    * the summand's ``dd`` = ||x_{k+1} - x_k||^2 = q_k + q_{k+1} - 2 c (an exact identity; its
      rounding is about eps_64 (q_k + q_{k+1}), a relative error of about 2 eps_64 q / dd in
      dd: 4e-12 for a change of 1e-2 of the state's norm, 4e-8 for one of 1e-4, against the
      1e-10 the tests hold the metrics to on random models, whose changes are far larger);
    * ``e`` = dd - (s_{k+1} - s_k)^2 / D, the summand centred over its D coordinates (for
      u_0 = x_1, centred and squared directly).

    The previous state is held, not copied: the model's own float32 tensor (or the float32
    rounding of it). A model that changes it in place before the next hooked module runs makes
    :meth:`put` raise :class:`StreamChangedInPlace` instead of measuring the changed values
    (:func:`resdecay_lib.nn.probe.measure` then runs the batch again with ``copy_states``, which
    copies each state), caught two ways: by its version counter, before any sum (an in-place
    operation on the tensor or a view of it), and by its values, when the next state reads it
    (its per-token sum and squared norm, summed again, must equal the ones recorded bit for bit;
    a write through ``.data``, through a NumPy alias or through another tensor on its storage
    does not move the version counter). An inference tensor, which has no version counter, is
    copied.

    On the CPU the sums are one compiled loop (:func:`_cpu_kernels`: numba, its rows split over
    torch's threads): it reads each state twice, as the current state and then as the previous
    one, and sums s, q and c of the current state together with the previous state's s and q
    (the check above, in the same loop and so in the same order, which is what makes
    bit-for-bit equality the right test). Passes over NumPy arrays read a state once per sum and
    cost about three times as much (benchmarks/bench_probe.py, Intel Xeon, 2 threads: 1.07-1.11
    plain forwards with NumPy ``vecdot`` over cache-sized chunks, about 1.04 with this loop).
    Without numba, and on another device, torch's float64 reductions, by the same formulas. The
    states must arrive in stream order (every Pre-LN, Post-LN or Hugging Face stack runs its
    blocks in order)."""

    #: the compiled loop for CPU tensors when numba is there (False: torch's reductions, as on
    #: a GPU; the tests read both)
    use_kernel = True

    def __init__(self, n: int, copy_states: bool = False):
        self.n, self.next, self.shape, self.copy_states = n, 0, None, bool(copy_states)
        self.s, self.q, self.c, self.e = [None] * n, [None] * n, [None] * (n - 1), [None] * n
        self._prev, self._prev_version = None, None      # the previous state and its version

    def put(self, slot, x):
        if slot != self.next:
            raise RuntimeError(f"the hooked modules ran out of stream order (position {slot} before "
                               f"{self.next}); measure with keep_stream=True")
        if self.shape is None:
            self.shape = tuple(x.shape)
        elif tuple(x.shape) != self.shape:
            raise ValueError(f"the stream changes shape between hooked modules: "
                             f"{self.shape} then {tuple(x.shape)} at position {slot}")
        if slot > 0 and self._prev_version is not None and self._prev._version != self._prev_version:
            raise StreamChangedInPlace(_CHANGED.format(a=slot - 1, b=slot))
        D = x.shape[-1]
        a = x.to(torch.float32).reshape(-1, D)
        kernels = _cpu_kernels() if a.device.type == "cpu" and self.use_kernel else None
        if kernels is not None:
            c = self._sums_kernel(kernels, slot, a.numpy(), D)
        else:
            c = self._sums_torch(slot, a.double(), D)
        self._finish(slot, c, D)
        self.next += 1
        if self.next == self.n:                          # the last state: none comes after it
            self._prev, self._prev_version = None, None
            return
        try:
            version = None if self.copy_states else a._version
        except RuntimeError:                             # an inference tensor tracks no version
            version = None
        self._prev, self._prev_version = (a, version) if version is not None else (a.clone(), None)

    def _sums_kernel(self, kernels, slot, a32, D):
        """s and q of the state into self.s/self.q; returns c (for slot 0: e_0)."""
        token_sums, centred_sq = kernels
        N, first = a32.shape[0], slot == 0
        s, q, c, s_prev, q_prev = (np.empty(N) for _ in range(5))
        # the first state is its own "previous" one, so that its s and q come from the same loop
        # as every later state's check of them
        token_sums(a32, a32 if first else self._prev.numpy(), s, q, c, s_prev, q_prev)
        if first:                                        # u_0 = x_1, centred directly
            centred_sq(a32, s, c)
        elif not (_same_values(s_prev, self.s[slot - 1]) and _same_values(q_prev, self.q[slot - 1])):
            raise StreamChangedInPlace(_CHANGED.format(a=slot - 1, b=slot))
        self.s[slot], self.q[slot] = s, q
        return c

    def _sums_torch(self, slot, a, D):
        s = self.s[slot] = a.sum(-1)
        self.q[slot] = (a * a).sum(-1)
        if slot == 0:
            u = a - (s / D)[:, None]
            return (u * u).sum(-1)
        prev = self._prev.to(a.device, torch.float64)
        if not (_same_bits(prev.sum(-1), self.s[slot - 1]) and _same_bits((prev * prev).sum(-1), self.q[slot - 1])):
            raise StreamChangedInPlace(_CHANGED.format(a=slot - 1, b=slot))
        return (a * prev).sum(-1)

    def _finish(self, slot, c, D):
        """c (or e_0 at slot 0) into the sums: dd and e from the identity."""
        if slot == 0:
            self.e[0] = c
            return
        dd = self.q[slot - 1] + self.q[slot] - 2.0 * c
        sd = self.s[slot] - self.s[slot - 1]
        self.c[slot - 1], self.e[slot] = c, dd - sd * sd / D

    def result(self):
        def stack(parts):
            return np.stack([p if isinstance(p, np.ndarray) else p.cpu().numpy() for p in parts])
        return stack(self.s), stack(self.q), stack(self.c), stack(self.e), self.shape


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal arrays, a NaN equal to a NaN (the plain comparison first: it is the common case,
    and the NaN-aware one costs three more passes)."""
    return bool(np.array_equal(a, b) or np.array_equal(a, b, equal_nan=True))


def _token_sums(a, p, s, q, c, s_prev, q_prev):
    """Per row i of the float32 arrays a, p [N, D], in float64: s_i = sum_j a_ij, q_i = sum_j
    a_ij^2, c_i = sum_j a_ij p_ij, and the same s and q of p (written into the float64 [N]
    arrays). One pass over both arrays; the rows are split over threads (``prange``), each row
    summed by one thread, so the sums do not depend on the number of threads."""
    N, D = a.shape
    for i in _prange(N):
        sa, qa, ca, sp, qp = 0.0, 0.0, 0.0, 0.0, 0.0
        for j in range(D):
            x, y = np.float64(a[i, j]), np.float64(p[i, j])
            sa += x
            qa += x * x
            ca += x * y
            sp += y
            qp += y * y
        s[i], q[i], c[i], s_prev[i], q_prev[i] = sa, qa, ca, sp, qp


def _centred_sq(a, s, e):
    """e_i = sum_j (a_ij - s_i / D)^2 per row of the float32 array a [N, D], in float64."""
    N, D = a.shape
    for i in range(N):
        m, acc = s[i] / D, 0.0
        for j in range(D):
            u = np.float64(a[i, j]) - m
            acc += u * u
        e[i] = acc


_prange = range          # numba.prange in the compiled loop (see _cpu_kernels); plain range in Python
_KERNELS: list = []


def _cpu_kernels():
    """(token_sums, centred_sq) compiled by numba, or None when numba is not installed.

    Compiled on first use and cached on disk (``cache=True``). ``fastmath`` allows only
    reassociation and contraction, so that the loops are vectorised: the sums are then taken
    in another order than NumPy's (a float64 rounding apart, as any two orders are), but NaN
    and infinity propagate as they should, for the stream's finiteness check downstream; the
    products, of float32 values, are exact either way. ``token_sums`` runs its rows on the
    threads torch runs on (:func:`_threads`: the states are read from memory, and two cores
    read it faster than one; numba's OpenMP layer shares the OpenMP runtime torch has loaded)."""
    if not _KERNELS:
        try:
            import numba
        except ImportError:
            _KERNELS.append(None)
        else:
            global _prange
            _prange = numba.prange
            fast = {"reassoc", "contract"}
            sums = numba.njit(cache=True, nogil=True, parallel=True, fastmath=fast)(_token_sums)
            centred = numba.njit(cache=True, nogil=True, fastmath=fast)(_centred_sq)

            def token_sums(*arrays):
                numba.set_num_threads(max(1, min(torch.get_num_threads(), numba.config.NUMBA_NUM_THREADS)))
                sums(*arrays)
            _KERNELS.append((token_sums, centred))
    return _KERNELS[0]


@accepts(model=_MODULE, exit_module=_MODULE_OR_NONE)
def residual_stream(model: nn.Module, inputs, blocks=None, exit_module=None) -> torch.Tensor:
    """The residual stream entering each of the L blocks and leaving the last.

    Parameters
    ----------
    model : nn.Module
        Called as ``model(inputs)`` (a LongTensor of token ids) or ``model(**inputs)`` (any
        mapping: a dict, or the ``BatchEncoding`` a Hugging Face tokenizer returns, with its
        ``input_ids`` and ``attention_mask``, so padded positions are masked inside the model);
        inputs are moved to the model's device. The stream holds every position, padding
        included: :func:`measure` leaves padding out of the metrics by the inputs'
        ``attention_mask``, :func:`layer_change` by its ``mask``.
    blocks : sequence of nn.Module, optional
        Submodules of ``model``, in stream order, each mapping the stream to the stream
        (its input positional or the keyword ``hidden_states``; its output a tensor or a
        tuple whose first element is the stream). Default ``model.blocks``.
    exit_module : nn.Module, optional
        The submodule whose output is the last entry. Default the last of ``blocks``; pass
        it when ``blocks`` lists points inside blocks too (sublayer granularity), so that the
        stream leaving the last block ends the list.

    Returns
    -------
    Tensor [L+1, B, T, D], float32 on the CPU, detached: entry k is the stream entering
    block k (k = 0..L-1) and entry L the output of the last block. For the zoo's ResiDual
    model D = 2 d_model (see :func:`resdecay_lib.nn.models.stream_parts`).

    >>> from resdecay_lib.nn.models import build
    >>> m = build("pre_ln", n_layer=3, d_model=8, n_head=2, vocab_size=5, block_size=4, device="cpu")
    >>> residual_stream(m, torch.zeros(2, 4, dtype=torch.long)).shape
    torch.Size([4, 2, 4, 8])
    """
    if not isinstance(model, nn.Module):
        raise ArgumentTypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    blocks, exit_module = resolve_blocks(model, blocks, exit_module)
    check_ids(model, inputs)
    return capture(model, inputs, blocks, exit_module)


def check_ids(model, inputs, name: str = "inputs") -> None:
    """Token ids outside the model's vocabulary raise ``ValueError`` naming their range before
    the forward (torch would say "index out of range in self")."""
    from .models import check_token_ids, vocab_size_of
    ids = inputs.get("input_ids") if isinstance(inputs, Mapping) else inputs
    if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.int64, torch.int32) or ids.numel() == 0:
        return
    vocab = vocab_size_of(model)
    if vocab is not None:
        check_token_ids(name if ids is inputs else f"{name}['input_ids']", ids, vocab)


def resolve_blocks(model, blocks, exit_module):
    """``blocks`` (default ``model.blocks``) as a list, and the exit module, checked as
    :func:`residual_stream` checks them."""
    if blocks is None:
        if not isinstance(getattr(model, "blocks", None), (nn.ModuleList, list, tuple)):
            raise ValueError("model has no attribute 'blocks': pass blocks=[...] explicitly")
        blocks = model.blocks
    if isinstance(blocks, nn.Module) and not isinstance(blocks, nn.ModuleList):
        raise ArgumentTypeError(f"blocks must be a list of modules, got one {type(blocks).__name__}: pass [module]")
    try:
        blocks = list(blocks)
    except TypeError as exc:
        raise ArgumentTypeError(f"blocks must be a list of modules, got {type(blocks).__name__}") from exc
    if exit_module is not None and not isinstance(exit_module, nn.Module):
        raise ArgumentTypeError(f"exit_module must be a submodule of the model, got {type(exit_module).__name__}")
    if not blocks:
        raise ValueError("blocks must hold at least one module")
    return blocks, (blocks[-1] if exit_module is None else exit_module)


@dataclass(frozen=True)
class SublayerStream:
    """The residual stream after every residual addition of L blocks of two steps each.

    ``tensor`` [2L+1, B, T, D] (float32, CPU): entry 2k is the stream entering block k
    (k = 0..L-1) and entry 2L the stream leaving the last block; entry 2k+1 the stream after
    block k's attention step. Named views, with TransformerLens's names for the same points
    (``blocks.k.hook_resid_pre``, ``hook_resid_mid``, ``hook_resid_post``):

    * ``block_inputs`` [L+1]: entering each block, then leaving the last (resid_pre, and the
      last resid_post): the block-granularity stream of :func:`residual_stream`;
    * ``after_attention`` [L]: after each block's attention step (resid_mid);
    * ``after_mlp`` [L]: after each block's MLP step (resid_post).

    :func:`layer_change` of ``tensor`` measures the 2L steps in order (attention, MLP, ...);
    :meth:`part` keeps some features of the width (e.g. ResiDual's x_a).
    """
    tensor: torch.Tensor

    def __post_init__(self):
        t = self.tensor
        if not isinstance(t, torch.Tensor) or t.dim() != 4 or t.shape[0] < 3 or t.shape[0] % 2 == 0:
            raise ValueError("tensor must be the stream at 2L+1 points, [2L+1, B, T, D] with L >= 1, got "
                             + (f"shape {tuple(t.shape)}" if isinstance(t, torch.Tensor) else type(t).__name__))

    @property
    def n_blocks(self) -> int:
        return (self.tensor.shape[0] - 1) // 2

    @property
    def block_inputs(self) -> torch.Tensor:
        return self.tensor[0::2]

    @property
    def after_attention(self) -> torch.Tensor:
        return self.tensor[1::2]

    @property
    def after_mlp(self) -> torch.Tensor:
        return self.tensor[2::2]

    @property
    def names(self) -> list[str]:
        """The name of each entry of ``tensor``, in order, TransformerLens's: entry 2k is
        ``blocks.k.hook_resid_pre``, entry 2k+1 ``blocks.k.hook_resid_mid``, entry 2L
        ``blocks.{L-1}.hook_resid_post`` (block k's resid_post is block k+1's resid_pre, so
        only the last block's is named apart)."""
        L = self.n_blocks
        return [f"blocks.{k}.hook_resid_{'pre' if j == 0 else 'mid'}" for k in range(L) for j in (0, 1)] \
            + [f"blocks.{L - 1}.hook_resid_post"]

    @property
    def hook_dict(self) -> dict[str, torch.Tensor]:
        """``{name: stream [B, T, D]}`` for every point of :attr:`names`, and each block's
        ``hook_resid_post`` too (the next block's resid_pre)."""
        out = dict(zip(self.names, self.tensor))
        for k in range(self.n_blocks - 1):
            out[f"blocks.{k}.hook_resid_post"] = out[f"blocks.{k + 1}.hook_resid_pre"]
        return out

    def __getitem__(self, name: str) -> torch.Tensor:
        """The stream [B, T, D] at the hook point ``name`` (a key of :attr:`hook_dict`)."""
        points = self.hook_dict
        if name not in points:
            L = self.n_blocks
            raise KeyError(f"name must be a hook point of these {L} blocks, blocks.k.hook_resid_pre, "
                           f"hook_resid_mid or hook_resid_post with k = 0..{L - 1}; got {name!r}")
        return points[name]

    def part(self, features) -> "SublayerStream":
        """The same points, keeping only ``features`` (a slice or index of the last axis)."""
        return SublayerStream(self.tensor[..., features])


#: what each step of a sublayer stream's change adds (its resid_pre -> resid_mid step, then its
#: resid_mid -> resid_post step), by TransformerLens's name for it
SUBLAYER_STEPS = {"attention": "hook_attn_out", "mlp": "hook_mlp_out"}


@accepts(n_blocks=Int(1))
def sublayer_steps(n_blocks: int) -> list[str]:
    """The name of each step of a :class:`SublayerStream`'s change, in order (what
    :func:`layer_change` of its ``tensor`` measures): ``blocks.k.hook_attn_out`` (block k's
    attention step) then ``blocks.k.hook_mlp_out`` (its MLP step), k = 0..n_blocks-1."""
    return [f"blocks.{k}.{SUBLAYER_STEPS[kind]}" for k in range(n_blocks) for kind in SUBLAYER_STEPS]


@accepts(values=Array(finite=False, what="an array whose last axis holds an even number (2L >= 2) of sublayer steps"))
def steps_by_kind(values) -> dict:
    """A per-step curve of a sublayer stream's change split by what each step adds, chosen by
    the steps' names (:func:`sublayer_steps`): ``values`` [..., 2L] (a mean curve [2L], or
    per-sequence curves [B, 2L]) -> {"attention": [..., L], "mlp": [..., L]}, each in block
    order. ``ValueError`` unless the last axis holds an even number 2L >= 2 of steps."""
    x = np.asarray(values)
    if x.ndim < 1 or x.shape[-1] < 2 or x.shape[-1] % 2:
        raise ValueError(f"values must have an even number (2L >= 2) of sublayer steps on its last axis, "
                         f"got shape {list(x.shape)}")
    names = sublayer_steps(x.shape[-1] // 2)
    return {kind: x[..., [i for i, n in enumerate(names) if n.endswith("." + hook)]]
            for kind, hook in SUBLAYER_STEPS.items()}


@accepts(model=_MODULE)
def sublayer_stream(model: nn.Module, inputs) -> SublayerStream:
    """The stream after every residual addition of a zoo model, a :class:`SublayerStream`.

    The attention step's result is the input of ``block.resid_mid`` (an identity module), so
    it is captured with the same hooks as the blocks' inputs.
    """
    if not isinstance(model, nn.Module):
        raise ArgumentTypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(getattr(model, "blocks", None), (nn.ModuleList, list, tuple)) or \
            not all(hasattr(b, "resid_mid") for b in model.blocks):
        raise ValueError("model must be a model of resdecay_lib.nn.models (blocks with a resid_mid point)")
    blocks = list(model.blocks)
    entries = [m for b in blocks for m in (b, b.resid_mid)]
    return SublayerStream(residual_stream(model, inputs, entries, exit_module=blocks[-1]))


def check_inputs(inputs, batch_size=None):
    """Raise ``ValueError`` unless ``inputs`` is [B, T] token ids or a mapping with a non-empty
    [B, T] ``input_ids`` tensor (and ``batch_size``, when given, a positive int)."""
    ids = inputs.get("input_ids") if isinstance(inputs, Mapping) else inputs
    if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.numel() == 0 or (
            ids is inputs and (ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool)):
        raise ValueError("inputs must be a [B, T] tensor of token ids or a mapping (a dict, a Hugging Face "
                         "BatchEncoding) with a non-empty [B, T] input_ids tensor (e.g. pretrained.sample_inputs' "
                         "first value, or tokenizer(texts, padding=True, return_tensors='pt'))")
    if batch_size is not None:
        _BATCH.check("batch_size", batch_size)


@accepts(batch_size=Int(1))
def batches(inputs, batch_size: int):
    """``inputs`` ([B, T] token ids, or a mapping of [B, ...] tensors) in slices of
    ``batch_size`` sequences (a mapping's other values are passed to every slice unchanged)."""
    check_inputs(inputs, 1)
    if isinstance(inputs, torch.Tensor):
        for i in range(0, inputs.shape[0], batch_size):
            yield inputs[i:i + batch_size]
        return
    n = inputs["input_ids"].shape[0]
    for i in range(0, n, batch_size):
        yield {k: (v[i:i + batch_size] if isinstance(v, torch.Tensor) else v) for k, v in inputs.items()}


# ----------------------------------------------------------------------------- patching

def _check_patch_blocks(blocks) -> int:
    if isinstance(blocks, nn.Module) and not isinstance(blocks, nn.ModuleList) or isinstance(blocks, (str, bytes)) \
            or not hasattr(blocks, "__len__") or not hasattr(blocks, "__getitem__"):
        raise ArgumentTypeError(f"blocks must be a list of modules (a model's blocks), got {type(blocks).__name__}")
    if len(blocks) == 0:
        raise ValueError("blocks must hold at least one module")
    return len(blocks)


def _check_index(name: str, j, n: int) -> None:
    """One block index of ``name`` (removed, replay, formats): an integer in [0, n - 1]."""
    try:
        check_int("index", j, 0, n - 1)
    except ArgumentTypeError:
        raise ArgumentTypeError(f"{name} must hold block indices, integers in [0, {n - 1}], got "
                                f"{type(j).__name__} {show(j)}") from None
    except ValueError:
        raise ValueError(f"{name} must hold block indices in [0, {n - 1}] (the {n} blocks, counted from 0), "
                         f"got {show(j)}") from None


@contextmanager
def patched_blocks(blocks, removed=(), replay=None, formats=None):
    """For one ``with``: the blocks at the 0-based indices ``removed`` return their input, those
    in ``replay`` ({index: output}) their recorded output.

    ``formats`` {index: tuple or None}: the rest of a removed block's output after the hidden
    state (None or absent: the block returns a bare tensor). A block's input is its first
    positional argument or its ``hidden_states`` keyword (Hugging Face layers).

    Every index (of ``removed``, and every key of ``replay`` and ``formats``) must be an
    integer (not a bool) in [0, len(blocks) - 1]: a negative index would patch a block counted
    from the end, so it raises ValueError naming the argument before any block is patched
    (:class:`ArgumentTypeError` for a non-integer, or for ``removed`` not a collection).
    """
    n = _check_patch_blocks(blocks)
    if isinstance(removed, (str, bytes, Mapping)) or not hasattr(removed, "__iter__"):
        raise ArgumentTypeError(f"removed must be a collection of block indices (a set or list of integers), "
                                f"got {type(removed).__name__} {show(removed)}")
    removed = list(removed)
    for name, value in (("replay", replay), ("formats", formats)):
        if value is not None and not isinstance(value, Mapping):
            raise ArgumentTypeError(f"{name} must be a dict {{block index: ...}}, got {type(value).__name__} "
                                    f"{show(value)}")
    replay, formats = replay or {}, formats or {}
    for name, indices in (("removed", removed), ("replay", list(replay)), ("formats", list(formats))):
        for j in indices:
            _check_index(name, j, n)
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
