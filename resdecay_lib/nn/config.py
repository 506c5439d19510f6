"""The model's configuration, without torch: the placements' names, the size bounds and
:class:`GPTConfig`, so that a stored run's configuration can be read and checked where torch is
not imported (the run store, :mod:`resdecay_lib.training.store`). The block classes of each
placement are :data:`resdecay_lib.nn.models.ARCHS` (keyed by :data:`ARCH_NAMES`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..checks import Flag, Int, OneOf, Real, check_fields, declare

__all__ = ["ARCH_NAMES", "MAX_SIZES", "MAX_PARAMS", "GPTConfig", "validate_config"]

#: the norm placements, in the registry's order (:data:`resdecay_lib.nn.models.ARCHS` has one
#: block class for each)
ARCH_NAMES = ("pre_ln", "post_ln", "peri_ln", "resi_dual", "ln_scaling", "deepnorm", "mix_ln")

#: upper bounds of the sizes :func:`build` accepts (far above the book's models: depth 24,
#: width 256); beyond them a model would not fail cleanly but exhaust the memory
MAX_SIZES = {"n_layer": 4096, "d_model": 65536, "n_head": 65536, "vocab_size": 2**24,
             "block_size": 2**20, "mlp_ratio": 64}
#: most parameters :func:`build` allocates (8 GB in float32)
MAX_PARAMS = 2 * 10**9


@declare
@dataclass
class GPTConfig:
    arch: str = "pre_ln"           # one of ARCH_NAMES (models.ARCHS's keys)
    n_layer: int = 6               # L, number of blocks
    d_model: int = 64
    n_head: int = 4                # d_model % n_head == 0
    vocab_size: int = 256
    block_size: int = 128          # longest sequence the position embedding covers
    seed: int = 0                  # initialisation seed
    mlp_ratio: int = 4
    bias: bool = True
    ln_eps: float = 1e-5           # as torch.nn.LayerNorm
    init_std: float = 0.02         # GPT-2's
    pos: str = "learned"           # "learned" (embedding table) or "sinusoidal" (fixed)
    scale_residual_init: bool = False  # GPT-2's 1/sqrt(2L) on residual projections; off: see module doc
    mix_ln_frac: float = 0.25      # Mix-LN: share of Post-LN layers (the paper's alpha)
    deepnorm_alpha: float | None = None  # None: (2L)^(1/4)
    deepnorm_beta: float | None = None   # None: (8L)^(-1/4)

    #: every field's valid values (the sizes' upper bounds: :data:`MAX_SIZES`)
    DOMAINS = {
        "arch": OneOf(ARCH_NAMES),
        **{n: Int(1, MAX_SIZES[n]) for n in ("n_layer", "d_model", "n_head", "vocab_size", "block_size",
                                             "mlp_ratio")},
        "seed": Int(0, 2**64 - 1), "bias": Flag(), "ln_eps": Real(0), "init_std": Real(0, lo_open=True),
        "pos": OneOf(("learned", "sinusoidal")), "scale_residual_init": Flag(),
        "mix_ln_frac": Real(0, 1), "deepnorm_alpha": Real(0, lo_open=True, none=True),
        "deepnorm_beta": Real(0, lo_open=True, none=True),
    }

    def __post_init__(self):
        validate_config(self)


def validate_config(cfg: GPTConfig) -> None:
    """Check every field of ``cfg`` (its :attr:`GPTConfig.DOMAINS`), the parameter count and the
    heads; raises ``ValueError`` (or ``TypeError``) naming the field."""
    check_fields(cfg, GPTConfig.DOMAINS)
    d, L = cfg.d_model, cfg.n_layer
    n_params = (2 * cfg.vocab_size + cfg.block_size) * d + L * (4 + 2 * cfg.mlp_ratio) * d * d
    if n_params > MAX_PARAMS:
        raise ValueError(f"n_layer={L}, d_model={d}, vocab_size={cfg.vocab_size}, block_size="
                         f"{cfg.block_size} make about {n_params:.3g} parameters, above "
                         f"MAX_PARAMS = {MAX_PARAMS:.0e}")
    if cfg.d_model % cfg.n_head:
        raise ValueError(f"d_model={cfg.d_model} must be divisible by n_head={cfg.n_head}")
