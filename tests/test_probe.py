"""Residual-stream capture and per-layer metrics (resdecay_lib.nn.probe)."""
import math

import numpy as np
import pytest
import torch
import torch.nn as nn

from resdecay_lib.nn.models import ARCHS, build
from resdecay_lib.nn.probe import LN_EPS, block_grad_norms, layer_change, residual_stream, sublayer_stream

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
    from resdecay_lib.nn.probe import profile_at_init
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
    from resdecay_lib.nn.probe import output_change_at_init
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


# ----------------------------------------------------------------------------- issue 21: the API

from resdecay_lib.nn import probe  # noqa: E402


def _zoo(L=6, seed=0):
    return build("pre_ln", n_layer=L, d_model=16, n_head=2, vocab_size=11, block_size=8, seed=seed,
                 device="cpu").eval()


def _assert_same_change(a, b, rtol):
    assert (a.n_sequences, a.n_tokens) == (b.n_sequences, b.n_tokens)
    np.testing.assert_array_equal(a.k, b.k)
    for m in a.METRICS:
        np.testing.assert_allclose(getattr(b, m), getattr(a, m), rtol=rtol, atol=0, err_msg=m)
        np.testing.assert_allclose(b.per_sequence[m], a.per_sequence[m], rtol=rtol, atol=1e-300, err_msg=m)


@pytest.mark.parametrize("use_numpy", [True, False], ids=["numpy-on-cpu", "torch-as-on-a-gpu"])
def test_metrics_only_measure_equals_the_stacked_computation_to_1e_10_relative(use_numpy, monkeypatch):
    # the sums differ only in the order of their float64 additions (about 1e-12 here)
    monkeypatch.setattr(probe._SumSink, "use_numpy", use_numpy)
    model, x = _zoo(), idx(B=7, T=8, seed=3)
    mask = (torch.rand(7, 8, generator=torch.Generator().manual_seed(4)) > 0.3).long()
    stream, full = probe.measure(model, x, mask, batch_size=3)
    none, fast = probe.measure(model, x, mask, batch_size=3, keep_stream=False)
    assert none is None and no_hooks(model)
    _assert_same_change(full, fast, rtol=1e-10)
    _assert_same_change(layer_change(stream, mask), fast, rtol=1e-10)


def test_metrics_only_measure_at_sublayer_granularity_equals_the_stacked_one():
    model, x = _zoo(L=4), idx(B=4, T=8)
    points = [b.resid_mid for b in model.blocks]
    sub, full = probe.measure_sublayers(model, x, None, list(model.blocks), points, batch_size=2)
    none, fast = probe.measure_sublayers(model, x, None, list(model.blocks), points, batch_size=2,
                                         keep_stream=False)
    assert none is None and len(fast.k) == 8 and isinstance(sub, probe.SublayerStream)
    _assert_same_change(full, fast, rtol=1e-10)


def test_metrics_only_measure_rejects_a_non_finite_stream_naming_the_state():
    model = HFLike(L=3)
    with torch.no_grad():
        model.layers[1].lin.bias.fill_(float("nan"))
    with pytest.raises(ValueError, match=r"finite.*state\(s\) \[2, 3\]"):
        probe.measure(model, {"input_ids": torch.zeros(2, 3, dtype=torch.long)}, blocks=list(model.layers),
                      keep_stream=False)


def test_metrics_only_measure_refuses_blocks_listed_out_of_stream_order():
    model = HFLike(L=3)
    with pytest.raises(RuntimeError, match="out of stream order.*keep_stream=True"):
        probe.measure(model, {"input_ids": torch.zeros(2, 3, dtype=torch.long)},
                      blocks=[model.layers[1], model.layers[0]], keep_stream=False)
    assert no_hooks(model)


def test_residual_stream_and_measure_take_a_hugging_face_batch_encoding_and_measure_masks_its_padding():
    hf = pytest.importorskip("hf_tiny")
    from resdecay_lib.nn.pretrained import blocks_of
    model, tok = hf.tiny("gpt2"), hf.tiny_tokenizer()
    tok.pad_token = "<s>"
    enc = tok(["Shall I compare thee to a summer's day?", "Rough winds"], padding=True, return_tensors="pt")
    assert not isinstance(enc, dict) and int(enc["attention_mask"].sum()) < enc["attention_mask"].numel()
    blocks = blocks_of(model)
    stream = probe.residual_stream(model, enc, blocks)
    assert stream.shape[:3] == (len(blocks) + 1,) + tuple(enc["input_ids"].shape)
    _, by_default = probe.measure(model, enc, blocks=blocks)
    _, masked = probe.measure(model, dict(enc), enc["attention_mask"], blocks=blocks)
    _, every = probe.measure(model, dict(enc), torch.ones_like(enc["input_ids"]), blocks=blocks)
    assert by_default.n_tokens == int(enc["attention_mask"].sum()) < every.n_tokens
    np.testing.assert_array_equal(by_default.omega_sq, masked.omega_sq)
    _, fast = probe.measure(model, enc, blocks=blocks, keep_stream=False)
    _assert_same_change(by_default, fast, rtol=1e-10)


def test_layer_change_repr_is_one_line_with_depth_sequences_and_the_omega_range():
    ch = layer_change(residual_stream(_zoo(), idx(B=3, T=8)))
    text = repr(ch)
    assert "\n" not in text and len(text) < 160
    assert text.startswith("LayerChange(L=6, 3 sequences, 24 tokens, omega_sq ")
    assert f"{ch.omega_sq.min():.3g} to {ch.omega_sq.max():.3g} over k = 1..6" in text


def test_layer_change_to_dict_is_json_ready_and_to_frame_builds_a_frame_indexed_by_k(monkeypatch):
    import json
    import sys
    import types
    ch = layer_change(residual_stream(_zoo(L=4), idx(B=3, T=8)))
    d = json.loads(json.dumps(ch.to_dict()))
    assert d["k"] == [1, 2, 3, 4] and d["n_sequences"] == 3 and d["n_tokens"] == 24
    assert d["omega_sq"] == ch.omega_sq.tolist() and d["norm_se"] == ch.norm_se.tolist()
    assert set(d) == {"k", "n_sequences", "n_tokens"} | set(ch.METRICS) | {m + "_se" for m in ch.METRICS}

    class Frame(dict):                         # pandas' DataFrame, as far as to_frame uses it
        attrs: dict

        def set_index(self, key):
            self.index, self.attrs = self.pop(key), {}
            return self
    monkeypatch.setitem(sys.modules, "pandas", types.SimpleNamespace(DataFrame=Frame))
    frame = ch.to_frame()
    assert frame.index == [1, 2, 3, 4] and frame["omega_sq"] == d["omega_sq"]
    assert frame.attrs == {"n_sequences": 3, "n_tokens": 24}
    monkeypatch.setitem(sys.modules, "pandas", None)       # not installed
    with pytest.raises(ImportError, match="pip install pandas"):
        ch.to_frame()


def test_exponent_gives_the_fit_with_its_interval_and_the_theorems_exponent_in_the_convention_rho_chooses():
    from resdecay_lib.stats import fit
    from resdecay_lib.analysis import training_analysis as results
    model, x = _zoo(L=8), idx(B=6, T=8)
    stream, ch = probe.measure(model, x)
    e = probe.exponent(ch, k_min=2, level=0.9, stream=stream)
    f = fit.power_law(ch.k, ch.per_sequence["omega_sq"], k_min=2, n_boot=2000, level=0.9, seed=0)
    assert (e.exponent, e.lo, e.hi, e.k_min, e.k_max, e.n_sequences) == (f.exponent, f.lo, f.hi, 2, 8, 6)
    rho = results.rho(probe.gram(stream))
    assert e.rho == rho and e.embedding_counted == results.convention(rho)
    assert e.reference == results.reference_exponent(2, 8, e.embedding_counted)
    assert e.convention == ("embedding-counted" if e.embedding_counted else "seed")
    assert probe.exponent(ch, k_min=2, level=0.9, gram=probe.gram(stream)) == e
    assert "\n" not in str(e) and e.reading in str(e) and "theorem" in e.reading


def test_exponent_reads_the_gram_of_the_kept_tokens_when_a_mask_is_given():
    from resdecay_lib.analysis import training_analysis as results
    model, x = _zoo(L=6), idx(B=4, T=8)
    mask = torch.ones(4, 8)
    mask[:, 0] = 0
    stream, ch = probe.measure(model, x, mask)
    e = probe.exponent(ch, stream=stream, mask=mask)
    assert e.rho == results.rho(probe.gram(stream[:, mask.bool()]))


def test_exponent_without_a_gram_or_a_stream_needs_the_convention_and_then_uses_it():
    ch = layer_change(residual_stream(_zoo(L=6), idx(B=4, T=8)))
    with pytest.raises(ValueError, match="embedding_counted"):
        probe.exponent(ch)
    e = probe.exponent(ch, k_min=3, k_max=6, embedding_counted=False)
    from resdecay_lib.analysis import training_analysis as results
    assert (e.convention, e.rho, e.k_min, e.k_max) == ("seed", None, 3, 6)
    assert e.reference == results.reference_exponent(3, 6, False)


def test_exponent_reading_says_where_the_theorems_exponent_lies():
    def E(lo, hi, ref):
        return probe.Exponent(-0.5, lo, hi, 0.95, ref, "seed", False, None, 2, 8, 16)
    assert E(-0.6, -0.4, -0.5).reading.startswith("consistent")
    assert E(-0.6, -0.55, -0.5).reading.startswith("decays faster")
    assert E(-0.45, -0.4, -0.5).reading.startswith("decays slower")
    assert E(float("nan"), float("nan"), -0.5).reading.startswith("no interval")


class _Out:
    def __init__(self, tty):
        self.tty, self.text = tty, ""

    def isatty(self):
        return self.tty

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_progress_is_periodic_lines_in_a_log_a_tqdm_bar_on_a_terminal_and_tqdm_auto_in_jupyter(monkeypatch):
    import tqdm
    log = _Out(tty=False)
    monkeypatch.setattr(probe, "PROGRESS_EVERY_S", 0.0)
    bar = probe.progress_bar(range(3), 3, "run", None, file=log)
    for _ in bar:
        bar.set_postfix(loss="2.000")
    lines = log.text.splitlines()
    assert lines[0].startswith("run: 1/3 (33%), 0 s") and lines[-1].startswith("run: 3/3 (100%)")
    assert "loss 2.000" in lines[-1] and len(lines) == 3
    monkeypatch.setattr(probe, "PROGRESS_EVERY_S", 3600.0)       # a short loop in a log: silent
    quiet = _Out(tty=False)
    assert list(probe.progress_bar(range(3), 3, "run", True, file=quiet)) == [0, 1, 2] and quiet.text == ""
    term = probe.progress_bar(range(3), 3, "run", None, file=_Out(tty=True))
    assert isinstance(term, tqdm.std.tqdm) and not term.disable
    assert probe.progress_bar(range(3), 3, "run", False, file=_Out(tty=True)).disable
    monkeypatch.setattr(probe, "_in_jupyter", lambda: True)
    import tqdm.auto
    shown = probe.progress_bar(range(3), 3, "run", True)
    assert isinstance(shown, tqdm.auto.tqdm) and not shown.disable
    assert probe.progress_bar(range(3), 3, "run", None).disable   # a notebook's stored outputs stay as they were


# ----------------------------------------------------------------------------- the Gram matrix of the summands

def test_gram_of_independent_summands_is_near_diagonal():
    g = torch.Generator().manual_seed(0)
    u = torch.randn(5, 8, 16, 256, generator=g)
    G = probe.gram(torch.cumsum(u, 0))
    assert G.shape == (5, 5)
    assert np.allclose(np.diag(G), 1.0, atol=0.05)  # variance 1 - 1/D after centring
    off = G[~np.eye(5, dtype=bool)]
    assert np.abs(off).max() < 5 / math.sqrt(8 * 16 * 256)  # ~5 standard errors of a correlation


# ----------------------------------------------------------------------------- one mask rule

def test_every_measurement_drops_a_sequence_with_no_token_and_raises_when_none_is_left():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4, 3, 5, 8, generator=g).cumsum(0)           # [L+1, B, T, D]
    mask = torch.ones(3, 5)
    mask[1] = 0                                                   # an empty text in a padded batch
    mask[2, 3:] = 0
    rest = x[:, [0, 2]]
    kept_mask = mask[[0, 2]]
    lc, lc_rest = probe.layer_change(x, mask=mask), probe.layer_change(rest, mask=kept_mask)
    assert lc.n_sequences == 2 and np.allclose(lc.omega_sq, lc_rest.omega_sq)
    rc, rc_rest = probe.rms_change(x, mask=mask), probe.rms_change(rest, mask=kept_mask)
    assert rc.per_sequence.shape == (2, 3) and np.allclose(rc.change, rc_rest.change)
    assert np.allclose(rc.change_se, rc_rest.change_se)
    assert np.allclose(probe.angular_distances(x, mask=mask), probe.angular_distances(rest, mask=kept_mask))
    for fn in (probe.layer_change, probe.rms_change, probe.angular_distances):
        with pytest.raises(ValueError, match="mask excludes every token"):
            fn(x, mask=torch.zeros(3, 5))
