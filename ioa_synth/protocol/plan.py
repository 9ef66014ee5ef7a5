"""The case plan: what the toolkit fixes for a seed tuple before the generator writes it,
and the request schemas that hold the generator to it.

The protocol leaves the shape of a case open within bounds (2-4 misalignment points, at
least one definitional, an outline that touches every point, a dialogue that follows the
outline with the two members' ids and names). A model asked to choose all of that at
once breaks it often: the 1.5B demo model numbered outline points that did not exist,
named no turn after a point, gave a turn the wrong speaker name. The plan fixes these
choices per seed tuple, deterministically (a hash of ``seed_id``), and the per-case
request schema carries them as ``const``/``enum`` values, so constrained decoding
(llama.cpp grammars, vLLM, OpenAI structured outputs) cannot break them. The content
(scenario, profiles, readings, descriptions, utterances) stays the model's.

| fixed by the plan | how the schema holds it |
| --- | --- |
| member ids M1, M2 and their names (:func:`member_names`), three hidden assumptions each | ``prefixItems`` of two members, ``id``/``name`` ``const``; ``hidden_assumptions`` of exactly 3 items |
| the number of MAs (2-4, :func:`points_for`), ids MA1..MAn, MA1 ``definitional`` | ``prefixItems``, ``id`` ``const``, MA1 ``type`` ``const`` |
| a surface form is a phrase, not a question | ``pattern`` :data:`SURFACE_FORM_PATTERN` |
| outline length (2n+2 turns), turn numbers, alternating speakers, the turn that first voices each MA (:func:`anchor_turns`) | ``prefixItems``; ``ma_ids`` ``enum`` of the case's ids (at most two), an anchor turn's ``ma_ids`` exactly its MA |
| stage 2: one dialogue turn per outline turn, its number, speaker id and name | ``prefixItems`` with ``const`` values |
| every free-text field (both stages) in Latin script | ``pattern`` (:mod:`~ioa_synth.protocol.plan_text`), the field's length bound |
| an understanding is a reading, not a word or two | its ``pattern`` at least :data:`UNDERSTANDING_MIN_CHARS` long |
| stage 2: the turn that first lists an MA says its surface form | that turn's ``utterance`` ``pattern`` holds the phrase |

Parsing and the gates stay as lenient as before: a reply from an endpoint that ignores
the schema is still checked by :func:`~ioa_synth.protocol.schemas.stage1_problems` and
the content gates.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ioa_synth.protocol.plan_phrases import SURFACE_FORM_PATTERN, SURFACE_FORM_STARTS, say_surface_forms
from ioa_synth.protocol.plan_text import LATIN_TEXT, MAX_SENTENCES, free_text, sentences
from ioa_synth.protocol.schemas import SURFACE, Stage1Output, Stage2Output, request_schema_copy

#: Given and family names the stage-1 generator is given (two per case, see
#: :func:`member_names`): small models otherwise name nearly every pair "John Doe" and
#: "Jane Smith", which the content gates reject as stock placeholders.
GIVEN_NAMES = ("Amara", "Bogdan", "Chiara", "Dmitri", "Esra", "Farid", "Grete", "Hiroshi", "Ines", "Jomo",
               "Kalani", "Leilani", "Mateus", "Nadia", "Oskar", "Priya", "Quentin", "Rania", "Sven", "Tamsin",
               "Ugo", "Valeria", "Wen", "Ximena", "Yusuf", "Zofia", "Anders", "Beatriz", "Cormac", "Dalia")
FAMILY_NAMES = ("Achebe", "Brandt", "Castellanos", "Dvořák", "Eriksen", "Fontaine", "Gupta", "Halvorsen", "Ibarra",
                "Jankowski", "Kowalczyk", "Lindqvist", "Mensah", "Nakamura", "Okafor", "Petrenko", "Quispe",
                "Rahimi", "Sato", "Tiwari", "Ueda", "Varga", "Whitfield", "Xu", "Yilmaz", "Zanetti", "Abara",
                "Bianchi", "Chowdhury", "Delacroix")

#: Version of the planning rules below; part of the generator's fingerprint, since the
#: plan decides what the generator may write. Version 3: the stage-2 prompt's outline names
#: a turn's points by surface form, without ids (:mod:`ioa_synth.build.contexts`). Version 4:
#: stage 2 in two passes, lines then inner thoughts (:mod:`ioa_synth.protocol.plan_passes`),
#: and a planned phrase held inside a sentence of its line (:func:`~ioa_synth.protocol.plan_phrases.say_surface_forms`).
#: Version 5: the lines pass sees a cue per turn, not the stage-1 description
#: (:func:`ioa_synth.build.contexts.dialogue_lines_context`), and a thought starts with "I"
#: (:func:`ioa_synth.protocol.plan_passes.thoughts_schema`). Version 6: an outline of 2n+2
#: turns (was 2n+4) and three hidden assumptions per member (the protocol's fewest): on the
#: demo's 2 cores stage 1's generation was 7-11 minutes of the demo, almost all completion
#: tokens, and the outline was a third of them; the dialogue shrinks with the outline.
#: Version 7: a planned phrase may also open a sentence of its line, capitalised
#: (:func:`~ioa_synth.protocol.plan_phrases.say_surface_forms`), and the thoughts pass sees, under a line that says a
#: phrase, its speaker's reading of it (:func:`ioa_synth.build.contexts.dialogue_thoughts_context`);
#: a surface form cannot end on an article or preposition nor hold "is"/"are" (:data:`~ioa_synth.protocol.plan_phrases.SURFACE_FORM_PATTERN`),
#: and a stage-2 line or thought is one to three sentences (:func:`~ioa_synth.protocol.plan_text.sentences`).
#: Version 8: no closing mark or ``,;:`` after a stop inside a sentence
#: (:data:`~ioa_synth.protocol.plan_text._STOP_INSIDE`): past the three-sentence limit the
#: model went on through it, ".'ve been", ".'re focusing", in a case the gates accepted.
#: Version 9: the meeting scenario is one to four whole sentences (:data:`SCENARIO_SENTENCES`),
#: and an ellipsis inside a sentence is followed by a space (the model ran hundreds of dots).
#: Version 10: free text holds no brackets, braces, backticks or ``<>^_|``
#: (:data:`~ioa_synth.protocol.plan_text.LATIN_TEXT`), a sentence's inner dots are those of
#: "e.g." and "i.e.", and "?!" is not written (:data:`~ioa_synth.protocol.plan_text._STOP_INSIDE`):
#: two accepted demo cases held such debris, which the gates reject since.
#: Version 11: a regeneration request shows the gate failures without the snippets of the
#: rejected text they quote (:func:`~ioa_synth.protocol.plan_text.unquoted`): the model
#: pasted a quoted snippet into five of its six new lines.
PLAN_VERSION = 11

#: Fewest characters of a scaffold-mode understanding (the gates ask for five words): the
#: demo model otherwise wrote readings of three words ("the full matrix").
UNDERSTANDING_MIN_CHARS = 30

#: Most sentences in a scaffold-mode outline turn's description (the field asks for one):
#: the 1.5B demo model ran one to its 400-character limit, cut mid-sentence ("... many
#: iterations are"), which the cut-off gate discards (a clean-clone demo run, 2026-12-07).
OUTLINE_SENTENCES = 2

#: Most sentences in a scaffold-mode meeting scenario (occasion, link to the paper, agenda,
#: outcome wanted): the 1.5B demo model ran the scenario to its 700-character limit, cut
#: mid-sentence ("... quality assessments. By"), in 2 of 8 stage-1 attempts of one clean-clone
#: run (2026-12-07) and in one case of an earlier run; the cut-off gate discards such a case.
SCENARIO_SENTENCES = 4

#: Hidden assumptions per member in a scaffold plan: the fewest the protocol allows (App.
#: B.4: 3-5); the demo model wrote three nearly always, a plan makes it the rule.
HIDDEN_ASSUMPTIONS = 3


def latin_text(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (a request schema, changed in place and returned) with every free-text
    string field (one with a ``maxLength`` and no ``const``, ``enum`` or ``pattern``) held
    to :data:`LATIN_TEXT` (:func:`~ioa_synth.protocol.plan_text.free_text`) by a ``pattern``
    carrying the field's length bounds."""
    if isinstance(schema, list):
        for item in schema:
            latin_text(item)
    elif isinstance(schema, dict):
        if (schema.get("type") == "string" and "maxLength" in schema
                and not {"const", "enum", "pattern"} & schema.keys()):
            schema["pattern"] = "^%s$" % free_text(max(1, schema.get("minLength", 1)), schema["maxLength"])
        for value in schema.values():
            if isinstance(value, (dict, list)):
                latin_text(value)
    return schema


#: Number of misalignment points a case may be planned with (App. B.4: 2-4).
POINT_COUNTS = (2, 3, 4)


def _digest(seed_id: str) -> bytes:
    return hashlib.sha256(seed_id.encode("utf-8")).digest()


def member_names(seed_id: str) -> tuple[str, str]:
    """Two distinct full names for M1 and M2, fixed per seed tuple: picked from
    :data:`GIVEN_NAMES` x :data:`FAMILY_NAMES` by the SHA-256 of ``seed_id``."""
    d = _digest(seed_id)
    g1, g2 = d[0] % len(GIVEN_NAMES), d[1] % (len(GIVEN_NAMES) - 1)
    f1, f2 = d[2] % len(FAMILY_NAMES), d[3] % (len(FAMILY_NAMES) - 1)
    g2, f2 = g2 + (g2 >= g1), f2 + (f2 >= f1)
    return f"{GIVEN_NAMES[g1]} {FAMILY_NAMES[f1]}", f"{GIVEN_NAMES[g2]} {FAMILY_NAMES[f2]}"


def points_for(seed_id: str) -> int:
    """The number of misalignment points (2, 3 or 4) planned for a seed tuple: byte 4 of
    the SHA-256 of ``seed_id`` modulo 3, so a split spreads evenly over 2-4."""
    return POINT_COUNTS[_digest(seed_id)[4] % len(POINT_COUNTS)]


def anchor_turns(n_points: int, n_turns: int) -> list[int]:
    """Outline turn numbers (1-based) where MA1..MAn are first voiced: spread from turn 2
    to four turns before the end, in order, so the meeting opens before the first point
    and has room to close in apparent agreement after the last."""
    last = n_turns - 3
    if n_points == 1:
        return [2]
    return [2 + round(k * (last - 2) / (n_points - 1)) for k in range(n_points)]


@dataclass(frozen=True)
class CasePlan:
    """What the toolkit fixes for one seed tuple (see the module docstring).

    ``names``: (M1, M2) full names; ``ma_ids``: ``("MA1", ...)``, 2-4 of them;
    ``speakers``: the outline's speaker per turn (alternating, M1 first); ``anchors``:
    ``{MA id: outline turn}`` where each point is first voiced.
    """

    names: tuple[str, str]
    ma_ids: tuple[str, ...]
    speakers: tuple[str, ...]
    anchors: dict[str, int]

    @classmethod
    def for_seed(cls, seed_id: str) -> CasePlan:
        """The plan of the seed tuple ``seed_id`` (deterministic)."""
        n = points_for(seed_id)
        n_turns = 2 * n + 2
        ids = tuple(f"MA{i}" for i in range(1, n + 1))
        speakers = tuple("M1" if t % 2 else "M2" for t in range(1, n_turns + 1))
        return cls(member_names(seed_id), ids, speakers, dict(zip(ids, anchor_turns(n, n_turns))))

    def stage1_schema(self) -> dict[str, Any]:
        """The stage-1 request schema (of :class:`Stage1Output`) with this plan's ids,
        names, point count, definitional MA1 and outline skeleton as constants."""
        schema = request_schema_copy(Stage1Output)
        props = schema["properties"]
        member = props["members"].pop("items")
        member = {**member, "properties": {**member["properties"], "hidden_assumptions": {
            **member["properties"]["hidden_assumptions"], "minItems": HIDDEN_ASSUMPTIONS,
            "maxItems": HIDDEN_ASSUMPTIONS}}}
        props["members"]["prefixItems"] = [_with_consts(member, id=mid, name=name)
                                           for mid, name in zip(("M1", "M2"), self.names)]
        point = props["misalignment_points"].pop("items")
        point["properties"]["surface_form"] = {"type": "string", "pattern": SURFACE_FORM_PATTERN,
                                               "minLength": 2, "maxLength": SURFACE}  # the pattern bounds it
        for key in ("member_a_understanding", "member_b_understanding"):
            point["properties"][key]["minLength"] = UNDERSTANDING_MIN_CHARS
        points = [_with_consts(point, id=i) for i in self.ma_ids]
        points[0]["properties"]["type"] = {"type": "string", "const": "definitional"}
        props["misalignment_points"].update(prefixItems=points, minItems=len(points), maxItems=len(points))
        scenario = props["meeting_scenario"]  # whole sentences, ended before the length limit
        props["meeting_scenario"] = {**scenario, "pattern": "^%s$" % sentences(SCENARIO_SENTENCES,
                                                                               scenario["maxLength"])}
        turn = props["conversation_outline"].pop("items")
        turn["properties"]["ma_ids"] = {"type": "array", "items": {"type": "string", "enum": list(self.ma_ids)},
                                        "maxItems": 2}
        turns = []
        for number, speaker in enumerate(self.speakers, start=1):
            t = _with_consts(turn, turn=number, speaker=speaker)
            first = [i for i, at in self.anchors.items() if at == number]
            if first:  # the anchor turn lists its point: exactly that id
                t["properties"]["ma_ids"] = {"type": "array", "prefixItems": [{"type": "string", "const": first[0]}],
                                             "minItems": 1, "maxItems": 1}
            described = t["properties"]["description"]  # one or two whole sentences, as the field asks
            t["properties"]["description"] = {**described, "pattern": "^%s$" % sentences(
                OUTLINE_SENTENCES, described["maxLength"])}
            turns.append(t)
        props["conversation_outline"].update(prefixItems=turns, minItems=len(turns), maxItems=len(turns))
        return latin_text(schema)

    def describe(self) -> dict[str, Any]:
        """The plan as template context: ``names``, ``ma_ids``, ``n_points``, ``n_turns``,
        ``anchors`` (``{MA id: turn}``) and ``speakers``."""
        return {"names": self.names, "ma_ids": list(self.ma_ids), "n_points": len(self.ma_ids),
                "n_turns": len(self.speakers), "anchors": dict(self.anchors), "speakers": list(self.speakers)}


def stage2_schema(profiles: Stage1Output, latin: bool = False) -> dict[str, Any]:
    """The stage-2 request schema (of :class:`Stage2Output`) with one turn per outline turn
    of the accepted ``profiles``: its ``turn_idx``, ``speaker_id`` and the speaker's
    ``speaker_name`` as constants (a speaker id the profiles lack keeps the open schema);
    ``latin``: free text held to :data:`LATIN_TEXT` (scaffold mode, :func:`latin_text`), an
    utterance and an inner thought to at most :data:`~ioa_synth.protocol.plan_text.MAX_SENTENCES`
    sentences (:func:`~ioa_synth.protocol.plan_text.sentences`)."""
    schema = request_schema_copy(Stage2Output)
    turns = schema["properties"]["turns"]
    if latin:
        latin_text(schema)
        for key in ("utterance", "inner_thought"):
            field = turns["items"]["properties"][key]
            field["pattern"] = "^%s$" % sentences(MAX_SENTENCES, field["maxLength"])
    names = {m.id: m.name for m in profiles.members}
    outline = profiles.conversation_outline
    if not outline or any(t.speaker not in names for t in outline):
        return schema
    turn = turns.pop("items")
    turns["prefixItems"] = [_with_consts(turn, turn_idx=i, speaker_id=t.speaker, speaker_name=names[t.speaker])
                            for i, t in enumerate(outline, start=1)]
    turns.update(minItems=len(outline), maxItems=len(outline))
    if latin:
        say_surface_forms(turns["prefixItems"], profiles)
    return schema


def _with_consts(obj_schema: dict[str, Any], **consts: Any) -> dict[str, Any]:
    # a copy of the object and of its properties only: the schema is serialised, never
    # mutated below that level, so a deep copy per item (a dozen per case) was wasted work
    out = {**obj_schema, "properties": dict(obj_schema["properties"])}
    for key, value in consts.items():
        kind = "integer" if isinstance(value, int) else "string"
        out["properties"][key] = {"type": kind, "const": value}
    return out


__all__ = ["CasePlan", "HIDDEN_ASSUMPTIONS", "LATIN_TEXT", "PLAN_VERSION", "SCENARIO_SENTENCES", "UNDERSTANDING_MIN_CHARS", "latin_text", "SURFACE_FORM_PATTERN", "SURFACE_FORM_STARTS", "GIVEN_NAMES", "FAMILY_NAMES", "anchor_turns", "member_names", "points_for",
           "stage2_schema"]
