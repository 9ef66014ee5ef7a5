"""Paired bootstrap over dialogues (paper App. D.3).

The statistic is the mean per-dialogue difference B − A. Dialogues are resampled with
replacement as pairs by :func:`scipy.stats.bootstrap` (``paired=True``,
``method="percentile"``) driven by ``numpy.random.default_rng(seed)``; the interval is the
percentile interval of the resampled means, the p-value is read off the same resamples.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    import numpy as np

#: Defaults of the paper's significance tests (App. D.3: 10,000 resamples, seed 20260516).
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20260516
CONFIDENCE = 0.95

#: Results are rounded to this many decimals, so that float noise of differences
#: (0.6 − 0.5 = 0.09999999999999998) does not show; resampled means within 1e-12 of 0
#: count as 0 for the p-value.
DECIMALS = 12

P_DEFINITION = ("two-sided bootstrap p = min(1, 2 * min(#{d* <= 0} + 1, #{d* >= 0} + 1) / (B + 1)) over the "
                "B resampled mean differences d* (|d*| <= 1e-12 counts as 0)")


@dataclass(frozen=True)
class PairedBootstrap:
    """Result of :func:`paired_bootstrap`: means of A and B, mean difference B − A, its
    percentile interval ``[ci_low, ci_high]`` (``None`` with fewer than 2 pairs), two-sided
    ``p`` (``None`` with fewer than 2 pairs) and the number of pairs ``n``."""

    n: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None

    def as_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON."""
        return asdict(self)


def _r(x: float) -> float:
    return round(float(x), DECIMALS)


def _mean_diff(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return (b - a).mean(axis=axis)


def paired_bootstrap(a: Sequence[float], b: Sequence[float], resamples: int = DEFAULT_RESAMPLES,
                     seed: int = DEFAULT_SEED, confidence: float = CONFIDENCE) -> PairedBootstrap:
    """Paired bootstrap of ``mean(b − a)`` over the pairs ``(a[i], b[i])`` (one per dialogue).

    ``a``, ``b``: per-dialogue values (e.g. F1 in 0-1) of the same dialogues in the same
    order. ``resamples`` ≥ 1 resamples with ``numpy.random.default_rng(seed)``: the same
    inputs and seed give the same numbers. The p-value is :data:`P_DEFINITION` (the +1
    keeps it above 0: identical sets give exactly 1, a constant shift gives 2/(B+1)).
    With fewer than two pairs only the means and the difference are returned.

    Raises ``ValueError`` when the lengths differ, there is no pair, or ``resamples`` < 1.
    """
    # numpy and scipy load here, not at import: the CLI reads this module's defaults at startup.
    import numpy as np
    from scipy import stats

    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if xa.shape != xb.shape or xa.ndim != 1:
        raise ValueError(f"paired bootstrap needs two equally long 1-d samples (got {xa.shape} and {xb.shape})")
    if xa.size == 0:
        raise ValueError("paired bootstrap needs at least one pair")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1 (got {resamples})")
    n = int(xa.size)
    diff = _r(np.mean(xb - xa))
    if n < 2:
        return PairedBootstrap(n, _r(xa.mean()), _r(xb.mean()), diff, None, None, None)
    res = stats.bootstrap((xa, xb), _mean_diff, paired=True, vectorized=True, n_resamples=resamples,
                          confidence_level=confidence, method="percentile", rng=np.random.default_rng(seed))
    dist = np.round(res.bootstrap_distribution, DECIMALS)
    dist[np.abs(dist) <= 1e-12] = 0.0
    le, ge = int(np.sum(dist <= 0)), int(np.sum(dist >= 0))
    p = min(1.0, 2 * min(le + 1, ge + 1) / (resamples + 1))
    ci = res.confidence_interval
    return PairedBootstrap(n, _r(xa.mean()), _r(xb.mean()), diff, _r(ci.low), _r(ci.high), _r(p))


#: Resamples of :func:`ratio_with_ci` (the belief study's intervals).
RATIO_RESAMPLES = 1999


def ratio_with_ci(nums: list[int], dens: list[int]) -> tuple[float | None, list[float] | None]:
    """Pooled ratio ``sum(nums) / sum(dens)`` over the units (items) with ``dens > 0`` and
    its 95% percentile bootstrap interval, units resampled as (numerator, denominator)
    pairs (:data:`RATIO_RESAMPLES` resamples, seed 0): ``(None, None)`` when no unit has a
    denominator, ``(value, None)`` with one unit. The belief study's FPI and rates."""
    import numpy as np
    from scipy import stats

    pairs = [(n, d) for n, d in zip(nums, dens) if d > 0]
    if not pairs:
        return None, None
    num, den = np.array([p[0] for p in pairs], float), np.array([p[1] for p in pairs], float)
    value = float(num.sum() / den.sum())
    if len(pairs) < 2:
        return value, None
    res = stats.bootstrap((num, den), lambda n, d, axis=-1: n.sum(axis=axis) / d.sum(axis=axis), paired=True,
                          vectorized=True, n_resamples=RATIO_RESAMPLES, method="percentile", rng=0)
    lo, hi = res.confidence_interval
    return value, [float(lo), float(hi)]
