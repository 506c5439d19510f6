"""Chapter 9b's result: its wording functions on each branch, and the chapter read from the stored files."""
import numpy as np
import pytest

from resdecay_lib.analysis import intervention as I
from resdecay_lib.analysis.chapters import intervention as C
from resdecay_lib.analysis.chapters import pretrained as pretrained_chapter



def test_departure_blocks_lie_past_the_front_and_before_the_tail():
    ks = C.departure_blocks(24, 3)
    assert ks == (4, 6, 12, 18, 23)
    assert all(3 < k <= 24 - I.TAIL for k in C.departure_blocks(6, 3))


@pytest.mark.parametrize("lo, hi, word", [(0.1, 0.3, "more"), (-0.3, -0.1, "less"), (-0.1, 0.1, "as the arithmetic")])
def test_departure_words_read_the_interval_against_zero(lo, hi, word):
    assert C.departure_words(lo, hi) == word


def _t(v, lo, hi):
    return I.Tracking(v, lo, hi, 0.995, 16, (4, 5))


def _reading(key, placement="pre_ln", t_quarter=(1.0, 0.9, 1.1), t_two=(1.0, 0.9, 1.1), losses=(3.0, 2.5, 2.0, 2.2),
             k0=((-2.0, -2.1, -1.9), (-2.0, -2.1, -1.9))):
    alphas = I.ALPHAS
    return C.ModelReading(
        key=key, model=key, n_layer=6, placement=placement, fronts=(3,), second_front=1, base=np.ones(6),
        arith={3: {a: np.ones(6) for a in alphas}}, real={3: {a: np.ones(6) for a in alphas}},
        tracking={3: {0.25: _t(*t_quarter), 0.5: _t(1, 0.9, 1.1), 2.0: _t(*t_two)}},
        k0_pred={3: {a: k0[0] for a in alphas}}, k0_real={3: {a: k0[1] for a in alphas}},
        loss={3: {a: (x, 0.1) for a, x in zip(alphas, losses)}}, ordered=True, n_seq=16)


def _beside(*readings):
    return C.BesideResult((), (), {}, tuple(readings))


def test_family_words_count_the_intervals_against_the_margin():
    b = _beside(_reading("smollm2", t_quarter=(1.7, 1.6, 1.8)), _reading("qwen", t_two=(0.2, 0.1, 0.3)),
                _reading("qwen15", t_quarter=(1.4, 1.3, 1.6)))
    w = b.family_words()
    assert "of the 6 intervals" in w and "3 lie within" in w and "1 wholly above" in w and "1 wholly below" in w \
        and "1 cross" in w
    assert _beside().family_words() == "no model of the family is measured yet"


def test_model_words_say_each_scale_or_that_the_model_waits():
    b = _beside(_reading("qwen"))
    assert "T = 1.00 [0.90, 1.10] at alpha = 0.25 (within the margin" in b.model_words("qwen")
    assert b.model_words("toy_s6") == "not measured yet"


def test_loss_words_name_a_model_whose_losses_break_the_order():
    ok = _beside(_reading("qwen"), _reading("smollm2"))
    assert ok.loss_words().startswith("in each of the 2 measured Pre-LN models")
    bad = _beside(_reading("qwen"), _reading("smollm2", losses=(3.0, 2.5, 2.0, 3.5)))
    assert bad.loss_words().endswith("not in smollm2")
    assert _beside(_reading("gemma3", placement="sandwich")).loss_words() == "no Pre-LN model is measured yet"


def test_k0_words_count_the_offsets_inside_the_predicted_interval_and_name_the_others():
    inside = _beside(_reading("qwen"))
    assert inside.k0_words().startswith("the measured offset lies inside the predicted offset's 95 % interval in 3 of 3")
    outside = _beside(_reading("qwen", k0=((-2.0, -2.1, -1.9), (-1.0, -1.1, -0.9))))
    assert "in 0 of 3 cases; outside it: qwen at alpha 0.25 (-1.0 against -2.0 [-2.1, -1.9])" in outside.k0_words()


def test_sizes_words_wait_for_both_sizes():
    assert _beside(_reading("qwen")).sizes_words() == "the 1.5B is not measured yet"
    both = _beside(_reading("qwen"), _reading("qwen15"))
    w = both.sizes_words()
    assert w.startswith("Qwen2.5-Coder-0.5B (6 blocks): T 1.00 and 1.00, k0/L -0.33") and "effective-depth ratio not" not in w


def _synthetic_root(tmp_path, real_scale=1.0):
    """A book folder holding one toy model's prediction and record, made by the library's own
    functions from a random stream whose later blocks' outputs are kept as recorded (b = a, T = 1)
    or scaled by ``real_scale`` at alpha != 1."""
    import json
    import torch
    from resdecay_lib.nn.intervention import arithmetic_stream
    from resdecay_lib.nn.metrics import layer_change
    g = torch.Generator().manual_seed(0)
    L, B, T, D = 8, 6, 5, 16
    scale = torch.tensor([3.0, 2.0, 2.0, 2.0] + [1.0] * (L - 3), dtype=torch.float64)[:, None, None, None]
    x = (torch.randn(L + 1, B, T, D, generator=g, dtype=torch.float64) * scale).cumsum(0).float()
    mask = torch.ones(B, T, dtype=torch.long)
    omega = lambda s: layer_change(s, mask).per_sequence["omega_sq"]  # noqa: E731
    S, n, _ = I.gram_per_sequence(x, mask)
    base = {"omega_sq": omega(x).tolist(), "loss": [2.0] * B, "gram_sums": S.tolist(), "tokens": n.tolist()}
    entry = {"model": "tiny", "key": "toy_s5", "n_layer": L, "d_model": D, "placement": "pre_ln", "source": "test",
             "inputs": {}, "fronts": [3], "second_front": 1, "base": base,
             "arithmetic": {"3": {str(a): omega(arithmetic_stream(x, 3, a)).tolist() for a in I.ALPHAS}},
             "predicted_k0": {}, "predicted_utc": "2026-01-01T00:00:00+00:00", "provenance": {}}
    real = {}
    for a in I.ALPHAS:
        xa = arithmetic_stream(x, 3, a)
        if a != 1.0 and real_scale != 1.0:
            xa = xa.clone()
            xa[4:] = xa[3:4] + (xa[4:] - xa[3:4]) * real_scale
        Sa, na, _ = I.gram_per_sequence(xa, mask)
        real[str(a)] = {"omega_sq": (omega(x) if a == 1.0 else omega(xa)).tolist(), "loss": [2.0 + abs(a - 1)] * B,
                        "gram_sums": Sa.tolist(), "tokens": na.tolist()}
    record = {"model": "tiny", "key": "toy_s5", "n_layer": L, "d_model": D, "real": {"3": real},
              "prediction": {"commit": "abc1234", "committed": "2026-01-02T00:00:00+00:00",
                             "sha256": I.entry_sha256(entry)},
              "measured_utc": "2026-01-03T00:00:00+00:00", "provenance": {"wall_s": 1.0, "peak_rss_mib": 10.0}}
    (tmp_path / "results" / "predictions").mkdir(parents=True)
    (tmp_path / "results" / "intervention").mkdir()
    (tmp_path / I.PREDICTIONS).write_text(json.dumps({"declared": I.DECLARED, "models": {"toy_s5": entry}}))
    (tmp_path / I.RECORDS / "toy_s5.json").write_text(json.dumps(record))
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    return tmp_path


def test_the_chapter_reads_t_one_when_the_real_forward_is_the_arithmetic(tmp_path):
    result = C.chapter(_synthetic_root(tmp_path))
    r = result.reading("toy_s5")
    assert r.measured and r.ordered and r.fronts == (3,)
    for a in I.PRIMARY_ALPHAS:
        t = r.tracking[3][a]
        assert t.value == pytest.approx(1.0, abs=1e-9) and t.lo <= 1.0 + 1e-9 and t.hi >= 1.0 - 1e-9
    beside = C.beside(tmp_path, result)
    assert all(np.allclose(d.d, 0.0, atol=1e-6) for d in beside.departures)
    assert "as the arithmetic" in beside.departure_table() and beside.rows == () and beside.sizes == ()


def test_the_chapter_sees_later_blocks_that_write_less_than_the_arithmetic(tmp_path):
    result = C.chapter(_synthetic_root(tmp_path, real_scale=0.5))
    beside = C.beside(tmp_path, result)
    assert all(np.all(d.hi[4:-1] < 0) for d in beside.departures)     # later blocks' change below (a)'s
    assert beside.reading("toy_s5", 0.25).startswith("0 of")


def test_a_record_without_its_prediction_is_refused(tmp_path):
    root = _synthetic_root(tmp_path)
    (root / I.RECORDS / "qwen.json").write_text('{"key": "qwen"}')
    with pytest.raises(ValueError, match="does not predict"):
        C.chapter(root)


def _size(model, exp, jump, ratio):
    from types import SimpleNamespace as NS
    from resdecay_lib.analysis.pruning import RankCorr
    rc = RankCorr(*ratio, 0.95, 2000)
    return pretrained_chapter.Size(model, 24, NS(exponent=exp[0], lo=exp[1], hi=exp[2]), -1.05, -0.1,
                  NS(mean=jump[0], lo=jump[1], hi=jump[2]), rc, rc, 0.39, 0.40)


def test_sizes_change_words_wait_for_the_second_record_and_read_each_difference_against_both_intervals():
    small = _size("qwen2.5-coder-0.5b", (-0.57, -0.59, -0.56), (1.0, 0.98, 1.02), (2.0, 1.7, 2.8))
    assert C.BesideResult((), (), {}, (), (small,)).sizes_change_words() == "the 1.5B's Chapter 9 record is not stored yet"
    large = _size("qwen2.5-coder-1.5b", (-0.30, -0.32, -0.28), (1.01, 0.99, 1.03), (2.1, 1.8, 2.9))
    w = C.BesideResult((), (), {}, (), (small, large)).sizes_change_words()
    assert "the exponent -0.57 -> -0.30 (apart)" in w and "the last block's jump 1.00 -> 1.01 (the intervals overlap)" in w
    assert "| Qwen2.5-Coder-1.5B | 24 | -0.30 [-0.32, -0.28] against -1.05 |" in \
        C.BesideResult((), (), {}, (), (small, large)).sizes_table()


def test_hu_words_set_the_1_5b_inside_or_outside_hu_et_al_s_range():
    def with_ed(ed, L=28):
        hu = [-0.1] * (ed + 1) + [0.1] * (L - ed - 1)
        return C.BesideResult((), (), {"qwen2.5-coder-1.5b": {"n_layer": L, "hu": {"att": hu, "mlp": hu, "layer": hu}}})
    assert "0.61 (ED 16 of 28), inside the range 0.61 to 0.75" in with_ed(16).hu_words()
    assert "below the range" in with_ed(10).hu_words() and "above the range" in with_ed(24).hu_words()
    assert C.BesideResult((), (), {}).hu_words() == "the 1.5B's cosines are not measured yet"


def test_lean_words_count_the_models_whose_later_blocks_lean_each_way_and_name_the_others():
    def dep(key, alpha, d):
        d = np.asarray(d, float)
        return C.Departure(key, key, 1, alpha, d, d - 0.01, d + 0.01, (2.0, 0.1), (1.0, 0.1))
    up, down = [0, 0.5, 0.5, -0.5, 0], [0, -0.5, -0.5, 0.5, 0]
    b = C.BesideResult((dep("a", 0.25, up), dep("a", 2.0, down), dep("b", 0.25, up), dep("b", 2.0, up)), (), {})
    w = b.lean_words()
    assert "at alpha = 0.25, more later blocks write more than the arithmetic says than the other way in 2 of the 2" in w
    assert "at alpha = 2, more later blocks write less than the arithmetic says than the other way in 1 of the 2 " \
           "measured models (not in b)" in w
    assert C.BesideResult((), (), {}).lean_words() == "no model is measured yet"
