"""Agreement statistics shared by ``audit`` and ``annotate report`` (the paper's
quality audit, App. B.3, and human study: means, share within ±0.5 and ±1).

No formula is written here by hand: Krippendorff's alpha comes from the ``krippendorff``
package, Cohen's kappa from scikit-learn, means and shares from polars expressions.
An undefined statistic (too few raters or items, no variation) is ``None``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

import krippendorff
import numpy as np
import polars as pl
from sklearn.metrics import cohen_kappa_score


def _finite(value: float) -> float | None:
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def ordinal_alpha(ratings: Sequence[Sequence[float | None]], value_domain: Sequence[int]) -> float | None:
    """Krippendorff's alpha (ordinal) of a raters x items table; ``None`` marks a missing
    rating. ``value_domain`` is the dimension's score range (e.g. ``[1, 2, 3]``).

    Returns ``None`` when alpha is undefined: fewer than two raters, no item rated
    twice, or no variation at all.
    """
    if len(ratings) < 2:
        return None
    data = np.array([[np.nan if v is None else float(v) for v in row] for row in ratings], dtype=float)
    if not (np.sum(~np.isnan(data), axis=0) >= 2).any():
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _finite(krippendorff.alpha(reliability_data=data, value_domain=list(value_domain),
                                              level_of_measurement="ordinal"))
        except ValueError:
            return None


def _kappa(a: Sequence[Any], b: Sequence[Any], labels: Sequence[Any], weights: str | None) -> float | None:
    if len(a) != len(b):
        raise ValueError("kappa needs paired ratings of equal length")
    if not a:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _finite(cohen_kappa_score(list(a), list(b), labels=list(labels), weights=weights))


def quadratic_kappa(a: Sequence[int], b: Sequence[int], labels: Sequence[int]) -> float | None:
    """Quadratic-weighted Cohen's kappa of two raters' paired scores over ``labels``
    (the dimension's score range); ``None`` when undefined (no pairs, no variation).
    Raises ``ValueError`` for unpaired lists."""
    return _kappa(a, b, labels, "quadratic")


def nominal_kappa(a: Sequence[str], b: Sequence[str], labels: Sequence[str]) -> float | None:
    """Unweighted Cohen's kappa of two raters' paired category labels over ``labels`` (the
    category set); ``None`` when undefined (no pairs, or chance agreement of 1). Raises
    ``ValueError`` for unpaired lists."""
    return _kappa(a, b, labels, None)


def compare_scores(df: pl.DataFrame, a: str, b: str, dimensions: Sequence[tuple[int, str]]) -> list[dict[str, Any]]:
    """Per (stage, dimension), compare two score columns of ``df`` item by item.

    ``df`` has one row per item with columns ``stage``, ``dimension``, ``a`` and ``b``
    (numbers; rows where either is null are dropped). Returns one row per entry of
    ``dimensions`` (rubric order), dimensions without data included with ``n = 0``:
    ``{stage, dimension, n, mean_<a>, mean_<b>, mean_diff (b - a), within_0_5, within_1}``.
    """
    both = df.drop_nulls([a, b]).with_columns((pl.col(b) - pl.col(a)).cast(pl.Float64).alias("_diff"))
    stats = both.group_by("stage", "dimension").agg(
        pl.len().alias("n"),
        pl.col(a).cast(pl.Float64).mean().alias(f"mean_{a}"),
        pl.col(b).cast(pl.Float64).mean().alias(f"mean_{b}"),
        pl.col("_diff").mean().alias("mean_diff"),
        (pl.col("_diff").abs() <= 0.5).mean().alias("within_0_5"),
        (pl.col("_diff").abs() <= 1.0).mean().alias("within_1"),
    )
    order = pl.DataFrame({"stage": [s for s, _ in dimensions], "dimension": [d for _, d in dimensions]},
                         schema={"stage": stats.schema["stage"], "dimension": pl.String})
    out = order.join(stats, on=["stage", "dimension"], how="left", maintain_order="left")
    return out.with_columns(pl.col("n").fill_null(0)).to_dicts()
