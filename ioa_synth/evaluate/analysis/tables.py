"""Breakdown numbers of scored records (paper §4.2): per-type recall (paper Table 12),
Category-C failure modes (paper §E.2), means and per-group means of P/R/F1, K and |B|.

Every aggregate is a mean of per-dialogue values (the protocol's aggregate), computed with
polars; a group without dialogues has ``None`` means.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import polars as pl

from ioa_synth.evaluate.analysis.results import C_REASONS, Record
from ioa_synth.protocol.cells import MA_TYPES

#: Label of an MA whose record gives no type.
UNTYPED = "untyped"

#: Groupings of ``report --by``: record field per choice (``type`` groups MAs, not dialogues).
GROUPINGS: tuple[str, ...] = ("domain", "task_type", "type")

_METRIC_SCHEMA = {"case_id": pl.String, "domain": pl.String, "task_type": pl.String, "precision": pl.Float64,
                  "recall": pl.Float64, "f1": pl.Float64, "k": pl.Int64, "b": pl.Int64}


def metrics_frame(records: Iterable[Record]) -> pl.DataFrame:
    """One row per scored record: case_id, domain, task_type, precision, recall, f1 (0-1), k, b."""
    rows = [{"case_id": r.case_id, "domain": r.domain, "task_type": r.task_type, "precision": r.metrics.precision,
             "recall": r.metrics.recall, "f1": r.metrics.f1, "k": r.metrics.k, "b": r.metrics.b}
            for r in records if r.metrics is not None]
    return pl.DataFrame(rows, schema=_METRIC_SCHEMA)


def _mean_exprs() -> list[pl.Expr]:
    return [pl.len().alias("cases"), pl.col("precision").mean(), pl.col("recall").mean(), pl.col("f1").mean(),
            pl.col("k").cast(pl.Float64).mean().alias("mean_k"), pl.col("b").cast(pl.Float64).mean().alias("mean_b")]


def means(records: Iterable[Record]) -> dict[str, Any]:
    """``{cases, precision, recall, f1, mean_k, mean_b}``: means over the scored dialogues
    (``None`` when there is none)."""
    return metrics_frame(records).select(_mean_exprs()).to_dicts()[0]


def group_means(records: Iterable[Record], by: str) -> list[dict[str, Any]]:
    """Per value of ``by`` (``"domain"`` or ``"task_type"``), sorted by name:
    ``{group, cases, precision, recall, f1, mean_k, mean_b}`` (means over the group's dialogues).

    Raises ``ValueError`` for another ``by``."""
    if by not in ("domain", "task_type"):
        raise ValueError(f"group_means: by must be domain or task_type (got {by!r})")
    df = metrics_frame(records)
    return df.group_by(by).agg(_mean_exprs()).sort(by).rename({by: "group"}).to_dicts()


def type_recall(records: Iterable[Record],
                type_of: Callable[[str, str], str | None] | None = None) -> dict[str, dict[str, Any]]:
    """Recall per disagreement type over all MAs of the scored records (paper Table 12):
    ``{type: {hit, total, recall}}``, an MA counting as hit when its id is in the record's
    ``metrics.mas_hit``. ``type_of(case_id, ma_id)`` (type labels, ``report --types``)
    gives an MA's type before the record's own; an MA without either (the released data,
    older data) counts under :data:`UNTYPED` (the one rule, shared by ``summary.json`` and
    ``report --by type``). Types in :data:`MA_TYPES` order, then others, then
    :data:`UNTYPED`; only types that occur."""
    counts: dict[str, list[int]] = {}
    for r in records:
        hit = set(r.metrics.mas_hit) if r.metrics else set()
        for ma in r.misalignment_points:
            c = counts.setdefault((type_of(r.case_id, ma.id) if type_of else None) or ma.type or UNTYPED, [0, 0])
            c[0] += ma.id in hit
            c[1] += 1
    return {t: {"hit": h, "total": n, "recall": h / n} for t, (h, n) in sorted(counts.items(), key=_type_order)}


def _type_order(item: tuple[str, Any]) -> tuple[int, str]:
    name = item[0]
    if name in MA_TYPES:
        return MA_TYPES.index(name), name
    return (len(MA_TYPES) + (name == UNTYPED)), name


def type_order(names: Iterable[str]) -> list[str]:
    """``names`` in Table-12 order (:data:`MA_TYPES`, then other names, then :data:`UNTYPED`)."""
    return [n for n, _ in sorted(((n, None) for n in set(names)), key=_type_order)]


def c_breakdown(records: Iterable[Record]) -> dict[str, dict[str, Any]]:
    """Category-C questions by reason over the scored records (paper §E.2):
    ``{reason: {count, share}}`` in :data:`C_REASONS` order; ``share`` = count / all C
    questions (``None`` when there is no C question)."""
    totals = dict.fromkeys(C_REASONS, 0)
    for r in records:
        for reason, n in (r.c_breakdown or {}).items():
            totals[reason] += n
    all_c = sum(totals.values())
    return {reason: {"count": n, "share": n / all_c if all_c else None} for reason, n in totals.items()}
