"""The build's two stages for a meeting of N = 3..6 participants (``build --participants N``).

The stages are those of :mod:`ioa_synth.build.stages` with these parts replaced (a
two-person build never reaches this module and keeps its prompts, schemas and
fingerprints):

| part | stage 1 (profiles) | stage 2 (dialogue) |
| --- | --- | --- |
| output | :class:`~ioa_synth.protocol.multiparty.MultiStage1Output` (points with ``between``/``neutral``) | unchanged |
| rules | :func:`~ioa_synth.protocol.multiparty.multi_stage1_problems` (members M1..MN, sides a partition) | :func:`~ioa_synth.protocol.multiparty.multi_stage2_problems` (every member speaks) |
| gates | the dyadic gates + every member pair (:func:`~ioa_synth.protocol.gates_multi.member_pair_failures`) | the dyadic gates + sides by participant (:func:`~ioa_synth.protocol.gates_multi.side_failures`) |
| request schema | :func:`~ioa_synth.protocol.plan_multi.multi_stage1_schema` | :func:`~ioa_synth.protocol.plan_multi.multi_stage2_schema` |
| templates | ``build_multi/stage1_generator.jinja2``, ``build_multi/stage1_judge.jinja2`` | ``build_multi/stage2_generator.jinja2``, ``build_multi/stage2_judge.jinja2`` |

Stage 2 is written in one call whatever the plan mode (the scaffold plan's two passes are
dyadic). The judges' rubric (dimensions, θ1, θ2) is the paper's; the multi-party judge
templates say how each dimension reads for several people (docs/build.md).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache, partial
from typing import Any

from ioa_synth.build.contexts import judge_context
from ioa_synth.build.prompts import MULTI_CAPABILITY, MULTI_TEMPLATE_FILES
from ioa_synth.build.stage2_inputs import Stage2Inputs
from ioa_synth.build.stages import DIALOGUE, PROFILES, STAGES, StageSpec, _dialogue_gates
from ioa_synth.core.validation import checked_count
from ioa_synth.llm.loop_prompt import prepare_loop
from ioa_synth.protocol.cells import MA_TYPES, TASK_TYPES
from ioa_synth.protocol.gates import profile_reference, stage1_gate_failures
from ioa_synth.protocol.gates_multi import member_pair_failures, side_failures
from ioa_synth.protocol.multiparty import (MAX_PARTICIPANTS, MIN_PARTICIPANTS, MultiStage1Output, member_ids,
                                           multi_stage1_problems, multi_stage2_problems)
from ioa_synth.protocol.plan import CasePlan
from ioa_synth.protocol.plan_multi import multi_outline_bounds, multi_stage1_schema, multi_stage2_schema
from ioa_synth.protocol.planting import TYPE_DEFINITIONS
from ioa_synth.protocol.rubric import Rubric
from ioa_synth.protocol.schemas import FIELD_DESCRIPTIONS, Stage1Output

def check_participants(n: int) -> int:
    """``n`` when it is a participant count a build takes (2-6).

    Raises:
        ValueError: any other number, with the sentence the command prints.
    """
    return checked_count(n, MIN_PARTICIPANTS, MAX_PARTICIPANTS, "--participants", "participants",
                         "the paper's two-person meeting")


def multi_profiles_context(seed: Any, profiles: Stage1Output | None, previous: str | None, feedback: str | None,
                           plan_mode: str = "protocol", planned_types: tuple[str, ...] | None = None, *,
                           n: int) -> dict[str, Any]:
    """Context of the multi-party stage-1 generator: the seed, ``n_members`` and
    ``member_ids``, the point ids and count, the outline bounds and the planned types."""
    plan = CasePlan.for_seed(seed.seed_id)
    return {"previous": previous, "feedback": feedback, "fields": FIELD_DESCRIPTIONS, "seed": seed,
            "domain": seed.domain, "task_type": seed.task_type, "task_description": TASK_TYPES[seed.task_type],
            "ma_types": MA_TYPES, "n_members": n, "member_ids": member_ids(n), "ma_ids": list(plan.ma_ids),
            "n_points": len(plan.ma_ids), "outline_bounds": multi_outline_bounds(len(plan.ma_ids), n),
            "planned_types": [(i, t, TYPE_DEFINITIONS[t]) for i, t in zip(plan.ma_ids, planned_types or ())]}


def multi_dialogue_context(seed: Any, profiles: Stage1Output | None, previous: str | None, feedback: str | None,
                           plan_mode: str = "protocol", planned_types: tuple[str, ...] | None = None
                           ) -> dict[str, Any]:
    """Context of the multi-party stage-2 generator: the accepted ``profiles`` (required)."""
    assert profiles is not None
    return {"previous": previous, "feedback": feedback, "fields": FIELD_DESCRIPTIONS, "profiles": profiles.model_dump()}


def multi_stage2_inputs(case: Any, profiles: Stage1Output, rubric: Rubric) -> Stage2Inputs:
    """The stage-2 gates' reference and the multi-party judge prompt but for the dialogue."""
    ctx = judge_context(case.seed, profiles, rubric.stage(2), rubric.no_change_feedback)
    loop = prepare_loop(MULTI_TEMPLATE_FILES[(2, "judge")], "dialogue", "turns",
                        {**ctx, "judge_types": False, "type_definitions": TYPE_DEFINITIONS})
    return Stage2Inputs(profile_reference(profiles), loop)


def _profiles_gates(out: Any, profiles: Any, reference: Any) -> list[str]:
    return stage1_gate_failures(out) + member_pair_failures(out)


def _dialogue_multi_gates(out: Any, profiles: Any, reference: Any) -> list[str]:
    failures = _dialogue_gates(out, profiles, reference)
    return failures + (side_failures(out, profiles) if profiles is not None else [])


@lru_cache(maxsize=None)
def stages_for(n: int) -> dict[int, StageSpec]:
    """The stages by number of an ``n``-person build: :data:`~ioa_synth.build.stages.STAGES`
    itself for 2, the multi-party stages otherwise."""
    if n == 2:
        return STAGES
    check_participants(n)
    templates = {s: {role: MULTI_TEMPLATE_FILES[(s, role)] for role in ("generator", "judge")} for s in (1, 2)}
    profiles = replace(
        PROFILES, output=MultiStage1Output, templates=templates[1], problems=partial(multi_stage1_problems, n=n),
        gates=_profiles_gates, generator_context=partial(multi_profiles_context, n=n),
        request_schema=lambda plan_mode, case, profiles: multi_stage1_schema(n, case.seed.seed_id,
                                                                             case.planned_types))
    dialogue = replace(
        DIALOGUE, templates=templates[2], problems=partial(multi_stage2_problems, n=n), gates=_dialogue_multi_gates,
        request_schema=lambda plan_mode, case, profiles: multi_stage2_schema(profiles),
        generator_context=multi_dialogue_context, prepare=multi_stage2_inputs, passes=None)
    return {1: profiles, 2: dialogue}


__all__ = ["MULTI_CAPABILITY", "MULTI_TEMPLATE_FILES", "check_participants", "multi_dialogue_context",
           "multi_profiles_context", "multi_stage2_inputs", "stages_for"]
