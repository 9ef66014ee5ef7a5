"""Evaluation of a series of meetings (``build --meetings K``, :mod:`ioa_synth.protocol.series`).

A series case is probed after each meeting k = 1..K: the probe after meeting k is one unit of
the run (case id ``<case>@meeting<k>``) whose transcript is the turns of meetings 1..k (under
the run's ``--access``, as today) and whose ground truth is the points live after meeting k
(:func:`~ioa_synth.protocol.series.live_after`). A probe after a meeting with no live point
is not made (its recall would be undefined). Prober, simulator, filter and P/R/F1 are those
of a single meeting; the record says its ``meeting`` and each point's ``planted_in``,
``surfaces_in`` and ``age`` (k - planted_in).

``summary.json`` adds, over the scored probes (pooled: hits over live points):

- ``by_meeting``: ``{k: {"probes", "live", "hit", "recall", "precision", "f1"}}``, ``recall``
  = points hit by an A question / points live after meeting k; ``precision`` and ``f1`` the
  means over the probes after meeting k;
- ``by_age``: ``{a: {"live", "hit", "recall"}}`` over the live points of age a.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

from ioa_synth.probing.cases import EvalCase
from ioa_synth.protocol.series import ages_after, live_after


class SeriesInputError(ValueError):
    """A series case whose turns do not all say their meeting; names the field."""


def meetings_of(case: EvalCase) -> int:
    """The number of meetings of ``case``: 1 unless its points say ``planted_in``.

    Raises:
        SeriesInputError: a series case with a turn without ``meeting``."""
    if not any(p.planted_in is not None for p in case.profiles.misalignment_points):
        return 1
    missing = next((i for i, t in enumerate(case.turns) if t.meeting is None), None)
    if missing is not None:
        raise SeriesInputError(f"dialogue.turns.{missing}.meeting: a series case (points with planted_in) needs "
                               "each turn's meeting")
    return max(t.meeting for t in case.turns)  # type: ignore[type-var]


def probes(case: EvalCase) -> list[EvalCase]:
    """``case`` itself (one meeting), or one probe per meeting k with a live point: the
    turns of meetings 1..k and the points live after k, ``meeting`` and ``ages`` set."""
    if not any(p.planted_in is not None for p in case.profiles.misalignment_points):
        return [case]
    k_max = meetings_of(case)
    points = case.profiles.misalignment_points
    out = []
    for k in range(1, k_max + 1):
        live = set(live_after(points, k))
        if not live:
            continue
        profiles = case.profiles.model_copy(update={"misalignment_points": [p for p in points if p.id in live]})
        out.append(EvalCase(case_id=f"{case.case_id}@meeting{k}", source_file=case.source_file, domain=case.domain,
                            task_type=case.task_type, sha256=case.sha256, profiles=profiles,
                            turns=[t for t in case.turns if (t.meeting or 0) <= k], language=case.language,
                            meeting=k, ages=ages_after(points, k)))
    return out


def series_summary(scored: Sequence[Any]) -> dict[str, Any]:
    """``{"by_meeting", "by_age"}`` over the scored records (:class:`EvalRecord`) of series
    probes; ``{}`` when none is a series probe."""
    series = [r for r in scored if getattr(r, "meeting", None) is not None]
    if not series:
        return {}
    by_meeting: dict[int, dict[str, Any]] = defaultdict(lambda: {"probes": 0, "live": 0, "hit": 0, "p": [], "f": []})
    by_age: dict[int, dict[str, int]] = defaultdict(lambda: {"live": 0, "hit": 0})
    for r in series:
        hit = set(r.metrics.mas_hit)
        m = by_meeting[r.meeting]
        m["probes"] += 1
        m["p"].append(r.metrics.precision)
        m["f"].append(r.metrics.f1)
        for p in r.misalignment_points:
            m["live"] += 1
            m["hit"] += p.id in hit
            a = by_age[int(getattr(p, "age"))]
            a["live"] += 1
            a["hit"] += p.id in hit

    def ratio(h: int, n: int) -> float | None:
        return round(h / n, 4) if n else None

    return {"by_meeting": {str(k): {"probes": v["probes"], "live": v["live"], "hit": v["hit"],
                                    "recall": ratio(v["hit"], v["live"]),
                                    "precision": round(sum(v["p"]) / len(v["p"]), 4),
                                    "f1": round(sum(v["f"]) / len(v["f"]), 4)}
                           for k, v in sorted(by_meeting.items())},
            "by_age": {str(a): {**v, "recall": ratio(v["hit"], v["live"])} for a, v in sorted(by_age.items())}}


__all__ = ["SeriesInputError", "meetings_of", "probes", "series_summary"]
