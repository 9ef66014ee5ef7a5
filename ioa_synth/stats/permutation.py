"""Exact paired sign-flip permutation test over dialogues, and the limits of the bootstrap's
p-value (paper App. D.3 reports bootstrap significance; these say when it can be trusted).

Under the null hypothesis that A and B are exchangeable within each dialogue, every
dialogue's difference B − A keeps or flips its sign with equal chance. The two-sided p is
the share of the 2^n sign patterns whose mean difference is at least as far from 0 as the
observed one: :func:`scipy.stats.permutation_test` with ``permutation_type="samples"``
(which swaps A and B within pairs) enumerates them all up to :data:`EXACT_MAX_PAIRS`
pairs and samples them beyond. Unlike the bootstrap p (floor 2/(B+1), set by the
number of resamples B), its smallest value 2/2^n is set by the data: with 5 pairs or
fewer no result can reach p < 0.05.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

#: Pairs up to which every sign pattern is enumerated (2^20 ≈ 1 million).
EXACT_MAX_PAIRS = 20
#: Below this many pairs ``compare`` warns that the sample is small (see docs/statistics.md).
SMALL_SAMPLE = 10


@dataclass(frozen=True)
class SignFlip:
    """Result of :func:`sign_flip_test`: two-sided ``p`` (``None`` with no pair), whether it
    is ``exact`` (all 2^n patterns) or Monte Carlo with ``resamples`` draws, and ``p_floor``,
    the smallest p the test can give here."""

    p: float | None
    exact: bool
    resamples: int
    p_floor: float | None


def _mean_diff(a, b, axis: int = -1):  # noqa: ANN001 - numpy arrays
    return (b - a).mean(axis=axis)


def sign_flip_test(a: Sequence[float], b: Sequence[float], resamples: int = 10_000, seed: int = 0) -> SignFlip:
    """Paired sign-flip permutation test of ``mean(b − a) = 0`` (two-sided).

    Exact up to :data:`EXACT_MAX_PAIRS` pairs; beyond, ``resamples`` random sign patterns
    drawn with ``numpy.random.default_rng(seed)`` (p then includes the observed pattern,
    so it is never 0). Differences within 1e-12 of each other count as ties.
    """
    import numpy as np
    from scipy import stats

    xa, xb = np.round(np.asarray(a, dtype=float), 12), np.round(np.asarray(b, dtype=float), 12)
    n = int(xa.size)
    if n == 0:
        return SignFlip(None, True, 0, None)
    if not np.any(xb - xa):
        return SignFlip(1.0, True, 2 ** min(n, EXACT_MAX_PAIRS), p_floor(n, resamples))
    exact = n <= EXACT_MAX_PAIRS
    res = stats.permutation_test((xa, xb), _mean_diff, permutation_type="samples", vectorized=True,
                                 n_resamples=np.inf if exact else resamples, alternative="two-sided",
                                 batch=1 << 16, rng=np.random.default_rng(seed))
    return SignFlip(round(float(res.pvalue), 12), exact, 2 ** n if exact else resamples, p_floor(n, resamples))


def p_floor(n: int, resamples: int) -> float:
    """Smallest two-sided p of the sign-flip test with ``n`` pairs: 2/2^n when exact, else
    the Monte Carlo floor 2/(resamples + 1)."""
    return 2 / 2 ** n if n <= EXACT_MAX_PAIRS else 2 / (resamples + 1)


def bootstrap_p_floor(resamples: int) -> float:
    """Smallest p the paired bootstrap can report with ``resamples`` resamples: 2/(B + 1)."""
    return 2 / (resamples + 1)


def distinct_resamples(n: int) -> int:
    """How many different resamples (multisets of n pairs drawn with replacement) exist:
    C(2n − 1, n). With 2 pairs: 3; with 5: 126; with 10: 92,378."""
    return math.comb(2 * n - 1, n)


def small_sample_warnings(n: int, resamples: int) -> list[str]:
    """Sentences on what ``n`` paired dialogues and ``resamples`` bootstrap resamples allow."""
    out = []
    if n < SMALL_SAMPLE:
        out.append(f"Only {n} dialogue(s) are paired (fewer than {SMALL_SAMPLE}): the bootstrap interval is too "
                   "narrow and its p too small for so few pairs; read the sign-flip permutation p instead.")
    if n and p_floor(n, resamples) > 0.05:
        out.append(f"With {n} pair(s) no two-sided test can reach p < 0.05: the smallest sign-flip p is "
                   f"2/2^{n} = {p_floor(n, resamples):.3g}.")
    if n and distinct_resamples(n) < resamples:
        out.append(f"With {n} dialogue(s) the bootstrap has at most {distinct_resamples(n):,} distinct resamples "
                   f"(C(2n-1, n)), fewer than the {resamples:,} drawn: its p and interval take few values.")
    return out
