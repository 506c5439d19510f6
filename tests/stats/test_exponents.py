"""Tests of resdecay_lib.stats.exponents: the theorem's exponent over a fit range, and the convention rho chooses."""
import numpy as np
import pytest

from resdecay_lib.maths import theory
from resdecay_lib.stats.exponents import convention, reference_exponent, rho
from resdecay_lib.stats.fit import loglog_slope


def test_reference_exponent_is_the_exact_curves_slope_over_the_same_range():
    k = np.arange(2, 17)
    y = [float(theory.omega_sq(int(j), embedding_counted=True)) for j in k]
    assert reference_exponent(2, 16, True) == pytest.approx(loglog_slope(k, y)[0], rel=1e-12)
    assert reference_exponent(2, 16, False) < reference_exponent(2, 16, True) < -0.8
    with pytest.raises(ValueError, match="k_min"):
        reference_exponent(1, 16, False)


def test_rho_and_the_convention_it_chooses():
    G = np.diag([1.0, 1.0, 1.0, 1.0])
    assert rho(G) == 1.0 and convention(1.0)
    assert not convention(rho(np.diag([0.01, 1.0, 1.0])))


def test_half_ratio_without_the_last_block_leaves_it_out_of_the_later_half():
    from resdecay_lib.stats.exponents import half_ratio, halves
    late, early = halves(12, last=False)
    assert list(late) == [7, 8, 9, 10, 11] and list(early) == [4, 5, 6]
    costs = np.r_[np.ones(11), 100.0]
    assert half_ratio(costs, last=False) == pytest.approx(1.0) and half_ratio(costs) > 10
