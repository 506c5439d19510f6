"""The probe's own part (resdecay_lib.nn.probe): batched measurement, block gradients, the
exponent, the init-time profiles, and progress through its face; capture is tested in
tests/nn/test_hooks.py, the metrics in tests/nn/test_metrics.py."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from resdecay_lib.nn import hooks, progress
from resdecay_lib.nn.models import build
from model_fixtures import TINY, HFLike, idx, no_hooks
from resdecay_lib.nn.probe import block_grad_norms, layer_change, residual_stream




def test_block_grad_norms_match_backward_and_leave_grads_alone():
    model = build("post_ln", **TINY)
    x = idx()
    g = block_grad_norms(model, x)
    assert g.shape == (3,) and all(p.grad is None for p in model.parameters())
    logits = model(x)
    torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 11), x[:, 1:].reshape(-1)).backward()
    ref = [sum(float((p.grad.double() ** 2).sum()) for p in b.parameters()) ** 0.5 for b in model.blocks]
    np.testing.assert_allclose(g, ref, rtol=1e-10)


# ----------------------------------------------------------------------------- the API

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


@pytest.mark.parametrize("use_kernel", [True, False], ids=["kernel-on-cpu", "torch-as-on-a-gpu"])
def test_metrics_only_measure_equals_the_stacked_computation_to_1e_10_relative(use_kernel, monkeypatch):
    # the sums differ only in the order of their float64 additions (about 1e-12 here)
    monkeypatch.setattr(hooks.SumSink, "use_kernel", use_kernel)
    model, x = _zoo(), idx(B=7, T=8, seed=3)
    mask = (torch.rand(7, 8, generator=torch.Generator().manual_seed(4)) > 0.3).long()
    stream, full = probe.measure(model, x, mask, batch_size=3)
    none, fast = probe.measure(model, x, mask, batch_size=3, keep_stream=False)
    assert none is None and no_hooks(model)
    _assert_same_change(full, fast, rtol=1e-10)
    _assert_same_change(layer_change(stream, mask), fast, rtol=1e-10)


class _WritesIntoItsInput(nn.Module):
    """A block that halves its input in place after reading it (x += ... style code does this),
    through the tensor or through ``.data`` (which its version counter does not see)."""

    def __init__(self, d, through_data=False):
        super().__init__()
        self.lin, self.through_data = nn.Linear(d, d), through_data

    def forward(self, x):
        y = x + self.lin(x)
        (x.data if self.through_data else x).mul_(0.5)
        return y


class _InPlaceStack(nn.Module):
    def __init__(self, d=8, vocab=11, L=3, through_data=False):
        super().__init__()
        torch.manual_seed(0)
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(_WritesIntoItsInput(d, through_data) for _ in range(L))

    def forward(self, idx):
        x = self.emb(idx)
        for b in self.blocks:
            x = b(x)
        return x


@pytest.mark.parametrize("through_data", [False, True], ids=["in-place", "through-data"])
def test_metrics_only_measure_of_a_model_that_changes_its_stream_in_place_equals_the_stacked_one(through_data):
    """The sink holds each state without copying it; a model that writes into a held state is
    caught (by its version, or by its sums when the version does not move) and measured again
    with copies, so the metrics are still the stream's."""
    model = _InPlaceStack(through_data=through_data).eval()
    x = torch.randint(0, 11, (5, 6), generator=torch.Generator().manual_seed(1))
    stream, full = probe.measure(model, x, batch_size=2)
    _, fast = probe.measure(model, x, batch_size=2, keep_stream=False)
    _assert_same_change(full, fast, rtol=1e-10)
    assert no_hooks(model)


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


def test_exponent_gives_the_fit_with_its_interval_and_the_theorems_exponent_in_the_convention_rho_chooses():
    from resdecay_lib.stats import fit
    from resdecay_lib.analysis import training_analysis
    model, x = _zoo(L=8), idx(B=6, T=8)
    stream, ch = probe.measure(model, x)
    e = probe.exponent(ch, k_min=2, level=0.9, stream=stream)
    f = fit.power_law(ch.k, ch.per_sequence["omega_sq"], k_min=2, n_boot=2000, level=0.9, seed=0)
    assert (e.exponent, e.lo, e.hi, e.k_min, e.k_max, e.n, e.over) == (f.exponent, f.lo, f.hi, 2, 8, 6, "sequences")
    rho = training_analysis.rho(probe.gram(stream))
    assert e.rho == rho and e.embedding_counted == training_analysis.convention(rho)
    assert e.reference == training_analysis.reference_exponent(2, 8, e.embedding_counted)
    assert e.convention == ("embedding-counted" if e.embedding_counted else "seed")
    assert probe.exponent(ch, k_min=2, level=0.9, gram=probe.gram(stream)) == e
    assert "\n" not in str(e) and e.reading in str(e) and "theorem" in e.reading


def test_exponent_reads_the_gram_of_the_kept_tokens_when_a_mask_is_given():
    from resdecay_lib.analysis import training_analysis
    model, x = _zoo(L=6), idx(B=4, T=8)
    mask = torch.ones(4, 8)
    mask[:, 0] = 0
    stream, ch = probe.measure(model, x, mask)
    e = probe.exponent(ch, stream=stream, mask=mask)
    assert e.rho == training_analysis.rho(probe.gram(stream[:, mask.bool()]))


def test_exponent_without_a_gram_or_a_stream_needs_the_convention_and_then_uses_it():
    import dataclasses
    ch = layer_change(residual_stream(_zoo(L=6), idx(B=4, T=8)))
    ch = dataclasses.replace(ch, summand_sq=None)       # a LayerChange without the Gram's diagonal
    with pytest.raises(ValueError, match="embedding_counted is needed when neither gram nor stream is given"):
        probe.exponent(ch)
    e = probe.exponent(ch, k_min=3, k_max=6, embedding_counted=False)
    from resdecay_lib.analysis import training_analysis
    assert (e.convention, e.rho, e.k_min, e.k_max) == ("seed", None, 3, 6)
    assert e.reference == training_analysis.reference_exponent(3, 6, False)


# ----------------------------------------------------------------------------- rho from the sums

def _rho_of(change):
    from resdecay_lib.stats import exponents
    return exponents.rho(np.diag(change.summand_sq))


def _padded(B=6, T=8, seed=5):
    """A mask of real padding: sequence b keeps its first tokens, one sequence keeps none."""
    lengths = torch.randint(1, T + 1, (B,), generator=torch.Generator().manual_seed(seed))
    lengths[1] = 0
    return (torch.arange(T)[None] < lengths[:, None]).long()


@pytest.mark.parametrize("use_kernel", [True, False], ids=["kernel-on-cpu", "torch-as-on-a-gpu"])
@pytest.mark.parametrize("masking", ["every-token", "random-mask", "padding"])
def test_metrics_only_rho_equals_the_rho_of_the_streams_gram_to_1e_10_relative(use_kernel, masking, monkeypatch):
    from resdecay_lib.stats import exponents
    monkeypatch.setattr(hooks.SumSink, "use_kernel", use_kernel)
    model, x = _zoo(L=6), idx(B=6, T=8, seed=7)
    mask = {"every-token": None, "padding": _padded(),
            "random-mask": (torch.rand(6, 8, generator=torch.Generator().manual_seed(8)) > 0.4).long()}[masking]
    stream, full = probe.measure(model, x, mask, batch_size=4)
    _, fast = probe.measure(model, x, mask, batch_size=4, keep_stream=False)
    kept = stream if mask is None else stream[:, mask.bool()]
    G = probe.gram(kept)
    assert fast.summand_sq.shape == full.summand_sq.shape == (7,)
    np.testing.assert_allclose(fast.summand_sq, np.diag(G), rtol=1e-10, atol=0)
    np.testing.assert_allclose(full.summand_sq, np.diag(G), rtol=1e-10, atol=0)
    assert _rho_of(fast) == pytest.approx(exponents.rho(G), rel=1e-10, abs=0)
    assert _rho_of(full) == pytest.approx(exponents.rho(G), rel=1e-10, abs=0)


def test_metrics_only_rho_holds_at_sublayer_granularity_and_for_a_hugging_face_like_stack():
    model, x = _zoo(L=3), idx(B=4, T=8)
    points = [b.resid_mid for b in model.blocks]
    sub, _ = probe.measure_sublayers(model, x, None, list(model.blocks), points, batch_size=3)
    _, fast = probe.measure_sublayers(model, x, None, list(model.blocks), points, batch_size=3, keep_stream=False)
    np.testing.assert_allclose(fast.summand_sq, np.diag(probe.gram(sub.tensor)), rtol=1e-10, atol=0)
    hf = HFLike(L=3)
    enc = {"input_ids": idx(B=3, T=5) % 7, "attention_mask": _padded(B=3, T=5, seed=1)}
    stream, _ = probe.measure(hf, enc, blocks=list(hf.layers))
    _, fast = probe.measure(hf, enc, blocks=list(hf.layers), keep_stream=False)
    G = probe.gram(stream[:, enc["attention_mask"].bool()])      # the padding left out, as measure does
    np.testing.assert_allclose(fast.summand_sq, np.diag(G), rtol=1e-10, atol=0)


@pytest.mark.parametrize("masking", ["every-token", "padding"])
def test_exponent_of_a_metrics_only_change_chooses_the_convention_the_stream_chooses(masking):
    model, x = _zoo(L=8), idx(B=6, T=8)
    mask = None if masking == "every-token" else _padded()
    stream, full = probe.measure(model, x, mask)
    _, fast = probe.measure(model, x, mask, keep_stream=False)
    with_stream = probe.exponent(full, k_min=2, stream=stream, mask=mask)
    alone = probe.exponent(fast, k_min=2)
    assert alone.rho == pytest.approx(with_stream.rho, rel=1e-10, abs=0)
    assert (alone.convention, alone.embedding_counted, alone.reference, alone.k_min, alone.k_max) == \
        (with_stream.convention, with_stream.embedding_counted, with_stream.reference, 2, 8)
    assert alone.exponent == pytest.approx(with_stream.exponent, rel=1e-8)
    assert probe.exponent(full, k_min=2).rho == pytest.approx(with_stream.rho, rel=1e-10, abs=0)


def test_exponent_of_a_metrics_only_change_lets_an_explicit_convention_win_and_still_reports_rho():
    _, fast = probe.measure(_zoo(L=6), idx(B=4, T=8), keep_stream=False)
    chosen = probe.exponent(fast, k_min=2)
    forced = probe.exponent(fast, k_min=2, embedding_counted=not chosen.embedding_counted)
    assert forced.embedding_counted is (not chosen.embedding_counted) and forced.rho == chosen.rho


def test_exponent_of_a_change_without_summand_sq_raises_and_one_with_a_zero_summand_names_it():
    import dataclasses
    _, fast = probe.measure(_zoo(L=6), idx(B=4, T=8), keep_stream=False)
    with pytest.raises(ValueError, match="embedding_counted is needed when neither gram nor stream is given"):
        probe.exponent(dataclasses.replace(fast, summand_sq=None))
    zero = fast.summand_sq.copy()
    zero[3] = 0.0                                        # a removed block adds nothing
    with pytest.raises(ValueError, match=r"summand_sq must hold L\+1 = 7 positive variances.*embedding_counted"):
        probe.exponent(dataclasses.replace(fast, summand_sq=zero))
    e = probe.exponent(dataclasses.replace(fast, summand_sq=zero), embedding_counted=False)
    assert (e.convention, e.rho) == ("seed", None)


def test_summand_sq_is_left_out_of_the_repr_and_the_dict():
    stream, full = probe.measure(_zoo(L=4), idx(B=3, T=8))
    assert "summand" not in repr(full) and "summand_sq" not in full.to_dict()


def test_exponent_reading_says_where_the_theorems_exponent_lies():
    def E(lo, hi, ref):
        return probe.Exponent(-0.5, lo, hi, 0.95, ref, False, None, 2, 8, 16)
    assert E(-0.6, -0.4, -0.5).reading.startswith("consistent")
    assert E(-0.6, -0.55, -0.5).reading.startswith("decays faster")
    assert E(-0.45, -0.4, -0.5).reading.startswith("decays slower")
    assert E(None, None, -0.5).reading.startswith("no interval")     # one sequence: no interval


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
    monkeypatch.setattr(progress, "PROGRESS_EVERY_S", 0.0)
    bar = probe.progress_bar(range(3), 3, "run", None, file=log)
    for _ in bar:
        bar.set_postfix(loss="2.000")
    lines = log.text.splitlines()
    assert lines[0].startswith("run: 1/3 (33%), 0 s") and lines[-1].startswith("run: 3/3 (100%)")
    assert "loss 2.000" in lines[-1] and len(lines) == 3
    monkeypatch.setattr(progress, "PROGRESS_EVERY_S", 3600.0)       # a short loop in a log: silent
    quiet = _Out(tty=False)
    assert list(probe.progress_bar(range(3), 3, "run", True, file=quiet)) == [0, 1, 2] and quiet.text == ""
    term = probe.progress_bar(range(3), 3, "run", None, file=_Out(tty=True))
    assert isinstance(term, tqdm.std.tqdm) and not term.disable
    assert probe.progress_bar(range(3), 3, "run", False, file=_Out(tty=True)).disable
    monkeypatch.setattr(progress, "_in_jupyter", lambda: True)
    import tqdm.auto
    shown = probe.progress_bar(range(3), 3, "run", True)
    assert isinstance(shown, tqdm.auto.tqdm) and not shown.disable
    assert probe.progress_bar(range(3), 3, "run", None).disable   # a notebook's stored outputs stay as they were
