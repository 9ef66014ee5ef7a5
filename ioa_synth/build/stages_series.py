"""The build's two stages for a series of K = 2..5 meetings (``build --meetings K``,
:mod:`ioa_synth.protocol.series`), made from the stages of one meeting of the build's size
(:func:`~ioa_synth.build.stages_multi.stages_for`: two people or N). A one-meeting build never
reaches this module and keeps its prompts, schemas and fingerprints.

| part | stage 1 (the series' plan) | stage 2 (the K dialogues) |
| --- | --- | --- |
| output | :func:`~ioa_synth.protocol.series.series_stage1_model` of the base output (points with ``planted_in``/``surfaces_in``, outline turns with ``meeting``) | :class:`~ioa_synth.protocol.series.SeriesStage2Output` (turns with ``meeting``) |
| rules | the base rules + :func:`~ioa_synth.protocol.series.series_stage1_problems` | the base rules over the series + :func:`~ioa_synth.protocol.series.series_stage2_problems` |
| gates | the base gates | the base gates over the series (surfacing points' readings left to the series gates) + :func:`~ioa_synth.protocol.gates_series.series_failures` |
| request schema | the base schema in protocol mode + :func:`~ioa_synth.protocol.series.series_schema` | per meeting, the base schema of meeting k's outline turns |
| generator calls | one | one per meeting (:class:`MeetingWriting`), meeting k shown the earlier meetings' lines |
| templates | the base templates + ``build_series/series_note.jinja2`` (a note appended to every prompt) | the same |

Whatever the plan mode, a series is planned in the protocol-mode shape and each meeting is
written in one call (the scaffold plan's fixed outline and two passes are single-meeting).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Callable

from pydantic import BaseModel

from ioa_synth.build.prompts import SERIES_NOTE
from ioa_synth.build.stages import StageSpec
from ioa_synth.build.stages_multi import stages_for
from ioa_synth.core.templates import Prompt, render_template, with_note
from ioa_synth.protocol.gates import profile_reference
from ioa_synth.protocol.gates_series import latency_reference, series_failures
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output
from ioa_synth.protocol.series import (MIN_TURNS_PER_MEETING, SeriesStage2Output, check_meetings, restricted_profiles,
                                       combine, series_schema, series_stage1_model, series_stage1_problems,
                                       series_stage2_problems)


def meeting_role(k: int) -> str:
    """The call key's role of meeting ``k``'s generator call: ``generator`` for the first
    (the stage's call, as in a one-meeting build), ``generator:meeting<k>`` after it (its
    component is ``generator``, the part before ``:``)."""
    return "generator" if k == 1 else f"generator:meeting{k}"


def series_note(prompt: Prompt, role: str, stage: int, profiles: BaseModel | None, output: BaseModel | None,
                k: int) -> Prompt:
    """``prompt`` with the series note for ``role`` at ``stage``: the generator's plan of a
    series (stage 1), or the judges' view of the series' plan and, at stage 2, each meeting's
    turns (``output``, a :class:`SeriesStage2Output`)."""
    if role == "generator":
        return with_note(prompt, render_template(SERIES_NOTE, part="plan", k=k, min_turns=MIN_TURNS_PER_MEETING))
    points = [p.model_dump() for p in profiles.misalignment_points] if profiles is not None else []
    meetings = []
    if isinstance(output, SeriesStage2Output):
        for m in range(1, k + 1):
            turns = output.meeting(m)
            if turns:
                meetings.append({"meeting": m, "first": turns[0].turn_idx, "last": turns[-1].turn_idx})
    return with_note(prompt, render_template(SERIES_NOTE, part="judge", k=k, points=points, meetings=meetings))


@dataclass(frozen=True)
class MeetingWriting:
    """Stage 2 of a series: one generator call per meeting, each with the base stage's
    template and schema for that meeting's outline turns and the points planted by then
    (:func:`~ioa_synth.protocol.series.restricted_profiles`), plus a note naming the earlier
    meetings' lines, the points planted and surfacing in it and those that stay hidden."""

    k: int
    base: StageSpec

    def request(self, case: Any, profiles: Stage1Output, meeting: int, earlier: list[Stage2Output],
                feedback: str | None) -> tuple[Prompt, dict[str, Any]]:
        """Meeting ``meeting``'s prompt and request schema, after the ``earlier`` meetings."""
        shown = restricted_profiles(profiles, meeting)
        ctx = self.base.generator_context(case.seed, shown, None, feedback, "protocol", case.planned_types)
        points = profiles.misalignment_points
        note = render_template(
            SERIES_NOTE, part="meeting", k=self.k, meeting=meeting,
            earlier=[{"meeting": i, "turns": d.turns} for i, d in enumerate(earlier, start=1)],
            planted=[p.id for p in points if p.planted_in == meeting],
            surfacing=[p.id for p in points if getattr(p, "surfaces_in", None) == meeting])
        return (with_note(self.base.render("generator", **ctx), note),
                self.base.request_schema("protocol", case, shown))


    def write(self, case: Any, profiles: Stage1Output, first: tuple[Prompt, dict[str, Any]], feedback: str | None,
              ask: Callable[[int, Prompt, dict[str, Any]], Stage2Output]) -> SeriesStage2Output:
        """The series' dialogues: ``ask(k, prompt, schema)`` makes meeting ``k``'s call
        (``first``: meeting 1's request, made ahead), each after the meetings before it."""
        done: list[Stage2Output] = []
        for k in range(1, self.k + 1):
            prompt, schema = first if k == 1 else self.request(case, profiles, k, done, feedback)
            done.append(ask(k, prompt, schema))
        return combine(done)


def _series_gates(base: StageSpec):
    def gates(out: Any, profiles: Any, reference: Any) -> list[str]:
        if profiles is None:
            return []
        ref = reference or profile_reference(profiles)
        return base.gates(out, profiles, latency_reference(ref, profiles)) + series_failures(out, profiles, ref)
    return gates


@lru_cache(maxsize=None)
def series_stages(n: int, k: int) -> dict[int, StageSpec]:
    """The stages by number of a series of ``k`` meetings of ``n`` people (``k`` 2..5)."""
    check_meetings(k)
    base = stages_for(n)
    plan, dialogue = base[1], base[2]
    model = series_stage1_model(plan.output)

    def plan_context(seed, profiles, previous, feedback, plan_mode="protocol", planned_types=None):
        return plan.generator_context(seed, profiles, previous, feedback, "protocol", planned_types)

    profiles_spec = replace(
        plan, output=model, problems=lambda out: plan.problems(out) + series_stage1_problems(out, k),
        generator_context=plan_context,
        request_schema=lambda plan_mode, case, profiles: series_schema(plan.request_schema("protocol", case, profiles),
                                                                      k),
        note=lambda prompt, role, profiles, output: series_note(prompt, role, 1, profiles, output, k))
    dialogue_spec = replace(
        dialogue, output=SeriesStage2Output,
        problems=lambda out: dialogue.problems(out) + series_stage2_problems(out, k),
        gates=_series_gates(dialogue), passes=None, meetings=MeetingWriting(k, replace(dialogue, passes=None)),
        note=lambda prompt, role, profiles, output: series_note(prompt, role, 2, profiles, output, k))
    return {1: profiles_spec, 2: dialogue_spec}


def build_stages(n: int, k: int) -> dict[int, StageSpec]:
    """The stages of a build of ``n`` people and ``k`` meetings: :func:`stages_for` for one
    meeting (the paper's stages for two people), :func:`series_stages` otherwise."""
    return stages_for(n) if k == 1 else series_stages(n, k)


__all__ = ["MeetingWriting", "build_stages", "meeting_role", "series_note", "series_stages"]
