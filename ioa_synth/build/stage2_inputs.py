"""What a case's stage 2 needs from its accepted profiles alone, made while the stage-1
judge call is on the wire (:mod:`ioa_synth.llm.ahead`): the stage-2 gates' reference
(:func:`~ioa_synth.protocol.gates.profile_reference`) and the stage-2 judge prompt
(J_dialogue, App. B) rendered but for the dialogue's turns
(:mod:`ioa_synth.llm.loop_prompt`). The dialogue call and its judge call are then
separated only by the work on the dialogue itself. The dialogue stage's ``prepare``
(:data:`ioa_synth.build.stages.DIALOGUE`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from ioa_synth.build.contexts import judge_context
from ioa_synth.build.prompts import TEMPLATE_FILES
from ioa_synth.core.templates import Prompt
from ioa_synth.llm.loop_prompt import LoopPrompt, prepare_loop
from ioa_synth.protocol.gates import ProfileReference, profile_reference
from ioa_synth.protocol.planting import TYPE_DEFINITIONS
from ioa_synth.protocol.rubric import Rubric
from ioa_synth.protocol.schemas import Stage1Output

#: The stage these inputs serve (the catalog's ``stage`` of the dialogue).
STAGE = 2


@dataclass(frozen=True)
class Stage2Inputs:
    """The stage-2 gates' ``reference`` and the stage-2 judge prompt less its dialogue
    (``None`` when the template's dialogue loop cannot be filled in later)."""

    reference: ProfileReference
    judge_prompt: LoopPrompt | None

    def judge_prompt_for(self, dialogue: BaseModel) -> Prompt | None:
        """The judge prompt about ``dialogue`` (the very bytes rendering it gives), or ``None``."""
        return self.judge_prompt.fill(dialogue.model_dump()["turns"]) if self.judge_prompt is not None else None


def stage2_inputs(case: object, profiles: Stage1Output, rubric: Rubric) -> Stage2Inputs:
    """The :class:`Stage2Inputs` of ``case`` (a build case: its ``seed``) with ``profiles``."""
    ctx = judge_context(case.seed, profiles, rubric.stage(STAGE), rubric.no_change_feedback)  # type: ignore[attr-defined]
    loop = prepare_loop(TEMPLATE_FILES[(STAGE, "judge")], "dialogue", "turns",
                        {**ctx, "judge_types": False, "type_definitions": TYPE_DEFINITIONS})
    return Stage2Inputs(profile_reference(profiles), loop)
