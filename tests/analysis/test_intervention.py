"""The front intervention's analysis (resdecay_lib.analysis.intervention): the predicted k0(alpha)
is the arithmetic stream's own k0, T is 1 when the real curve is the arithmetic and 0 when it
does not move, the per-sequence Grams pool to the Gram, the second front follows its rule, and
claim-mechanism's rule decides as its docstring says."""
import math

import numpy as np
import pytest
import torch

from resdecay_lib.analysis import intervention as I
from resdecay_lib.book import evidence as E
from resdecay_lib.book import ledger, rules
from resdecay_lib.nn.intervention import arithmetic_stream
from resdecay_lib.nn.metrics import gram, layer_change


def _stream(L=8, B=4, T=5, D=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    u = torch.randn(L + 1, B, T, D, generator=g, dtype=torch.float64)
    u[1:4] *= torch.tensor([4.0, 2.0, 1.5], dtype=torch.float64)[:, None, None, None]   # a front
    return torch.cumsum(u, 0)


@pytest.mark.parametrize("alpha", [0.25, 0.5, 2.0])
def test_predicted_k0_is_the_k0_of_the_arithmetic_streams_gram(alpha):
    x = _stream()
    G = gram(x)
    assert I.predicted_k0(G, 3, alpha) == pytest.approx(I.measured_k0(gram(arithmetic_stream(x, 3, alpha)), 3),
                                                        rel=1e-9)


def test_v_front_is_the_variance_of_the_scaled_front_by_the_quadratic_form():
    G = gram(_stream())
    for a in (0.0, 1.0, 3.0):
        v = G[0, 0] + 2 * a * G[0, 1:4].sum() + a * a * G[1:4, 1:4].sum()
        assert I.v_front(G, 3, a) == pytest.approx(v, rel=1e-12)
    assert I.v_front(G, 3, 0.0) == pytest.approx(G[0, 0])


def test_per_sequence_gram_sums_pool_to_the_gram_of_the_kept_tokens():
    x = _stream().float()
    mask = torch.ones(4, 5)
    mask[1, :2] = 0
    S, n, D = I.gram_per_sequence(x, mask)
    assert list(n) == [5, 3, 5, 5]
    np.testing.assert_allclose(I.pooled_gram(S, n, D), gram(x[:, mask.bool()]), rtol=1e-10, atol=1e-12)


def test_second_front_counts_leading_blocks_above_twice_the_median_and_is_clipped():
    G = np.diag([1.0, 9, 5, 3, 1, 1, 1, 1, 1])
    assert I.second_front(G) == 3
    assert I.second_front(np.diag([1.0, 1, 9, 1, 1, 1, 1, 1, 1])) == 1        # block 1 not large: clipped up to 1
    assert I.second_front(np.diag([1.0, 9, 1, 9, 1, 1, 1, 1, 1])) == 1        # consecutive from block 1 only


def test_tracking_is_one_when_real_follows_the_arithmetic_and_zero_when_it_does_not_move():
    x = _stream()
    mask = torch.ones(4, 5)
    base = layer_change(x, mask).per_sequence["omega_sq"]
    arith = layer_change(arithmetic_stream(x, 3, 0.25), mask).per_sequence["omega_sq"]
    one = I.tracking(base, arith, arith, 3, n_boot=200)
    assert one.value == pytest.approx(1.0) and one.lo == pytest.approx(1.0) and one.hi == pytest.approx(1.0)
    zero = I.tracking(base, arith, base, 3, n_boot=200)
    assert zero.value == pytest.approx(0.0, abs=1e-12)
    b1, a1 = np.tile(base.mean(0), (4, 1)), np.tile(arith.mean(0), (4, 1))   # equal sequences
    half = I.tracking(b1, a1, np.sqrt(b1 * a1), 3, n_boot=200)             # half the log change
    assert half.value == pytest.approx(0.5)
    assert one.k == tuple(range(4, 8))                                     # blocks m+1..L-tail


def test_tracking_refuses_curves_of_different_shapes_or_non_positive_values():
    a = np.ones((3, 8))
    with pytest.raises(ValueError, match="one shape"):
        I.tracking(a, a, np.ones((2, 8)), 3)
    with pytest.raises(ValueError, match="positive"):
        I.tracking(a, a, np.zeros((3, 8)), 3)
    with pytest.raises(ValueError, match="at least 2"):
        I.tracking(np.ones((3, 5)), np.ones((3, 5)), np.ones((3, 5)), 3)


def test_the_rule_models_are_the_evidence_family_and_the_controls_are_outside_it():
    assert tuple(I.RULE_MODELS) == E.INTERVENTION_MODELS
    assert set(I.CONTROLS) == {"toy_s5", "gemma3"}
    assert I.FAMILY_LEVEL == pytest.approx(1 - 0.05 / 10)
    assert I.TRACKING_MARGIN == 0.5


MECH = next(c for c in ledger.CLAIMS if c.id == "claim-mechanism")


def _ev(values, measured=E.INTERVENTION_MODELS):
    ev = {}
    for m in E.INTERVENTION_MODELS:
        ev[str(E.INTERVENTION_MEASURED[m])] = 16.0 if m in measured else 0.0
        for a in E.INTERVENTION_ALPHAS:
            lo, hi = values.get((m, a), (0.8, 1.2)) if m in measured else (math.nan, math.nan)
            e = E.INTERVENTION_T[m, a]
            ev.update({str(e): (lo + hi) / 2, e.lo: lo, e.hi: hi})
    return ev


def test_mechanism_holds_only_when_every_model_is_measured_and_within_the_margin():
    assert MECH.verdict(_ev({})).word == "holds"
    assert MECH.verdict(_ev({}, measured=("smollm2", "qwen"))).word == "open"


def test_mechanism_does_not_hold_on_any_measured_interval_below_the_margin_even_before_the_family_is_complete():
    v = MECH.verdict(_ev({("qwen", "two"): (0.1, 0.4)}, measured=("smollm2", "qwen")))
    assert v.word == "does not hold" and "qwen" in v.reason


def test_mechanism_holds_with_correction_when_intervals_lie_above_the_margin_and_none_below():
    assert MECH.verdict(_ev({("toy_s6", "quarter"): (1.6, 1.8)})).word == "holds with correction"
    assert MECH.verdict(_ev({("toy_s6", "quarter"): (1.3, 1.8)})).word == "open"


def test_the_mechanism_claim_quotes_the_card_verbatim():
    card = open("../shared/seeds/000_b8cab5ddab79427f.txt", encoding="utf-8").read() if \
        __import__("os").path.exists("../shared/seeds/000_b8cab5ddab79427f.txt") else None
    assert MECH.sentence == MECH.card
    if card is not None:
        assert MECH.sentence in card


def test_departure_is_the_log_ratio_of_the_mean_curves_with_a_bootstrap_interval_around_it():
    rng = np.random.default_rng(0)
    arith = rng.uniform(0.5, 1.5, size=(16, 6))
    real = arith * np.exp(np.array([0.5, 0.5, 0.0, 0.0, -0.5, -0.5]))
    d, lo, hi = I.departure(arith, real)
    assert np.allclose(d, [0.5, 0.5, 0, 0, -0.5, -0.5])
    assert np.all(lo <= d + 1e-12) and np.all(d <= hi + 1e-12)
    noisy = real * rng.uniform(0.8, 1.25, size=real.shape)
    d, lo, hi = I.departure(arith, noisy)
    assert lo[0] > 0 and hi[-1] < 0          # a real departure of +-0.5 is seen through the noise
    assert hi[0] - lo[0] > 0                  # and the noise widens the interval


def test_departure_refuses_curves_of_two_shapes_or_a_zero_change():
    with pytest.raises(ValueError, match="one shape"):
        I.departure(np.ones((4, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="positive"):
        I.departure(np.ones((4, 3)), np.zeros((4, 3)))


def test_tracking_counts_sort_intervals_as_the_mechanism_rule_does():
    m = rules.TRACKING_MARGIN
    counts = rules.tracking_counts([(0.1, 1 - m - 0.01), (0.9, 1.1), (1 + m + 0.01, 2.0), (1.4, 1 + m + 0.1)])
    assert counts == {"below": 1, "within": 1, "above": 1, "across": 1}
    assert rules.tracking_counts([]) == {"below": 0, "within": 0, "above": 0, "across": 0}
