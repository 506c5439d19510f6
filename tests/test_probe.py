"""Residual-stream capture and per-layer metrics (resdecay_lib.probe)."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from resdecay_lib.models import ARCHS, build
from resdecay_lib.probe import LN_EPS, block_grad_norms, layer_change, residual_stream, sublayer_stream

TINY = dict(n_layer=3, d_model=16, n_head=2, vocab_size=11, block_size=8, device="cpu")


def idx(B=3, T=6, seed=0):
    return torch.randint(0, 11, (B, T), generator=torch.Generator().manual_seed(seed))


def no_hooks(model):
    return all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())


# ---- a module the probe has never seen: HF-like blocks (keyword input, tuple output)

class TupleBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, hidden_states, attention_mask=None):
        return (hidden_states + torch.tanh(self.lin(hidden_states)), "cache")


class HFLike(nn.Module):
    def __init__(self, d=8, L=4, vocab=7):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(TupleBlock(d) for _ in range(L))
        self.fail = False

    def forward(self, input_ids, attention_mask=None):
        h = self.emb(input_ids)
        for layer in self.layers:
            h = layer(hidden_states=h, attention_mask=attention_mask)[0]
            if self.fail:
                raise RuntimeError("boom")
        return h.sum(-1)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_stream_has_shape_L_plus_1_and_starts_at_the_embedding(arch):
    model = build(arch, **TINY)
    x = idx()
    s = residual_stream(model, x)
    width = 32 if arch == "resi_dual" else 16
    assert s.shape == (4, 3, 6, width) and s.dtype == torch.float32 and s.device.type == "cpu"
    assert not s.requires_grad
    emb = model.embed(x)
    torch.testing.assert_close(s[0, ..., :16], emb)
    with torch.no_grad():
        torch.testing.assert_close(s[-1], model.blocks[-1](model.blocks[-2](s[1])))


def test_probe_leaves_no_hooks_and_does_not_change_the_output():
    model = build("pre_ln", **TINY)
    x = idx()
    before = model(x)
    residual_stream(model, x)
    sublayer_stream(model, x)
    assert no_hooks(model)
    assert torch.equal(before, model(x))


def test_probe_leaves_no_hooks_when_the_forward_raises():
    model = HFLike()
    model.fail = True
    with pytest.raises(RuntimeError, match="boom"):
        residual_stream(model, {"input_ids": idx(T=4) % 7}, blocks=model.layers)
    assert no_hooks(model)


def test_unseen_module_with_keyword_inputs_and_tuple_outputs():
    model = HFLike()
    x = idx(T=5) % 7
    s = residual_stream(model, {"input_ids": x, "attention_mask": torch.ones_like(x)}, blocks=model.layers)
    assert s.shape == (5, 3, 5, 8)
    with torch.no_grad():
        h = model.emb(x)
        torch.testing.assert_close(s[0], h)
        for k, layer in enumerate(model.layers):
            h = layer(h)[0]
            torch.testing.assert_close(s[k + 1], h)


def test_sublayer_stream_interleaves_the_attention_step():
    model = build("pre_ln", **TINY)
    x = idx()
    sub, blk = sublayer_stream(model, x), residual_stream(model, x)
    assert sub.tensor.shape[0] == 7 and sub.n_blocks == 3
    assert torch.equal(sub.block_inputs, blk)
    assert torch.equal(sub.after_mlp, blk[1:])
    b = model.blocks[0]
    with torch.no_grad():
        torch.testing.assert_close(sub.after_attention[0], blk[0] + b.attn(b.ln_1(blk[0])))
    with pytest.raises(ValueError, match=r"2L\+1"):
        type(sub)(blk[:2])


def test_errors_name_the_problem():
    model = build("pre_ln", **TINY)
    other = build("pre_ln", **TINY)
    with pytest.raises(ValueError, match="not a submodule"):
        residual_stream(model, idx(), blocks=other.blocks)
    with pytest.raises(ValueError, match="empty"):
        residual_stream(model, torch.zeros(0, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="empty"):
        residual_stream(model, {})
    with pytest.raises(ValueError, match="at least one"):
        residual_stream(model, idx(), blocks=[])
    with pytest.raises(ValueError, match="at least two states"):
        layer_change(torch.zeros(1, 2, 3, 4))
    with pytest.raises(ValueError, match="mask"):
        layer_change(torch.randn(3, 2, 3, 4), mask=torch.ones(2, 4))
    with pytest.raises(ValueError, match="every token"):
        layer_change(torch.randn(3, 2, 3, 4), mask=torch.zeros(2, 3))
    assert no_hooks(model)


def naive(stream, mask):
    """Direct float64 computation, token by token (the definitions, no algebra)."""
    x = stream.double().numpy()
    L = x.shape[0] - 1
    out = {m: [] for m in ("omega_sq", "rel_update", "alignment", "angular", "influence", "norm")}
    for b in range(x.shape[1]):
        toks = np.flatnonzero(mask[b])
        if toks.size == 0:
            continue
        row = {m: np.zeros(L) for m in out}
        for k in range(L):
            a, c = x[k, b, toks], x[k + 1, b, toks]
            ln = lambda v: (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + LN_EPS)
            f = c - a
            na = np.linalg.norm(a, axis=-1)
            row["omega_sq"][k] = ((ln(c) - ln(a)) ** 2).mean(-1).mean()
            row["rel_update"][k] = (np.linalg.norm(f, axis=-1) / na).mean()
            row["alignment"][k] = ((a * f).sum(-1) / (na * np.linalg.norm(f, axis=-1))).mean()
            cos = (a * c).sum(-1) / (na * np.linalg.norm(c, axis=-1))
            row["angular"][k] = (np.arccos(np.clip(cos, -1, 1)) / np.pi).mean()
            row["influence"][k] = (1 - cos).mean()
            row["norm"][k] = na.mean()
        for m in out:
            out[m].append(row[m])
    return {m: np.array(v) for m, v in out.items()}


def test_layer_change_matches_the_definitions_with_a_mask():
    g = torch.Generator().manual_seed(0)
    stream = torch.randn(5, 4, 6, 10, generator=g).cumsum(0) + 0.3
    mask = torch.ones(4, 6, dtype=torch.bool)
    mask[1, 3:] = False
    mask[3] = False  # a sequence of padding only: dropped
    lc = layer_change(stream, mask=mask)
    ref = naive(stream, mask.numpy())
    assert lc.n_sequences == 3 and lc.n_tokens == 15
    np.testing.assert_array_equal(lc.k, [1, 2, 3, 4])
    for m, per_seq in ref.items():
        np.testing.assert_allclose(lc.per_sequence[m], per_seq, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(getattr(lc, m), per_seq.mean(0), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(getattr(lc, m + "_se"), per_seq.std(0, ddof=1) / np.sqrt(3), rtol=1e-8)
        assert getattr(lc, m).dtype == np.float64


def test_omega_sq_is_twice_one_minus_the_centred_cosine():
    # DESIGN.md's identity: ||LN(a) - LN(b)||^2 / d = 2 (1 - cos(a_c, b_c)) up to eps
    g = torch.Generator().manual_seed(1)
    stream = 100 * torch.randn(3, 2, 4, 32, generator=g)
    lc = layer_change(stream)
    x = stream.double()
    xc = x - x.mean(-1, keepdim=True)
    cos = torch.nn.functional.cosine_similarity(xc[:-1], xc[1:], dim=-1)
    np.testing.assert_allclose(lc.omega_sq, (2 * (1 - cos)).mean((1, 2)).numpy(), rtol=1e-6)


def test_layer_change_is_exact_for_tiny_changes_up_to_the_stated_bound():
    # the Gram route loses at most gamma_D (||a||^2 + ||b||^2 + 2|<a,b>|) to cancellation in
    # ||b - a||^2, gamma_D = D eps / (1 - D eps) (the classical dot-product bound)
    D = 64
    x0 = torch.randn(1, 2, 3, D, generator=torch.Generator().manual_seed(2))
    stream = torch.cat([x0, x0 + 1e-5 * x0.flip(-1)])
    x = stream.double()  # the exact change of the float32 states
    qa, qb = (x[0] ** 2).sum(-1), (x[1] ** 2).sum(-1)
    diff_sq = ((x[1] - x[0]) ** 2).sum(-1)
    gamma = D * np.finfo(float).eps / (1 - D * np.finfo(float).eps)
    rel_bound = (gamma * (qa + qb + 2 * (qa * qb).sqrt()) / diff_sq).max().item() / 2  # sqrt halves it
    r = (diff_sq.sqrt() / qa.sqrt()).mean().item()
    assert 5e-6 < r < 2e-5 and rel_bound < 1e-3
    assert layer_change(stream).rel_update[0] == pytest.approx(r, rel=rel_bound)


def test_block_grad_norms_match_backward_and_leave_grads_alone():
    model = build("post_ln", **TINY)
    x = idx()
    g = block_grad_norms(model, x)
    assert g.shape == (3,) and all(p.grad is None for p in model.parameters())
    logits = model(x)
    torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 11), x[:, 1:].reshape(-1)).backward()
    ref = [sum(float((p.grad.double() ** 2).sum()) for p in b.parameters()) ** 0.5 for b in model.blocks]
    np.testing.assert_allclose(g, ref, rtol=1e-10)


def test_profile_at_init_measures_each_seed_and_resi_duals_two_streams():
    import torch
    from resdecay_lib.probe import profile_at_init
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
    from resdecay_lib.models import build
    from resdecay_lib.probe import output_change_at_init
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
