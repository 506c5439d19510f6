"""The front intervention's patch (resdecay_lib.nn.intervention): alpha = 1 is the unpatched model,
the arithmetic (a) equals the real forward (b) when the later blocks ignore their input, the
patch scales exactly the front's sum, and it is removed even when the forward raises."""
import pytest
import torch
from torch import nn

from resdecay_lib.checks import ArgumentTypeError
from resdecay_lib.nn.hooks import residual_stream
from resdecay_lib.nn.intervention import arithmetic_stream, front_scaled
from resdecay_lib.nn.models import build


def _model(L=5):
    return build("pre_ln", n_layer=L, d_model=16, n_head=2, vocab_size=11, block_size=8, seed=3, device="cpu").eval()


IDX = torch.randint(0, 11, (3, 8), generator=torch.Generator().manual_seed(1))


def test_alpha_one_reproduces_the_unpatched_stream_and_logits_bit_for_bit():
    g = _model()
    with torch.no_grad():
        x0, y0 = residual_stream(g, IDX), g(IDX)
        with front_scaled(g.blocks, 2, 1.0):
            x1, y1 = residual_stream(g, IDX), g(IDX)
    assert torch.equal(x0, x1) and torch.equal(y0, y1)


def test_the_patched_stream_entering_block_m_plus_1_is_the_embedding_plus_alpha_times_the_front():
    g = _model()
    with torch.no_grad():
        x = residual_stream(g, IDX)
        with front_scaled(g.blocks, 2, 0.25):
            xb = residual_stream(g, IDX)
    assert torch.equal(xb[:2], x[:2])                         # the front runs unpatched
    torch.testing.assert_close(xb[2], x[0] + 0.25 * (x[2] - x[0]), rtol=0, atol=1e-6)
    assert not torch.allclose(xb[3], x[3])                    # the later blocks read the new stream


class _Constant(nn.Module):
    """A block that ignores its input: it adds a fixed vector to the stream."""
    def __init__(self, v):
        super().__init__()
        self.v = nn.Parameter(v)

    def forward(self, x):
        return x + self.v


class _Stack(nn.Module):
    """Two real blocks (the front), then blocks that ignore their input."""
    def __init__(self):
        super().__init__()
        g = _model(2)
        self.emb = g.wte
        gen = torch.Generator().manual_seed(2)
        self.blocks = nn.ModuleList(list(g.blocks) + [_Constant(torch.randn(16, generator=gen)) for _ in range(4)])

    def forward(self, idx):
        x = self.emb(idx)
        for b in self.blocks:
            x = b(x)
        return x


@pytest.mark.parametrize("alpha", [0.0, 0.25, 2.0])
def test_arithmetic_equals_the_real_forward_when_later_blocks_ignore_their_input(alpha):
    s = _Stack().eval()
    with torch.no_grad():
        x = residual_stream(s, IDX)
        with front_scaled(s.blocks, 2, alpha):
            xb = residual_stream(s, IDX)
    torch.testing.assert_close(arithmetic_stream(x, 2, alpha), xb, rtol=0, atol=1e-5)


def test_the_patch_is_removed_when_the_forward_raises():
    g = _model()
    with pytest.raises(RuntimeError, match="boom"):
        with front_scaled(g.blocks, 2, 0.5):
            raise RuntimeError("boom")
    assert all(len(b._forward_pre_hooks) == 0 for b in g.blocks)
    bad = torch.full((1, 8), 99)                              # a token id outside the vocabulary
    with pytest.raises(Exception):
        with front_scaled(g.blocks, 2, 0.5):
            g(bad)
    assert all(len(b._forward_pre_hooks) == 0 for b in g.blocks)


def test_arithmetic_stream_scales_only_the_front_sum():
    x = torch.randn(6, 2, 3, 4, dtype=torch.float64)
    a = arithmetic_stream(x, 2, 3.0)
    assert torch.equal(a[:2], x[:2])
    torch.testing.assert_close(a[2] - a[0], 3.0 * (x[2] - x[0]))
    torch.testing.assert_close(a[3:] - a[2:-1], x[3:] - x[2:-1])    # later summands as recorded


@pytest.mark.parametrize("m, alpha, match", [(0, 0.5, "m"), (5, 0.5, "m"), (2, -0.1, "alpha"), (2, float("nan"), "alpha")])
def test_bad_front_or_scale_is_refused_naming_the_parameter_before_any_hook(m, alpha, match):
    g = _model()
    with pytest.raises(ValueError, match=match):
        with front_scaled(g.blocks, m, alpha):
            pass
    assert all(len(b._forward_pre_hooks) == 0 for b in g.blocks)
    with pytest.raises((ValueError, ArgumentTypeError), match=match):
        arithmetic_stream(torch.zeros(6, 1, 1, 4), m, alpha)
