"""Pydantic models of the stage outputs, with the field names of the paper's
App. B.4 schema.

Parsing is deliberately lenient about sizes: list sizes and string lengths appear
only in the JSON schema sent to the endpoint (``json_schema_extra``), so that
constrained decoding terminates. The protocol's content rules (2-4 misalignment
points, one of them definitional, 3-5 hidden assumptions per member) are checked by
:func:`stage1_problems`, and a violation is a stage failure (it uses the
regeneration round), not a malformed reply.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ioa_synth.protocol.cells import MA_TYPES
from ioa_synth.text.plural import plural

SHORT = 120  # names, roles, topics (characters)
SURFACE = 80  # surface forms: a short noun phrase
MEDIUM = 400  # one or two sentences
LONG = 700  # a paragraph


#: What each generated field holds, in words (the prompts describe fields
#: instead of showing example values a model could copy). The generator templates
#: render these, and the content gates reject a field that copies one
#: (:func:`ioa_synth.protocol.gates.copies_description`).
FIELD_DESCRIPTIONS: dict[str, str] = {
    "meeting_scenario": "one prose string: the occasion of the meeting and its link to the paper, the agenda, and "
                        "the outcome wanted",
    "id": "M1 for the first member, M2 for the second",
    "name": "a distinctive first and family name fitting the setting, unlike the other member's and never a stock "
            "example name",
    "role": "the job title this person holds in the meeting's organisation",
    "expertise": "the specific fields, methods and tools this person knows well",
    "background": "the career history that shapes how this person reads shared terms",
    "private_state": "goals and worries of this person alone, not shared by the other member, never said aloud in "
                     "the meeting",
    "hidden_assumptions": "three to five premises this person treats as settled and never checks, each different "
                          "from the other member's premises",
    "ma_id": "MA1, MA2 and so on, in order",
    "type": "the kind of disagreement, one of the listed types",
    "topic": "the subject the hidden disagreement is about, in a few words",
    "surface_form": "the phrase both members say and both accept, which each reads differently: two to six words "
                    "as they stand inside a sentence, starting with a determiner such as the, our or a number; not a "
                    "question and not a definition",
    "member_a_understanding": "the concrete thing M1 pictures when saying the phrase (a specific number, version, "
                              "data set, scope or step), without restating the phrase's general definition",
    "member_b_understanding": "the concrete thing M2 pictures instead, which rules out M1's reading: another number, "
                              "version, data set, scope or step",
    "why_undetected": "why neither member asks about this particular point, given their roles and what each takes "
                      "for granted",
    "turn": "the turn number, from 1",
    "speaker": "M1 or M2",
    "description": "one sentence on what this turn does in the meeting",
    "ma_ids": "the ids of the misalignment points this turn touches, possibly none",
    "turn_idx": "the turn number, from 1, following the outline",
    "speaker_id": "M1 or M2, alternating as in the outline",
    "speaker_name": "the speaking member's name exactly as in the profiles",
    "inner_thought": "what the speaker privately thinks at this moment, including their own reading of any shared "
                     "phrase and what they assume the other means",
    "utterance": "what the speaker says aloud; a shared phrase appears only as its surface form, never with the "
                 "speaker's private reading",
}


def _text(max_len: int, description: str = "") -> Any:
    extra: dict[str, Any] = {"maxLength": max_len, "minLength": 1}
    return Field(..., description=description or None, json_schema_extra=extra)


def _items(min_items: int, max_items: int) -> Any:
    return Field(..., json_schema_extra={"minItems": min_items, "maxItems": max_items})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", json_schema_extra={"additionalProperties": False})


#: Keys of the older object form of ``meeting_scenario``, in reading order.
SCENARIO_KEYS = ("context", "agenda", "expected_outcome")


def scenario_text(value: Any) -> Any:
    """``meeting_scenario`` as one prose string (App. B.4 schema). The older object form
    ``{"context", "agenda", "expected_outcome"}`` is joined into labelled sentences; any
    other value is returned unchanged (for the validator to reject)."""
    if isinstance(value, dict) and any(k in value for k in SCENARIO_KEYS):
        labels = {"context": "Context", "agenda": "Agenda", "expected_outcome": "Expected outcome"}
        parts = [f"{labels[k]}: {str(value[k]).strip()}" for k in SCENARIO_KEYS if str(value.get(k) or "").strip()]
        return "\n".join(parts)
    return value


class Member(_Strict):
    """A participant: public profile, private agenda ``private_state`` and tacit
    assumptions ``hidden_assumptions`` (3-5, checked by :func:`stage1_problems`)."""

    id: str = Field(..., json_schema_extra={"enum": ["M1", "M2"]})
    name: str = _text(SHORT)
    role: str = _text(SHORT)
    expertise: str = _text(MEDIUM)
    background: str = _text(MEDIUM)
    private_state: str = _text(LONG)
    hidden_assumptions: list[str] = Field(
        ..., json_schema_extra={"minItems": 3, "maxItems": 5, "items": {"type": "string", "maxLength": MEDIUM}}
    )


class MisalignmentPoint(_Strict):
    """A planted hidden disagreement (MA) with its disagreement ``type`` (paper App. B.5)."""

    id: str = Field(..., json_schema_extra={"maxLength": 8, "pattern": "^MA[1-4]$"})
    type: str = Field(..., json_schema_extra={"enum": list(MA_TYPES)})
    topic: str = _text(SHORT)
    surface_form: str = _text(SURFACE)
    member_a_understanding: str = _text(MEDIUM)
    member_b_understanding: str = _text(MEDIUM)
    why_undetected: str = _text(MEDIUM)

    @field_validator("type", mode="before")
    @classmethod
    def _known_type(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip().lower()
            if v not in MA_TYPES:
                raise ValueError(f"type must be one of {', '.join(MA_TYPES)}")
        return v


class OutlineTurn(_Strict):
    """One planned turn of the conversation outline; ``ma_ids`` may be empty."""

    turn: int
    speaker: str = Field(..., json_schema_extra={"enum": ["M1", "M2"]})
    description: str = _text(MEDIUM)
    ma_ids: list[str] = Field(
        ..., json_schema_extra={"maxItems": 4, "items": {"type": "string", "maxLength": 8}}
    )


class Stage1Output(_Strict):
    """Stage-1 output ``profiles`` (G_participants; App. B.4 schema).

    ``meeting_scenario`` is one string; records of earlier versions with the object form
    are read too (see :func:`scenario_text`).
    """

    meeting_scenario: str = Field(..., description="context, agenda and expected outcome, in prose",
                                  json_schema_extra={"minLength": 1, "maxLength": LONG})
    members: list[Member] = _items(2, 2)
    misalignment_points: list[MisalignmentPoint] = _items(2, 4)
    conversation_outline: list[OutlineTurn] = _items(4, 14)

    @field_validator("meeting_scenario", mode="before")
    @classmethod
    def _scenario_string(cls, v: Any) -> Any:
        return scenario_text(v)


class Turn(_Strict):
    """One dialogue turn: private ``inner_thought`` and public ``utterance``."""

    turn_idx: int
    speaker_id: str = Field(..., json_schema_extra={"enum": ["M1", "M2"]})
    speaker_name: str = _text(SHORT)
    inner_thought: str = _text(LONG)
    utterance: str = _text(LONG)


class Stage2Output(_Strict):
    """Stage-2 output (G_dialogue; App. B.4): ``{"turns": [...]}``."""

    turns: list[Turn] = _items(4, 16)


def stage1_problems(out: Stage1Output) -> list[str]:
    """Content rules of stage 1 that the output breaks (empty list when it complies).

    Rules (App. B.4, and this toolkit's ``type``): exactly two members with ids M1 and M2, each
    with 3-5 hidden assumptions; 2-4 misalignment points with unique ids, at least one
    of type ``definitional``.
    """
    return member_and_point_problems(out, ["M1", "M2"])


def member_and_point_problems(out: Stage1Output, ids: list[str]) -> list[str]:
    """The stage-1 rules :func:`stage1_problems` checks, for members exactly ``ids``
    (``["M1", "M2"]``, or M1..Mn of a multi-party case)."""
    problems: list[str] = []
    got = sorted((m.id for m in out.members), key=lambda i: (len(i), i))
    if got != ids:
        wanted = " and ".join(ids) if len(ids) == 2 else ", ".join(ids)
        problems.append(f"members must be exactly {wanted} (got {got})")
    for m in out.members:
        n = len(m.hidden_assumptions)
        if not 3 <= n <= 5:
            problems.append(f"member {m.id} has {n} hidden assumptions; give 3 to 5")
    n_ma = len(out.misalignment_points)
    if not 2 <= n_ma <= 4:
        problems.append(f"{n_ma} misalignment points; give 2 to 4")
    ma_ids = [p.id for p in out.misalignment_points]
    if len(set(ma_ids)) != len(ma_ids):
        problems.append(f"misalignment point ids repeat: {ma_ids}")
    if not any(p.type == "definitional" for p in out.misalignment_points):
        problems.append("no misalignment point is of type definitional; at least one must be")
    return problems


def stage2_problems(out: Stage2Output) -> list[str]:
    """Structural rules of a dialogue: at least 4 turns and both members speaking."""
    problems: list[str] = []
    if len(out.turns) < 4:
        problems.append(f"only {plural(len(out.turns), 'turn')}; write at least 4")
    speakers = {t.speaker_id for t in out.turns}
    if speakers != {"M1", "M2"}:
        problems.append(f"both M1 and M2 must speak (speakers seen: {sorted(speakers)})")
    return problems


@lru_cache(maxsize=None)
def request_schema(model: type[BaseModel]) -> dict[str, Any]:
    """(Cached; do not mutate the result.) The JSON schema of ``model`` with every ``$ref`` inlined (no ``$defs``), as
    sent in ``response_format``; llama.cpp grammars and OpenAI strict mode both accept it."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return inline(copy.deepcopy(defs[node["$ref"].split("/")[-1]]))
        out = {k: inline(v) for k, v in node.items() if k not in ("title", "description", "properties")}
        if "properties" in node:
            out["properties"] = {name: inline(sub) for name, sub in node["properties"].items()}
        return out

    return inline(raw)


@lru_cache(maxsize=None)
def _request_schema_json(model: type[BaseModel]) -> str:
    return json.dumps(request_schema(model))


def request_schema_copy(model: type[BaseModel]) -> dict[str, Any]:
    """A fresh, mutable copy of :func:`request_schema` of ``model``, parsed from its cached
    JSON text: a tenth of the CPU of ``copy.deepcopy`` (the per-case plan schemas start
    from one)."""
    return json.loads(_request_schema_json(model))
