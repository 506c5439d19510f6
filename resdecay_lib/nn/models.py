"""A small decoder-only transformer with one block class per norm placement.

Read top to bottom: norm, attention, MLP, the blocks (one per placement, each ``forward``
two or three lines that mirror the book's equation), the registry :data:`ARCHS`, the config,
the model, :func:`build`.

Placements (``f`` a sublayer: causal self-attention or the GELU MLP; ``LN`` a LayerNorm
with affine parameters, identity at initialisation):

============== ==================================================== ================================
name           one sublayer step                                    source
============== ==================================================== ================================
``pre_ln``     x <- x + f(LN(x))                                    Xiong et al. 2020, 2002.04745
``post_ln``    x <- LN(x + f(x))                                    Vaswani et al. 2017
``peri_ln``    x <- x + LN'(f(LN(x)))  (norm before and after f)    Kim et al. 2025, 2502.02732;
                                                                    Sandwich-LN, Ding et al. 2021,
                                                                    2105.13290
``resi_dual``  x_a <- LN(x_a + f(x_a));  x_d <- x_d + f(x_a)        Xie et al. 2023, 2304.14802
``ln_scaling`` x <- x + f(LN(x) / sqrt(l))   (l = 1-based layer)    Sun et al. 2025, 2502.05795
``deepnorm``   x <- LN(alpha x + f(x)), some weights init x beta    Wang et al. 2022, 2203.00555
``mix_ln``     Post-LN in the first floor(mix_ln_frac * L) layers,  Li et al. 2024, 2412.13795
               Pre-LN after
============== ==================================================== ================================

The residual stream and what the probe sees
-------------------------------------------
Every block maps one tensor to one tensor of the same shape, so a forward hook on
``model.blocks[k]`` sees the stream entering and leaving block k (and replacing a block's
output by its input removes the block). For every placement but ResiDual that tensor is
[B, T, d_model]. ResiDual has two streams; its blocks carry them concatenated along the
last dimension, [B, T, 2 d_model] = [x_a | x_d]: the first half x_a is the Post-LN stream the
sublayers read, the second half x_d the un-normalised dual stream that sums every sublayer
output (it starts at the embedding, like a Pre-LN stream). :func:`stream_parts` names the
halves; measure one half with ``stream[..., stream_parts(model)["post_ln"]]``.

Sublayer granularity: each block applies ``self.resid_mid`` (an identity module) to the
stream between its attention and its MLP step, so the stream after the attention residual
addition is the input of ``block.resid_mid``. :func:`resdecay_lib.nn.probe.sublayer_stream`
captures it, and ``model.sublayers`` lists the 2L points in stream order.

Output: Pre-LN-like placements (pre_ln, peri_ln, ln_scaling, mix_ln) end with a final
LayerNorm ``ln_f``; post_ln and deepnorm end with the stream itself (already normalised);
resi_dual ends with x_a + LN(x_d) (Xie et al. 2023, eq. 6). Then a linear head to logits.

Initialisation (GPT-2's): every Linear and Embedding weight ~ N(0, init_std^2), biases 0,
LayerNorm weight 1 and bias 0. DeepNorm replaces it in its blocks by Xavier-normal with
gain beta for the value, output, and MLP projections and gain 1 for query and key, as its
paper prescribes. No 1/sqrt(2L) rescaling of residual projections unless
``scale_residual_init=True``: the theory is about what the placement alone does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..checks import (ArgumentTypeError, Instance, Int, OneOf, Real, Tensor, Text, accepts, check_fields,
                      check_int, declare, show)
from .config import ARCH_NAMES, MAX_PARAMS, MAX_SIZES, GPTConfig, validate_config  # noqa: F401 (the model's names)
from .device import resolve_device

__all__ = ["ARCHS", "GPT", "build", "stream_parts", "next_token_loss", "check_token_ids",
           "vocab_size_of",
           "PreLNBlock", "PostLNBlock", "PeriLNBlock", "ResiDualBlock",
           "LNScalingBlock", "DeepNormBlock", "MixLNBlock"]


# ----------------------------------------------------------------------------- sublayers

class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention through ``F.scaled_dot_product_attention``."""

    def __init__(self, cfg: "GPTConfig"):
        super().__init__()
        self.n_head = cfg.n_head
        self.c_attn = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=cfg.bias)  # q, k, v stacked
        self.c_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=cfg.bias)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class MLP(nn.Module):
    """d -> mlp_ratio d -> GELU -> d."""

    def __init__(self, cfg: "GPTConfig"):
        super().__init__()
        self.c_fc = nn.Linear(cfg.d_model, cfg.mlp_ratio * cfg.d_model, bias=cfg.bias)
        self.c_proj = nn.Linear(cfg.mlp_ratio * cfg.d_model, cfg.d_model, bias=cfg.bias)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


def _ln(cfg):
    return nn.LayerNorm(cfg.d_model, eps=cfg.ln_eps, bias=cfg.bias)


# ----------------------------------------------------------------------------- blocks
# Each block: __init__(cfg, layer_idx) with layer_idx = 0..L-1; forward(x) -> x, same shape.
# Class attributes tell the model how the stream starts and ends:
#   stream_width: the stream is stream_width * d_model wide
#   readout:      "ln_f" (final LayerNorm), "identity", or "resi_dual"
#   renormalises: some block of the placement passes on a stream that has been through a
#                 LayerNorm after its outputs were added, so what the next block reads does
#                 not accumulate block outputs (Chapter 6 checks that exactly these escape the
#                 decay at initialisation)

def check_block_args(cfg, layer_idx) -> None:
    """What every block's constructor takes: ``cfg`` a valid :class:`GPTConfig` (its fields are
    checked again here, since a dataclass's fields can be changed after it was made: a NaN
    DeepNorm alpha or a Mix-LN fraction outside [0, 1] set later raises, naming the field) and
    ``layer_idx`` the block's 0-based layer in the model, an integer in [0, cfg.n_layer - 1]
    (LayerNorm-Scaling scales by it, Mix-LN chooses its equation by it). Raises
    :class:`~resdecay_lib.checks.ArgumentTypeError` for a wrong kind, ``ValueError`` for a value
    outside its range, in one line naming the parameter."""
    if not isinstance(cfg, GPTConfig):
        raise ArgumentTypeError(f"cfg must be a GPTConfig (resdecay_lib.nn.config), got {type(cfg).__name__} "
                                f"{show(cfg)}")
    validate_config(cfg)
    check_int("layer_idx", layer_idx, 0, cfg.n_layer - 1)


class Block(nn.Module):
    """Base: the two sublayers, and the identity point between them (sublayer granularity)."""
    stream_width = 1
    readout = "ln_f"
    renormalises = False

    def __init__(self, cfg: "GPTConfig", layer_idx: int):
        super().__init__()
        check_block_args(cfg, layer_idx)
        self.layer_idx = layer_idx
        self.attn = CausalSelfAttention(cfg)
        self.mlp = MLP(cfg)
        self.resid_mid = nn.Identity()  # its input is the stream after the attention step


class PreLNBlock(Block):
    """Pre-LN: x <- x + f(LN(x)) (Xiong et al. 2020; GPT-2)."""

    def __init__(self, cfg, layer_idx):
        super().__init__(cfg, layer_idx)
        self.ln_1, self.ln_2 = _ln(cfg), _ln(cfg)

    def forward(self, x):
        x = self.resid_mid(x + self.attn(self.ln_1(x)))
        return x + self.mlp(self.ln_2(x))


class PostLNBlock(Block):
    """Post-LN: x <- LN(x + f(x)) (Vaswani et al. 2017)."""
    readout = "identity"
    renormalises = True

    def __init__(self, cfg, layer_idx):
        super().__init__(cfg, layer_idx)
        self.ln_1, self.ln_2 = _ln(cfg), _ln(cfg)

    def forward(self, x):
        x = self.resid_mid(self.ln_1(x + self.attn(x)))
        return self.ln_2(x + self.mlp(x))


class PeriLNBlock(Block):
    """Peri-LN / Sandwich-LN: x <- x + LN'(f(LN(x))) (Kim et al. 2025; Ding et al. 2021)."""

    def __init__(self, cfg, layer_idx):
        super().__init__(cfg, layer_idx)
        self.ln_1, self.ln_1_out = _ln(cfg), _ln(cfg)
        self.ln_2, self.ln_2_out = _ln(cfg), _ln(cfg)

    def forward(self, x):
        x = self.resid_mid(x + self.ln_1_out(self.attn(self.ln_1(x))))
        return x + self.ln_2_out(self.mlp(self.ln_2(x)))


class ResiDualBlock(Block):
    """ResiDual (Xie et al. 2023): x_a <- LN(x_a + f(x_a)); x_d <- x_d + f(x_a).

    The stream is [x_a | x_d] concatenated on the last dimension (2 d_model wide).
    """
    stream_width = 2
    readout = "resi_dual"
    renormalises = True   # x_a, the stream the blocks read

    def __init__(self, cfg, layer_idx):
        super().__init__(cfg, layer_idx)
        self.ln_1, self.ln_2 = _ln(cfg), _ln(cfg)

    def forward(self, x):
        x_a, x_d = x.chunk(2, dim=-1)
        h = self.attn(x_a)
        x_a, x_d = self.ln_1(x_a + h), x_d + h               # Post-LN step; the dual sum
        # the mid-block hook point (resid_mid) takes one tensor: the two streams pass it
        # side by side, so the probe reads both, as it reads them between blocks
        x_a, x_d = self.resid_mid(torch.cat([x_a, x_d], dim=-1)).chunk(2, dim=-1)
        h = self.mlp(x_a)
        return torch.cat([self.ln_2(x_a + h), x_d + h], dim=-1)


class LNScalingBlock(Block):
    """LayerNorm-Scaling: x <- x + f(LN(x) / sqrt(l)), l = layer_idx + 1 (Sun et al. 2025)."""

    def __init__(self, cfg, layer_idx):
        super().__init__(cfg, layer_idx)
        self.ln_1, self.ln_2 = _ln(cfg), _ln(cfg)
        self.scale = 1.0 / math.sqrt(layer_idx + 1)

    def forward(self, x):
        x = self.resid_mid(x + self.attn(self.scale * self.ln_1(x)))
        return x + self.mlp(self.scale * self.ln_2(x))


class DeepNormBlock(Block):
    """DeepNorm: x <- LN(alpha x + f(x)) (Wang et al. 2022), alpha = (2L)^(1/4) by default.

    Init: Xavier-normal with gain beta = (8L)^(-1/4) for the value, attention-output and
    MLP weights, gain 1 for query and key (the paper's decoder-only values).
    """
    readout = "identity"
    renormalises = True

    def __init__(self, cfg, layer_idx):
        super().__init__(cfg, layer_idx)
        self.ln_1, self.ln_2 = _ln(cfg), _ln(cfg)
        self.alpha = cfg.deepnorm_alpha if cfg.deepnorm_alpha is not None else (2 * cfg.n_layer) ** 0.25
        self.beta = cfg.deepnorm_beta if cfg.deepnorm_beta is not None else (8 * cfg.n_layer) ** -0.25

    def forward(self, x):
        x = self.resid_mid(self.ln_1(self.alpha * x + self.attn(x)))
        return self.ln_2(self.alpha * x + self.mlp(x))

    @torch.no_grad()
    def reset_parameters(self):
        """DeepNorm's init; called by the model after its generic init."""
        d = self.attn.c_proj.weight.shape[0]
        w = self.attn.c_attn.weight  # rows: q (0:d), k (d:2d), v (2d:3d)
        for rows, gain in ((slice(0, d), 1.0), (slice(d, 2 * d), 1.0), (slice(2 * d, 3 * d), self.beta)):
            block = torch.empty_like(w[rows])
            nn.init.xavier_normal_(block, gain=gain)
            w[rows] = block
        for lin in (self.attn.c_proj, self.mlp.c_fc, self.mlp.c_proj):
            nn.init.xavier_normal_(lin.weight, gain=self.beta)


class MixLNBlock(Block):
    """Mix-LN (Li et al. 2024): Post-LN in layers l < floor(mix_ln_frac * L), Pre-LN after."""
    renormalises = True   # its Post-LN layers

    def __init__(self, cfg, layer_idx):
        super().__init__(cfg, layer_idx)
        self.ln_1, self.ln_2 = _ln(cfg), _ln(cfg)
        self.post = layer_idx < int(math.floor(cfg.mix_ln_frac * cfg.n_layer))

    def forward(self, x):
        # the same modules under the same names: each layer is one of the two equations
        return (PostLNBlock if self.post else PreLNBlock).forward(self, x)


#: registry: placement name -> block class
ARCHS: dict[str, type[Block]] = {
    "pre_ln": PreLNBlock,
    "post_ln": PostLNBlock,
    "peri_ln": PeriLNBlock,
    "resi_dual": ResiDualBlock,
    "ln_scaling": LNScalingBlock,
    "deepnorm": DeepNormBlock,
    "mix_ln": MixLNBlock,
}
if tuple(ARCHS) != ARCH_NAMES:   # one list of names: the config (torch-free) and the registry
    raise ImportError(f"models.ARCHS {tuple(ARCHS)} and config.ARCH_NAMES {ARCH_NAMES} must name the same placements")


# ----------------------------------------------------------------------------- model

def sinusoidal_positions(T: int, d: int) -> torch.Tensor:
    """Vaswani et al.'s fixed positions, scaled to variance init_std^2 by the caller. [T, d]."""
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    i = torch.arange(0, d, 2, dtype=torch.float64)
    ang = pos / 10000 ** (i / d)
    pe = torch.zeros(T, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(ang)
    pe[:, 1::2] = torch.cos(ang[:, : d // 2])
    return pe.float()


class ResiDualReadout(nn.Module):
    """y = x_a + LN(x_d) (Xie et al. 2023)."""

    def __init__(self, cfg):
        super().__init__()
        self.ln_d = _ln(cfg)

    def forward(self, x):
        x_a, x_d = x.chunk(2, dim=-1)
        return x_a + self.ln_d(x_d)


class GPT(nn.Module):
    """Embedding -> blocks -> readout -> head. ``model(idx [B, T]) -> logits [B, T, vocab]``."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        validate_config(cfg)
        self.config = cfg
        block_cls = ARCHS[cfg.arch]
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        if cfg.pos == "learned":
            self.wpe = nn.Embedding(cfg.block_size, cfg.d_model)
        else:  # fixed, scaled to the learned table's variance init_std^2 (sin/cos have variance 1/2)
            self.register_buffer("pe", sinusoidal_positions(cfg.block_size, cfg.d_model)
                                 * (cfg.init_std * math.sqrt(2.0)), persistent=False)
        self.blocks = nn.ModuleList(block_cls(cfg, i) for i in range(cfg.n_layer))
        self.ln_f = {"ln_f": lambda: _ln(cfg), "identity": nn.Identity,
                     "resi_dual": lambda: ResiDualReadout(cfg)}[block_cls.readout]()
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self._init_weights()

    @torch.no_grad()
    def _init_weights(self):
        cfg = self.config
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, cfg.init_std)
                if getattr(m, "bias", None) is not None:
                    nn.init.zeros_(m.bias)
        if cfg.scale_residual_init:
            for b in self.blocks:
                for lin in (b.attn.c_proj, b.mlp.c_proj):
                    lin.weight.mul_(1.0 / math.sqrt(2 * cfg.n_layer))
        for b in self.blocks:
            if hasattr(b, "reset_parameters"):
                b.reset_parameters()

    @property
    def sublayers(self) -> list[nn.Module]:
        """The 2L points after each residual addition, in stream order.

        [blocks[0].resid_mid, blocks[0], blocks[1].resid_mid, ...]: the stream after block
        k's attention step is the INPUT of ``blocks[k].resid_mid``; after its MLP step, the
        OUTPUT of ``blocks[k]``.
        """
        return [m for b in self.blocks for m in (b.resid_mid, b)]

    def embed(self, idx: torch.Tensor) -> torch.Tensor:
        """Token + position embedding, [B, T] -> [B, T, d_model]."""
        if not isinstance(idx, torch.Tensor) or idx.dim() != 2 or idx.dtype not in (torch.int64, torch.int32):
            raise ValueError("idx must be an integer tensor of token ids of shape [B, T], got "
                             + (f"{idx.dtype} of shape {tuple(idx.shape)}" if isinstance(idx, torch.Tensor)
                                else type(idx).__name__))
        B, T = idx.shape
        if T > self.config.block_size:
            raise ValueError(f"sequence length T={T} exceeds block_size={self.config.block_size}")
        if B == 0 or T == 0:
            raise ValueError(f"idx must be non-empty, got shape {tuple(idx.shape)}")
        check_token_ids("idx", idx, self.config.vocab_size)
        pos = self.wpe.weight[:T] if self.config.pos == "learned" else self.pe[:T]
        return self.wte(idx) + pos  # (B, T, d)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.embed(idx)
        if ARCHS[self.config.arch].stream_width == 2:
            x = torch.cat([x, x], dim=-1)  # ResiDual: both streams start at the embedding
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))  # (B, T, vocab)


def vocab_size_of(model) -> int | None:
    """How many token ids ``model`` embeds: its input embedding's rows (a Hugging Face model's
    ``get_input_embeddings()``), else ``model.config.vocab_size`` (the zoo's models); None when
    neither is there."""
    get = getattr(model, "get_input_embeddings", None)
    if callable(get):
        try:
            emb = get()
        except (NotImplementedError, AttributeError, TypeError):
            emb = None
        if isinstance(emb, nn.Embedding):
            return int(emb.num_embeddings)
    v = getattr(getattr(model, "config", None), "vocab_size", None)
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else None


@accepts(name=Text(), ids=Tensor("an integer tensor of token ids", dtype="int"), vocab_size=Int(1))
def check_token_ids(name: str, ids: torch.Tensor, vocab_size: int) -> None:
    """``ValueError`` naming ``name``, the ids' range and ``vocab_size`` unless every id of the
    integer tensor ``ids`` lies in [0, vocab_size) (torch would say only "index out of range in
    self", or fail on the GPU asynchronously)."""
    if ids.numel() == 0:
        return
    lo, hi = (int(v) for v in torch.aminmax(ids))
    if lo < 0 or hi >= vocab_size:
        raise ValueError(f"{name} must hold token ids in [0, vocab_size={vocab_size}), got ids from "
                         f"{lo} to {hi}")


@accepts(logits=Tensor("a float tensor of logits [B, T, V]", ndim=3, finite=False),
         targets=Tensor("an integer tensor of token ids [B, T]", dtype="int", ndim=2))
def next_token_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy (nats): logits [B, T, V] against targets [B, T], the
    language model's objective (training and the probe's gradients use this one). Targets
    outside [0, V) raise ``ValueError``; non-finite logits give a non-finite loss (the
    training loop's guard reads it)."""
    if tuple(targets.shape) != tuple(logits.shape[:2]):
        raise ValueError(f"targets must have the shape [B, T] = {tuple(logits.shape[:2])} of the logits, "
                         f"got {tuple(targets.shape)}")
    check_token_ids("targets", targets, logits.size(-1))
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


@accepts(model=Instance(GPT, "a model of resdecay_lib.nn.models (build's)"))
def stream_parts(model: GPT) -> dict[str, slice]:
    """Name -> slice of the last dimension of the stream the blocks carry.

    ``{"stream": slice(0, d)}`` for one-stream placements; ResiDual:
    ``{"post_ln": slice(0, d), "dual": slice(d, 2 d)}``.
    """
    d = model.config.d_model
    if ARCHS[model.config.arch].stream_width == 2:
        return {"post_ln": slice(0, d), "dual": slice(d, 2 * d)}
    return {"stream": slice(0, d)}


@accepts(**{k: GPTConfig.DOMAINS[k] for k in ("arch", "n_layer", "d_model", "n_head", "vocab_size",
                                                "block_size", "seed")})
def build(arch: str, n_layer: int, d_model: int, n_head: int, vocab_size: int, block_size: int,
          seed: int = 0, device="auto", **options) -> GPT:
    """Build a freshly initialised model of placement ``arch`` (a key of :data:`ARCHS`).

    The weights are drawn on the CPU from a generator seeded with ``seed`` (the global RNG
    state is left as it was), then moved to ``device`` ("auto": CUDA if present), so the
    same seed gives the same weights on every device. ``options`` are further
    :class:`GPTConfig` fields (pos, bias, init_std, mix_ln_frac, ...).

    >>> m = build("pre_ln", n_layer=2, d_model=16, n_head=2, vocab_size=11, block_size=8, device="cpu")
    >>> m(torch.zeros(3, 5, dtype=torch.long)).shape
    torch.Size([3, 5, 11])
    >>> build("pre-ln", 2, 16, 2, 11, 8)
    Traceback (most recent call last):
    ...
    ValueError: arch must be one of ['deepnorm', 'ln_scaling', 'mix_ln', 'peri_ln', 'post_ln', 'pre_ln', 'resi_dual'], got 'pre-ln'
    """
    unknown = set(options) - set(GPTConfig.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown options {sorted(unknown)}; valid: "
                         f"{sorted(set(GPTConfig.__dataclass_fields__) - {'arch', 'n_layer', 'd_model', 'n_head', 'vocab_size', 'block_size', 'seed'})}")
    cfg = GPTConfig(arch=arch, n_layer=n_layer, d_model=d_model, n_head=n_head,
                    vocab_size=vocab_size, block_size=block_size, seed=seed, **options)  # validated
    dev = resolve_device(device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = GPT(cfg)
    return model.to(dev)
