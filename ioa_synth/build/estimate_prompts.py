"""The prompts ``estimate build`` counts before a call is made: each case's prompts with
every earlier output left blank (the skeletons), in the build's plan mode, meeting size and
language, as :mod:`ioa_synth.build.stages` renders them (a measured prompt of the build
directory replaces a skeleton once it exists, :mod:`ioa_synth.build.estimate`)."""

from __future__ import annotations

from dataclasses import dataclass

from ioa_synth.build.estimate_multi import multi_skeletons
from ioa_synth.build.prompts import with_language
from ioa_synth.build.stages import DIALOGUE, PROFILES, judge_prompt
from ioa_synth.core.templates import Prompt
from ioa_synth.llm.component_setup import ComponentSetup
from ioa_synth.protocol.plan import CasePlan
from ioa_synth.protocol.rubric import Rubric
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output
from ioa_synth.seeds.tuples import SeedTuple


def blank_profiles(seed_id: str, types: tuple[str, ...] | None) -> Stage1Output:
    """The seed's case plan as a stage-1 output with every text empty (ids, names, types, outline kept)."""
    plan = CasePlan.for_seed(seed_id)
    types = types or ("definitional",) * len(plan.ma_ids)
    return Stage1Output.model_validate({
        "meeting_scenario": "",
        "members": [{"id": f"M{i + 1}", "name": name, "role": "", "expertise": "", "background": "",
                     "private_state": "", "hidden_assumptions": ["", "", ""]} for i, name in enumerate(plan.names)],
        "misalignment_points": [{"id": ma, "type": t, "topic": "", "surface_form": "", "member_a_understanding": "",
                                 "member_b_understanding": "", "why_undetected": ""} for ma, t in zip(plan.ma_ids, types)],
        "conversation_outline": [{"turn": n, "speaker": s, "description": "", "ma_ids": []}
                                 for n, s in enumerate(plan.speakers, 1)]})


def blank_dialogue(profiles: Stage1Output) -> Stage2Output:
    """One empty turn per outline turn of ``profiles``."""
    names = {m.id: m.name for m in profiles.members}
    return Stage2Output.model_validate({"turns": [
        {"turn_idx": t.turn, "speaker_id": t.speaker, "speaker_name": names[t.speaker], "inner_thought": "",
         "utterance": ""} for t in profiles.conversation_outline]})


@dataclass
class SkeletonCase:
    """A case to count: its seed tuple and planned types (``None``: the paper's stage 1)."""

    seed: SeedTuple
    planned_types: tuple[str, ...] | None


def skeletons(case: SkeletonCase, plan_mode: str, rubric: Rubric, gen: ComponentSetup,
               judge: ComponentSetup, participants: int = 2, language: str | None = None) -> dict[str, int]:
    """Tokens of the case's prompts with every earlier output left blank (a meeting of
    ``participants`` people: :mod:`ioa_synth.build.stages_multi` above two), each with the
    note of ``language`` appended as the build appends it (:func:`~ioa_synth.build.prompts.with_language`)."""
    def gen_tokens(prompt: Prompt) -> int:
        return gen.counter.messages(with_language(prompt, language, "generator").messages)

    def judge_tokens(prompt: Prompt) -> int:
        return judge.counter.messages(with_language(prompt, language, "judge").messages)

    if participants != 2:
        return multi_skeletons(case, participants, rubric, gen_tokens, judge_tokens)
    profiles = blank_profiles(case.seed.seed_id, case.planned_types)
    s1 = PROFILES.render("generator", **PROFILES.generator_context(case.seed, None, None, None, plan_mode,
                                                                   case.planned_types))
    passes = DIALOGUE.passes_for(plan_mode)
    if passes is not None:  # the scaffold's stage 2: lines, then thoughts over blank lines
        s2 = passes.lines_request(case.seed, profiles, None, None)[0]
        blank = passes.parse_lines(blank_dialogue(profiles).model_dump())
        s2t = gen_tokens(passes.thoughts_request(profiles, blank, None)[0])
    else:
        s2 = DIALOGUE.render("generator", **DIALOGUE.generator_context(case.seed, profiles, None, None, plan_mode,
                                                                       case.planned_types))
        s2t = 0
    j1 = judge_prompt(PROFILES, case, profiles, profiles, rubric, PROFILES.reads_types and bool(case.planned_types))
    j2 = judge_prompt(DIALOGUE, case, profiles, blank_dialogue(profiles), rubric,
                      DIALOGUE.reads_types and bool(case.planned_types))
    return {"s1g": gen_tokens(s1), "s2g": gen_tokens(s2), "s2t": s2t, "s1j": judge_tokens(j1), "s2j": judge_tokens(j2)}


__all__ = ["SkeletonCase", "blank_dialogue", "blank_profiles", "skeletons"]
