"""Tests of resdecay_lib.nn.hooks: capturing the residual stream, removing and replaying blocks."""
import pytest
import torch
import torch.nn as nn

from model_fixtures import TINY, HFLike, idx, no_hooks
from resdecay_lib.nn.hooks import patched_blocks, residual_stream, sublayer_stream
from resdecay_lib.nn.metrics import layer_change
from resdecay_lib.nn.models import ARCHS, build


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


# ----------------------------------------------------------------------------- capture



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


def test_sublayer_points_are_named_as_transformerlens_names_them():
    model = build("pre_ln", **TINY)
    x = idx()
    sub, blk = sublayer_stream(model, x), residual_stream(model, x)
    assert sub.names == ["blocks.0.hook_resid_pre", "blocks.0.hook_resid_mid", "blocks.1.hook_resid_pre",
                         "blocks.1.hook_resid_mid", "blocks.2.hook_resid_pre", "blocks.2.hook_resid_mid",
                         "blocks.2.hook_resid_post"]
    b = model.blocks[1]
    with torch.no_grad():
        torch.testing.assert_close(sub["blocks.1.hook_resid_mid"], blk[1] + b.attn(b.ln_1(blk[1])))
    assert torch.equal(sub["blocks.0.hook_resid_post"], blk[1]) and torch.equal(sub["blocks.2.hook_resid_post"], blk[3])
    assert len(sub.hook_dict) == 7 + 2          # every resid_post but the last is the next block's resid_pre
    with pytest.raises(KeyError, match=r"k = 0..2; got 'blocks.3.hook_resid_pre'"):
        sub["blocks.3.hook_resid_pre"]


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


# ----------------------------------------------------------------------------- the summing sink

def _cumulative_states(L1=5):
    g = torch.Generator().manual_seed(0)
    return (torch.randn(L1, 3, 4, 16, generator=g).cumsum(0) + 0.5).float()     # [L+1, B, T, D]


@pytest.mark.parametrize("use_kernel", [True, False], ids=["kernel-on-cpu", "torch-as-on-a-gpu"])
def test_sum_sink_gives_the_per_token_sums_and_the_summands_centred_squares(use_kernel, monkeypatch):
    import numpy as np
    from resdecay_lib.nn import hooks
    from resdecay_lib.nn.hooks import SumSink
    monkeypatch.setattr(SumSink, "use_kernel", use_kernel)
    x = _cumulative_states()
    sink = SumSink(5, copy_states=True)
    for k in range(5):
        state = x[k].clone()
        sink.put(k, state)
        state.mul_(-7.0)               # an in-place operation after the hook: a copied state is kept
    s, q, c, e, shape = sink.result()
    a = x.double().reshape(5, 12, 16).numpy()
    u = np.concatenate([a[:1], a[1:] - a[:-1]])
    u = u - u.mean(-1, keepdims=True)
    assert shape == (3, 4, 16)
    np.testing.assert_allclose(s, a.sum(-1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(q, (a * a).sum(-1), rtol=1e-12, atol=0)
    np.testing.assert_allclose(c, (a[:-1] * a[1:]).sum(-1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(e, (u * u).sum(-1), rtol=1e-12, atol=0)


@pytest.mark.parametrize("use_kernel", [True, False], ids=["kernel-on-cpu", "torch-as-on-a-gpu"])
def test_sum_sink_holding_its_states_refuses_one_changed_in_place(use_kernel, monkeypatch):
    """A held state (not copied) that the model changes before the next state arrives is caught
    by its version counter: the sums would read the changed values."""
    from resdecay_lib.nn.hooks import StreamChangedInPlace, SumSink
    monkeypatch.setattr(SumSink, "use_kernel", use_kernel)
    x = _cumulative_states(3)
    sink = SumSink(3)
    state0, state1 = x[0].clone(), x[1].clone()
    sink.put(0, state0)
    sink.put(1, state1)
    state0.mul_(2.0)                   # state 0 is no longer held once state 1 has come: not seen
    state1.mul_(2.0)                   # what a block that writes into its input does
    with pytest.raises(StreamChangedInPlace, match="position 1 in place before position 2"):
        sink.put(2, x[2].clone())


@pytest.mark.parametrize("use_kernel", [True, False], ids=["kernel-on-cpu", "torch-as-on-a-gpu"])
def test_sum_sink_sees_a_held_state_changed_where_its_version_does_not_move(use_kernel, monkeypatch):
    """A write through ``.data`` (or a NumPy alias) does not move the version counter: the held
    state's sums, read again when the next state comes, must equal the recorded ones."""
    from resdecay_lib.nn.hooks import StreamChangedInPlace, SumSink
    monkeypatch.setattr(SumSink, "use_kernel", use_kernel)
    x = _cumulative_states(3)
    sink = SumSink(3)
    sink.put(0, x[0].clone())
    state1 = x[1].clone()
    sink.put(1, state1)
    version = state1._version
    state1.data[0, 0, 0] += 1.0                 # one coordinate of one token
    assert state1._version == version           # unseen by the version counter
    with pytest.raises(StreamChangedInPlace, match="position 1 in place before position 2"):
        sink.put(2, x[2].clone())


def test_sum_sink_takes_states_in_stream_order_only():
    from resdecay_lib.nn.hooks import SumSink
    sink = SumSink(3)
    sink.put(0, torch.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match="out of stream order"):
        sink.put(2, torch.randn(2, 3, 4))
    with pytest.raises(ValueError, match="changes shape"):
        sink.put(1, torch.randn(2, 3, 5))


def test_sum_sink_compiled_loop_equals_torchs_reductions_and_never_refuses_an_unchanged_state():
    """The compiled CPU loop and the torch path (as on a GPU) give the same sums to float64
    rounding, on widths that do and do not fill a vector register; and the held state's check,
    its sums taken again in the same loop, passes bit for bit on every state it holds."""
    import numpy as np
    from resdecay_lib.nn import hooks
    from resdecay_lib.nn.hooks import SumSink
    assert hooks._cpu_kernels() is not None          # numba is in requirements.txt
    g = torch.Generator().manual_seed(1)
    for D in (1, 3, 13, 64, 257):
        x = (torch.randn(8, 2, 5, D, generator=g).cumsum(0) * 3.0 + 1.0).float()
        sums = {}
        for use_kernel in (True, False):
            SumSink.use_kernel = use_kernel
            try:
                sink = SumSink(8)
                for k in range(8):
                    sink.put(k, x[k])                # held, unchanged: no refusal
                sums[use_kernel] = sink.result()
            finally:
                SumSink.use_kernel = True
        for a, b in zip(sums[True][:4], sums[False][:4]):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * D)


def test_sum_sink_without_numba_sums_with_torch(monkeypatch):
    import numpy as np
    from resdecay_lib.nn import hooks
    from resdecay_lib.nn.hooks import SumSink
    x = _cumulative_states()
    with_kernel = SumSink(5)
    for k in range(5):
        with_kernel.put(k, x[k])
    monkeypatch.setattr(hooks, "_KERNELS", [None])   # what _cpu_kernels records when numba is absent
    without = SumSink(5)
    for k in range(5):
        without.put(k, x[k])
    for a, b in zip(with_kernel.result()[:4], without.result()[:4]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- named sublayer steps

def test_sublayer_steps_are_named_as_transformerlens_names_what_each_adds():
    from resdecay_lib.nn.hooks import sublayer_steps
    assert sublayer_steps(2) == ["blocks.0.hook_attn_out", "blocks.0.hook_mlp_out",
                                 "blocks.1.hook_attn_out", "blocks.1.hook_mlp_out"]
    with pytest.raises(ValueError, match="n_blocks"):
        sublayer_steps(0)


def test_steps_by_kind_splits_a_curve_by_the_steps_names():
    import numpy as np
    from resdecay_lib.nn.hooks import steps_by_kind
    parts = steps_by_kind(np.array([10.0, 20.0, 11.0, 21.0, 12.0, 22.0]))     # att 1, mlp 1, att 2, ...
    assert parts["attention"].tolist() == [10.0, 11.0, 12.0] and parts["mlp"].tolist() == [20.0, 21.0, 22.0]
    per_seq = steps_by_kind(np.arange(8.0).reshape(2, 4))                     # along the last axis
    assert per_seq["attention"].tolist() == [[0.0, 2.0], [4.0, 6.0]]
    assert per_seq["mlp"].tolist() == [[1.0, 3.0], [5.0, 7.0]]


@pytest.mark.parametrize("bad", [[0.0, 1.0, 2.0], [], 1.0])
def test_steps_by_kind_refuses_an_odd_or_empty_number_of_steps(bad):
    from resdecay_lib.nn.hooks import steps_by_kind
    with pytest.raises(ValueError, match="even number"):
        steps_by_kind(bad)


def test_a_sublayer_streams_named_views_are_its_hook_points_stacked():
    from resdecay_lib.nn.hooks import SublayerStream
    s = SublayerStream(torch.arange(5.0).reshape(5, 1, 1, 1))                 # L = 2: pre, mid, pre, mid, post
    for view, name in ((s.block_inputs[:-1], "hook_resid_pre"), (s.after_attention, "hook_resid_mid"),
                       (s.after_mlp, "hook_resid_post")):
        assert torch.equal(view, torch.stack([s[f"blocks.{k}.{name}"] for k in range(2)])), name
