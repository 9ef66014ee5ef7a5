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

from typing import Any

from ioa_synth.protocol.cells import MA_TYPES, TASK_TYPES
from ioa_synth.protocol.plan_modes import plan_context
from ioa_synth.protocol.rubric import Rubric
from ioa_synth.protocol.schemas import FIELD_DESCRIPTIONS, Stage1Output, Stage2Output
from ioa_synth.seeds.tuples import SeedTuple


def _seed(seed: SeedTuple) -> dict[str, Any]:
    return {"seed": seed, "domain": seed.domain, "task_type": seed.task_type,
            "task_description": TASK_TYPES[seed.task_type]}


def generator_context(stage: int, seed: SeedTuple, profiles: Stage1Output | None, previous: str | None,
                      feedback: str | None, plan_mode: str = "scaffold",
                      planned_types: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Context of the stage-``stage`` generator template; ``profiles`` is required for stage 2.
    Stage 1 gets the case plan under ``plan_mode`` with the ``planned_types``
    (:func:`ioa_synth.protocol.plan_modes.plan_context`)."""
    ctx: dict[str, Any] = {"previous": previous, "feedback": feedback, "fields": FIELD_DESCRIPTIONS}
    if stage == 1:
        return ctx | _seed(seed) | {"ma_types": MA_TYPES} | plan_context(plan_mode, seed.seed_id, planned_types)
    assert profiles is not None
    return ctx | {"profiles": profiles.model_dump()}


def judge_context(stage: int, seed: SeedTuple, profiles: Stage1Output, dialogue: Stage2Output | None,
                  rubric: Rubric) -> dict[str, Any]:
    """Context of the stage-``stage`` judge template (build and audit judge alike); at
    stage 2 without ``dialogue``, all but the dialogue (:mod:`ioa_synth.build.stage2_inputs`)."""
    ctx = _seed(seed) | {"profiles": profiles.model_dump(), "stage_rubric": rubric.stage(stage),
                         "no_change": rubric.no_change_feedback}
    if stage == 2 and dialogue is not None:
        ctx["dialogue"] = dialogue.model_dump()
    return ctx
