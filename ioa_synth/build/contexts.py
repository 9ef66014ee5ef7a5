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
    the accepted ``profiles`` and ``outline``, the outline turns with the speaker's name and
    their description with member and point ids written as names and quoted phrases
    (``[say "..." inside a sentence]`` after a turn that voices a point). The template shows
    no private state, hidden assumption or reading."""
    assert profiles is not None
    shown = profiles.model_dump()
    names = {m["id"]: m["name"] for m in shown["members"]}
    phrases = {p["id"]: p["surface_form"] for p in shown["misalignment_points"]}
    outline = [t | {"speaker_name": names.get(t["speaker"], t["speaker"]), "description": _named(t["description"], names, phrases)}
               for t in _outline_by_surface_form(shown)]
    return {"previous": previous, "feedback": feedback, "fields": FIELD_DESCRIPTIONS, "profiles": shown,
            "outline": outline}


def dialogue_thoughts_context(profiles: Stage1Output, lines: DialogueLines, feedback: str | None) -> dict[str, Any]:
    """Context of the scaffold plan's thoughts pass: the ``profiles`` (private states,
    hidden assumptions and readings shown), the members' ``names`` (M1's, M2's) and the
    ``lines`` of the lines pass; no outline."""
    shown = profiles.model_dump()
    return {"feedback": feedback, "fields": FIELD_DESCRIPTIONS, "profiles": shown,
            "names": [m["name"] for m in shown["members"]], "lines": [t.model_dump() for t in lines.turns]}


def _named(text: str, names: dict[str, str], phrases: dict[str, str]) -> str:
    """``text`` with member ids (``M1``) as names and point ids (``MA1``) as their quoted phrase."""
    text = re.sub(r"\bMA\d+\b", lambda m: f'"{phrases[m.group()]}"' if m.group() in phrases else "the point", text)
    return re.sub(r"\bM\d+\b", lambda m: names.get(m.group(), "the other person"), text)


def judge_context(seed: SeedTuple, profiles: Stage1Output, stage_rubric: StageRubric, no_change: str,
                  dialogue: Stage2Output | None = None) -> dict[str, Any]:
    """Context of a judge template (build and audit judge alike): the seed, the profiles,
    the stage's rubric and its no-change phrase, and the ``dialogue`` when one is judged
    (without it, all but the dialogue: :mod:`ioa_synth.build.stage2_inputs`)."""
    ctx = _seed(seed) | {"profiles": profiles.model_dump(), "stage_rubric": stage_rubric, "no_change": no_change}
    if dialogue is not None:
        ctx["dialogue"] = dialogue.model_dump()
    return ctx
