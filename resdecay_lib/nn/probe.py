"""Capture a model's residual stream with hooks, and measure how much each block changes it.

* :func:`residual_stream` -- the stream entering each of L blocks and leaving the last,
  [L+1, B, T, D], on any ``nn.Module`` (the zoo's models, Hugging Face models, anything
  whose blocks map the stream to the stream).
* :func:`sublayer_stream` -- the same at sublayer granularity for the zoo's models
  (:mod:`resdecay_lib.nn.models`): after every residual addition, a :class:`SublayerStream`
  ([2L+1, B, T, D] with named views: ``block_inputs``, ``after_attention``, ``after_mlp``),
  since the theory's k counts residual additions.
* :func:`measure`, :func:`measure_sublayers` -- the stream of any model on token ids or a
  mapping of inputs (a dict, a Hugging Face ``BatchEncoding``, whose ``attention_mask`` then
  masks the padding), batch by batch, with its :func:`layer_change`; ``keep_stream=False``
  computes the metrics inside the hooks without stacking the stream (about one plain forward).
* :func:`layer_change` -- per-layer metrics of a captured stream, accumulated in float64.
* :func:`exponent` -- the fitted exponent of omega_k^2 with its bootstrap interval and the
  theorem's exponent over the same range and index convention (an :class:`Exponent`).

Hooks are global state on modules; every hook is removed in a ``finally`` so none outlives
the call, not even when the forward raises. The hooks return nothing, so the model's output
is unchanged; they only copy the stream into a preallocated float32 CPU buffer (a copy, so
a later in-place operation inside the model cannot alter what was captured).

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

Everything is computed from per-token float64 sums (sum x, ||x||^2, <x_k, x_{k+1}>): the
product of two float32 numbers is exact in float64, so the only rounding is float64
accumulation, and the metrics cost about one pass over the stream. The price is
cancellation in ||x_{k+1} - x_k||^2 = ||x_k||^2 + ||x_{k+1}||^2 - 2 <x_k, x_{k+1}>: its
relative error is at most about 4 D eps_64 / r_k^2 (eps_64 = 1.1e-16), i.e. 1e-10 at
D = 1024 and r_k = 1e-2, 1e-2 only when a block changes the stream by r_k ~ 1e-6.
"""
from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn

from ..checks import Flag, Instance, Int, Ints, OneOf, Real, Tensor, Text, accepts
from ..stats import exponents, fit
from ..maths.gaussian import LN_EPS  # eps of LN0, one constant for the simulator and the probe

#: the domains of parameters that several functions here share, declared once
_MODULE = Instance(nn.Module, "a torch.nn.Module")
_MODULE_OR_NONE = Instance(nn.Module, "a torch.nn.Module", none=True)
_BATCH = Int(1, 100_000)
#: a captured stream (rms_change, angular_distances): finite, at least two states
_STREAM = Tensor("a finite floating-point tensor [L+1, B, T, D] with L+1 >= 2", ndim=4, min_shape=(2,))

__all__ = ["LN_EPS", "LayerChange", "NormChange", "Exponent", "exponent", "rms_change", "angular_distances", "residual_stream", "SublayerStream", "sublayer_stream",
           "measure", "measure_sublayers", "batches", "progress_bar", "layer_change", "block_grad_norms", "gram", "measure_zoo", "profile_at_init",
           "output_change_at_init"]



# ----------------------------------------------------------------------------- capture

def _first_tensor(value, what):
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (tuple, list)) and value and isinstance(value[0], torch.Tensor):
        return value[0]  # Hugging Face blocks return (hidden_states, ...)
    raise TypeError(f"cannot find the residual stream in the {what}: expected a tensor or a "
                    f"tuple whose first element is a tensor, got {type(value).__name__}")


def _call(model, inputs):
    if isinstance(inputs, Mapping):        # a dict, or a Hugging Face BatchEncoding (a UserDict)
        if not inputs:
            raise ValueError("inputs must not be empty: got an empty mapping")
        for name, v in inputs.items():
            if isinstance(v, torch.Tensor) and v.numel() == 0:
                raise ValueError(f"inputs[{name!r}] is empty (shape {tuple(v.shape)})")
        dev = _model_device(model)
        kw = {k: (v.to(dev) if isinstance(v, torch.Tensor) else v) for k, v in inputs.items()}
        return model(**kw)
    if isinstance(inputs, torch.Tensor):
        if inputs.numel() == 0:
            raise ValueError(f"inputs must not be empty, got shape {tuple(inputs.shape)}")
        return model(inputs.to(_model_device(model)))
    raise TypeError(f"inputs must be a LongTensor of token ids or a mapping of keyword tensors (a dict, "
                    f"a Hugging Face BatchEncoding), got {type(inputs).__name__}")


def _model_device(model):
    for p in model.parameters():
        return p.device
    for b in model.buffers():
        return b.device
    return torch.device("cpu")


def _capture(model: nn.Module, inputs, entries: list[nn.Module], exit_module: nn.Module, sums: bool = False):
    """Run ``model`` once; return [len(entries)+1, ...]: the input of each entry module, in
    list order, then the output of ``exit_module``.

    With ``sums``, nothing is stacked: each hook reduces its state at once to the per-token
    float64 sums :func:`layer_change` reads (:class:`_SumSink`) and keeps only the previous
    state; returns ``(s, q, c)``, numpy [L+1, N], [L+1, N], [L, N] with N = B T."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
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
    sink = _SumSink(n) if sums else None

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
                raise TypeError(f"blocks[{slot}] was called without a positional input or a "
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
                raise TypeError(f"model must be a callable module (its forward, or a block's, is missing): "
                                f"{exc}") from exc
    finally:
        for h in handles:
            h.remove()
    if any(c != 1 for c in store["seen"]) or (sink is None and store["buf"] is None):
        bad = [i for i, c in enumerate(store["seen"]) if c != 1]
        raise RuntimeError(f"each hooked module must run exactly once per forward; positions {bad} "
                           f"ran {[store['seen'][i] for i in bad]} times")
    return sink.result() if sink is not None else store["buf"]


class _SumSink:
    """Per-token float64 sums of the stream, state by state, as the hooks see it: sum_i x_ki,
    ||x_k||^2 and <x_{k-1}, x_k> (what :func:`_token_sums` computes from a stacked stream),
    holding one previous state instead of all L+1.

    Each state is first rounded to float32, as the stacked buffer stores it; the products of
    two float32 numbers are exact in float64, so the sums differ from the stacked
    computation's only in the order of the float64 additions. On the CPU the sums are NumPy
    ``einsum`` loops over the state in float64 (one thread: torch's parallel reductions stall
    on a busy machine); on another device, torch's float64 reductions there.
    The states must arrive in stream order (every Pre-LN, Post-LN or Hugging Face stack runs
    its blocks in order)."""

    #: NumPy's loops for CPU tensors (False: torch's reductions, as on a GPU; the tests read both)
    use_numpy = True

    def __init__(self, n: int):
        self.n, self.next, self.prev, self.shape = n, 0, None, None
        self.s, self.q, self.c = [None] * n, [None] * n, [None] * (n - 1)

    def put(self, slot, x):
        if slot != self.next:
            raise RuntimeError(f"the hooked modules ran out of stream order (position {slot} before "
                               f"{self.next}); measure with keep_stream=True")
        if self.shape is None:
            self.shape = tuple(x.shape)
        elif tuple(x.shape) != self.shape:
            raise ValueError(f"the stream changes shape between hooked modules: "
                             f"{self.shape} then {tuple(x.shape)} at position {slot}")
        D = x.shape[-1]
        a = x.to(torch.float32)
        if a.device.type == "cpu" and self.use_numpy:
            # float64 (exact), a new array: a later in-place operation inside the model cannot alter it
            a = a.reshape(-1, D).numpy().astype(np.float64)
            self.s[slot] = np.einsum("nd->n", a)
            self.q[slot] = np.einsum("nd,nd->n", a, a)
            if slot:
                self.c[slot - 1] = np.einsum("nd,nd->n", self.prev, a)
            self.prev = a if slot < self.n - 1 else None
        else:
            a = a.reshape(-1, D).double()          # a new tensor: safe from in-place operations
            self.s[slot], self.q[slot] = a.sum(-1), (a * a).sum(-1)
            if slot:
                self.c[slot - 1] = (self.prev * a).sum(-1)
            self.prev = a if slot < self.n - 1 else None
        self.next += 1

    def result(self):
        def stack(parts):
            return np.stack([p if isinstance(p, np.ndarray) else p.cpu().numpy() for p in parts])
        return stack(self.s), stack(self.q), stack(self.c), self.shape


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
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    blocks, exit_module = _entries(model, blocks, exit_module)
    _check_ids(model, inputs)
    return _capture(model, inputs, blocks, exit_module)


def _check_ids(model, inputs, name: str = "inputs") -> None:
    """Token ids outside the model's vocabulary raise ``ValueError`` naming their range before
    the forward (torch would say "index out of range in self")."""
    from .models import check_token_ids, vocab_size_of
    ids = inputs.get("input_ids") if isinstance(inputs, Mapping) else inputs
    if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.int64, torch.int32) or ids.numel() == 0:
        return
    vocab = vocab_size_of(model)
    if vocab is not None:
        check_token_ids(name if ids is inputs else f"{name}['input_ids']", ids, vocab)


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

    def part(self, features) -> "SublayerStream":
        """The same points, keeping only ``features`` (a slice or index of the last axis)."""
        return SublayerStream(self.tensor[..., features])


@accepts(model=_MODULE)
def sublayer_stream(model: nn.Module, inputs) -> SublayerStream:
    """The stream after every residual addition of a zoo model, a :class:`SublayerStream`.

    The attention step's result is the input of ``block.resid_mid`` (an identity module), so
    it is captured with the same hooks as the blocks' inputs.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
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


#: seconds between two progress lines when the output is a log (not a terminal, not Jupyter)
PROGRESS_EVERY_S = 30.0


def _in_jupyter() -> bool:
    """Inside a Jupyter kernel (IPython's ZMQ shell)."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return type(shell).__name__ == "ZMQInteractiveShell"


def _is_tty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _LogLines:
    """A progress "bar" for a log: the items of ``it``, and one line on ``file`` every
    ``every_s`` seconds (done/total, elapsed, time left, the last ``set_postfix``), and one at
    the end when the loop took longer than ``every_s``. The tqdm calls the library makes
    (``set_postfix``, ``close``) do the same here."""

    def __init__(self, it, total, desc, initial=0, every_s=None, file=None):
        self.it, self.total, self.desc, self.n0 = it, total, desc, initial
        self.every = PROGRESS_EVERY_S if every_s is None else every_s
        self.file, self.postfix, self.n = file, "", initial
        self.t0 = self.last = time.monotonic()
        self.printed_at, self.closed = None, False

    def __iter__(self):
        for item in self.it:
            yield item
            self.n += 1
            if time.monotonic() - self.last >= self.every:
                self.line()
        self.close()

    def __len__(self):
        return self.total if self.total is not None else len(self.it)

    def set_postfix(self, **kw):
        self.postfix = ", ".join(f"{k} {v}" for k, v in kw.items())

    def line(self):
        t = time.monotonic() - self.t0
        done = self.n - self.n0
        total = f"/{self.total}" if self.total else ""
        pct = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        left = (f", about {(self.total - self.n) * t / done:.0f} s left"
                if self.total and done and self.n < self.total else "")
        print(f"{self.desc}: {self.n}{total}{pct}, {t:.0f} s{left}" + (f", {self.postfix}" if self.postfix else ""),
              file=self.file or sys.stderr, flush=True)
        self.last, self.printed_at = time.monotonic(), self.n

    def close(self):
        """A last line when the loop lasted ``every_s`` or more and its end is not printed yet."""
        if not self.closed and time.monotonic() - self.t0 >= self.every and self.n != self.printed_at:
            self.line()
        self.closed = True


@accepts(total=Int(0, none=True), desc=Text(empty=True), progress=Flag(none=True))
def progress_bar(it, total, desc, progress, initial: int = 0, file=None):
    """``it`` with progress shown where it is read:

    * on a terminal, a tqdm bar (``progress`` True or None);
    * in Jupyter, a ``tqdm.auto`` bar (a widget where ipywidgets is installed), only with
      ``progress=True``: None shows nothing there, so an executed notebook's stored outputs
      carry no timings;
    * in a log (output to a file or a pipe), one line every :data:`PROGRESS_EVERY_S` seconds
      (``progress`` True or None);
    * nothing with ``progress=False``.

    ``initial``: items already done (a resumed run); ``file``: where the bar or lines go
    (default stderr). The result iterates like ``it`` and has tqdm's ``set_postfix`` and ``close``.
    """
    file = file or sys.stderr
    if progress is False or (progress is None and _in_jupyter()):
        from tqdm import tqdm
        return tqdm(it, total=total, desc=desc, initial=initial, disable=True)
    if _in_jupyter():
        import warnings
        from tqdm import TqdmWarning
        with warnings.catch_warnings():      # without ipywidgets tqdm.auto warns, then draws text
            warnings.simplefilter("ignore", TqdmWarning)
            from tqdm.auto import tqdm       # a widget where ipywidgets is installed
        return tqdm(it, total=total, desc=desc, initial=initial, leave=False)
    if _is_tty(file):
        from tqdm import tqdm
        return tqdm(it, total=total, desc=desc, initial=initial, leave=False, file=file)
    return _LogLines(it, total, desc, initial=initial, file=file)


def _n_sequences(inputs) -> int:
    return (inputs["input_ids"] if isinstance(inputs, Mapping) else inputs).shape[0]


def _capture_in_batches(model, inputs, batch_size, progress, desc, blocks=None, exit_module=None,
                        keep_stream=True):
    """:func:`residual_stream` of ``model`` on ``inputs`` in batches of ``batch_size``
    sequences, concatenated along the batch axis (what :func:`measure` and
    :func:`measure_sublayers` share, checks included). With ``keep_stream=False`` the
    per-token sums of each batch instead (:class:`_SumSink`), concatenated: ``(s, q, c, D)``."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    check_inputs(inputs, batch_size)
    n = _n_sequences(inputs)
    if keep_stream:
        parts = [residual_stream(model, b, blocks=blocks, exit_module=exit_module)
                 for b in progress_bar(batches(inputs, batch_size), -(-n // batch_size), desc, progress)]
        return torch.cat(parts, dim=1)
    entries, exit_module = _entries(model, blocks, exit_module)
    sums, shape = [], None
    for b in progress_bar(batches(inputs, batch_size), -(-n // batch_size), desc, progress):
        _check_ids(model, b)
        *parts, shape_b = _capture(model, b, entries, exit_module, sums=True)
        sums.append([p.reshape(p.shape[0], shape_b[0], -1) for p in parts])     # [L+1, b, T]
        if shape is not None and shape_b[1:] != shape[1:]:
            raise ValueError(f"the batches' streams differ in shape: {shape[1:]} then {shape_b[1:]}")
        shape = shape_b
    s, q, c = (np.concatenate([p[i] for p in sums], axis=1) for i in range(3))
    return s, q, c, shape[-1]


def _entries(model, blocks, exit_module):
    """``blocks`` (default ``model.blocks``) as a list, and the exit module, checked as
    :func:`residual_stream` checks them."""
    if blocks is None:
        if not isinstance(getattr(model, "blocks", None), (nn.ModuleList, list, tuple)):
            raise ValueError("model has no attribute 'blocks': pass blocks=[...] explicitly")
        blocks = model.blocks
    if isinstance(blocks, nn.Module) and not isinstance(blocks, nn.ModuleList):
        raise TypeError(f"blocks must be a list of modules, got one {type(blocks).__name__}: pass [module]")
    try:
        blocks = list(blocks)
    except TypeError as exc:
        raise TypeError(f"blocks must be a list of modules, got {type(blocks).__name__}") from exc
    if exit_module is not None and not isinstance(exit_module, nn.Module):
        raise TypeError(f"exit_module must be a submodule of the model, got {type(exit_module).__name__}")
    if not blocks:
        raise ValueError("blocks must hold at least one module")
    return blocks, (blocks[-1] if exit_module is None else exit_module)


def _default_mask(inputs, mask):
    """``mask``, or the inputs' ``attention_mask`` when ``mask`` is None (padding left out)."""
    if mask is None and isinstance(inputs, Mapping) and isinstance(inputs.get("attention_mask"), torch.Tensor):
        return inputs["attention_mask"]
    return mask


@accepts(model=_MODULE, batch_size=_BATCH, progress=Flag(none=True), desc=Text(empty=True), keep_stream=Flag())
def measure(model: nn.Module, inputs, mask=None, blocks=None, batch_size: int = 8,
            progress: bool | None = False, desc: str = "measure", keep_stream: bool = True):
    """The residual stream of ``model`` on ``inputs``, batch by batch, and its :class:`LayerChange`.

    ``inputs``: [B, T] token ids, or a mapping (a dict, a Hugging Face ``BatchEncoding``)
    holding a [B, T] ``input_ids`` tensor and whatever else the model takes, e.g. an
    attention mask; ``model`` is called on batches of ``batch_size`` sequences
    (``model(**batch)`` for a mapping). ``blocks`` as in :func:`residual_stream` (for a
    pretrained model: ``pre.body`` and ``pre.blocks``). ``mask`` [B, T]: the tokens the
    metrics average over; None takes the inputs' ``attention_mask`` when they hold one
    (padding left out), else every token. ``progress``: see :func:`progress_bar`.

    Returns ``(stream, change)``: stream [L+1, B, T, D] float32, change =
    ``layer_change(stream, mask)``. With ``keep_stream=False`` the stream is never stacked:
    each hook reduces its state at once to the per-token sums the metrics need, holding one
    state at a time (the cheap way when only the metrics are wanted: about one plain forward,
    benchmarks/bench_probe.py), and ``(None, change)`` is returned; the metrics equal the
    stacked computation's up to the order of the float64 additions in the per-token sums
    (about 1e-12 relative on a random model; tests/test_probe.py holds them to 1e-10).
    """
    mask = _default_mask(inputs, mask)
    if not keep_stream:
        s, q, c, D = _capture_in_batches(model, inputs, batch_size, progress, desc, blocks=blocks,
                                         keep_stream=False)
        return None, _change_from_sums(s, q, c, D, mask, LN_EPS)
    stream = _capture_in_batches(model, inputs, batch_size, progress, desc, blocks=blocks)
    return stream, layer_change(stream, mask=mask)


@accepts(model=_MODULE, batch_size=_BATCH, progress=Flag(none=True), desc=Text(empty=True), keep_stream=Flag())
def measure_sublayers(model: nn.Module, inputs, mask, blocks, points, batch_size: int = 8,
                      progress: bool | None = False, desc: str = "measure", keep_stream: bool = True):
    """Like :func:`measure`, at sublayer granularity.

    ``points[i]`` is the submodule whose *input* is the stream between block i's attention
    and its MLP (for Hugging Face blocks, :func:`resdecay_lib.nn.pretrained.sublayer_points`).
    Returns ``(stream, change)``: a :class:`SublayerStream` (entering each block, after its
    attention step, and leaving the last block) and the :func:`layer_change` of its 2L steps;
    ``(None, change)`` with ``keep_stream=False``. ``mask`` None: as in :func:`measure`.
    """
    blocks, points = list(blocks), list(points)
    if not blocks or len(points) != len(blocks) or not all(isinstance(m, nn.Module) for m in blocks + points):
        raise ValueError(f"blocks and points must be equally long, non-empty lists of modules "
                         f"(one mid-block point per block), got {len(blocks)} blocks and {len(points)} points")
    entries = [m for b, pt in zip(blocks, points) for m in (b, pt)]
    mask = _default_mask(inputs, mask)
    # the exit is the last block, not the last entry (its attention point)
    if not keep_stream:
        s, q, c, D = _capture_in_batches(model, inputs, batch_size, progress, desc, blocks=entries,
                                         exit_module=blocks[-1], keep_stream=False)
        return None, _change_from_sums(s, q, c, D, mask, LN_EPS)
    stream = _capture_in_batches(model, inputs, batch_size, progress, desc, blocks=entries,
                                 exit_module=blocks[-1])
    return SublayerStream(stream), layer_change(stream, mask=mask)


@accepts(model=_MODULE, idx=Tensor("an integer tensor of token ids [B, T] with T >= 2", dtype="int", ndim=2,
                                  min_shape=(1, 2)))
def block_grad_norms(model: nn.Module, idx: torch.Tensor, blocks=None) -> np.ndarray:
    """Norm of the loss gradient with respect to each block's parameters, [L] float64.

    The loss is next-token cross-entropy of ``model(idx)`` (logits [B, T, V]) on ``idx``
    itself shifted by one (for a random ``idx`` at initialisation: Xiong et al. 2020,
    arXiv:2002.04745, compare such norms across layers). ||g_k|| = sqrt(sum over the
    parameters of block k of the squared gradient entries). The model's ``.grad`` fields
    are left as they were before the call.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(idx, torch.Tensor) or idx.dim() != 2 or idx.shape[1] < 2:
        raise ValueError(f"idx must be token ids of shape [B, T] with T >= 2, got "
                         f"{tuple(idx.shape) if isinstance(idx, torch.Tensor) else type(idx).__name__}")
    if idx.dtype not in (torch.int64, torch.int32) or idx.shape[0] == 0 or int(idx.min()) < 0:
        raise ValueError(f"idx must hold non-negative integer token ids in at least one sequence, got "
                         f"{idx.dtype} of shape {tuple(idx.shape)}")
    if blocks is None and not isinstance(getattr(model, "blocks", None), (nn.ModuleList, list, tuple)):
        raise ValueError("model has no attribute 'blocks': pass blocks=[...] explicitly")
    if blocks is not None and (isinstance(blocks, nn.Module) and not isinstance(blocks, nn.ModuleList)
                               or not hasattr(blocks, "__iter__")):
        raise TypeError(f"blocks must be a list of modules, got {type(blocks).__name__}")
    if blocks is not None and not all(isinstance(b, nn.Module) for b in blocks):
        raise TypeError("blocks must be a list of modules")
    blocks = list(model.blocks if blocks is None else blocks)
    if not blocks:
        raise ValueError("blocks must hold at least one module")
    _check_ids(model, idx, "idx")
    params = [list(b.parameters()) for b in blocks]
    flat = [p for ps in params for p in ps]
    grads = torch.autograd.grad(_next_token_loss(model, idx), flat, allow_unused=True)
    out, i = [], 0
    for ps in params:
        sq = 0.0
        for g in grads[i:i + len(ps)]:
            if g is not None:
                sq += float((g.double() ** 2).sum())
        out.append(np.sqrt(sq))
        i += len(ps)
    return np.array(out)


def _next_token_loss(model, idx):
    """The model's objective on ``idx`` [B, T]: each position predicts the next token."""
    from .models import next_token_loss
    idx = idx.to(_model_device(model))
    return next_token_loss(model(idx)[:, :-1], idx[:, 1:])


# ----------------------------------------------------------------------------- metrics

#: tokens per chunk of the Gram computation: [L+1, chunk, D] float64 stays cache-sized
_CHUNK = 128


def _token_sums(x: torch.Tensor):
    """Per-token float64 sums of a stream [L+1, N, D] (float32 or any float).

    Returns sum_i x_ki (L+1, N), ||x_k||^2 (L+1, N) and <x_k, x_{k+1}> (L, N), float64.
    One chunk of tokens at a time: convert to float64 (exact), Gram matrix of the L+1
    states of each token by a batched matmul (float32 x float32 products are exact in
    float64; the sums carry float64 rounding only), so the cost is one pass over the stream.
    """
    L1, N, D = x.shape
    s = torch.empty(N, L1, dtype=torch.float64)
    q = torch.empty(N, L1, dtype=torch.float64)
    c = torch.empty(N, max(L1 - 1, 0), dtype=torch.float64)
    for i in range(0, N, _CHUNK):
        a = x[:, i:i + _CHUNK].transpose(0, 1).to(torch.float64, memory_format=torch.contiguous_format)
        g = torch.bmm(a, a.transpose(1, 2))            # (n, L+1, L+1)
        s[i:i + _CHUNK] = a.sum(-1)
        q[i:i + _CHUNK] = g.diagonal(dim1=1, dim2=2)
        c[i:i + _CHUNK] = g.diagonal(offset=1, dim1=1, dim2=2)
    return s.T, q.T, c.T


@dataclass(frozen=True)
class LayerChange:
    """Per-layer statistics of a stream [L+1, B, T, D]; arrays of length L, float64.

    ``k`` is 1..L (the change made by block k: x_{k+1} - x_k, x_k the stream entering it).
    Each metric ``m`` has ``m`` (mean over sequences of the per-sequence token mean) and
    ``m_se`` (standard error over sequences; NaN when there is one sequence);
    ``per_sequence[m]`` holds the [B, L] per-sequence means (for bootstrap fits).
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

    def to_frame(self):
        """A pandas DataFrame indexed by k with one column per metric and its ``_se``
        (``n_sequences`` and ``n_tokens`` in ``.attrs``). Needs pandas (not a dependency)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("LayerChange.to_frame needs pandas (pip install pandas); "
                              "to_dict() gives the same table as plain lists") from None
        d = self.to_dict()
        meta = {"n_sequences": d.pop("n_sequences"), "n_tokens": d.pop("n_tokens")}
        frame = pd.DataFrame(d).set_index("k")
        frame.attrs.update(meta)
        return frame


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

    s, q, c = _token_sums(x.reshape(L1, B * T, D))
    s, q, c = (v.reshape(-1, B, T).numpy() for v in (s, q, c))
    return _change_from_sums(s, q, c, D, mask, eps)


def _change_from_sums(s, q, c, D, mask, eps) -> LayerChange:
    """:class:`LayerChange` from the per-token float64 sums [L+1, B, T] (``s``, ``q``) and
    [L, B, T] (``c``) of a stream of width ``D`` (:func:`_token_sums`, :class:`_SumSink`)."""
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
    return LayerChange(k=np.arange(1, L1, dtype=np.int64), n_sequences=nseq,
                       n_tokens=int(w.sum()), per_sequence=per, **out)


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


# ----------------------------------------------------------------------------- the exponent

_gram_of = gram          # the function, for exponent, whose argument of that name is a matrix

@dataclass(frozen=True)
class Exponent:
    """The fitted exponent of the per-layer change, omega_k^2 ~ k^exponent over
    k = k_min..k_max, with its percentile bootstrap interval [lo, hi] at ``level`` over
    sequences, and the theorem's exponent over the same range in the same index
    ``convention`` (``reference``). ``rho``: the embedding-to-block variance ratio that chose
    the convention (None when the convention was given). ``fit``: the
    :class:`~resdecay_lib.stats.fit.PowerLawFit` (its ``interval(level)`` reads other levels)."""
    exponent: float
    lo: float
    hi: float
    level: float
    reference: float
    convention: str
    embedding_counted: bool
    rho: float | None
    k_min: int
    k_max: int
    n_sequences: int
    fit: object = field(repr=False, compare=False, default=None)

    @property
    def reading(self) -> str:
        """Where the theorem's exponent lies against the interval, in words."""
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)):
            return "no interval (one sequence): the data cannot tell"
        if self.lo <= self.reference <= self.hi:
            return "consistent with the theorem (its exponent lies inside the interval)"
        if self.hi < self.reference:
            return "decays faster than the theorem (the interval lies below its exponent)"
        return "decays slower than the theorem (the interval lies above its exponent)"

    def __str__(self):
        iv = (f" [{self.lo:.3f}, {self.hi:.3f}] ({self.level:.0%} bootstrap over {self.n_sequences} sequences)"
              if math.isfinite(self.lo) and math.isfinite(self.hi) else "")
        why = f", rho = {self.rho:.2f}" if self.rho is not None else ""
        return (f"exponent {self.exponent:.3f}{iv} over k = {self.k_min}..{self.k_max}; the theorem's "
                f"{self.reference:.3f} ({self.convention} convention{why}): {self.reading}")


@accepts(change=Instance(LayerChange, "a LayerChange (layer_change's or measure's)"), k_min=Int(1),
         k_max=Int(2, none=True), level=Real(0, 1, lo_open=True, hi_open=True),
         embedding_counted=Flag(none=True), n_boot=Int(2, 1_000_000), seed=Int(0))
def exponent(change: LayerChange, k_min: int = 2, k_max: int | None = None, level: float = 0.95, *,
             gram=None, stream=None, mask=None, embedding_counted: bool | None = None,
             n_boot: int = 2000, seed: int = 0) -> Exponent:
    """The exponent of ``change``'s omega_k^2 with its interval, beside the theorem's: an :class:`Exponent`.

    The fit is :func:`resdecay_lib.stats.fit.power_law` of the per-sequence curves over k = k_min..k_max
    (default the last k), a percentile bootstrap over sequences at ``level`` (``n_boot``
    replicates, generator ``seed``). The theorem's exponent is
    :func:`resdecay_lib.stats.exponents.reference_exponent` over the same range, in the index
    convention

    * that the measured rho chooses (:func:`resdecay_lib.stats.exponents.convention`: embedding-counted
      when the embedding's variance is at least half a block output's) when ``gram`` (the
      summands' Gram matrix, :func:`gram`) or ``stream`` (the captured [L+1, B, T, D] stream;
      with ``mask`` [B, T], the Gram of the kept tokens) is given;
    * else ``embedding_counted``, which must then be given: the convention is never silent.

    An explicit ``embedding_counted`` wins over rho (rho is still reported).

    >>> from resdecay_lib.nn.models import build
    >>> m = build("pre_ln", n_layer=6, d_model=16, n_head=2, vocab_size=9, block_size=8, device="cpu")
    >>> x = torch.randint(0, 9, (8, 8), generator=torch.Generator().manual_seed(0))
    >>> stream, change = measure(m, x)
    >>> e = exponent(change, k_min=2, stream=stream)
    >>> e.convention, e.k_min, e.k_max, e.lo <= e.exponent <= e.hi
    ('embedding-counted', 2, 6, True)
    """
    per = np.asarray(change.per_sequence.get("omega_sq"), dtype=np.float64)
    k = np.asarray(change.k)
    if per.ndim != 2 or per.shape[1] != k.size:
        raise ValueError("change must carry its per-sequence omega_sq [B, L] (layer_change's LayerChange)")
    k_max = int(k.max()) if k_max is None else k_max
    if gram is not None and stream is not None:
        raise ValueError("pass gram or stream, not both (gram is the stream's summands' Gram matrix)")
    if stream is not None:
        st = stream.tensor if isinstance(stream, SublayerStream) else torch.as_tensor(stream)
        if mask is not None:
            m = torch.as_tensor(np.asarray(mask.detach().cpu() if isinstance(mask, torch.Tensor) else mask)).bool()
            if st.dim() != 4 or tuple(m.shape) != tuple(st.shape[1:3]):
                raise ValueError(f"mask must have the stream's [B, T] shape, got {tuple(m.shape)} for a stream "
                                 f"of shape {tuple(st.shape)}")
            st = st[:, m]                                  # [L+1, N, D]: the kept tokens
        gram = _gram_of(st)
    rho = None
    if gram is not None:
        rho = exponents.rho(np.asarray(gram, dtype=np.float64))
        if embedding_counted is None:
            embedding_counted = exponents.convention(rho)
    if embedding_counted is None:
        raise ValueError("embedding_counted is needed when neither gram nor stream is given: True counts "
                         "the embedding as one summand (the theorem at k + 1), False is the seed's convention")
    f = fit.power_law(k, per, k_min=k_min, k_max=k_max, n_boot=n_boot, level=level, seed=seed)
    ref = exponents.reference_exponent(f.k_min, f.k_max, embedding_counted)
    return Exponent(exponent=float(f.exponent), lo=float(f.lo), hi=float(f.hi), level=float(level),
                    reference=float(ref), convention="embedding-counted" if embedding_counted else "seed",
                    embedding_counted=bool(embedding_counted), rho=rho, k_min=f.k_min, k_max=f.k_max,
                    n_sequences=int(per.shape[0]), fit=f)


@accepts(model=Instance("resdecay_lib.nn.models.GPT", "a model of resdecay_lib.nn.models (build's)"),
         x=Tensor("an integer tensor of token ids [B, T]", dtype="int", ndim=2))
def measure_zoo(model: nn.Module, x: torch.Tensor) -> dict:
    """Probe a model of :mod:`resdecay_lib.nn.models` on windows ``x`` [B, T]: per part of its
    stream, the per-layer metrics of :func:`layer_change` (means, standard errors,
    per-sequence omega_sq) and the :func:`gram` of the summands, as JSON-ready lists.

    Parts (:func:`resdecay_lib.nn.models.stream_parts`): ``"stream"`` for one-stream placements;
    ResiDual has ``"post_ln"`` (x_a, what its sublayers read) and ``"dual"`` (x_d).
    The model is left in the mode it was in.
    """
    from .evaluation import sig
    from .models import stream_parts
    _check_ids(model, x, "x")
    was_training = model.training
    model.eval()
    try:
        stream = residual_stream(model, x)
    finally:
        model.train(was_training)
    out = {}
    for part, sl in stream_parts(model).items():
        s = stream[..., sl]
        lc = layer_change(s)
        rec = {}
        for m in lc.METRICS:
            rec[m] = sig(getattr(lc, m))
            rec[m + "_se"] = sig(getattr(lc, m + "_se"))
        rec["omega_sq_per_sequence"] = sig(lc.per_sequence["omega_sq"])
        rec["gram"] = sig(gram(s))
        out[part] = rec
    return out


def _check_tokens(tokens, seeds) -> None:
    if not isinstance(tokens, dict):
        raise TypeError(f"tokens must be a dict {{seed: token ids [B, T]}}, got {type(tokens).__name__}")
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
    (:func:`sublayer_stream`) gives, over the placement's main part
    (Post-LN's x_a for ResiDual):

    * ``blk``, ``sub``: per-sequence omega_sq at block and sublayer granularity
      (:func:`layer_change`), and ``dual`` the same for ResiDual's x_d at block granularity;
    * ``emb_var``: the embedding's variance per coordinate (over the d coordinates, mean over
      tokens); ``inc_var``, ``blk_inc_var``: the same of each sublayer's and each block's
      increment of the stream;
    * ``grad``: :func:`block_grad_norms` of the next-token loss on the windows.

    Returns each as an array over seeds (``blk``, ``sub``, ``dual``: sequences of all seeds
    stacked, seed by seed).
    """
    from .models import build, stream_parts
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
    from .models import build
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
