"""What a series of K = 2..5 meetings (``estimate build --meetings K``,
:mod:`ioa_synth.build.stages_series`) adds to a build's estimate
(:mod:`ioa_synth.build.estimate`): the series note on every prompt, stage 2 as one generator
call per meeting, each prompt showing the earlier meetings' lines, and the stage-2 judge
reading the whole series.

- The series note (``build_series/series_note.jinja2``, 500-1,200 characters) is counted on
  every prompt (:func:`with_series_notes`): rendered with the build's own template for a
  case of :data:`NOTE_POINTS` points spread over the meetings, and added to each prompt's
  skeleton before a measured prompt is compared with it (so a pilot's stored prompts, which
  hold the note, do not count it twice).
- Each meeting is taken to write about one meeting's completion ``e2`` (the stored stage-2
  generator calls of meeting 1, else ``max_tokens``). Stage-2 generator and regeneration
  calls: K times as many (:func:`series_kinds`); meeting k's prompt adds the lines of the
  k-1 meetings before it, :data:`LINES_SHARE` of their completions, so one call adds
  ``LINES_SHARE * e2 * (K - 1) / 2`` on average.
- The stage-2 judge's prompt carries the K meetings' output (``e1 + K * e2`` instead of one
  meeting's ``e1 + e2``; :func:`judge_carried`), at the share a judge prompt carries of a
  shown output (measured, or :data:`~ioa_synth.build.estimate.EMBED_SHARE`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ioa_synth.build.prompts import SERIES_NOTE
from ioa_synth.core.templates import render_template
from ioa_synth.protocol.series import MIN_TURNS_PER_MEETING
from ioa_synth.runs.spend import CallKind

#: Share of a meeting's completion tokens (thoughts and lines) that its lines make up, as a
#: later meeting's prompt shows them (speaker name and utterance only).
LINES_SHARE = 0.5

#: The stage-2 generator call kinds a series writes once per meeting.
PER_MEETING = ("stage 2 generator", "stage 2 regeneration")

#: Points of the case the note is rendered for: a plan has 2-4 (``protocol.plan.points_for``), 3 on average.
NOTE_POINTS = 3


def _points(k: int) -> list[dict[str, Any]]:
    """:data:`NOTE_POINTS` points planted in meetings 1, 2, ... in turn, the first surfacing in ``k``."""
    return [{"id": f"MA{i + 1}", "planted_in": 1 + i % k, "surfaces_in": k if i == 0 else None}
            for i in range(NOTE_POINTS)]


def note_texts(k: int) -> dict[str, list[str]]:
    """The series notes a case of ``k`` meetings adds, by skeleton key (``s1g``, ``s1j``,
    ``s2g``, ``s2j``): the plan's, the judges' (the stage-2 one with each meeting's turn
    range) and each meeting's writer's (without the earlier meetings' lines, counted by
    :data:`LINES_SHARE`); each a list of the texts (system, user) appended to one prompt,
    ``s2g`` one such pair per meeting."""
    points = _points(k)
    per = MIN_TURNS_PER_MEETING + 1
    ranges = [{"meeting": m, "first": per * (m - 1) + 1, "last": per * m} for m in range(1, k + 1)]

    def texts(**ctx: Any) -> list[str]:
        return [m["content"] for m in render_template(SERIES_NOTE, k=k, **ctx).messages]

    return {"s1g": texts(part="plan", min_turns=MIN_TURNS_PER_MEETING),
            "s1j": texts(part="judge", points=points, meetings=[]),
            "s2g": [t for m in range(1, k + 1) for t in texts(
                part="meeting", meeting=m, earlier=[], planted=[p["id"] for p in points if p["planted_in"] == m],
                surfacing=[p["id"] for p in points if p["surfaces_in"] == m])],
            "s2j": texts(part="judge", points=points, meetings=ranges)}


def with_series_notes(skeletons: list[dict[str, int]], meetings: int, gen: Any, judge: Any) -> list[dict[str, int]]:
    """``skeletons`` (prompt tokens by key, one dict per case) with the series note of a case
    of ``meetings`` meetings counted in, by the generator's (``s1g``, ``s2g``: the mean over
    the meetings) or the judge's counter (``gen``, ``judge``: component setups with
    ``counter.text``); unchanged for one meeting."""
    if meetings == 1:
        return skeletons
    notes = note_texts(meetings)
    add = {key: sum((gen if key.endswith("g") else judge).counter.text(t) for t in texts)
           / (meetings if key == "s2g" else 1) for key, texts in notes.items()}
    return [{key: value + add.get(key, 0) for key, value in s.items()} for s in skeletons]


def judge_carried(e1: float, e2: float, meetings: int) -> float:
    """Completion tokens a stage-2 judge prompt shows: the plan's ``e1`` and ``meetings``
    dialogues of ``e2`` each."""
    return e1 + meetings * e2


def series_kinds(kinds: list[CallKind], meetings: int, e2: float) -> list[CallKind]:
    """``kinds`` of a one-meeting build as a series of ``meetings`` prices them: stage-2
    generator calls (``calls`` per case) times ``meetings`` with the earlier meetings' lines
    in their prompts (``e2``: the completion tokens of one meeting's call)."""
    if meetings == 1:
        return kinds
    return [replace(kind, label=f"{kind.label} ({meetings} meetings)", calls=kind.calls * meetings,
                    prompt=kind.prompt + LINES_SHARE * e2 * (meetings - 1) / 2) if kind.label in PER_MEETING else kind
            for kind in kinds]


__all__ = ["LINES_SHARE", "NOTE_POINTS", "judge_carried", "note_texts", "series_kinds", "with_series_notes"]
