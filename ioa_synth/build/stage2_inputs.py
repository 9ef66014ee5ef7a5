"""What a case's stage 2 needs from its accepted profiles alone, made while the stage-1
judge call is on the wire (:mod:`ioa_synth.llm.ahead`): the stage-2 gates' reference
(:func:`~ioa_synth.protocol.gates.profile_reference`) and the stage-2 judge prompt
(J_dialogue, App. B) rendered but for the dialogue's turns
(:mod:`ioa_synth.llm.loop_prompt`). The dialogue call and its judge call are then
separated only by the work on the dialogue itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from ioa_synth.build.contexts import judge_context
from ioa_synth.llm.loop_prompt import LoopPrompt, prepare_loop
from ioa_synth.build.prompts import TEMPLATE_FILES, render
from ioa_synth.core.templates import Prompt
from ioa_synth.protocol.gates import ProfileReference, profile_reference
from ioa_synth.protocol.planting import TYPE_DEFINITIONS
from ioa_synth.protocol.rubric import Rubric
from ioa_synth.protocol.schemas import Stage1Output


@dataclass(frozen=True)
class Stage2Inputs:
    """The stage-2 gates' ``reference`` and the stage-2 judge prompt less its dialogue
    (``None`` when the template's dialogue loop cannot be filled in later)."""

    reference: ProfileReference
    judge_prompt: LoopPrompt | None


def stage2_inputs(case: object, profiles: Stage1Output, rubric: Rubric) -> Stage2Inputs:
    """The :class:`Stage2Inputs` of ``case`` (a build case: its ``seed``) with ``profiles``."""
    ctx = judge_context(2, case.seed, profiles, None, rubric)
    loop = prepare_loop(TEMPLATE_FILES[(2, "judge")], "dialogue", "turns",
                        {**ctx, "judge_types": False, "type_definitions": TYPE_DEFINITIONS})
    return Stage2Inputs(profile_reference(profiles), loop)


def judge_prompt(stage: int, case: object, profiles: Stage1Output, gen: BaseModel, rubric: Rubric,
                 read_types: bool, prepared: Stage2Inputs | None = None) -> Prompt:
    """The build judge's prompt about ``gen`` (stage ``stage``'s output of ``case``); for
    stage 2 from ``prepared`` when given (the same bytes as rendering it now)."""
    if stage == 2 and prepared is not None and prepared.judge_prompt is not None:
        return prepared.judge_prompt.fill(gen.model_dump()["turns"])
    ctx = judge_context(stage, case.seed, profiles, gen if stage == 2 else None, rubric)
    return render(stage, "judge", **ctx, judge_types=read_types, type_definitions=TYPE_DEFINITIONS)
