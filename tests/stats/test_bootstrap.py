"""Paired bootstrap on hand-checkable cases (paper App. D.3)."""

from __future__ import annotations

import pytest

from ioa_synth.stats.bootstrap import paired_bootstrap

F1 = [8 / 9, 0.5, 0.0, 0.25, 2 / 3, 0.4, 1.0, 0.3]


def test_identical_sets_give_zero_difference_and_p_one():
    res = paired_bootstrap(F1, F1, resamples=2000, seed=1)
    assert res.n == len(F1)
    assert res.diff == 0.0
    assert (res.ci_low, res.ci_high) == (0.0, 0.0)
    assert res.p == 1.0


def test_constant_shift_gives_the_shift_a_point_interval_and_tiny_p():
    a = [0.8, 0.5, 0.0, 0.25, 2 / 3, 0.4, 0.9, 0.3]
    shifted = [x + 0.1 for x in a]  # float noise: 0.5 + 0.1 - 0.5 != 0.1 exactly
    res = paired_bootstrap(a, shifted, resamples=10_000, seed=20260516)
    assert res.diff == 0.1
    assert (res.ci_low, res.ci_high) == (0.1, 0.1)
    assert res.p < 0.001
    assert res.p == pytest.approx(2 / 10_001)  # no resample at or below 0: (0 + 1) counted, two-sided
    assert res.mean_b - res.mean_a == pytest.approx(0.1)


def test_two_dialogues_hand_computed_resampling_distribution():
    # differences (0, 1): a resampled mean is 0, 0.5 or 1 with probability 1/4, 1/2, 1/4, so the
    # 95% percentile interval is [0, 1] and P(mean <= 0) = 1/4 gives p = 2 * 1/4 = 0.5.
    res = paired_bootstrap([0.0, 0.0], [0.0, 1.0], resamples=20_000, seed=7)
    assert res.diff == 0.5
    assert (res.ci_low, res.ci_high) == (0.0, 1.0)
    assert res.p == pytest.approx(0.5, abs=0.03)


def test_direction_is_b_minus_a():
    res = paired_bootstrap([0.9, 0.8, 0.7], [0.4, 0.3, 0.2], resamples=500, seed=3)
    assert res.diff == -0.5
    assert res.ci_high == -0.5 and res.ci_low == -0.5


def test_same_seed_same_numbers_other_seed_other_interval():
    b = [0.9, 0.1, 0.3, 0.7, 0.2, 0.8, 0.5, 0.6]
    first = paired_bootstrap(F1, b, resamples=3000, seed=11)
    assert paired_bootstrap(F1, b, resamples=3000, seed=11) == first
    other = paired_bootstrap(F1, b, resamples=3000, seed=12)
    assert (other.ci_low, other.ci_high, other.p) != (first.ci_low, first.ci_high, first.p)
    assert other.diff == first.diff  # the point estimate does not depend on the resamples
    assert first.ci_low < first.diff < first.ci_high


def test_one_pair_has_no_interval_and_bad_input_is_refused():
    one = paired_bootstrap([0.2], [0.5])
    assert one.diff == 0.3 and one.ci_low is None and one.p is None
    with pytest.raises(ValueError, match="equally long"):
        paired_bootstrap([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="at least one pair"):
        paired_bootstrap([], [])
