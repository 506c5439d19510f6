"""Tiny random Hugging Face models and a tokenizer trained here (no download), shared by the
tests of resdecay_lib.nn.pretrained and resdecay_lib.analysis.pruning."""
import pytest
import torch

transformers = pytest.importorskip("transformers")

V, T = 300, 8   # V above the 256 byte-level symbols of the tiny tokenizer

TEXT = ("Shall I compare thee to a summer's day? Thou art more lovely and more temperate: "
        "Rough winds do shake the darling buds of May, And summer's lease hath all too short "
        "a date. ") * 40


def tiny(kind):
    """A tiny random model of one architecture, eval mode, seeded."""
    torch.manual_seed(0)
    tf = transformers
    if kind == "gpt2":
        cfg = tf.GPT2Config(n_layer=3, n_embd=32, n_head=2, vocab_size=V, n_positions=32,
                            bos_token_id=0, eos_token_id=0)
        return tf.GPT2LMHeadModel(cfg).eval()
    if kind == "llama":
        cfg = tf.LlamaConfig(num_hidden_layers=3, hidden_size=32, intermediate_size=64,
                             num_attention_heads=2, num_key_value_heads=2, vocab_size=V,
                             max_position_embeddings=32, bos_token_id=0, eos_token_id=0)
        return tf.LlamaForCausalLM(cfg).eval()
    if kind == "gemma3":
        cfg = tf.Gemma3TextConfig(num_hidden_layers=3, hidden_size=32, intermediate_size=64,
                                  num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                                  vocab_size=V, max_position_embeddings=32)
        return tf.Gemma3ForCausalLM(cfg).eval()
    if kind == "bert":
        cfg = tf.BertConfig(num_hidden_layers=3, hidden_size=32, intermediate_size=64,
                            num_attention_heads=2, vocab_size=V, max_position_embeddings=32)
        return tf.BertModel(cfg).eval()
    raise ValueError(kind)


def tiny_tokenizer():
    """A byte-level BPE of V tokens trained on TEXT, with a BOS token (no download)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers, processors
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator([TEXT], trainers.BpeTrainer(
        vocab_size=V, special_tokens=["<s>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>")


def ids(B=2):
    return torch.randint(1, V, (B, T), generator=torch.Generator().manual_seed(1))
