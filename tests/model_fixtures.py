"""What the tests of capture (tests/nn/test_hooks.py) and of the probe (tests/nn/test_probe.py) share:
a tiny zoo configuration, token ids, a check that no hook is left, and a module the probe has
never seen (Hugging Face-like blocks: keyword input, tuple output)."""
import torch
import torch.nn as nn


TINY = dict(n_layer=3, d_model=16, n_head=2, vocab_size=11, block_size=8, device="cpu")


def idx(B=3, T=6, seed=0):
    return torch.randint(0, 11, (B, T), generator=torch.Generator().manual_seed(seed))


def no_hooks(model):
    return all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())


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
