"""Plan strictness per generator (config key ``plan``): how much of a case the stage-1
request schema fixes.

``scaffold`` is the case plan of :mod:`ioa_synth.protocol.plan`: member names, a surface
form that starts with a determiner or number, three hidden assumptions per member, an outline of 2n+2 alternating turns with
fixed anchor turns and at most two MA ids per turn. The embedded 1.5B model needs it; a
capable model held to it writes every surface form as "the ..." and every case on the
same outline skeleton, while the paper's own cases (App. E.1) say "redundant output" or
"refresh the graph" and close on all four commitments in one turn.

``protocol`` fixes only what the paper's stage-1 protocol (App. B.4) and the split's type mix fix: the number
of misalignment points and their ids, each point's planned type, two members M1 and M2,
an outline of 2n+2 to 2n+8 turns whose ``ma_ids`` may list any of the case's ids. Names,
surface forms, the outline's length within those bounds and which turns carry which ids
are the model's, and the prompt states no determiner rule. The content gates
(:mod:`ioa_synth.protocol.gates`) apply unchanged in both modes.

Default: ``scaffold`` for the embedded model, ``protocol`` for a remote endpoint.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from typing import Any, Sequence

from ioa_synth.protocol.plan import PLAN_VERSION, CasePlan
from ioa_synth.protocol.planting import TYPE_DEFINITIONS
from ioa_synth.protocol.schemas import FIELD_DESCRIPTIONS, SURFACE, Stage1Output, request_schema

PLAN_MODES = ("scaffold", "protocol")

#: The surface-form field as the protocol-mode prompt describes it: no determiner rule.
PROTOCOL_SURFACE_FORM = ("the phrase both members say and both accept, which each reads differently: a few words "
                         "as they stand inside a sentence; not a question and not a definition")


#: Version of the plan rules each mode writes under, part of the generator's fingerprint.
#: ``protocol`` takes only the ids, point count and types of :class:`CasePlan`, unchanged
#: since version 1; ``scaffold`` is held to the whole plan schema (:data:`PLAN_VERSION`).
PROTOCOL_PLAN_VERSION = 1


def plan_version(mode: str | None) -> int:
    """The plan version a generator in plan ``mode`` writes under (its fingerprint part)."""
    return PLAN_VERSION if mode == "scaffold" else PROTOCOL_PLAN_VERSION


def default_plan(embedded: bool) -> str:
    """``scaffold`` for the embedded model, ``protocol`` for a remote endpoint."""
    return "scaffold" if embedded else "protocol"


def outline_bounds(n_points: int) -> tuple[int, int]:
    """Fewest and most outline turns a protocol-mode case of ``n_points`` MAs may plan (2n+2..2n+8)."""
    return 2 * n_points + 2, 2 * n_points + 8


def scaffold_stage1_schema(plan: CasePlan, types: Sequence[str] | None = None) -> dict[str, Any]:
    """The scaffold request schema (:meth:`CasePlan.stage1_schema`) with each point's
    planned type as a constant (``types`` ``None``: MA1 definitional, the rest free)."""
    schema = plan.stage1_schema()
    if not types:
        return schema
    # copy only the path that changes: the plan's schema may be cached and shared
    points = dict(schema["properties"]["misalignment_points"])
    points["prefixItems"] = [
        {**point, "properties": {**point["properties"], "type": {"type": "string", "const": kind}}}
        for point, kind in zip(points["prefixItems"], types)] + points["prefixItems"][len(types):]
    return {**schema, "properties": {**schema["properties"], "misalignment_points": points}}


def protocol_stage1_schema(plan: CasePlan, types: Sequence[str] | None = None) -> dict[str, Any]:
    """The protocol-mode request schema of a case: MA count and ids (and the planned
    ``types``; without them every type is the model's, the one-definitional rule being
    checked after parsing) and member ids fixed; names and surface forms free; an outline
    of :func:`outline_bounds` turns whose ``ma_ids`` list any of the case's ids. A fresh
    object each call, parsed from the schema text made once per (ids, types)."""
    return json.loads(_protocol_schema_text(tuple(plan.ma_ids), tuple(types or ())))


@lru_cache(maxsize=1024)
def _protocol_schema_text(ids: tuple[str, ...], kinds: tuple[str, ...]) -> str:
    """The protocol-mode schema of a case with these MA ``ids`` and planned ``kinds``, as
    JSON text: it depends on nothing else, so it is built once per combination."""
    schema = copy.deepcopy(request_schema(Stage1Output))
    props = schema["properties"]
    member = props["members"].pop("items")
    props["members"]["prefixItems"] = [_const(member, id=mid) for mid in ("M1", "M2")]
    point = props["misalignment_points"].pop("items")
    point["properties"]["surface_form"] = {"type": "string", "minLength": 2, "maxLength": SURFACE}
    points = []
    for i, ma in enumerate(ids):
        p = _const(point, id=ma)
        if i < len(kinds):
            p["properties"]["type"] = {"type": "string", "const": kinds[i]}
        points.append(p)
    props["misalignment_points"].update(prefixItems=points, minItems=len(ids), maxItems=len(ids))
    low, high = outline_bounds(len(ids))
    outline = props["conversation_outline"]
    outline["items"]["properties"]["turn"] = {"type": "integer", "minimum": 1, "maximum": high}
    outline["items"]["properties"]["ma_ids"] = {"type": "array", "items": {"type": "string", "enum": ids},
                                                "maxItems": len(ids)}
    outline.update(minItems=low, maxItems=high)
    return json.dumps(schema)


def stage1_request_schema(mode: str, seed_id: str, types: Sequence[str] | None = None) -> dict[str, Any]:
    """The stage-1 request schema of the seed tuple ``seed_id`` under plan ``mode``."""
    plan = CasePlan.for_seed(seed_id)
    return protocol_stage1_schema(plan, types) if mode == "protocol" else scaffold_stage1_schema(plan, types)


def plan_context(mode: str, seed_id: str, types: Sequence[str] | None = None) -> dict[str, Any]:
    """Template context of the stage-1 generator under plan ``mode``: the plan's fields
    (:meth:`CasePlan.describe`), ``plan_mode``, ``planned_types`` (``[(id, type,
    definition)]``, empty without planting), ``outline_bounds`` and, in protocol mode,
    ``fields`` without the determiner rule."""
    plan = CasePlan.for_seed(seed_id)
    ctx = plan.describe() | {"plan_mode": mode, "outline_bounds": outline_bounds(len(plan.ma_ids)),
                             "planned_types": [(i, t, TYPE_DEFINITIONS[t]) for i, t in zip(plan.ma_ids, types or ())]}
    if mode == "protocol":
        ctx["fields"] = FIELD_DESCRIPTIONS | {"surface_form": PROTOCOL_SURFACE_FORM}
    return ctx


def _const(obj_schema: dict[str, Any], **consts: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj_schema)
    for key, value in consts.items():
        out["properties"][key] = {"type": "integer" if isinstance(value, int) else "string", "const": value}
    return out


__all__ = ["PLAN_MODES", "PROTOCOL_PLAN_VERSION", "PROTOCOL_SURFACE_FORM", "default_plan", "outline_bounds",
           "plan_context", "plan_version", "protocol_stage1_schema", "scaffold_stage1_schema", "stage1_request_schema"]
