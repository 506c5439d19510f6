"""Tests of resdecay_lib.nn.hooks: removing and replaying blocks."""
import pytest
import torch

from resdecay_lib.nn.hooks import patched_blocks


class Block(torch.nn.Module):
    def __init__(self, scale, extra=False):
        super().__init__()
        self.scale, self.extra = scale, extra

    def forward(self, x, hidden_states=None):
        out = x + self.scale * x
        return (out, "attn") if self.extra else out


def stack(blocks, x):
    for b in blocks:
        x = b(x)
        x = x[0] if isinstance(x, tuple) else x
    return x


def test_a_removed_block_returns_its_input_and_is_restored_after():
    blocks = torch.nn.ModuleList([Block(1.0), Block(2.0), Block(3.0)])
    x = torch.ones(2)
    with patched_blocks(blocks, removed={1}):
        assert torch.equal(stack(blocks, x), x * 2 * 4)
    assert torch.equal(stack(blocks, x), x * 2 * 3 * 4)
    assert all("forward" not in b.__dict__ for b in blocks)


def test_a_removed_block_keeps_its_output_format_and_a_replayed_one_returns_its_record():
    blocks = torch.nn.ModuleList([Block(1.0, extra=True), Block(2.0, extra=True)])
    x = torch.ones(2)
    with patched_blocks(blocks, removed={1}, replay={0: (torch.full((2,), 7.0), "attn")},
                        formats={1: ("attn",)}):
        assert blocks[1](x) == (x, "attn")
        assert torch.equal(blocks[1](hidden_states=x)[0], x)
        assert torch.equal(stack(blocks, x), torch.full((2,), 7.0))


def test_blocks_are_restored_when_the_forward_raises():
    blocks = torch.nn.ModuleList([Block(1.0), Block(2.0)])
    with pytest.raises(RuntimeError):
        with patched_blocks(blocks, removed={0, 1}):
            raise RuntimeError("a forward failed")
    assert all("forward" not in b.__dict__ for b in blocks)
