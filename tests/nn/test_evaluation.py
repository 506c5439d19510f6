"""Tests of resdecay_lib.nn.evaluation: the ablation losses of a trained model."""
import pytest
import torch

from resdecay_lib.nn import evaluation
from resdecay_lib.training import train

TINY = train.TrainConfig(arch="pre_ln", n_layer=2, d_model=16, n_head=2, block_size=16, batch_size=4,
                         steps=8, warmup=2, threads=1, eval_windows=6, measure_windows=4)


def test_ablation_hook_removes_the_block_and_leaves_no_hook():
    st = train.train(TINY)
    x = torch.randint(0, 80, (3, 16))
    y = torch.randint(0, 80, (3, 16))
    abl = evaluation.ablation_losses(st.model, x, y)
    assert len(abl["delta"]) == TINY.n_layer
    assert all(not b._forward_hooks and "forward" not in b.__dict__ for b in st.model.blocks)
    blocks = st.model.blocks
    keep = blocks[0]
    blocks[0] = torch.nn.Identity()  # removing a block by hand gives the same loss
    try:
        by_hand = evaluation.window_losses(st.model, x, y).mean()
    finally:
        blocks[0] = keep
    assert abl["loss"][0] == pytest.approx(by_hand, rel=1e-12)
