"""The build's two stages as values (paper App. B): what each one generates, checks and
has judged, so that the loop (:mod:`ioa_synth.build.pipeline`), ``show``, ``audit`` and
``regenerate`` ask the stage instead of testing its number.

| | :data:`PROFILES` (stage 1) | :data:`DIALOGUE` (stage 2) |
| --- | --- | --- |
| output | :class:`Stage1Output` (G_participants) | :class:`Stage2Output` (G_dialogue) |
| rules | :func:`stage1_problems` | :func:`stage2_problems` |
| gates | :func:`stage1_gate_failures` | :func:`stage2_gate_failures` (against the profiles) |
| request schema | the case plan, as strict as the plan mode | the profiles' members and MA ids |
| judge (θ) | J_participants, one item per MA (θ1), reads planted types | J_dialogue, one item (θ2) |
| starts from | the seed | the accepted profiles, prepared ahead (:mod:`.stage2_inputs`) |

The stage number stays where it is data: ``llm_calls.stage``, ``scores.stage``, the
record's ``quality.stage1``/``stage2`` and the rubric's stages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from pydantic import BaseModel

from ioa_synth.build.contexts import dialogue_generator_context, judge_context, profiles_generator_context
from ioa_synth.build.passes import TwoPasses
from ioa_synth.build.prompts import TEMPLATE_FILES
from ioa_synth.build.stage2_inputs import Stage2Inputs, stage2_inputs
from ioa_synth.core.templates import Prompt, render_template
from ioa_synth.protocol.gates import ProfileReference, stage1_gate_failures, stage2_gate_failures
from ioa_synth.protocol.plan import stage2_schema
from ioa_synth.protocol.plan_modes import stage1_request_schema
from ioa_synth.protocol.plan_text import unquoted
from ioa_synth.protocol.planting import TYPE_DEFINITIONS
from ioa_synth.protocol.rubric import Rubric, StageRubric
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output, stage1_problems, stage2_problems

if TYPE_CHECKING:
    from ioa_synth.build.pipeline import Case


@dataclass(frozen=True, eq=False)
class StageSpec:
    """One stage of the build loop.

    Attributes:
        stage: its number, 1 or 2 (``llm_calls.stage``, ``scores.stage``, the rubric's stage).
        name: what it writes, ``profiles`` or ``dialogue`` (an accepted case's attribute).
        output: the pydantic model of the generator's reply.
        templates: role (``generator``, ``judge``) -> template name.
        after: the stage whose accepted output it starts from (``None``: the first stage).
        problems: ``problems(output)`` -> the structural rules it breaks.
        gates: ``gates(output, profiles, reference)`` -> content-gate failures (``reference``
            from :attr:`prepare`, made on the spot when ``None``).
        request_schema: ``request_schema(plan_mode, case, profiles)`` -> the generator's JSON schema.
        generator_context: ``generator_context(seed, profiles, previous, feedback, plan_mode,
            planned_types)`` -> the generator template's context.
        judged_output: ``judged_output(output)`` -> the output as its judge template sees it,
            beyond the profiles (``{}`` when the output is the profiles).
        judged_items: ``judged_items(profiles)`` -> the items scored one by one (MA ids;
            ``[]``: the output as one item).
        profiles_of: ``profiles_of(output, profiles)`` -> the case's profiles once it passed.
        gate_feedback: ``gate_feedback(failures, output)`` -> the gate failures as the
            regeneration request shows them.
        reads_types: its judge reads each point's planted type (type-controlled planting);
            a type that differs from the plan fails the stage like a score below θ.
        prepare: ``prepare(case, profiles, rubric)`` -> inputs made ahead from the
            profiles (the gates' reference, the judge prompt but for the output), or ``None``.
        passes: how the stage is written in two generator calls where its plan mode asks
            for it (stage 2 under the scaffold plan: lines, then inner thoughts), or ``None``.
        meetings: how a series' stage 2 is written, one generator call per meeting
            (:class:`~ioa_synth.build.stages_series.MeetingWriting`), or ``None`` (one meeting).
        note: ``note(prompt, role, profiles, output)`` -> ``prompt`` with what a series adds
            to the stage's generator and judge prompts, or ``None`` (one meeting: the prompt as rendered).
    """

    stage: int
    name: str
    output: type[BaseModel]
    templates: Mapping[str, str]
    after: int | None
    problems: Callable[[Any], list[str]]
    gates: Callable[[Any, Stage1Output | None, ProfileReference | None], list[str]]
    request_schema: Callable[[str, "Case", Stage1Output | None], dict[str, Any]]
    generator_context: Callable[..., dict[str, Any]]
    judged_output: Callable[[Any], dict[str, Any]]
    judged_items: Callable[[Stage1Output], list[str]]
    profiles_of: Callable[[Any, Stage1Output | None], Stage1Output]
    gate_feedback: Callable[[list[str], Any], list[str]]
    reads_types: bool = False
    prepare: Callable[[Any, Stage1Output, Rubric], Stage2Inputs] | None = None
    passes: TwoPasses | None = None
    meetings: Any = None
    note: Callable[[Prompt, str, Any, Any], Prompt] | None = None

    def passes_for(self, plan_mode: str) -> TwoPasses | None:
        """The two-pass writing of this stage under ``plan_mode``, or ``None`` (one call)."""
        return self.passes if self.passes is not None and self.passes.applies(plan_mode) else None

    @property
    def call_name(self) -> str:
        """The name of the generator's request schema (``stage1_profiles``, ``stage2_dialogue``)."""
        return f"stage{self.stage}_{self.name}"

    def rubric(self, rubric: Rubric) -> StageRubric:
        """The part of ``rubric`` that judges this stage (its dimensions and θ)."""
        return rubric.stage(self.stage)

    def render(self, role: str, **context: Any) -> Prompt:
        """The prompt of ``role``'s template rendered with ``context``."""
        return render_template(self.templates[role], **context)

    def judge_context(self, seed: Any, profiles: Stage1Output, output: BaseModel | None,
                      rubric: Rubric) -> dict[str, Any]:
        """The judge template's context about ``output`` (``None``: all but the output)."""
        ctx = judge_context(seed, profiles, self.rubric(rubric), rubric.no_change_feedback)
        return (ctx | self.judged_output(output)) if output is not None else ctx


def _without_surface_forms(failures: list[str], gen: Stage1Output) -> list[str]:
    """Stage-1 gate ``failures`` as the regeneration request shows them: without the rejected
    surface forms quoted in them (the discard reason keeps them). The 1.5B demo model copied
    every surface form quoted in the request into its new attempt, repeating the failure."""
    quoted = sorted({repr(p.surface_form) for p in gen.misalignment_points}, key=len, reverse=True)
    out = []
    for failure in failures:
        for q in quoted:
            failure = failure.replace(f" ({q})", "").replace(f" {q}", "")
        out.append(failure)
    return out


def shown_gate_failures(spec: StageSpec, failures: list[str], output: Any, profiles: Stage1Output | None,
                        plan_mode: str | None) -> list[str]:
    """Gate ``failures`` of ``output`` as the regeneration request shows them
    (``spec.gate_feedback``); under the scaffold plan also without the snippets of the
    rejected text they quote (:func:`~ioa_synth.protocol.plan_text.unquoted`), keeping the
    surface forms of the case's ``profiles``. The paper's protocol plan shows them whole."""
    shown = spec.gate_feedback(failures, output)
    if plan_mode != "scaffold":
        return shown
    keep = {p.surface_form for p in profiles.misalignment_points} if profiles is not None else set()
    return [unquoted(f, keep) for f in shown]


def _dialogue_gates(out: Stage2Output, profiles: Stage1Output | None, reference: ProfileReference | None) -> list[str]:
    """The stage-2 gates; none without profiles to compare with (``show`` of a lone dialogue)."""
    return stage2_gate_failures(out, profiles, reference=reference) if profiles is not None else []


#: Stage 1: the participants' profiles and misalignment points (G_participants, J_participants, θ1).
PROFILES = StageSpec(
    stage=1, name="profiles", output=Stage1Output,
    templates={"generator": TEMPLATE_FILES[(1, "generator")], "judge": TEMPLATE_FILES[(1, "judge")]},
    after=None,
    problems=stage1_problems,
    gates=lambda out, profiles, reference: stage1_gate_failures(out),
    request_schema=lambda plan_mode, case, profiles: stage1_request_schema(plan_mode, case.seed.seed_id,
                                                                           case.planned_types),
    generator_context=profiles_generator_context,
    judged_output=lambda out: {},
    judged_items=lambda profiles: [p.id for p in profiles.misalignment_points],
    profiles_of=lambda out, profiles: out,
    gate_feedback=_without_surface_forms,
    reads_types=True,
)

#: Stage 2: the dialogue written from the accepted profiles (G_dialogue, J_dialogue, θ2).
DIALOGUE = StageSpec(
    stage=2, name="dialogue", output=Stage2Output,
    templates={"generator": TEMPLATE_FILES[(2, "generator")], "judge": TEMPLATE_FILES[(2, "judge")]},
    after=1,
    problems=stage2_problems,
    gates=_dialogue_gates,
    request_schema=lambda plan_mode, case, profiles: stage2_schema(profiles, latin=plan_mode == "scaffold"),
    generator_context=dialogue_generator_context,
    judged_output=lambda out: {"dialogue": out.model_dump()},
    judged_items=lambda profiles: [],
    profiles_of=lambda out, profiles: profiles,
    gate_feedback=lambda failures, out: failures,
    prepare=stage2_inputs,
    passes=TwoPasses(),
)

#: The stages by number, in the order a case goes through them.
STAGES: dict[int, StageSpec] = {s.stage: s for s in (PROFILES, DIALOGUE)}


def stage_spec(stage: int) -> StageSpec:
    """The stage numbered ``stage``; raises ``KeyError`` for another number."""
    return STAGES[stage]


def next_stage(spec: StageSpec) -> StageSpec | None:
    """The stage that starts from ``spec``'s accepted output, or ``None`` after the last."""
    return next((s for s in STAGES.values() if s.after == spec.stage), None)


def stages_from(stage: int) -> list[int]:
    """The numbers of ``stage`` and the stages after it (a re-run of ``stage`` numbers its
    attempts after theirs)."""
    return [s for s in STAGES if s >= stage]


def judge_prompt(spec: StageSpec, case: Any, profiles: Stage1Output, output: BaseModel, rubric: Rubric,
                 read_types: bool, prepared: Stage2Inputs | None = None) -> Prompt:
    """The build judge's prompt about ``output`` (``spec``'s output of ``case``); from
    ``prepared`` when given (the same bytes as rendering it now)."""
    made = prepared.judge_prompt_for(output) if prepared is not None else None
    if made is not None:
        return made
    ctx = spec.judge_context(case.seed, profiles, output, rubric)
    return spec.render("judge", **ctx, judge_types=read_types, type_definitions=TYPE_DEFINITIONS)
