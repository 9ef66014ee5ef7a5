"""Scoring of the IoA-Suite evaluation (paper §4.2): question
categories A/B/C, per-dialogue precision/recall/F1, and the aggregates of
``summary.json``. Pure functions over plain data.

Category A: divergent, meaningful, implicit, not redundant, attributed to an MA.
B: the same but unattributed. C: everything else, with its reason, checked in the order
``not_diverging``, ``not_meaningful``, ``not_implicit``, ``redundant``. Per dialogue
P = |A| / (|A| + |C|), R = |MAs hit by some A| / |MAs|, F1 = 2PR / (P + R); a zero
denominator gives 0; B counts in neither. Aggregates are means over scored dialogues.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable, Mapping, Sequence

from ioa_synth.evaluate.analysis import tables
from ioa_synth.evaluate.record_model import C_REASONS, EvalRecord
from ioa_synth.evaluate.series import series_summary
from ioa_synth.probing.text import overlapping_mas, token_overlap

_PRF = ("precision", "recall", "f1")


def categorize(divergent: bool, judgement: dict[str, Any] | None) -> tuple[str, str | None, str | None]:
    """``(category, reason, ma_id)`` of one question. ``judgement`` is the filter's
    decision (keys ``is_meaningful``, ``is_implicit``, ``redundant_with``,
    ``hits_ground_truth``), ``None`` when the question did not diverge.

    Raises:
        ValueError: a divergent question without a judgement.
    """
    if not divergent:
        return "C", "not_diverging", None
    if judgement is None:
        raise ValueError("a divergent question needs the filter's judgement")
    if not judgement["is_meaningful"]:
        return "C", "not_meaningful", None
    if not judgement["is_implicit"]:
        return "C", "not_implicit", None
    if judgement["redundant_with"] is not None:
        return "C", "redundant", None
    if judgement["hits_ground_truth"]:
        return "A", None, judgement["hits_ground_truth"]
    return "B", None, None


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def prf(a: int, c: int, mas_hit: int, num_mas: int) -> tuple[float, float, float]:
    """Unrounded per-dialogue ``(P, R, F1)`` from |A|, |C|, the number of MAs hit by an A
    question and the number of MAs (paper §4.2); a zero denominator gives 0. The one
    formula behind :func:`dialogue_metrics` and the training reward (App. D.1)."""
    p = _ratio(a, a + c)
    r = _ratio(mas_hit, num_mas)
    return p, r, _ratio(2 * p * r, p + r)


def dialogue_metrics(categories: list[tuple[str, str | None]], ma_ids: list[str]) -> dict[str, Any]:
    """Per-dialogue metrics from ``(category, ma_id)`` per question and the case's MA ids.

    Returns ``{"precision", "recall", "f1"}`` (0-1, rounded to 4 places) plus ``k``
    (questions), ``a``, ``b``, ``c``, ``mas_hit`` (sorted MA ids hit by an A question)
    and ``num_mas``. Example (paper App. E.1): A,A,A,A,C over 4 MAs (one A each) gives
    P 0.8, R 1.0, F1 0.8889.
    """
    counts = Counter(cat for cat, _ in categories)
    hit = sorted({ma for cat, ma in categories if cat == "A" and ma in ma_ids})
    p, r, f1 = prf(counts["A"], counts["C"], len(hit), len(ma_ids))
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f1, 4), "k": len(categories),
            "a": counts["A"], "b": counts["B"], "c": counts["C"], "mas_hit": hit, "num_mas": len(ma_ids)}


def c_breakdown(reasons: Iterable[str | None]) -> dict[str, int]:
    """Count of category-C questions per reason (every reason present, possibly 0)."""
    counts = Counter(r for r in reasons if r)
    return {r: counts[r] for r in C_REASONS}


def summarize(records: Sequence[EvalRecord | Mapping[str, Any]], requested: int, setup: dict[str, Any]) -> dict[str, Any]:
    """``summary.json`` from the records of the requested cases (``status`` ``scored`` or
    ``failed``; a missing record counts as neither), as :class:`EvalRecord` or as decoded JSON. ``setup`` holds ``mode``,
    ``access``, ``rollouts``, ``permute_seed``, copied in; ``ambiguity`` runs add
    ``expressions`` (:func:`expression_overlap`).

    The aggregates are those of ``report`` (:mod:`ioa_synth.evaluate.analysis.tables`,
    the one implementation), rounded to 4 places, ``None`` (JSON ``null``) when nothing was
    scored (a mean over no dialogue is undefined, not 0): P/R/F1, ``mean_k``, ``mean_b``, ``type_recall`` (an MA without a type counts under
    ``"untyped"``), ``c_breakdown`` (counts per reason), ``by_domain``/``by_task_type``
    (``{cases, precision, recall, f1}`` per group).

    Raises:
        pydantic.ValidationError: a record that does not fit the results format.
    """
    status = [r.status if isinstance(r, EvalRecord) else r["status"] for r in records]
    scored = [r if isinstance(r, EvalRecord) else EvalRecord.model_validate(r)
              for r, s in zip(records, status) if s == "scored"]
    failed = status.count("failed")
    overall = tables.means(scored)

    def rounded(values: dict[str, Any], keys: Iterable[str]) -> dict[str, float | None]:
        return {k: round(values[k], 4) if values[k] is not None else None for k in keys}

    def group(key: str) -> dict[str, Any]:
        return {g["group"]: {"cases": g["cases"], **rounded(g, _PRF)} for g in tables.group_means(scored, key)}

    n = len(scored)
    return {
        "complete": n == requested, "cases": {"requested": requested, "scored": n, "failed": failed},
        **rounded(overall, (*_PRF, "mean_k", "mean_b")),
        "type_recall": {t: {**v, "recall": round(v["recall"], 4)} for t, v in tables.type_recall(scored).items()},
        "c_breakdown": {reason: v["count"] for reason, v in tables.c_breakdown(scored).items()},
        "by_domain": group("domain"), "by_task_type": group("task_type"),
        **{k: setup.get(k) for k in ("mode", "access", "rollouts", "permute_seed")},
        **expression_overlap(scored),
        **series_summary(scored),  # a series of meetings: recall by meeting and by age
    }


def expression_overlaps(expressions: list[dict[str, Any]], surface_forms: dict[str, str],
                        overlap: Callable[[str | None, str | None], float] = token_overlap) -> list[dict[str, Any]]:
    """The ``ambiguity`` (or ``wordnet``) prober's selected ``expressions`` (``{expression,
    turn}``) as recorded: each with ``overlaps_ma`` (``{MA id: overlap}`` with the MA's
    surface form in ``surface_forms`` ``{MA id: text}`` by ``overlap``, see
    :mod:`ioa_synth.probing.text`) and ``overlaps`` (bool); paper §5.1, Table 11."""
    out = []
    for e in expressions:
        hits = overlapping_mas(e["expression"], surface_forms, overlap)
        out.append({**e, "overlaps_ma": hits, "overlaps": bool(hits)})
    return out


def expression_overlap(scored: list[EvalRecord]) -> dict[str, Any]:
    """``{"expressions": {"selected", "overlapping_ma", "share"}}`` over the scored records
    that hold ``ambiguity``-mode expressions (paper §5.1): how many selected
    expressions overlap some MA's surface form; ``{}`` when no record has expressions."""
    if all(r.expressions is None for r in scored):
        return {}
    exprs = [e for r in scored for e in r.expressions or []]
    hit = sum(e.overlaps for e in exprs)
    return {"expressions": {"selected": len(exprs), "overlapping_ma": hit, "share": round(_ratio(hit, len(exprs)), 4)}}
