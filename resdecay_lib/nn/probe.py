"""Capture a model's residual stream with hooks, and measure how much each block changes it: the
one module the chapters and users import (``from resdecay_lib.nn import probe``).

Every name is defined once, in the module of its job, and re-exported here unchanged:

* :mod:`resdecay_lib.nn.hooks` (every capture, patch and ablation): :func:`residual_stream`
  (the stream entering each of L blocks and leaving the last, [L+1, B, T, D], on any
  ``nn.Module``), :func:`sublayer_stream` (after every residual addition of a zoo model, a
  :class:`SublayerStream`), :func:`batches`;
* :mod:`resdecay_lib.nn.metrics` (pure functions of a captured stream, with their formulas):
  :func:`layer_change` (a :class:`LayerChange`), :func:`rms_change` (a :class:`NormChange`),
  :func:`angular_distances`, :func:`gram`; ``LN_EPS`` (:mod:`resdecay_lib.maths.gaussian`), the
  eps of LN0;
* :mod:`resdecay_lib.nn.progress`: :func:`progress_bar`.

Defined here:

* :func:`measure`, :func:`measure_sublayers` -- the stream of any model on token ids or a
  mapping of inputs (a dict, a Hugging Face ``BatchEncoding``, whose ``attention_mask`` then
  masks the padding), batch by batch, with its :func:`layer_change`; ``keep_stream=False``
  computes the metrics inside the hooks without stacking the stream (about one plain forward).
* :func:`block_grad_norms` -- the norm of the loss gradient with respect to each block's parameters.
* :func:`exponent` -- the fitted exponent of omega_k^2 with its bootstrap interval and the
  theorem's exponent over the same range and index convention (an
  :class:`~resdecay_lib.stats.exponents.Exponent`, the book's one exponent type, re-exported here).
* :func:`measure_zoo` -- a zoo model measured as the training runs record it (Chapter 6's
  profiles at initialisation are :mod:`resdecay_lib.analysis.init_analysis`).

What the measurement here shares with those modules (``capture``, ``resolve_blocks``,
``check_ids``, ``check_inputs``, ``model_device`` of hooks; ``change_from_sums`` of metrics) is
imported from them, not re-exported.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import torch
import torch.nn as nn

from ..checks import ArgumentTypeError, Flag, Instance, Int, Ints, Real, Tensor, Text, accepts
from ..maths.gaussian import LN_EPS  # eps of LN0, one constant for the simulator and the probe
from ..stats import exponents, fit
from ..stats.exponents import Exponent
from .hooks import (
    StreamChangedInPlace,
    SublayerStream,
    batches,
    capture,
    check_ids,
    check_inputs,
    model_device,
    residual_stream,
    resolve_blocks,
    sublayer_stream,
)
from .metrics import LayerChange, NormChange, angular_distances, change_from_sums, gram, layer_change, rms_change
from .progress import progress_bar

#: the domains of parameters that several functions here share, declared once
_MODULE = Instance(nn.Module, "a torch.nn.Module")
_BATCH = Int(1, 100_000)

__all__ = ["LN_EPS", "LayerChange", "NormChange", "Exponent", "exponent", "rms_change", "angular_distances", "residual_stream", "SublayerStream", "sublayer_stream",
           "measure", "measure_sublayers", "batches", "progress_bar", "layer_change", "block_grad_norms", "gram", "measure_zoo"]


# ----------------------------------------------------------------------------- batched measurement

def _n_sequences(inputs) -> int:
    return (inputs["input_ids"] if isinstance(inputs, Mapping) else inputs).shape[0]


def _capture_in_batches(model, inputs, batch_size, progress, desc, blocks=None, exit_module=None,
                        keep_stream=True):
    """:func:`residual_stream` of ``model`` on ``inputs`` in batches of ``batch_size``
    sequences, concatenated along the batch axis (what :func:`measure` and
    :func:`measure_sublayers` share, checks included). With ``keep_stream=False`` the
    per-token sums of each batch instead (:class:`~resdecay_lib.nn.hooks.SumSink`),
    concatenated: ``(s, q, c, e, D)``."""
    if not isinstance(model, nn.Module):
        raise ArgumentTypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    check_inputs(inputs, batch_size)
    n = _n_sequences(inputs)
    if keep_stream:
        parts = [residual_stream(model, b, blocks=blocks, exit_module=exit_module)
                 for b in progress_bar(batches(inputs, batch_size), -(-n // batch_size), desc, progress)]
        return torch.cat(parts, dim=1)
    entries, exit_module = resolve_blocks(model, blocks, exit_module)
    sums, shape = [], None
    copy_states = False
    for b in progress_bar(batches(inputs, batch_size), -(-n // batch_size), desc, progress):
        check_ids(model, b)
        try:
            *parts, shape_b = capture(model, b, entries, exit_module, sums=True, copy_states=copy_states)
        except StreamChangedInPlace:     # this model changes its stream in place: copy each state from now on
            copy_states = True
            *parts, shape_b = capture(model, b, entries, exit_module, sums=True, copy_states=True)
        sums.append([p.reshape(p.shape[0], shape_b[0], -1) for p in parts])     # [L+1, b, T]
        if shape is not None and shape_b[1:] != shape[1:]:
            raise ValueError(f"the batches' streams differ in shape: {shape[1:]} then {shape_b[1:]}")
        shape = shape_b
    s, q, c, e = (np.concatenate([p[i] for p in sums], axis=1) for i in range(4))
    return s, q, c, e, shape[-1]


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
    stacked computation's up to float64 rounding in the per-token sums (about 1e-12 relative
    on a random model; tests/nn/test_probe.py holds them to 1e-10). Either way the change
    carries ``summand_sq``, the diagonal of the summands' :func:`gram` over the masked tokens,
    so that :func:`exponent` can choose the index convention from the change alone.
    """
    mask = _default_mask(inputs, mask)
    if not keep_stream:
        s, q, c, e, D = _capture_in_batches(model, inputs, batch_size, progress, desc, blocks=blocks,
                                            keep_stream=False)
        return None, change_from_sums(s, q, c, D, mask, LN_EPS, e=e)
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
        s, q, c, e, D = _capture_in_batches(model, inputs, batch_size, progress, desc, blocks=entries,
                                            exit_module=blocks[-1], keep_stream=False)
        return None, change_from_sums(s, q, c, D, mask, LN_EPS, e=e)
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
        raise ArgumentTypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
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
        raise ArgumentTypeError(f"blocks must be a list of modules, got {type(blocks).__name__}")
    if blocks is not None and not all(isinstance(b, nn.Module) for b in blocks):
        raise ArgumentTypeError("blocks must be a list of modules")
    blocks = list(model.blocks if blocks is None else blocks)
    if not blocks:
        raise ValueError("blocks must hold at least one module")
    check_ids(model, idx, "idx")
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
    idx = idx.to(model_device(model))
    return next_token_loss(model(idx)[:, :-1], idx[:, 1:])


# ----------------------------------------------------------------------------- the exponent

_gram_of = gram          # the function, for exponent, whose argument of that name is a matrix

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
    * else the rho of ``change.summand_sq`` (the Gram's diagonal over the tokens the change
      was measured on, which :func:`measure` and :func:`layer_change` record, with
      ``keep_stream=False`` too);
    * else (a LayerChange without ``summand_sq``, e.g. built by hand) ``embedding_counted``,
      which must then be given: the convention is never silent.

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
    diagonal = getattr(change, "summand_sq", None)      # absent from a LayerChange pickled before it
    if gram is None and diagonal is not None:
        diagonal = np.asarray(diagonal, dtype=np.float64)
        if diagonal.shape == (k.size + 1,) and np.all(np.isfinite(diagonal)) and np.all(diagonal > 0):
            gram = np.diag(diagonal)                     # rho reads the Gram's diagonal only
        elif embedding_counted is None:
            raise ValueError(f"change.summand_sq must hold L+1 = {k.size + 1} positive variances to give rho, "
                             f"got {np.array2string(diagonal, precision=3, threshold=8)}: a summand that "
                             f"is zero (a removed block) has no rho; pass embedding_counted")
    if gram is not None:
        rho = exponents.rho(np.asarray(gram, dtype=np.float64))
        if embedding_counted is None:
            embedding_counted = exponents.convention(rho)
    if embedding_counted is None:
        raise ValueError("embedding_counted is needed when neither gram nor stream is given: True counts "
                         "the embedding as one summand (the theorem at k + 1), False is the seed's convention "
                         "(the change carries no summand_sq to read rho from)")
    f = fit.power_law(k, per, k_min=k_min, k_max=k_max, n_boot=n_boot, level=level, seed=seed)
    ref = exponents.reference_exponent(f.k_min, f.k_max, embedding_counted)
    return Exponent(exponent=float(f.exponent), lo=None if f.lo is None else float(f.lo),
                    hi=None if f.hi is None else float(f.hi), level=float(level),
                    reference=float(ref), embedding_counted=bool(embedding_counted), rho=rho, k_min=f.k_min,
                    k_max=f.k_max, n=int(per.shape[0]), over="sequences", fit=f)


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
    check_ids(model, x, "x")
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
