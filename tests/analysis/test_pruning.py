"""Tests of resdecay_lib.analysis.pruning (skipping and removing blocks, rankings) on tiny random
Hugging Face models built here, and of the probe's metrics the rankings read."""
import math

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from resdecay_lib.analysis import pruning  # noqa: E402
from resdecay_lib.nn import pretrained as P  # noqa: E402
from resdecay_lib.nn import probe  # noqa: E402
from hf_tiny import TEXT, tiny, tiny_tokenizer  # noqa: E402


def packaged(kind):
    return P._finish(f"tiny-{kind}", tiny(kind), tiny_tokenizer(), "pre_ln", "test", "here")


def sample(pre, n_seq=3, n_tokens=10):
    return P.sample_inputs(pre.tokenizer, TEXT, n_seq, n_tokens)


def bypassed_forward(pre, inputs, removed):
    """Reference: one full forward in which each removed block's output is replaced by its
    input (a forward hook), nothing replayed."""
    hooks = []
    for k in removed:
        def hook(m, args, kwargs, out):
            x = args[0] if args else kwargs["hidden_states"]
            return x if isinstance(out, torch.Tensor) else (x,) + tuple(out[1:])
        hooks.append(pre.blocks[k - 1].register_forward_hook(hook, with_kwargs=True))
    try:
        with torch.no_grad():
            return pruning._hidden(pre, inputs)
    finally:
        for h in hooks:
            h.remove()


@pytest.mark.parametrize("kind", ["llama", "gemma3", "gpt2", "bert"])
def test_replayed_removal_equals_a_full_forward_with_the_blocks_bypassed(kind):
    pre = packaged(kind)
    inputs, mask = sample(pre)
    sets = [(2,), (1, 3), (3,)]
    c = pruning.removal_costs(pre, inputs, mask, sets, batch_size=2)
    kind_ = pruning.cost_kind(pre)
    ref = pruning._values(pre, kind_, bypassed_forward(pre, inputs, []), inputs, mask)
    for i, s in enumerate(sets):
        v = pruning._values(pre, kind_, bypassed_forward(pre, inputs, s), inputs, mask,
                      ref if kind_ == "embedding" else None)
        np.testing.assert_allclose(c.value[i], v, rtol=1e-6, atol=1e-7)
    assert c.kind == ("embedding" if kind == "bert" else "next_token")
    # no patched forward outlives the call
    assert all("forward" not in b.__dict__ for b in pre.blocks)


def test_next_token_value_is_the_models_own_masked_cross_entropy():
    pre = packaged("llama")
    inputs, mask = sample(pre)
    c = pruning.skip_costs(pre, inputs, mask)
    with torch.no_grad():
        logits = pre.model(**inputs).logits
    nll = torch.nn.functional.cross_entropy(logits[:, :-1].transpose(1, 2), inputs["input_ids"][:, 1:],
                                            reduction="none")
    w = mask[:, 1:].float()
    np.testing.assert_allclose(c.base, ((nll * w).sum(1) / w.sum(1)).numpy(), rtol=1e-5)


def test_a_block_that_adds_nothing_costs_nothing_to_skip():
    pre = packaged("llama")
    with torch.no_grad():
        pre.blocks[1].self_attn.o_proj.weight.zero_()
        pre.blocks[1].mlp.down_proj.weight.zero_()
    inputs, mask = sample(pre)
    c = pruning.skip_costs(pre, inputs, mask)
    assert np.all(c.increase[1] == 0)
    assert np.all(np.abs(c.increase[[0, 2]]).sum(1) > 0)


def test_removal_costs_rejects_bad_sets():
    pre = packaged("llama")
    inputs, mask = sample(pre)
    for sets, match in (([], "non-empty"), ([(0,)], "from 1 to L = 3"), ([(4,)], "from 1 to L = 3"),
                        ([(1, 2, 3)], "every block"), ([(2, 2)], "distinct")):
        with pytest.raises(ValueError, match=match):
            pruning.removal_costs(pre, inputs, mask, sets)
    with pytest.raises(ValueError, match="mask"):
        pruning.removal_costs(pre, inputs, mask[:1], [(1,)])


def test_nested_sets_remove_the_least_important_first_ties_deepest_first():
    assert pruning.nested_sets([3.0, 1.0, 2.0, 1.0], 3) == [(4,), (2, 4), (2, 3, 4)]
    with pytest.raises(ValueError, match="n_max"):
        pruning.nested_sets([1.0, 2.0], 2)


def test_gromov_sets_pick_the_run_whose_ends_are_closest():
    L = 5
    d = np.ones((L + 1, L + 1))
    d[2, 3] = 0.1           # block 3 alone
    d[1, 3] = 0.2           # blocks 2-3
    d[2, 5] = 0.05          # blocks 3-5 (the last three)
    d = np.minimum(d, d.T)
    np.fill_diagonal(d, 0)
    assert pruning.gromov_sets(d, 3) == [(3,), (2, 3), (3, 4, 5)]
    with pytest.raises(ValueError, match="n_max"):
        pruning.gromov_sets(d, 5)


def test_predicts_cost_ranks_a_perfect_score_at_one_and_its_reverse_at_minus_one():
    rng = np.random.default_rng(0)
    B, L = 12, 6
    inc = np.arange(1, L + 1)[None] + 0.01 * rng.standard_normal((B, L))
    skip = pruning.RemovalCost("next_token", tuple((k,) for k in range(1, L + 1)), np.zeros(B), inc.T.copy())
    scores = {"same": inc, "reverse": -inc, "deepest": np.broadcast_to(-np.arange(1.0, L + 1), (B, L))}
    corr, diff = pruning.predicts_cost(scores, skip, n_boot=200, reference="same")
    assert corr["same"].rho == 1 and corr["reverse"].rho == -1 and corr["deepest"].rho == -1
    assert diff["same"].lo == diff["same"].hi == 0 and diff["reverse"].lo == diff["reverse"].rho == 2
    with pytest.raises(ValueError, match="shape"):
        pruning.predicts_cost({"x": inc[:, :3]}, skip)


def test_noise_band_is_two_standard_errors_of_the_intact_loss():
    base = np.array([1.0, 2.0, 3.0, 4.0])
    band = 2 * base.std(ddof=1) / 2
    value = np.stack([base + 0.5 * band, base + 1.5 * band, base + 3 * band])
    curve = pruning.RemovalCost("next_token", ((1,), (1, 2), (1, 2, 3)), base, value)
    assert pruning.leaves_noise_band(curve) == 2
    assert pruning.leaves_noise_band(pruning.RemovalCost("next_token", ((1,),), base, value[:1])) is None


def test_reader_gains_are_the_next_blocks_input_norm_weights_and_the_final_norm():
    pre = packaged("llama")
    with torch.no_grad():
        for i, b in enumerate(pre.blocks):
            b.input_layernorm.weight.fill_(1.0 + i)
        pre.body.norm.weight.fill_(7.0)
    g = pruning.reader_gains(pre)
    eps = pre.model.config.rms_norm_eps
    np.testing.assert_allclose(g[:, 0], np.array([2.0, 3.0, 7.0]) / math.sqrt(1 + eps), rtol=1e-6)
    with pytest.raises(ValueError, match="read the stream itself"):
        pruning.reader_gains(packaged("bert"))


def test_rms_change_matches_its_definition_with_and_without_gains():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 2, 5, 6, generator=g).cumsum(0)
    gains = np.abs(np.random.default_rng(1).standard_normal((3, 6))) + 0.5
    mask = torch.ones(2, 5)
    mask[0, :2] = 0
    for gg in (None, gains):
        ch = probe.rms_change(x, gg, mask, eps=1e-6)
        xd = x.double().numpy()
        u = xd / np.sqrt((xd ** 2).mean(-1, keepdims=True) + 1e-6)
        w = np.ones((3, 6)) if gg is None else gg ** 2
        per_tok = ((u[1:] - u[:-1]) ** 2 * w[:, None, None, :]).mean(-1)      # [L, B, T]
        m = mask.numpy()
        per_seq = (per_tok * m[None]).sum(-1).T / m.sum(1)[:, None]
        np.testing.assert_allclose(ch.per_sequence, per_seq, rtol=1e-10)
        assert ch.with_gain == (gg is not None)
    with pytest.raises(ValueError, match="gains"):
        probe.rms_change(x, gains[:2], mask)
    raw = probe.rms_change(x, None, None, normalise=False)       # a Post-LN reader: the stream itself
    xd = x.double().numpy()
    np.testing.assert_allclose(raw.per_sequence, ((xd[1:] - xd[:-1]) ** 2).mean(-1).mean(-1).T, rtol=1e-10)


def test_angular_distances_match_the_pairwise_token_mean():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 2, 3, 5, generator=g)
    d = probe.angular_distances(x)
    xd = x.double().numpy().reshape(4, -1, 5)
    for i in range(4):
        for j in range(4):
            cos = (xd[i] * xd[j]).sum(-1) / (np.linalg.norm(xd[i], axis=-1) * np.linalg.norm(xd[j], axis=-1))
            want = 0 if i == j else (np.arccos(np.clip(cos, -1, 1)) / np.pi).mean()
            assert abs(d[i, j] - want) < 1e-10
    lc = probe.layer_change(x)
    np.testing.assert_allclose(np.diag(d, 1), lc.angular, rtol=1e-8)


def test_skip_trend_is_minus_one_when_later_blocks_cost_less_and_leaves_block_1_out():
    B, L = 8, 6
    rng = np.random.default_rng(3)
    inc = np.array([9.0, 5, 4, 3, 2, 1])[None] + 0.01 * rng.standard_normal((B, L))
    skip = pruning.RemovalCost("next_token", tuple((k,) for k in range(1, L + 1)), np.zeros(B), inc.T.copy())
    t = pruning.skip_trend(skip, n_boot=200)
    assert t.rho == -1 and t.hi == -1
    inc[:, 0] = 0.0                                  # block 1 does not enter the trend
    skip = pruning.RemovalCost("next_token", skip.sets, np.zeros(B), inc.T.copy())
    assert pruning.skip_trend(skip, n_boot=200).rho == -1
    assert pruning.skip_trend(skip, k_min=1, n_boot=200).rho > -1


def test_the_chapter_9_figure_kinds_draw_one_panel_per_model_and_reject_empty_input():
    from resdecay_lib.book import plots
    k = np.arange(1, 7)
    fig = plots.skip_costs({"a": (k, np.array([3, 0.1, -0.01, 0.2, 0.1, 1.0]), np.full(6, 0.05), "nats"),
                            "b": (k, np.ones(6), np.full(6, 0.1), "1 - cos")})
    assert len(fig.axes) == 2
    plots.close(fig)
    fig = plots.pruning_curves({"a": ({r: (np.array([1 / 6, 2 / 6]), np.array([0.1, 0.5])) for r in pruning.RANKINGS},
                                      0.2, "nats")})
    assert len(fig.axes) == 1 and len(fig.axes[0].lines) == len(pruning.RANKINGS) + 1
    plots.close(fig)
    fig = plots.norm_readings({"a": {"LN": (k, 1 / k), "RMS": (k, 2 / k)}})
    assert len(fig.axes[0].lines) == 2
    plots.close(fig)
    for f in (plots.skip_costs, plots.pruning_curves, plots.norm_readings):
        with pytest.raises(ValueError, match="empty"):
            f({})
