"""What each prompt of the build loop sees: the jinja2 context of every template
(after the paper's App. B.4).

| prompt | seed title+abstract | domain, task type | scenario | full profiles | MAs | outline | dialogue |
| --- | --- | --- | --- | --- | --- | --- | --- |
| stage-1 generator (G_participants) | yes | yes | - | - | - | - | - |

The stage-1 generator also sees the case plan (:class:`~ioa_synth.protocol.plan.CasePlan`:
member names, MA ids, outline length, speakers and anchor turns), which its request schema
enforces.
| stage-1 judge (J_participants) | yes | yes | yes | yes | yes | - | - |
| stage-2 generator (G_dialogue) | - | - | yes | yes | yes (with topic, why_undetected) | yes | - |
| stage-2 judge (J_dialogue) | yes | yes | yes | yes | yes | yes | yes, with inner thoughts |

The audit judge renders the judge templates with the same contexts. A regeneration
request adds the feedback (what failed) to the generator's context; the templates lead
with it and do not paste the rejected attempt (``previous`` stays in the context for
other templates): the 1.5B demo model copied a pasted attempt almost verbatim (97% the
same text), so the new attempt repeated the failure.
"""

from __future__ import annotations

import re
from typing import Any

from ioa_synth.protocol.cells import MA_TYPES, TASK_TYPES
from ioa_synth.protocol.plan_modes import plan_context
from ioa_synth.protocol.plan_passes import DialogueLines
from ioa_synth.protocol.rubric import StageRubric
from ioa_synth.protocol.schemas import FIELD_DESCRIPTIONS, Stage1Output, Stage2Output
from ioa_synth.seeds.tuples import SeedTuple


def _seed(seed: SeedTuple) -> dict[str, Any]:
    return {"seed": seed, "domain": seed.domain, "task_type": seed.task_type,
            "task_description": TASK_TYPES[seed.task_type]}


def profiles_generator_context(seed: SeedTuple, profiles: Stage1Output | None, previous: str | None,
                               feedback: str | None, plan_mode: str = "scaffold",
                               planned_types: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Context of the stage-1 generator template (G_participants): the seed and the case
    plan under ``plan_mode`` with the ``planned_types``
    (:func:`ioa_synth.protocol.plan_modes.plan_context`); ``profiles`` is not used."""
    ctx: dict[str, Any] = {"previous": previous, "feedback": feedback, "fields": FIELD_DESCRIPTIONS}
    return ctx | _seed(seed) | {"ma_types": MA_TYPES} | plan_context(plan_mode, seed.seed_id, planned_types)


def dialogue_generator_context(seed: SeedTuple, profiles: Stage1Output | None, previous: str | None,
                               feedback: str | None, plan_mode: str = "scaffold",
                               planned_types: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Context of the stage-2 generator template (G_dialogue): the accepted ``profiles``
    (required); the seed and types are not shown. Under the scaffold plan an outline turn
    names its points by surface form alone (:func:`_outline_by_surface_form`)."""
    assert profiles is not None
    shown = profiles.model_dump()
    if plan_mode == "scaffold":
        shown["conversation_outline"] = _outline_by_surface_form(shown)
    return {"previous": previous, "feedback": feedback, "fields": FIELD_DESCRIPTIONS, "profiles": shown}


def _outline_by_surface_form(profiles: dict[str, Any]) -> list[dict[str, Any]]:
    """The outline turns of dumped ``profiles`` as the scaffold stage-2 prompt shows them:
    a turn's points as ``[say "the held-out set" inside a sentence]`` after its description (the
    model appended a bare ``say "..."`` cue to its lines) and no ``ma_ids``,
    so the prompt's outline carries no point id. The template's own marker,
    ``[MA1: say "..."]``, stays for protocol mode; the 1.5B demo model copied the id from it
    into utterances ("as MA1 says"), which the vocabulary gate rejects (scaffold plan
    version 3, :data:`ioa_synth.protocol.plan.PLAN_VERSION`)."""
    phrase = {p["id"]: p["surface_form"] for p in profiles["misalignment_points"]}
    out = []
    for turn in profiles["conversation_outline"]:
        said = "; ".join(f'say "{phrase[i]}" inside a sentence' for i in turn["ma_ids"] if i in phrase)
        out.append(turn | {"description": f"{turn['description']} [{said}]" if said else turn["description"],
                           "ma_ids": []})
    return out


def dialogue_lines_context(seed: SeedTuple, profiles: Stage1Output | None, previous: str | None,
                           feedback: str | None, plan_mode: str = "scaffold",
                           planned_types: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Context of the scaffold plan's lines pass (:mod:`ioa_synth.protocol.plan_passes`):
    the accepted ``profiles`` and ``outline``, one entry per outline turn with the speaker's
    name and a ``cue`` the toolkit writes (:func:`_line_cues`), not the turn's stage-1
    description. The template shows no private state, hidden assumption or reading.

    Why no description: the 1.5B demo model writes stage-1 descriptions as finished lines of
    dialogue ("Thank you for bringing up this point. Could you elaborate ..."), the lines pass
    then copied them, and the thoughts pass retold those copies, which the outline-echo gate
    rejects (clean-clone demo, scaffold plan version 4). The judge still sees the planned
    outline (scaffold plan version 5, :data:`ioa_synth.protocol.plan.PLAN_VERSION`)."""
    assert profiles is not None
    shown = profiles.model_dump()
    names = {m["id"]: m["name"] for m in shown["members"]}
    return {"previous": previous, "feedback": feedback, "fields": FIELD_DESCRIPTIONS, "profiles": shown,
            "outline": _line_cues(shown, names)}


def _line_cues(profiles: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    """``[{turn, speaker, speaker_name, cue}]``: the outline of dumped ``profiles`` as the
    lines pass sees it. A turn whose ``ma_ids`` name points gets ``uses the phrase "the
    held-out set" (about <topic>)``; the first turn opens the meeting, the last closes it in
    agreement, any other answers the previous speaker."""
    points = {p["id"]: p for p in profiles["misalignment_points"]}
    outline = profiles["conversation_outline"]
    out = []
    for i, turn in enumerate(outline):
        used = [points[m] for m in turn["ma_ids"] if m in points]
        name = names.get(turn["speaker"], turn["speaker"])
        other = next((names[m] for m in names if m != turn["speaker"]), "the other person")
        if used:
            cue = "; ".join(f'uses the phrase "{p["surface_form"]}" (about {p["topic"]})' for p in used)
        elif i == 0:
            cue = f"opens the meeting with {other}"
        elif i == len(outline) - 1:
            cue = f"closes the meeting: agrees with {other} on what happens next"
        else:
            cue = f"answers {other} and moves the discussion on"
        out.append({"turn": turn["turn"], "speaker": turn["speaker"], "speaker_name": name, "cue": cue})
    return out


def dialogue_thoughts_context(profiles: Stage1Output, lines: DialogueLines, feedback: str | None) -> dict[str, Any]:
    """Context of the scaffold plan's thoughts pass: the ``profiles`` (private states,
    hidden assumptions and readings shown), the members' ``names`` (M1's, M2's) and, per
    line of the lines pass, its ``turn_idx``, ``speaker_id``, ``speaker_name``, the
    ``readings`` its speaker holds (M1's ``member_a_understanding``, M2's
    ``member_b_understanding``) of the phrases said in it (``[{phrase, reading}]``, matched
    case-insensitively), the speaker's ``private_state`` and one of their hidden
    assumptions (``assumption``, in turn); neither the outline nor what the lines say.

    Why not the lines (scaffold plan version 7): shown the transcript, the 1.5B demo model
    wrote each thought as a copy of a line, mostly the next one (it went on with the
    transcript), in two of four cases of a clean-clone demo run and three of another
    (2026-12-06/07), which a gate rejects; shown the readings in a list above the
    transcript or under their line, it copied the lines all the same. A pass that never
    sees the lines cannot copy them: each thought is the speaker's reading at the turn that
    says a phrase, their private state or an assumption elsewhere (given only "answers ...",
    the model wrote "I answer Leilani Whitfield.")."""
    members = {m.id: m for m in profiles.members}
    out = []
    for k, line in enumerate(lines.turns):
        said = line.utterance.casefold()
        readings = [{"phrase": p.surface_form,
                     "reading": p.member_a_understanding if line.speaker_id == "M1" else p.member_b_understanding}
                    for p in profiles.misalignment_points if line.speaker_id in ("M1", "M2")
                    and p.surface_form.strip() and p.surface_form.strip().casefold() in said]
        member = members.get(line.speaker_id)
        held = member.hidden_assumptions if member is not None else []
        out.append({"turn_idx": line.turn_idx, "speaker_id": line.speaker_id, "speaker_name": line.speaker_name,
                    "readings": readings, "private_state": member.private_state if member is not None else "",
                    "assumption": held[(k // 2) % len(held)] if held else ""})
    shown = profiles.model_dump()
    return {"feedback": feedback, "fields": FIELD_DESCRIPTIONS, "profiles": shown,
            "names": [m["name"] for m in shown["members"]], "lines": out}


def judge_context(seed: SeedTuple, profiles: Stage1Output, stage_rubric: StageRubric, no_change: str,
                  dialogue: Stage2Output | None = None) -> dict[str, Any]:
    """Context of a judge template (build and audit judge alike): the seed, the profiles,
    the stage's rubric and its no-change phrase, and the ``dialogue`` when one is judged
    (without it, all but the dialogue: :mod:`ioa_synth.build.stage2_inputs`)."""
    ctx = _seed(seed) | {"profiles": profiles.model_dump(), "stage_rubric": stage_rubric, "no_change": no_change}
    if dialogue is not None:
        ctx["dialogue"] = dialogue.model_dump()
    return ctx
