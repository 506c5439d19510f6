"""The published anchors beside the theorem and the book (resdecay_lib.analysis.anchors)."""
import json
import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from scipy import special
from scipy import stats as sps

from resdecay_lib.analysis import anchors
from resdecay_lib.analysis import pretrained_analysis as pa
from resdecay_lib.maths import finite_d
from resdecay_lib.maths.theorem import omega_sq
from resdecay_lib.stats import inference

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "results" / "pretrained"


def _gaussian_stream(L, D, n, embedding_counted, seed):
    """Independent N(0, I_D) block outputs (and embedding, when counted): states [L+1, n, D]."""
    rng = np.random.default_rng(seed)
    summands = rng.standard_normal((L + 1, n, D))
    if not embedding_counted:
        summands[0] = 0.0            # the seed convention: block 1 reads an empty stream
    return np.cumsum(summands, axis=0)


# ----------------------------------------------------------------------------- the theorem

def test_theorem_rel_update_matches_the_exact_gaussian_expectation():
    L, D, n = 10, 256, 400
    x = _gaussian_stream(L, D, n, False, 0)
    X = np.linalg.norm(x[1:-1], axis=-1)                   # |x_k|, k = 2..L
    F = np.linalg.norm(x[2:] - x[1:-1], axis=-1)           # |f_k|
    r = F / X                                              # [L-1, n]
    # E|f|/|x| for independent |f|^2 ~ chi2_D and |x|^2 ~ (k-1) chi2_D, exactly:
    # E sqrt(chi2_D) E 1/sqrt(chi2_D) = Gamma((D+1)/2) Gamma((D-1)/2) / Gamma(D/2)^2
    g = math.exp(special.gammaln((D + 1) / 2) + special.gammaln((D - 1) / 2) - 2 * special.gammaln(D / 2))
    pred = anchors.theorem_rel_update(L, False)[1:] * g
    se = r.std(1, ddof=1) / math.sqrt(n)
    assert np.all(np.abs(r.mean(1) - pred) <= 4 * se)
    assert np.isnan(anchors.theorem_rel_update(L, False)[0])


def test_theorem_rel_update_is_one_over_root_k_with_the_embedding_counted():
    k = np.arange(1, 13)
    np.testing.assert_allclose(anchors.theorem_rel_update(12, True), 1 / np.sqrt(k), rtol=1e-15)
    np.testing.assert_allclose(anchors.theorem_rel_update(12, False)[1:], 1 / np.sqrt(k[1:] - 1), rtol=1e-15)


def test_theorem_angular_is_the_arccos_of_one_minus_half_the_change():
    for emb in (False, True):
        expr, k = anchors.derive_theorem_angular(emb)
        for kk in range(1 if emb else 2, 40):
            via_change = sp.acos(1 - omega_sq(kk, emb) / 2) / sp.pi
            assert abs(float(expr.subs(k, kk)) - float(via_change)) < 1e-14
    expr, k = anchors.derive_theorem_angular(False)
    assert sp.simplify(expr - sp.acos(sp.sqrt((k - 1) / k)) / sp.pi) == 0


def test_theorem_cosine_matches_the_exact_finite_width_expectation():
    # raw zero-mean Gaussians in D dimensions: E cos(x_k, x_{k+1}) is the mean of a sample
    # correlation with D pairs (Olkin and Pratt), of correlation rho_k
    L, D, n = 10, 64, 2000
    x = _gaussian_stream(L, D, n, True, 1)
    a, b = x[:-1], x[1:]
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))    # [L, n]
    for kk in range(1, L + 1):
        exact = float(finite_d.expected_cos_exact(finite_d.correlation_rho(kk, True), D))
        se = cos[kk - 1].std(ddof=1) / math.sqrt(n)
        assert abs(cos[kk - 1].mean() - exact) <= 4 * se


def test_theorem_angular_matches_a_wide_gaussian_stream():
    L, D, n = 12, 4096, 200
    x = _gaussian_stream(L, D, n, False, 2)
    a, b = x[1:-1], x[2:]                                  # blocks k = 2..L
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    ang = np.arccos(np.clip(cos, -1, 1)) / np.pi
    pred = anchors.theorem_angular(L, False)[1:]
    for i, kk in enumerate(range(2, L + 1)):
        rho = float(finite_d.correlation_rho(kk, False))
        # the theorem's value is the D -> infinity limit: allow the exact shift of E cos at width D
        # through arccos (slope 1/sin = sqrt(k)), and the curvature of arccos over the sample's
        # spread (|arccos''(rho)| = rho k^(3/2), times var(cos)/2), each doubled for higher orders
        shift = abs(float(finite_d.expected_cos_exact(rho, D)) - rho) * math.sqrt(kk)
        curvature = 0.5 * cos[i].var() * rho * kk**1.5
        allowance = 2 * (shift + curvature) / np.pi
        se = ang[i].std(ddof=1) / math.sqrt(n)
        assert abs(ang[i].mean() - pred[i]) <= 4 * se + allowance, (kk, ang[i].mean(), pred[i])


def test_theorem_values_apply_the_book_statistics_to_the_theorem_curves():
    L = 24
    v = anchors.theorem_values(L, False)
    k = np.arange(2, L + 1)
    r = 1 / np.sqrt(k - 1)
    late, early = k > L // 2, k <= L // 2
    assert v["csordas"] == pytest.approx(r[late].mean() / r[early].mean(), rel=1e-14)
    theta = np.arccos(np.sqrt((k - 1) / k))
    assert v["liu"] == pytest.approx(theta[late].mean() / theta[early].mean(), rel=1e-14)
    assert v["liu_mean_theta"] == pytest.approx(theta.mean(), rel=1e-14)
    assert v["shibata"] == pytest.approx(theta[-1] / theta[:-1].mean(), rel=1e-14)
    assert v["hu"] is None


# ----------------------------------------------------------------------------- Hu et al.'s rule

def test_effective_depth_takes_the_last_up_crossing_of_the_mean_cosine():
    m = np.array([-0.1, 0.2, -0.3, 0.1, 0.05])
    ed = anchors.effective_depth_cosine(m, m, m)
    assert (ed.ed, ed.L) == (2, 5) and ed.ratio == pytest.approx(3 / 5)
    # the three cosines are averaged before the rule: here only their mean crosses at l = 0
    ed = anchors.effective_depth_cosine([-0.3, 0.3, 0.2], [0.0, -0.1, 0.2], [0.0, -0.1, 0.2])
    assert ed.ed == 0


def test_effective_depth_is_undefined_for_the_theorem_zero_cosines():
    assert anchors.effective_depth_cosine(np.zeros(12), np.zeros(12), np.zeros(12)) is None


def test_hu_published_ratios_are_their_printed_values():
    pub = anchors.ANCHORS["hu"].published
    assert len(pub) == len(anchors.HU_COSINE_ED) == len(anchors.HU_COSINE_RATIO_PRINTED)
    for p, (model, L, ds, ed), printed in zip(pub, anchors.HU_COSINE_ED, anchors.HU_COSINE_RATIO_PRINTED):
        assert f"{p.value:.2f}" == f"{printed:.2f}", (model, ds)
        assert p.value == (ed + 1) / L


def test_every_unreadable_figure_says_so():
    for a in anchors.ANCHORS.values():
        assert a.published, a.key
        for p in a.published:
            assert p.source
            if p.value is None:
                assert "not readable" in p.note, (a.key, p.model)


# ----------------------------------------------------------------------------- the book's figures

@pytest.fixture(scope="module")
def records():
    recs = pa.load_records(RECORDS)
    if not recs:
        pytest.skip("no stored pretrained records")
    return recs


def _t95(values):
    v = np.asarray(values, float)
    n = v.size
    half = sps.t.ppf(0.975, n - 1) * v.std(ddof=1) / math.sqrt(n)
    return v.mean(), v.mean() - half, v.mean() + half


def test_book_values_reproduce_a_recomputation_from_the_json(records):
    values = anchors.book_values(records)
    for path in sorted(RECORDS.glob("*__*.json")):
        model, text = path.stem.split("__")
        raw = json.loads(path.read_text(encoding="utf-8"))
        L = raw["n_layer"]
        half = L // 2
        per_seq = {"csordas": [], "liu": [], "liu_mean_theta": [], "shibata": []}
        for r_row, a_row in zip(raw["change"]["rel_update"], raw["change"]["angular"]):
            # 0-based: block k is index k - 1; earlier half 2..L//2, later L//2+1..L
            per_seq["csordas"].append(sum(r_row[half:]) / (L - half) / (sum(r_row[1:half]) / (half - 1)))
            per_seq["liu"].append(sum(a_row[half:]) / (L - half) / (sum(a_row[1:half]) / (half - 1)))
            per_seq["liu_mean_theta"].append(math.pi * sum(a_row[1:]) / (L - 1))
            per_seq["shibata"].append(a_row[-1] / (sum(a_row[1:-1]) / (L - 2)))
        for key, vals in per_seq.items():
            iv = values[model, text][key]
            for got, want in zip((iv.mean, iv.lo, iv.hi), _t95(vals)):
                assert got == pytest.approx(want, rel=1e-12), (model, text, key)
        align = np.mean(raw["change"]["alignment"], axis=0)
        ups = [l for l in range(L - 1) if align[l] < 0 <= align[l + 1]]
        got = values[model, text]["hu_layer_only"]
        assert (got is None and not ups) or (got.ed == ups[-1] and got.ratio == (ups[-1] + 1) / L)
        assert values[model, text]["hu"] is None


def test_table_has_one_row_per_anchor_and_model(records):
    rows = anchors.table(records)
    models = {m for m, _ in records}
    assert {(r.anchor, r.model) for r in rows} == {(a, m) for a in anchors.ANCHORS for m in models}
    assert len(rows) == len(anchors.ANCHORS) * len(models)
    md = anchors.table_markdown(rows)
    assert md.count("\n") == len(rows) + 1


def test_qwen_coder_row_compares_with_liu_qwen(records):
    if ("qwen2.5-coder-0.5b", "shakespeare") not in records:
        pytest.skip("no Qwen2.5-Coder-0.5B record")
    row = next(r for r in anchors.table(records) if r.anchor == "liu" and r.model == "qwen2.5-coder-0.5b")
    v = anchors.book_values(records)["qwen2.5-coder-0.5b", "shakespeare"]
    assert f"{v['liu_mean_theta']:.3g}" in row.comparison and "no number readable" in row.comparison


# ----------------------------------------------------------------------------- wording

def _iv(mean, lo, hi):
    return inference.TInterval(mean, lo, hi, 0.01, 2.0, 16, 0.95)


@pytest.mark.parametrize("ratio, says", [
    (_iv(1.0, 0.9, 1.1), "consistent with uniform"), (_iv(0.7, 0.6, 0.8), "later blocks rotate less"),
    (_iv(1.3, 1.2, 1.4), "later blocks rotate more")])
def test_rotation_agreement_says_which_way_the_rotations_lean(ratio, says):
    text = anchors.rotation_agreement(ratio, _iv(0.3, 0.29, 0.31), 0.54)
    assert says in text and "0.54" in text and "no number readable" in text
    assert "Liu et al.: 0.25" in anchors.rotation_agreement(ratio, _iv(0.3, 0.29, 0.31), 0.54, published=0.25)


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("bad", [{}, None, [1, 2], {("m", "t"): {"gram": []}}, {"m": {}}])
def test_book_values_bad_records_name_the_parameter(bad):
    with pytest.raises(ValueError, match="records"):
        anchors.book_values(bad)


@pytest.mark.parametrize("fn, name", [(anchors.contribution_half_ratio, "rel_update"),
                                      (anchors.rotation_half_ratio, "angular"), (anchors.final_jump, "angular")])
def test_statistics_bad_input_names_the_parameter(fn, name):
    with pytest.raises(ValueError, match=name):
        fn([[0.1, float("nan"), 0.2, 0.3]])
    with pytest.raises(ValueError, match=name):
        fn("0.1")
    with pytest.raises(ValueError, match=name):
        fn([0.1, 0.2])                  # too few blocks for the halves


def test_effective_depth_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="one length"):
        anchors.effective_depth_cosine([0.1, 0.2], [0.1, 0.2, 0.3], [0.1, 0.2])
    with pytest.raises(ValueError, match="mlp_cos"):
        anchors.effective_depth_cosine([0.1, 0.2], [0.1, 2.0], [0.1, 0.2])


@pytest.mark.parametrize("L, emb, name", [(1, False, "L"), (2.0, False, "L"), (10, 1, "embedding_counted")])
def test_theorem_curves_bad_input_names_the_parameter(L, emb, name):
    with pytest.raises(ValueError, match=name):
        anchors.theorem_rel_update(L, emb)


# ----------------------------------------------------------------------------- measured on the models

def _sublayer_tensor(L=3, B=2, T=4, D=16, seed=0):
    import torch
    g = torch.Generator().manual_seed(seed)
    steps = torch.randn(2 * L + 1, B, T, D, generator=g, dtype=torch.float64)
    return steps.cumsum(0)


def test_sublayer_cosines_are_hu_et_al_s_three_cosines_per_block():
    import torch
    x = _sublayer_tensor()
    mask = torch.ones(2, 4, dtype=torch.long)
    mask[1, 3] = 0
    s = anchors.sublayer_cosine_sums(x, mask)
    keep = mask.bool()
    for l in range(3):
        h, mid, post = x[2 * l][keep], x[2 * l + 1][keep], x[2 * l + 2][keep]
        cos = lambda u, v: (torch.nn.functional.cosine_similarity(u, v, dim=-1)).sum().item()  # noqa: E731
        assert s["att"][l] == pytest.approx(cos(mid - h, h), rel=1e-12)
        assert s["mlp"][l] == pytest.approx(cos(post - mid, mid), rel=1e-12)
        assert s["layer"][l] == pytest.approx(cos(post - h, h), rel=1e-12)
    assert s["n"] == 7


def test_sublayer_cosines_refuse_a_stream_of_an_even_number_of_points():
    import torch
    with pytest.raises(ValueError, match=r"\[2L\+1, B, T, D\]"):
        anchors.sublayer_cosine_sums(_sublayer_tensor()[:-1], torch.ones(2, 4))


def test_the_identity_check_finds_the_exact_form_equal_to_the_measured_change_and_the_bound_holding():
    import torch
    x = _sublayer_tensor(L=4, D=64)[0::2]          # a block-level stream [L+1, B, T, D]
    x = x + 3.0 * torch.arange(x.shape[0], dtype=x.dtype)[:, None, None, None]   # token means != 0
    mask = torch.ones(2, 4, dtype=torch.long)
    out = anchors.identity_check_sums(x, mask)
    assert np.all(out["max_rel_err"] < 1e-9)
    assert np.all(out["max_over_bound"] <= 1.0)
    assert out["n"] == 8 and np.all(out["n_small"] <= 8)


def test_the_identity_check_would_see_a_wrong_eps():
    import torch
    x = _sublayer_tensor(L=2, D=8)[0::2] * 1e-3     # var ~ 1e-6: eps 1e-5 matters
    mask = torch.ones(2, 4, dtype=torch.long)
    right = anchors.identity_check_sums(x, mask)["max_rel_err"]
    from resdecay_lib.maths import identity as I
    wrong = []
    for k in range(2):
        xk, f = x[k].reshape(-1, 8), (x[k + 1] - x[k]).reshape(-1, 8)
        xn = xk.norm(dim=-1).numpy()
        r = (f.norm(dim=-1).numpy() / xn)
        c = torch.nn.functional.cosine_similarity(xk, f, dim=-1).numpy()
        exact0 = I.change_sq_raw(r, c, xn, xk.mean(-1).numpy(), f.mean(-1).numpy(), 8, eps=0.0)
        ln = lambda y: (y - y.mean(-1, keepdim=True)) / torch.sqrt(y.var(-1, unbiased=False, keepdim=True) + 1e-5)  # noqa: E731
        meas = ((ln(xk + f) - ln(xk)) ** 2).mean(-1).numpy()
        wrong.append(np.max(np.abs(exact0 - meas) / meas))
    assert np.all(right < 1e-9) and max(wrong) > 1e-3


def test_effective_depth_of_a_record_reads_its_three_cosines():
    rec = {"hu": {"att": [-0.5, -0.2, 0.1, 0.2], "mlp": [-0.5, -0.2, 0.1, 0.2], "layer": [-0.5, -0.2, 0.1, 0.2]}}
    ed = anchors.effective_depth(rec)
    assert (ed.ed, ed.L) == (1, 4) and ed.ratio == pytest.approx(0.5)


def test_measure_model_records_the_cosines_and_the_check_with_provenance(monkeypatch):
    import hf_tiny
    from resdecay_lib.nn import pretrained
    model, tok = hf_tiny.tiny("llama"), hf_tiny.tiny_tokenizer()
    pre = pretrained._finish("tiny", model, tok, "pre_ln", "a tiny random Llama", "test")
    monkeypatch.setattr(pretrained, "load", lambda name: pre)
    monkeypatch.setattr(pa, "book_text", lambda name: hf_tiny.TEXT)
    monkeypatch.setattr(anchors, "N_SEQ", 4)
    monkeypatch.setattr(anchors, "N_TOKENS", 8)
    monkeypatch.setattr(anchors, "BATCH", 2)
    rec = anchors.measure_model("tiny")
    assert rec["n_layer"] == 3 and len(rec["hu"]["att"]) == 3 and len(rec["identity"]["max_rel_err"]) == 3
    assert max(rec["identity"]["max_rel_err"]) < 1e-6
    assert rec["inputs"]["n_kept_tokens"] == rec["identity"]["n_tokens"] > 0
    assert {"code_version", "wall_s", "threads", "peak_rss_mib"} <= set(rec["provenance"])
    json.dumps(rec)
