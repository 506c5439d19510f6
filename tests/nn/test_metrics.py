"""Per-layer metrics of a captured stream (resdecay_lib.nn.metrics)."""
import math

import numpy as np
import pytest
import torch

from resdecay_lib.maths.gaussian import LN_EPS
from resdecay_lib.nn import metrics
from resdecay_lib.nn.hooks import residual_stream
from resdecay_lib.nn.metrics import layer_change
from resdecay_lib.nn.models import build


def idx(B=3, T=6, seed=0):
    return torch.randint(0, 11, (B, T), generator=torch.Generator().manual_seed(seed))


def _zoo(L=6, seed=0):
    return build("pre_ln", n_layer=L, d_model=16, n_head=2, vocab_size=11, block_size=8, seed=seed,
                 device="cpu").eval()


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


def test_layer_change_repr_is_one_line_with_depth_sequences_and_the_omega_range():
    ch = layer_change(residual_stream(_zoo(), idx(B=3, T=8)))
    text = repr(ch)
    assert "\n" not in text and len(text) < 160
    assert text.startswith("LayerChange(L=6, 3 sequences, 24 tokens, omega_sq ")
    assert f"{ch.omega_sq.min():.3g} to {ch.omega_sq.max():.3g} over k = 1..6" in text


def test_layer_change_to_dict_is_json_ready_with_one_entry_per_k():
    import json
    ch = layer_change(residual_stream(_zoo(L=4), idx(B=3, T=8)))
    d = json.loads(json.dumps(ch.to_dict()))
    assert d["k"] == [1, 2, 3, 4] and d["n_sequences"] == 3 and d["n_tokens"] == 24
    assert d["omega_sq"] == ch.omega_sq.tolist() and d["norm_se"] == ch.norm_se.tolist()
    assert set(d) == {"k", "n_sequences", "n_tokens"} | set(ch.METRICS) | {m + "_se" for m in ch.METRICS}


# ----------------------------------------------------------------------------- the Gram matrix of the summands

def test_gram_of_independent_summands_is_near_diagonal():
    g = torch.Generator().manual_seed(0)
    u = torch.randn(5, 8, 16, 256, generator=g)
    G = metrics.gram(torch.cumsum(u, 0))
    assert G.shape == (5, 5)
    assert np.allclose(np.diag(G), 1.0, atol=0.05)  # variance 1 - 1/D after centring
    off = G[~np.eye(5, dtype=bool)]
    assert np.abs(off).max() < 5 / math.sqrt(8 * 16 * 256)  # ~5 standard errors of a correlation


def test_layer_change_carries_the_diagonal_of_the_gram_of_the_kept_tokens_as_summand_sq():
    g = torch.Generator().manual_seed(4)
    x = 3 * torch.randn(5, 3, 6, 12, generator=g).cumsum(0) + 1.0
    mask = torch.ones(3, 6)
    mask[0, 4:] = 0
    mask[2] = 0                                                   # a sequence of padding only: dropped
    for m in (None, mask):
        kept = x if m is None else x[:, m.bool()]
        np.testing.assert_allclose(metrics.layer_change(x, mask=m).summand_sq, np.diag(metrics.gram(kept)),
                                   rtol=1e-12, atol=0)


def test_change_from_sums_without_the_summands_leaves_summand_sq_none():
    x = torch.randn(3, 2, 4, 8, generator=torch.Generator().manual_seed(5)).double()
    flat = x.reshape(3, 8, 8)
    s, q, c, e = (v.reshape(-1, 2, 4).numpy() for v in metrics._token_sums(flat))
    assert metrics.change_from_sums(s, q, c, 8, None, LN_EPS).summand_sq is None
    with_e = metrics.change_from_sums(s, q, c, 8, None, LN_EPS, e=e)
    np.testing.assert_allclose(with_e.summand_sq, np.diag(metrics.gram(x)), rtol=1e-12, atol=0)


# ----------------------------------------------------------------------------- one mask rule

def test_every_measurement_drops_a_sequence_with_no_token_and_raises_when_none_is_left():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4, 3, 5, 8, generator=g).cumsum(0)           # [L+1, B, T, D]
    mask = torch.ones(3, 5)
    mask[1] = 0                                                   # an empty text in a padded batch
    mask[2, 3:] = 0
    rest = x[:, [0, 2]]
    kept_mask = mask[[0, 2]]
    lc, lc_rest = metrics.layer_change(x, mask=mask), metrics.layer_change(rest, mask=kept_mask)
    assert lc.n_sequences == 2 and np.allclose(lc.omega_sq, lc_rest.omega_sq)
    rc, rc_rest = metrics.rms_change(x, mask=mask), metrics.rms_change(rest, mask=kept_mask)
    assert rc.per_sequence.shape == (2, 3) and np.allclose(rc.change, rc_rest.change)
    assert np.allclose(rc.change_se, rc_rest.change_se)
    assert np.allclose(metrics.angular_distances(x, mask=mask), metrics.angular_distances(rest, mask=kept_mask))
    for fn in (metrics.layer_change, metrics.rms_change, metrics.angular_distances):
        with pytest.raises(ValueError, match="mask excludes every token"):
            fn(x, mask=torch.zeros(3, 5))
