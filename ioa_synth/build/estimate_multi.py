"""Prompt skeletons of a multi-party build for ``estimate build --participants N`` (N = 3..6):
the tokens of each stage's generator and judge prompt with every earlier output left blank,
as :mod:`ioa_synth.build.estimate` counts a two-person build's. The outline is planned at
its fewest turns (:func:`~ioa_synth.protocol.plan_multi.multi_outline_bounds`), speakers in
turn; a real case may plan up to eight more, so the stage-2 prompts are a lower bound."""

from __future__ import annotations

from typing import Any, Callable

from ioa_synth.build.stages import judge_prompt
from ioa_synth.build.stages_multi import stages_for
from ioa_synth.core.templates import Prompt
from ioa_synth.protocol.multiparty import MultiStage1Output, member_ids
from ioa_synth.protocol.plan import CasePlan
from ioa_synth.protocol.plan_multi import multi_outline_bounds
from ioa_synth.protocol.rubric import Rubric
from ioa_synth.protocol.schemas import Stage2Output


def blank_multi_profiles(seed_id: str, types: tuple[str, ...] | None, n: int) -> MultiStage1Output:
    """Profiles of ``n`` members with every text blank: the plan's points (M1 on side a,
    M2..Mn on side b) and an outline of the fewest turns, members speaking in turn."""
    plan = CasePlan.for_seed(seed_id)
    ids = member_ids(n)
    types = types or ("definitional",) * len(plan.ma_ids)
    turns = multi_outline_bounds(len(plan.ma_ids), n)[0]
    return MultiStage1Output.model_validate({
        "meeting_scenario": "",
        "members": [{"id": m, "name": m, "role": "", "expertise": "", "background": "", "private_state": "",
                     "hidden_assumptions": ["", "", ""]} for m in ids],
        "misalignment_points": [{"id": ma, "type": t, "topic": "", "surface_form": "", "member_a_understanding": "",
                                 "member_b_understanding": "", "why_undetected": "",
                                 "between": {"a": ids[:1], "b": ids[1:]}, "neutral": []}
                                for ma, t in zip(plan.ma_ids, types)],
        "conversation_outline": [{"turn": k, "speaker": ids[(k - 1) % n], "description": "", "ma_ids": []}
                                 for k in range(1, turns + 1)]})


def multi_skeletons(case: Any, n: int, rubric: Rubric, count_gen: Callable[[Prompt], int],
                    count_judge: Callable[[Prompt], int]) -> dict[str, int]:
    """``{"s1g", "s2g", "s2t", "s1j", "s2j"}``: tokens of ``case``'s prompts in an ``n``-person
    build, counted by ``count_gen``/``count_judge`` (a rendered prompt -> tokens, with any
    note the build appends); ``s2t`` is 0 (one stage-2 call)."""
    stages = stages_for(n)
    s1, s2 = stages[1], stages[2]
    profiles = blank_multi_profiles(case.seed.seed_id, case.planned_types, n)
    names = {m.id: m.name for m in profiles.members}
    dialogue = Stage2Output.model_validate({"turns": [
        {"turn_idx": t.turn, "speaker_id": t.speaker, "speaker_name": names[t.speaker], "inner_thought": "",
         "utterance": ""} for t in profiles.conversation_outline]})
    g1 = s1.render("generator", **s1.generator_context(case.seed, None, None, None, "protocol", case.planned_types))
    g2 = s2.render("generator", **s2.generator_context(case.seed, profiles, None, None, "protocol",
                                                       case.planned_types))
    j1 = judge_prompt(s1, case, profiles, profiles, rubric, s1.reads_types and bool(case.planned_types))
    j2 = judge_prompt(s2, case, profiles, dialogue, rubric, False)
    return {"s1g": count_gen(g1), "s2g": count_gen(g2), "s2t": 0, "s1j": count_judge(j1), "s2j": count_judge(j2)}


__all__ = ["blank_multi_profiles", "multi_skeletons"]
