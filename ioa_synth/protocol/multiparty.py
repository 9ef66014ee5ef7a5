"""Multi-party cases: meetings of N = 3..6 participants (``build --participants N``).

The paper's cases are dyadic (IoA paper, "Limitations"): each misalignment point (MA) has two
readings, ``member_a_understanding`` held by M1 and ``member_b_understanding`` held by M2. A
multi-party case keeps both readings as the point's two *sides* and says who holds each, in
two additive fields of the point:

- ``between``: ``{"a": [member ids], "b": [member ids]}``, the participants who hold the
  reading ``member_a_understanding`` (side a) and those who hold ``member_b_understanding``
  (side b); each side names one participant or more;
- ``neutral``: ``[member ids]``, the participants who hold neither reading (possibly none).

Every member id M1..MN is in exactly one of ``a``, ``b`` and ``neutral``. A two-person case
has neither field (its records keep the released layout byte for byte): its sides are
``a = [M1]``, ``b = [M2]`` (:func:`sides_of`).

The models here are read leniently, like :mod:`ioa_synth.protocol.schemas`; the content
rules are :func:`multi_stage1_problems` and :func:`multi_stage2_problems`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ioa_synth.protocol.schemas import (MisalignmentPoint, Stage1Output, Stage2Output, _items, _Strict,
                                        member_and_point_problems)
from ioa_synth.text.plural import plural

#: Fewest and most participants of a build (``--participants``); 2 is the paper's dyad.
MIN_PARTICIPANTS, MAX_PARTICIPANTS = 2, 6

#: The sides of a point, in the order of its two readings.
SIDES = ("a", "b")


def member_ids(n: int) -> list[str]:
    """``["M1", ..., "Mn"]``."""
    return [f"M{i}" for i in range(1, n + 1)]


class Sides(_Strict):
    """Who holds each reading of a point: ``a`` the holders of ``member_a_understanding``,
    ``b`` those of ``member_b_understanding`` (member ids, one or more each)."""

    a: list[str] = Field(..., json_schema_extra={"minItems": 1})
    b: list[str] = Field(..., json_schema_extra={"minItems": 1})


class MultiMisalignmentPoint(MisalignmentPoint):
    """A point of a multi-party case: the dyadic fields plus ``between`` and ``neutral``."""

    between: Sides
    neutral: list[str] = Field(default_factory=list)


class MultiStage1Output(Stage1Output):
    """Stage-1 output of a multi-party case: N members, points with sides."""

    misalignment_points: list[MultiMisalignmentPoint] = _items(2, 4)


def stage1_model(profiles: dict[str, Any]) -> type[Stage1Output]:
    """The model that reads a record's ``profiles`` (a dict) without dropping a field:
    :class:`MultiStage1Output` when a point names its sides or there are more than two
    members, :class:`~ioa_synth.protocol.schemas.Stage1Output` otherwise (a two-person
    record, read exactly as before)."""
    points = profiles.get("misalignment_points") or []
    multi = len(profiles.get("members") or []) > 2 or any(isinstance(p, dict) and "between" in p for p in points)
    return MultiStage1Output if multi else Stage1Output


def sides_of(point: BaseModel | dict[str, Any]) -> dict[str, list[str]]:
    """``{"a": [...], "b": [...], "neutral": [...]}`` of ``point`` (a model or a record's
    dict); a point without ``between`` is a dyad's: ``a = [M1]``, ``b = [M2]``."""
    data = point.model_dump() if isinstance(point, BaseModel) else point
    between = data.get("between")
    if not between:
        return {"a": ["M1"], "b": ["M2"], "neutral": []}
    return {"a": list(between.get("a") or []), "b": list(between.get("b") or []),
            "neutral": list(data.get("neutral") or [])}


def side_of(point: BaseModel | dict[str, Any], member: str) -> str | None:
    """``"a"``, ``"b"`` or ``None`` (neutral, or not in the case) for ``member`` on ``point``."""
    sides = sides_of(point)
    return next((s for s in SIDES if member in sides[s]), None)


def reading_of(point: BaseModel | dict[str, Any], member: str) -> str | None:
    """The reading ``member`` holds of ``point`` (its side's understanding), or ``None``."""
    side = side_of(point, member)
    if side is None:
        return None
    data = point.model_dump() if isinstance(point, BaseModel) else point
    return data[f"member_{side}_understanding"]


def side_problems(point: BaseModel | dict[str, Any], ids: list[str]) -> list[str]:
    """What breaks the partition rule in ``point``'s sides over the case's member ``ids``:
    each side non-empty, no id unknown or in two places, every member placed."""
    sides = sides_of(point)
    pid = point.id if isinstance(point, BaseModel) else point.get("id")
    out: list[str] = []
    for s in SIDES:
        if not sides[s]:
            out.append(f"{pid}: side {s} names no participant; each side is held by one participant or more")
    placed = sides["a"] + sides["b"] + sides["neutral"]
    unknown = sorted(set(placed) - set(ids))
    if unknown:
        out.append(f"{pid}: {', '.join(unknown)} is not a member id ({', '.join(ids)})")
    twice = sorted({m for m in placed if placed.count(m) > 1})
    if twice:
        out.append(f"{pid}: {', '.join(twice)} is placed twice; each member is on side a, side b or neutral")
    missing = [m for m in ids if m not in placed]
    if missing:
        out.append(f"{pid}: {', '.join(missing)} is on no side; list each member in between.a, between.b or neutral")
    return out


def multi_stage1_problems(out: Stage1Output, n: int) -> list[str]:
    """The stage-1 content rules of an ``n``-person case (empty when it complies): members
    exactly M1..Mn, 3-5 hidden assumptions each, 2-4 points with unique ids, one of them
    definitional, each point's sides a partition of the members (:func:`side_problems`)."""
    ids = member_ids(n)
    problems = member_and_point_problems(out, ids)
    for p in out.misalignment_points:
        if getattr(p, "between", None) is None:
            problems.append(f"{p.id} has no between; say which participants hold each reading")
        else:
            problems += side_problems(p, ids)
    return problems


def multi_stage2_problems(out: Stage2Output, n: int) -> list[str]:
    """Structural rules of an ``n``-person dialogue: at least max(4, n) turns and every
    member M1..Mn speaking (the multi-party reading of "both members speak")."""
    ids = member_ids(n)
    problems: list[str] = []
    if len(out.turns) < max(4, n):
        problems.append(f"only {plural(len(out.turns), 'turn')}; write at least {max(4, n)}")
    speakers = {t.speaker_id for t in out.turns}
    silent = [m for m in ids if m not in speakers]
    if silent:
        problems.append(f"every participant must speak ({', '.join(silent)} never does)")
    strangers = sorted(speakers - set(ids))
    if strangers:
        problems.append(f"speaker ids must be {', '.join(ids)} (got {', '.join(strangers)})")
    return problems


__all__ = ["MAX_PARTICIPANTS", "MIN_PARTICIPANTS", "MultiMisalignmentPoint", "MultiStage1Output", "SIDES", "Sides",
           "member_ids", "stage1_model", "multi_stage1_problems", "multi_stage2_problems", "reading_of", "side_of", "side_problems",
           "sides_of"]
