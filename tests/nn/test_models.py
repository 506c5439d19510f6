"""The transformer zoo (resdecay_lib.nn.models): each placement against a hand-written forward."""
import math

import pytest
import torch
import torch.nn.functional as F

from resdecay_lib.nn.models import ARCHS, build, stream_parts
from resdecay_lib.nn.config import GPTConfig

TINY = dict(n_layer=4, d_model=16, n_head=2, vocab_size=13, block_size=8)


def tiny(arch, **kw):
    return build(arch, **{**TINY, **kw}, device="cpu")


# ---- hand-written reference: explicit softmax attention, no SDPA, no module forward

def ln(p, x):
    return F.layer_norm(x, x.shape[-1:], p.weight, p.bias, p.eps)


def attn(a, x):
    B, T, C = x.shape
    nh = a.n_head
    qkv = x @ a.c_attn.weight.T + a.c_attn.bias
    q, k, v = (t.reshape(B, T, nh, C // nh).transpose(1, 2) for t in qkv.split(C, -1))
    scores = q @ k.transpose(-1, -2) / math.sqrt(C // nh)
    scores = scores.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
    y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, C)
    return y @ a.c_proj.weight.T + a.c_proj.bias


def mlp(m, x):
    h = x @ m.c_fc.weight.T + m.c_fc.bias
    h = 0.5 * h * (1 + torch.erf(h / math.sqrt(2)))  # exact GELU
    return h @ m.c_proj.weight.T + m.c_proj.bias


def reference_forward(model, idx):
    cfg = model.config
    L = cfg.n_layer
    x = model.wte.weight[idx] + model.wpe.weight[: idx.shape[1]]
    x_d = x
    for l, b in enumerate(model.blocks):
        if cfg.arch == "pre_ln" or (cfg.arch == "mix_ln" and l >= math.floor(cfg.mix_ln_frac * L)):
            x = x + attn(b.attn, ln(b.ln_1, x))
            x = x + mlp(b.mlp, ln(b.ln_2, x))
        elif cfg.arch in ("post_ln", "mix_ln"):
            x = ln(b.ln_1, x + attn(b.attn, x))
            x = ln(b.ln_2, x + mlp(b.mlp, x))
        elif cfg.arch == "peri_ln":
            x = x + ln(b.ln_1_out, attn(b.attn, ln(b.ln_1, x)))
            x = x + ln(b.ln_2_out, mlp(b.mlp, ln(b.ln_2, x)))
        elif cfg.arch == "ln_scaling":
            s = 1 / math.sqrt(l + 1)
            x = x + attn(b.attn, s * ln(b.ln_1, x))
            x = x + mlp(b.mlp, s * ln(b.ln_2, x))
        elif cfg.arch == "deepnorm":
            alpha = (2 * L) ** 0.25
            x = ln(b.ln_1, alpha * x + attn(b.attn, x))
            x = ln(b.ln_2, alpha * x + mlp(b.mlp, x))
        elif cfg.arch == "resi_dual":
            h = attn(b.attn, x)
            x, x_d = ln(b.ln_1, x + h), x_d + h
            h = mlp(b.mlp, x)
            x, x_d = ln(b.ln_2, x + h), x_d + h
    if cfg.arch in ("pre_ln", "peri_ln", "ln_scaling", "mix_ln"):
        x = ln(model.ln_f, x)
    elif cfg.arch == "resi_dual":
        x = x + ln(model.ln_f.ln_d, x_d)
    return x @ model.lm_head.weight.T


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_each_placement_matches_its_hand_written_equation(arch):
    model = tiny(arch, mix_ln_frac=0.5)
    # perturb the LayerNorm affine parameters so that a misplaced norm cannot hide
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "ln" in name:
                p.add_(0.1 * torch.randn(p.shape, generator=torch.Generator().manual_seed(len(name))))
    idx = torch.randint(0, 13, (3, 7), generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(model(idx), reference_forward(model, idx), rtol=1e-4, atol=1e-5)


def test_registry_holds_exactly_the_seven_placements():
    assert set(ARCHS) == {"pre_ln", "post_ln", "peri_ln", "resi_dual", "ln_scaling", "deepnorm", "mix_ln"}


def test_unknown_arch_lists_the_valid_names():
    with pytest.raises(ValueError, match="pre_ln.*resi_dual|deepnorm.*pre_ln"):
        build("preln", **TINY)


@pytest.mark.parametrize("kw, name", [
    (dict(d_model=15, n_head=2), "divisible"),
    (dict(n_layer=0), "n_layer"),
    (dict(d_model=-4), "d_model"),
    (dict(vocab_size=0), "vocab_size"),
    (dict(block_size=0), "block_size"),
    (dict(n_head=1.5), "n_head"),
])
def test_bad_sizes_raise_naming_the_parameter(kw, name):
    with pytest.raises(ValueError, match=name):
        build("pre_ln", **{**TINY, **kw})


def test_unknown_option_raises():
    with pytest.raises(ValueError, match="unknown options"):
        build("pre_ln", **TINY, dropout=0.1)


def test_sequence_longer_than_block_size_raises():
    with pytest.raises(ValueError, match="block_size"):
        tiny("pre_ln")(torch.zeros(1, 9, dtype=torch.long))


def test_float_input_raises():
    with pytest.raises(ValueError, match="integer tensor"):
        tiny("pre_ln")(torch.zeros(1, 4))


def test_build_is_deterministic_for_a_seed_and_leaves_global_rng_alone():
    torch.manual_seed(123)
    before = torch.get_rng_state()
    a, b, c = tiny("pre_ln", seed=5), tiny("pre_ln", seed=5), tiny("pre_ln", seed=6)
    assert torch.equal(torch.get_rng_state(), before)
    assert torch.equal(a.wte.weight, b.wte.weight)
    assert not torch.equal(a.wte.weight, c.wte.weight)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_blocks_map_the_stream_to_a_tensor_of_the_same_shape(arch):
    model = tiny(arch)
    assert isinstance(model.blocks, torch.nn.ModuleList) and len(model.blocks) == 4
    width = 2 * 16 if arch == "resi_dual" else 16
    x = torch.randn(2, 5, width)
    assert model.blocks[1](x).shape == x.shape
    assert sum(s.stop - s.start for s in stream_parts(model).values()) == width
    assert isinstance(model.config, GPTConfig)


def test_replacing_a_block_output_by_its_input_removes_the_block():
    model = tiny("pre_ln")
    idx = torch.randint(0, 13, (2, 6))
    h = model.blocks[2].register_forward_hook(lambda m, args, out: args[0])
    try:
        ablated = model(idx)
    finally:
        h.remove()
    del model.blocks[2]
    torch.testing.assert_close(ablated, model(idx))


def test_sublayers_list_two_points_per_block_in_stream_order():
    model = tiny("peri_ln")
    subs = model.sublayers
    assert len(subs) == 8
    assert subs[0] is model.blocks[0].resid_mid and subs[1] is model.blocks[0]


def test_deepnorm_uses_its_alpha_and_beta():
    model = tiny("deepnorm")
    b = model.blocks[0]
    assert b.alpha == pytest.approx(8 ** 0.25) and b.beta == pytest.approx(32 ** -0.25)
    # Xavier-normal with gain beta: std = beta * sqrt(2 / (fan_in + fan_out))
    w = torch.cat([blk.mlp.c_fc.weight.flatten() for blk in model.blocks])
    assert w.std().item() == pytest.approx(b.beta * math.sqrt(2 / (16 + 64)), rel=0.1)


def test_mix_ln_uses_post_ln_in_the_first_quarter():
    model = build("mix_ln", n_layer=8, d_model=16, n_head=2, vocab_size=5, block_size=4, device="cpu")
    assert [b.post for b in model.blocks] == [True, True] + [False] * 6


def test_ln_scaling_scales_by_one_over_root_layer():
    model = tiny("ln_scaling")
    assert [b.scale for b in model.blocks] == pytest.approx([1, 2 ** -0.5, 3 ** -0.5, 0.5])


def test_sinusoidal_positions_run():
    model = tiny("pre_ln", pos="sinusoidal")
    assert model(torch.zeros(2, 8, dtype=torch.long)).shape == (2, 8, 13)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_cuda_agrees_with_cpu(arch):
    idx = torch.randint(0, 13, (2, 8))
    cpu = tiny(arch)(idx)
    gpu = build(arch, **TINY, device="cuda")(idx.cuda()).cpu()
    torch.testing.assert_close(gpu, cpu, rtol=1e-3, atol=1e-4)
