"""Tests of resdecay_lib.analysis.init_analysis: the zoo at initialisation (Chapter 6)."""
import numpy as np
import pytest


def test_profile_at_init_measures_each_seed_and_resi_duals_two_streams():
    import torch
    from resdecay_lib.analysis.init_analysis import profile_at_init
    seeds = (0, 1)
    toks = {s: torch.randint(0, 32, (3, 8), generator=torch.Generator().manual_seed(s)) for s in seeds}
    kw = dict(n_layer=3, d_model=16, n_head=2, vocab_size=32, block_size=8)
    post = profile_at_init("post_ln", seeds, toks, **kw)
    dual = profile_at_init("resi_dual", seeds, toks, **kw)
    assert post["blk"].shape == (6, 3) and post["sub"].shape == (6, 6)
    assert post["emb_var"].shape == (2,) and post["inc_var"].shape == (2, 6) and post["grad"].shape == (2, 3)
    assert post["dual"].size == 0 and dual["dual"].shape == (6, 3)
    # ResiDual's x_a is Post-LN's stream at the same seed (Chapter 6 relies on it)
    assert np.array_equal(dual["blk"], post["blk"])


def test_output_change_at_init_is_the_final_norms_change_across_the_last_block():
    import torch
    from resdecay_lib.nn.models import build
    from resdecay_lib.analysis.init_analysis import output_change_at_init
    seeds = (0, 1)
    toks = {s: torch.randint(0, 32, (3, 8), generator=torch.Generator().manual_seed(s)) for s in seeds}
    kw = dict(d_model=16, n_head=2, vocab_size=32, block_size=8)
    got = output_change_at_init([1, 3], seeds, toks, **kw)
    assert got.shape == (6, 2) and np.all(got > 0)
    # independently: hook the last block of seed 1's 3-block model, apply its final LayerNorm
    m = build("pre_ln", 3, seed=101, device="cpu", **kw)
    seen = {}
    h = m.blocks[-1].register_forward_hook(lambda mod, args, out: seen.update(x=args[0], y=out))
    with torch.no_grad():
        m(toks[1])
        want = ((m.ln_f(seen["y"]).double() - m.ln_f(seen["x"]).double()) ** 2).mean(-1).mean(-1).numpy()
    h.remove()
    np.testing.assert_allclose(got[3:, 1], want, rtol=1e-6)
    with pytest.raises(ValueError, match="depths"):
        output_change_at_init([], seeds, toks, **kw)
