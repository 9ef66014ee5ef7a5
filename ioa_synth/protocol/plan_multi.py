"""Request schemas of multi-party cases (``build --participants N``, N = 3..6).

A multi-party case is planned like a protocol-mode case (:mod:`ioa_synth.protocol.plan_modes`)
whatever the generator's plan mode: the toolkit fixes the member ids M1..MN, the number of
misalignment points and their ids (:func:`~ioa_synth.protocol.plan.points_for`), MA1
definitional and any planted types; names, surface forms and the outline are the model's.
Each point's ``between`` (sides a and b) and ``neutral`` lists may name only the case's
member ids; the outline has :func:`multi_outline_bounds` turns and any member may speak.
The dyadic scaffold plan (fixed names, alternating speakers, anchor turns) has no
multi-party form yet.

The stage-2 schema fixes one dialogue turn per outline turn with its speaker id and name,
as for two people (:func:`~ioa_synth.protocol.plan.stage2_schema`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Sequence

from ioa_synth.protocol.multiparty import MultiStage1Output, member_ids
from ioa_synth.protocol.plan import CasePlan, stage2_schema
from ioa_synth.protocol.schemas import SURFACE, Stage1Output, request_schema_copy

#: Version of the multi-party planning rules (part of a multi-party generator's fingerprint).
MULTI_PLAN_VERSION = 1


def multi_outline_bounds(n_points: int, n_members: int) -> tuple[int, int]:
    """Fewest and most outline turns of a case with ``n_points`` MAs and ``n_members``
    participants: at least 2n+2 (the dyad's fewest) and n_members+2 (everyone speaks, the
    meeting opens and closes), at most eight more."""
    low = max(2 * n_points + 2, n_members + 2)
    return low, low + 8


def multi_stage1_schema(n_members: int, seed_id: str, types: Sequence[str] | None = None) -> dict[str, Any]:
    """The stage-1 request schema of seed tuple ``seed_id`` with ``n_members`` participants
    (a fresh object)."""
    plan = CasePlan.for_seed(seed_id)
    return json.loads(_schema_text(n_members, tuple(plan.ma_ids), tuple(types or ())))


@lru_cache(maxsize=256)
def _schema_text(n_members: int, ma_ids: tuple[str, ...], kinds: tuple[str, ...]) -> str:
    ids = member_ids(n_members)
    schema = request_schema_copy(MultiStage1Output)
    props = schema["properties"]
    member = props["members"].pop("items")
    props["members"].update(prefixItems=[_const(member, id=m) for m in ids], minItems=n_members, maxItems=n_members)
    point = props["misalignment_points"].pop("items")
    point["properties"]["surface_form"] = {"type": "string", "minLength": 2, "maxLength": SURFACE}
    one_of = {"type": "string", "enum": ids}
    side = {"type": "array", "items": one_of, "minItems": 1, "maxItems": n_members - 1}
    point["properties"]["between"] = {"type": "object", "properties": {"a": side, "b": side},
                                      "required": ["a", "b"], "additionalProperties": False}
    point["properties"]["neutral"] = {"type": "array", "items": one_of, "maxItems": n_members - 2}
    point["required"] = [*point["required"], "neutral"] if "neutral" not in point["required"] else point["required"]
    points = []
    for i, ma in enumerate(ma_ids):
        p = _const(point, id=ma)
        if i < len(kinds):
            p["properties"]["type"] = {"type": "string", "const": kinds[i]}
        elif i == 0:
            p["properties"]["type"] = {"type": "string", "const": "definitional"}
        points.append(p)
    props["misalignment_points"].update(prefixItems=points, minItems=len(ma_ids), maxItems=len(ma_ids))
    low, high = multi_outline_bounds(len(ma_ids), n_members)
    outline = props["conversation_outline"]
    outline["items"]["properties"]["turn"] = {"type": "integer", "minimum": 1, "maximum": high}
    outline["items"]["properties"]["speaker"] = {"type": "string", "enum": ids}
    outline["items"]["properties"]["ma_ids"] = {"type": "array", "items": {"type": "string", "enum": list(ma_ids)},
                                                "maxItems": len(ma_ids)}
    outline.update(minItems=low, maxItems=high)
    return json.dumps(schema)


def multi_stage2_schema(profiles: Stage1Output) -> dict[str, Any]:
    """The stage-2 request schema of accepted multi-party ``profiles``: one turn per outline
    turn with its number, speaker id and name as constants; without a usable outline, any
    of the case's member ids may speak."""
    schema = stage2_schema(profiles)
    turns = schema["properties"]["turns"]
    if "items" in turns:
        turns["items"]["properties"]["speaker_id"] = {"type": "string", "enum": [m.id for m in profiles.members]}
    return schema


def _const(obj_schema: dict[str, Any], **consts: Any) -> dict[str, Any]:
    out = {**obj_schema, "properties": dict(obj_schema["properties"])}
    for key, value in consts.items():
        out["properties"][key] = {"type": "integer" if isinstance(value, int) else "string", "const": value}
    return out


__all__ = ["MULTI_PLAN_VERSION", "multi_outline_bounds", "multi_stage1_schema", "multi_stage2_schema"]
