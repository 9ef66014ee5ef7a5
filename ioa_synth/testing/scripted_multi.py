"""A scripted three-person case (``build --participants 3``) for the scripted server: profiles
whose points name the participants on each side, a dialogue that passes every gate (the
dyadic ones and the sides by participant, :mod:`ioa_synth.protocol.gates_multi`), variants
that break one multi-party rule each, and :class:`MultiResponder`, which answers a build's
requests with them."""

from __future__ import annotations

import copy
import json
from typing import Any

from ioa_synth.testing.scripted_case import _MEMBERS as _TWO
from ioa_synth.testing.scripted_replies import ProtocolResponder, Reply, chat_reply, follow_planned_types

#: The two-person scripted case's members (:mod:`ioa_synth.testing.scripted_case`) and a third.
_MEMBERS = [*_TWO,
    {"id": "M3", "name": "Chiara Zanetti", "role": "product manager",
     "expertise": "search product roadmaps, customer contracts for regional markets and launch planning",
     "background": "ran the launch of the Portuguese and Swahili search markets and negotiated their contracts",
     "private_state": "has promised two regional customers that quality will not drop for their languages",
     "hidden_assumptions": ["regional customers read every quality number by their own language",
                            "the research team's published questions are the official yardstick",
                            "a launch date can slip a week without anyone upstream minding"]},
]

#: (type, topic, surface form, side a reading, side b reading, between, neutral, why undetected)
_POINTS = [
    ("definitional", "evaluation data", "the held-out set",
     "the 2,400 questions from the March 2024 crawl, never used for tuning and frozen in the team bucket",
     "a fresh random tenth of the corpus that the data loader draws with seed 17 on every training run",
     {"a": ["M1", "M3"], "b": ["M2"]}, [],
     "all three have used the phrase for years and each reads it through their previous team's habits"),
    ("procedural", "baseline comparison", "rerun the baseline",
     "retrain the 2023 BM25 plus cross-encoder pipeline from scratch with the current tokenizer",
     "reuse the cached January leaderboard scores and recompute only the new model",
     {"a": ["M1"], "b": ["M2"]}, ["M3"],
     "comparing against a baseline is routine, so nobody asks how it is produced"),
    ("criterial", "ship criterion", "good enough to ship",
     "recall at 10 of at least 0.82 on every language slice including Portuguese and Swahili",
     "mean recall at 10 over all queries above last quarter's 0.79",
     {"a": ["M3"], "b": ["M1", "M2"]}, [],
     "everyone thinks of recall at 10 and hears a familiar number"),
]

#: (speaker, utterance, inner thought, MA ids, outline description)
_TURNS = [
    ("M1", "So for the comparison, we score everything on the held-out set, same as last time.",
     "The held-out set means the 2,400 questions of the March 2024 crawl, frozen in the team bucket and never used "
     "for tuning.", ["MA1"], "Ada opens with the evaluation data and names the set they will score on."),
    ("M2", "Sure, the held-out set is already wired into the loader, so that part is free.",
     "The loader draws a fresh random tenth of the corpus with seed 17 on every training run, so it is always there.",
     ["MA1"], "Ben confirms the set is ready on his side."),
    ("M3", "Good, my regional customers were told we judge quality on the held-out set, so that works for me.",
     "I count on those 2,400 March 2024 crawl questions, frozen in the team bucket, which my customers already "
     "know.", ["MA1"], "Chiara links the evaluation to what customers were promised."),
    ("M1", "Then we rerun the baseline before we look at any of the new numbers.",
     "To me that means we retrain the 2023 BM25 plus cross-encoder pipeline from scratch with the current "
     "tokenizer.", ["MA2"], "Ada asks for the baseline to be redone first."),
    ("M2", "Fine by me, rerun the baseline first and then we see whether it is good enough to ship.",
     "I will reuse the cached January leaderboard scores and recompute only the new model; an hour of work. Shipping "
     "means mean recall at 10 over all queries above the 0.79 we had last quarter.", ["MA2", "MA3"],
     "Ben agrees and moves to the release decision."),
    ("M3", "For me it is good enough to ship once the numbers are in, and I can tell the customers a date.",
     "My bar is recall at 10 of at least 0.82 on every language slice, Portuguese and Swahili included.", ["MA3"],
     "Chiara ties the decision to the customers."),
    ("M1", "Agreed, good enough to ship it is, and I will write up the comparison for the workshop.",
     "As long as mean recall at 10 across all the queries beats last quarter's 0.79, we are fine.", ["MA3"],
     "Ada accepts the criterion and plans her write-up."),
    ("M2", "Great, I will block out the last week of the month for the release work.",
     "Once this is out I can finally move to the serving migration.", [],
     "Ben closes with the schedule."),
]


def valid_stage1_multi() -> dict[str, Any]:
    """A three-person stage-1 output that satisfies every rule and gate: three points whose
    sides differ (M1 and M3 against M2; M1 against M2 with M3 neutral; M3 against M1 and M2)."""
    points = [{"id": f"MA{i + 1}", "type": t, "topic": topic, "surface_form": sf, "member_a_understanding": a,
               "member_b_understanding": b, "why_undetected": why, "between": copy.deepcopy(between),
               "neutral": list(neutral)}
              for i, (t, topic, sf, a, b, between, neutral, why) in enumerate(_POINTS)]
    return {
        "meeting_scenario": ("A research lead, an ML engineer and a product manager meet to plan the evaluation of "
                             "a retrained retrieval model. The agenda covers the evaluation data, the baseline and "
                             "the release criterion; they expect to leave with a two-week plan."),
        "members": copy.deepcopy(_MEMBERS),
        "misalignment_points": points,
        "conversation_outline": [{"turn": i + 1, "speaker": spk, "description": plan, "ma_ids": list(mas)}
                                 for i, (spk, _, _, mas, plan) in enumerate(_TURNS)],
    }


def valid_stage2_multi() -> dict[str, Any]:
    """The dialogue of :func:`valid_stage1_multi`: eight turns, all three members speaking,
    each side's reading held in the thoughts of exactly the members named on it."""
    names = {m["id"]: m["name"] for m in _MEMBERS}
    return {"turns": [{"turn_idx": i + 1, "speaker_id": spk, "speaker_name": names[spk], "inner_thought": thought,
                       "utterance": said} for i, (spk, said, thought, _, _) in enumerate(_TURNS)]}


def multi_breaking(kind: str, action: str) -> dict[str, Any]:
    """Multi-party generator JSON that breaks one rule: stage 1 ``"unplaced"`` (M3 on no
    side of MA1), ``"two_person"`` (M3 missing); stage 2 ``"wrong_side"`` (M3, on side a of
    MA1, thinks side b's reading instead: a wrong participant holds a side) and ``"silent"``
    (M3 never speaks)."""
    if kind == "stage1_generator":
        data = valid_stage1_multi()
        if action == "unplaced":
            data["misalignment_points"][0]["between"]["a"] = ["M1"]
        elif action == "two_person":
            data["members"] = data["members"][:2]
        return data
    data = valid_stage2_multi()
    turns = data["turns"]
    if action == "wrong_side":
        turns[2]["inner_thought"] = ("I expect the loader to draw a fresh random tenth of the corpus with seed 17 on "
                                     "every training run.")
    elif action == "silent":
        for t in turns:
            if t["speaker_id"] == "M3":
                t["speaker_id"], t["speaker_name"] = "M1", _MEMBERS[0]["name"]
    return data


MULTI_ACTIONS = ("unplaced", "two_person", "wrong_side", "silent")


class MultiResponder(ProtocolResponder):
    """:class:`~ioa_synth.testing.scripted_replies.ProtocolResponder` for a three-person
    build: the generators answer with :func:`valid_stage1_multi` / :func:`valid_stage2_multi`
    (or a :data:`MULTI_ACTIONS` variant); judges and the other actions as the dyadic one."""

    def _reply(self, kind: str, body: dict[str, Any], action: str) -> Reply:
        if kind in ("stage1_generator", "stage2_generator") and action in MULTI_ACTIONS:
            return chat_reply(json.dumps(multi_breaking(kind, action)), model=self.model)
        if kind == "stage1_generator" and action == "ok":
            return chat_reply(json.dumps(follow_planned_types(valid_stage1_multi(), body)), model=self.model)
        if kind == "stage2_generator" and action == "ok":
            return chat_reply(json.dumps(valid_stage2_multi()), model=self.model)
        return super()._reply(kind, body, action)


__all__ = ["MULTI_ACTIONS", "MultiResponder", "multi_breaking", "valid_stage1_multi", "valid_stage2_multi"]
