"""Series of meetings: one case is K = 2..5 dialogues among the same participants
(``build --meetings K``).

The paper's cases are single meetings, and its "Limitations" section leaves disagreements that
live on across meetings open. A series plans its points once (stage 1) and says, per point, in
two additive fields when the point enters the series and when, if ever, it comes to light:

- ``planted_in``: the meeting (1-based) whose dialogue first says the point's surface form;
- ``surfaces_in``: the later meeting in which a member says their reading aloud and the
  difference comes out, or ``null``: the point stays latent through meeting K.

Each outline turn says its ``meeting``, and so does each dialogue turn (``turn_idx`` runs
over the whole series). A one-meeting case (K = 1, the paper's) has none of these fields: its
records keep the released layout byte for byte.

Ground truth after meeting k (:func:`live_after`): the points planted by then and not yet
surfaced, ``planted_in <= k and (surfaces_in is None or surfaces_in > k)``. A point's age
after meeting k is ``k - planted_in`` (:func:`ages_after`).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pydantic import BaseModel

from ioa_synth.core.validation import checked_count
from ioa_synth.protocol.multiparty import MultiMisalignmentPoint, MultiStage1Output, stage1_model
from ioa_synth.protocol.schemas import (MisalignmentPoint, OutlineTurn, Stage1Output, Stage2Output, Turn, _items)
from ioa_synth.text.plural import plural

#: Fewest and most meetings of a case (``--meetings``); 1 is the paper's single meeting.
MIN_MEETINGS, MAX_MEETINGS = 1, 5

#: Version of the series planning rules (part of a series generator's fingerprint).
SERIES_PLAN_VERSION = 1

#: Fewest outline (and dialogue) turns per meeting.
MIN_TURNS_PER_MEETING = 2


def check_meetings(k: int) -> int:
    """``k`` when it is a number of meetings a build takes (1-5).

    Raises:
        ValueError: any other number, with the sentence the command prints.
    """
    return checked_count(k, MIN_MEETINGS, MAX_MEETINGS, "--meetings", "meetings", "the paper's single meeting")


class SeriesMisalignmentPoint(MisalignmentPoint):
    """A point of a two-person series: the dyadic fields plus ``planted_in`` and ``surfaces_in``."""

    planted_in: int
    surfaces_in: int | None = None


class SeriesMultiMisalignmentPoint(MultiMisalignmentPoint):
    """A point of a series of meetings of 3-6 people: sides plus ``planted_in`` and ``surfaces_in``."""

    planted_in: int
    surfaces_in: int | None = None


class SeriesOutlineTurn(OutlineTurn):
    """An outline turn of a series: the meeting (1-based) it belongs to."""

    meeting: int


class SeriesStage1Output(Stage1Output):
    """Stage-1 output of a two-person series."""

    misalignment_points: list[SeriesMisalignmentPoint] = _items(2, 4)
    conversation_outline: list[SeriesOutlineTurn] = _items(4, 30)


class SeriesMultiStage1Output(MultiStage1Output):
    """Stage-1 output of a series of meetings of 3-6 people."""

    misalignment_points: list[SeriesMultiMisalignmentPoint] = _items(2, 4)
    conversation_outline: list[SeriesOutlineTurn] = _items(4, 30)


class SeriesTurn(Turn):
    """A dialogue turn of a series: the meeting it was said in."""

    meeting: int


class SeriesStage2Output(Stage2Output):
    """The dialogues of a series as one list of turns (``turn_idx`` 1..T over the series)."""

    turns: list[SeriesTurn] = _items(4, 80)

    def meeting(self, k: int) -> list[SeriesTurn]:
        """The turns of meeting ``k``, in order."""
        return [t for t in self.turns if t.meeting == k]


def series_stage1_model(base: type[Stage1Output]) -> type[Stage1Output]:
    """The series form of a stage-1 model (:class:`Stage1Output` or :class:`MultiStage1Output`)."""
    return SeriesMultiStage1Output if issubclass(base, MultiStage1Output) else SeriesStage1Output


def record_models(profiles: Mapping[str, Any], turns: list[Any]) -> tuple[type[Stage1Output], type[Stage2Output]]:
    """The models that read a record's ``profiles`` (``base``: the one- or N-person model,
    :func:`~ioa_synth.protocol.multiparty.stage1_model`) and ``dialogue.turns`` without
    dropping a field: the series forms when a point has ``planted_in`` or a turn ``meeting``
    (``build --meetings K``), else the one-meeting models (a record read exactly as before)."""
    base = stage1_model(dict(profiles))
    dialogue = SeriesStage2Output if any(isinstance(t, Mapping) and "meeting" in t for t in turns) else Stage2Output
    return (series_stage1_model(base) if is_series(profiles) else base), dialogue


def is_series(profiles: BaseModel | Mapping[str, Any]) -> bool:
    """Whether ``profiles`` (a model or a record's dict) plan a series: a point with ``planted_in``."""
    data = profiles.model_dump() if isinstance(profiles, BaseModel) else profiles
    return any(isinstance(p, Mapping) and p.get("planted_in") is not None
               for p in data.get("misalignment_points") or [])


def _point_fields(p: Any) -> tuple[str, int, int | None]:
    if isinstance(p, Mapping):
        return p["id"], int(p["planted_in"]), p.get("surfaces_in")
    return p.id, p.planted_in, p.surfaces_in


def live_after(points: Iterable[Any], k: int) -> list[str]:
    """Ids of the points live after meeting ``k`` (1-based): planted by then and not yet
    surfaced, ``planted_in <= k and (surfaces_in is None or surfaces_in > k)``; ``points``
    are models or a record's dicts. Example: MA1 planted in 1 and surfacing in 3 is live after
    meetings 1 and 2, not after 3."""
    out = []
    for p in points:
        pid, planted, surfaces = _point_fields(p)
        if planted <= k and (surfaces is None or surfaces > k):
            out.append(pid)
    return out


def ages_after(points: Iterable[Any], k: int) -> dict[str, int]:
    """``{id: k - planted_in}`` of the points live after meeting ``k`` (meetings since planting)."""
    pts = list(points)
    live = set(live_after(pts, k))
    return {pid: k - planted for pid, planted, _ in map(_point_fields, pts) if pid in live}


def series_stage1_problems(out: Stage1Output, k: int) -> list[str]:
    """The series rules of a stage-1 output of ``k`` meetings (empty when it complies): each
    point's ``planted_in`` in 1..k and ``surfaces_in`` null or after it and at most k; each
    outline turn's ``meeting`` in 1..k, never earlier than the turn before, each meeting with at
    least :data:`MIN_TURNS_PER_MEETING` turns; a point's first outline turn in its
    ``planted_in`` meeting, none of its turns before it, and a turn of its ``surfaces_in``
    meeting listing it."""
    problems: list[str] = []
    outline = out.conversation_outline
    meetings = [getattr(t, "meeting", None) for t in outline]
    if any(m is None or not 1 <= m <= k for m in meetings):
        problems.append(f"every outline turn needs a meeting from 1 to {k}")
        return problems
    if any(b < a for a, b in zip(meetings, meetings[1:])):
        problems.append("the outline goes back to an earlier meeting; list the turns meeting by meeting")
    for m in range(1, k + 1):
        n = meetings.count(m)
        if n < MIN_TURNS_PER_MEETING:
            problems.append(f"meeting {m} has {plural(n, 'outline turn')}; plan at least {MIN_TURNS_PER_MEETING}")
    for p in out.misalignment_points:
        planted, surfaces = getattr(p, "planted_in", None), getattr(p, "surfaces_in", None)
        if planted is None or not 1 <= planted <= k:
            problems.append(f"{p.id}: planted_in must be a meeting from 1 to {k}")
            continue
        if surfaces is not None and not planted < surfaces <= k:
            problems.append(f"{p.id}: surfaces_in must be null or a meeting after {planted} (planted_in), at most {k}")
        touching = [t.meeting for t in outline if p.id in t.ma_ids]
        if touching and min(touching) != planted:
            problems.append(f"{p.id}: its first outline turn is in meeting {min(touching)}, but planted_in is {planted}")
        if surfaces is not None and surfaces not in touching:
            problems.append(f"{p.id}: no outline turn of meeting {surfaces} (surfaces_in) lists it")
    return problems


def series_stage2_problems(out: SeriesStage2Output, k: int) -> list[str]:
    """Structural rules of a series' dialogues: meetings 1..k each with at least
    :data:`MIN_TURNS_PER_MEETING` turns, and no turn of another meeting."""
    problems = [f"meeting {m} has {plural(len(out.meeting(m)), 'turn')}; write at least {MIN_TURNS_PER_MEETING}"
                for m in range(1, k + 1) if len(out.meeting(m)) < MIN_TURNS_PER_MEETING]
    stray = sorted({t.meeting for t in out.turns} - set(range(1, k + 1)))
    if stray:
        problems.append(f"turns of meeting {', '.join(map(str, stray))}; the series has meetings 1 to {k}")
    return problems


def series_schema(schema: dict[str, Any], k: int) -> dict[str, Any]:
    """A stage-1 request ``schema`` (two people or N, protocol-mode shape) with the series
    fields: each point's ``planted_in`` (1..k) and ``surfaces_in`` (2..k or null), each outline
    turn's ``meeting`` (1..k); the outline's bounds widened to at least
    :data:`MIN_TURNS_PER_MEETING` turns a meeting and two more turns for each meeting after the
    first. Changes and returns ``schema``."""
    props = schema["properties"]
    points = props["misalignment_points"]
    for point in [*points.get("prefixItems", []), *([points["items"]] if "items" in points else [])]:
        point["properties"] = {**point["properties"],
                               "planted_in": {"type": "integer", "minimum": 1, "maximum": k},
                               "surfaces_in": {"anyOf": [{"type": "integer", "minimum": 2, "maximum": k},
                                                         {"type": "null"}]}}
        point["required"] = [*point.get("required", []), "planted_in", "surfaces_in"]
    outline = props["conversation_outline"]
    low = max(int(outline.get("minItems", 4)), MIN_TURNS_PER_MEETING * k)
    high = max(int(outline.get("maxItems", 14)) + 2 * (k - 1), low)
    item = outline["items"]
    item["properties"] = {**item["properties"], "meeting": {"type": "integer", "minimum": 1, "maximum": k}}
    item["properties"]["turn"] = {"type": "integer", "minimum": 1, "maximum": high}
    item["required"] = [*item.get("required", []), "meeting"]
    outline.update(minItems=low, maxItems=high)
    return schema


def restricted_profiles(profiles: Stage1Output, k: int) -> Stage1Output:
    """``profiles`` as meeting ``k``'s writer sees them: the points planted by meeting ``k``
    and the outline turns of meeting ``k`` (the generator of meeting ``k`` plants no later
    point and follows only its own meeting's turns, numbered from 1)."""
    points = [p for p in profiles.misalignment_points if p.planted_in <= k]
    outline = [t.model_copy(update={"turn": i})
               for i, t in enumerate((t for t in profiles.conversation_outline if t.meeting == k), start=1)]
    return profiles.model_copy(update={"misalignment_points": points, "conversation_outline": outline})


def combine(meetings: list[Stage2Output]) -> SeriesStage2Output:
    """The dialogues of meetings 1..K as one series: each turn marked with its meeting and
    ``turn_idx`` renumbered 1..T over the series."""
    turns, idx = [], 0
    for k, dialogue in enumerate(meetings, start=1):
        for t in dialogue.turns:
            idx += 1
            turns.append(SeriesTurn(**{**t.model_dump(), "turn_idx": idx, "meeting": k}))
    return SeriesStage2Output(turns=turns)


__all__ = ["MAX_MEETINGS", "MIN_MEETINGS", "MIN_TURNS_PER_MEETING", "SERIES_PLAN_VERSION", "SeriesMisalignmentPoint",
           "SeriesMultiMisalignmentPoint", "SeriesMultiStage1Output", "SeriesOutlineTurn", "SeriesStage1Output",
           "SeriesStage2Output", "SeriesTurn", "ages_after", "check_meetings", "combine", "is_series", "live_after",
           "record_models", "restricted_profiles", "series_schema", "series_stage1_model", "series_stage1_problems",
           "series_stage2_problems"]
