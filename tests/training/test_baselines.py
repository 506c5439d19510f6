"""Tests of resdecay_lib.training.baselines: the smoothed n-gram loss."""
import math

import numpy as np
import pytest

from resdecay_lib.training import baselines


def test_ngram_loss_matches_a_hand_count():
    train = np.array([0, 1, 1, 0, 1, 2, 1, 1])
    val = np.array([1, 1, 2])
    # bigram, alpha 0.5, V 3: p(1|1) = (N(11)=2 + .5) / (N(1.)=4 + 1.5), p(2|1) = (1 + .5) / 5.5
    want = -(math.log(2.5 / 5.5) + math.log(1.5 / 5.5)) / 2
    assert baselines.ngram_loss(train, val, 2, 3, alpha=0.5) == pytest.approx(want, rel=1e-12)


def test_ngram_loss_rejects_bad_input_naming_it():
    t = np.array([0, 1, 2])
    with pytest.raises(ValueError, match="n must"):
        baselines.ngram_loss(t, t, 0, 3)
    with pytest.raises(ValueError, match="alpha"):
        baselines.ngram_loss(t, t, 2, 3, alpha=float("nan"))
    with pytest.raises(ValueError, match="vocab_size"):
        baselines.ngram_loss(t, t, 2, 2)
