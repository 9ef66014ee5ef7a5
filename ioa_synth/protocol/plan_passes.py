"""The scaffold plan's stage 2 in two passes: the lines first, then the inner thoughts.

Under the scaffold plan (an opt-in crutch for a small generator, the embedded default;
docs/plan-modes.md) the stage-2 generator is asked twice per attempt instead of once:

| pass | the prompt shows | the prompt withholds | the reply |
| --- | --- | --- | --- |
| lines | scenario; members by name, role, expertise, background; each point's topic and surface form; the outline, ids written as names | private states, hidden assumptions, both readings of every point | ``{"turns": [{turn_idx, speaker_id, speaker_name, utterance}]}`` (:class:`DialogueLines`) |
| thoughts | scenario; members with private states and hidden assumptions; both readings of every point; per turn its speaker and, where pass 1's line says a phrase, the speaker's reading of it | the outline; what the lines say | ``{"turns": [{turn_idx, inner_thought}]}`` (:class:`DialogueThoughts`) |

:func:`combined` joins them into the paper's :class:`~ioa_synth.protocol.schemas.Stage2Output`,
which the gates and the judge see exactly as they see a one-call dialogue. Why: asked for
both at once, the 1.5B demo model said the private readings aloud (6 of 8 stage-2 attempts of
one demo run, 2026-12-06) and retold the outline in the inner thoughts (8 of 8): a pass that
is never shown the readings cannot speak them, and one never shown the outline cannot retell
it. Shown the lines, the thoughts pass copied them, mostly the next line (scaffold plan
version 7 shows it none, :func:`ioa_synth.build.contexts.dialogue_thoughts_context`). The gates stay what they are: a line that voices a reading anyway still fails them. The
paper's own one-call stage 2 is the protocol plan's (:mod:`ioa_synth.protocol.plan_modes`).
"""

from __future__ import annotations


from typing import Any

from pydantic import BaseModel, ConfigDict

from ioa_synth.protocol.plan_text import MAX_SENTENCES, sentences
from ioa_synth.protocol.plan import stage2_schema
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output

#: The request-schema names of the two passes (``response_format.json_schema.name``).
LINES_CALL = "stage2_dialogue"
THOUGHTS_CALL = "stage2_thoughts"

#: The role of the thoughts pass in ``llm_calls`` (its component, in the call's tags, is
#: the generator's): the lines pass keeps the generator's own role.
THOUGHTS_ROLE = "generator:thoughts"


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Line(_Lenient):
    """One turn of the lines pass."""

    turn_idx: int
    speaker_id: str
    speaker_name: str
    utterance: str


class DialogueLines(_Lenient):
    """The lines pass's reply: one :class:`Line` per outline turn, in order."""

    turns: list[Line]


class Thought(_Lenient):
    """One turn of the thoughts pass."""

    turn_idx: int
    inner_thought: str


class DialogueThoughts(_Lenient):
    """The thoughts pass's reply: one :class:`Thought` per line, in order."""

    turns: list[Thought]


def lines_schema(profiles: Stage1Output) -> dict[str, Any]:
    """The lines pass's request schema: the scaffold stage-2 schema
    (:func:`~ioa_synth.protocol.plan.stage2_schema`) without ``inner_thought``."""
    schema = stage2_schema(profiles, latin=True)
    turns = schema["properties"]["turns"]
    for key in ("prefixItems", "items"):
        items = turns.get(key)
        for item in ([items] if isinstance(items, dict) else items or []):
            item["properties"] = {k: v for k, v in item["properties"].items() if k != "inner_thought"}
            item["required"] = [k for k in item.get("required", []) if k != "inner_thought"]
    return schema


def thoughts_schema(profiles: Stage1Output, lines: DialogueLines) -> dict[str, Any]:
    """The thoughts pass's request schema: one ``{turn_idx, inner_thought}`` per line of
    ``lines``, its ``turn_idx`` a constant, the thought held to the scaffold's Latin text
    within the paper's length and to the first person (:func:`_first_person`)."""
    full = stage2_schema(profiles, latin=True)["properties"]["turns"]
    item = full.get("items") or full["prefixItems"][0]
    thought = _first_person(item["properties"]["inner_thought"])
    turns = [{"type": "object", "properties": {"turn_idx": {"type": "integer", "const": line.turn_idx},
                                               "inner_thought": thought},
              "required": ["turn_idx", "inner_thought"], "additionalProperties": False} for line in lines.turns]
    return {"type": "object", "additionalProperties": False, "required": ["turns"],
            "properties": {"turns": {"type": "array", "prefixItems": turns,
                                     "minItems": len(turns), "maxItems": len(turns)}}}


def _first_person(field: dict[str, Any]) -> dict[str, Any]:
    """The inner-thought ``field`` (a Latin-text string of at most ``maxLength`` characters,
    :func:`~ioa_synth.protocol.plan.latin_text`) held to one to three sentences
    (:func:`~ioa_synth.protocol.plan_text.sentences`) that start with "I" and a space or
    apostrophe ("I think", "I'm"): the
    demo model, shown a finished transcript, wrote each thought as a copy of its line or as
    a narrator's summary ("Esra Yilmaz starts the meeting by introducing herself"), neither
    of which says what the speaker privately means (2026-12-06)."""
    return {**field, "pattern": "^I[ '’]%s$" % sentences(MAX_SENTENCES, max(2, field["maxLength"] - 2))}


def combined(lines: DialogueLines, thoughts: DialogueThoughts) -> Stage2Output:
    """The dialogue of ``lines`` with the inner thoughts of ``thoughts``, turn by turn.

    Raises:
        ValueError: the thoughts are not one per line, in the lines' order.
    """
    if [t.turn_idx for t in thoughts.turns] != [t.turn_idx for t in lines.turns]:
        raise ValueError(f"{len(thoughts.turns)} inner thoughts for {len(lines.turns)} lines, or out of order")
    return Stage2Output.model_validate({"turns": [
        line.model_dump() | {"inner_thought": t.inner_thought} for line, t in zip(lines.turns, thoughts.turns)]})


__all__ = ["DialogueLines", "DialogueThoughts", "LINES_CALL", "THOUGHTS_CALL", "THOUGHTS_ROLE", "combined",
           "lines_schema", "thoughts_schema"]
