"""The scripted server's generated content: one hand-written case (profiles and dialogue)
that passes every structural rule and content gate, and variants that break one gate
each (the scripted data must look like what a careful model writes)."""

from __future__ import annotations

from typing import Any

from ioa_synth.protocol.schemas import FIELD_DESCRIPTIONS


#: A hand-written case, as a careful human would write one: distinct readings per point,
#: surface forms voiced in the dialogue, no private wording in any utterance. It passes
#: every content gate (:mod:`ioa_synth.protocol.gates`).
_MEMBERS = [
    {"id": "M1", "name": "Ada Okafor", "role": "research lead",
     "expertise": "information retrieval evaluation and multilingual benchmark design",
     "background": "eight years building search benchmarks in a university lab before joining the company",
     "private_state": "wants a result strong enough for the workshop paper due in April",
     "hidden_assumptions": ["evaluation data is frozen once it has been published to the team bucket",
                            "baselines are always retrained with the current tokenizer",
                            "a release includes its written evaluation report"]},
    {"id": "M2", "name": "Ben Lindqvist", "role": "ML engineer",
     "expertise": "training infrastructure, PyTorch data pipelines and model serving",
     "background": "came from a production ads team where evaluation samples were redrawn on every run",
     "private_state": "needs the pipeline frozen by month end so he can move to the serving migration",
     "hidden_assumptions": ["cached leaderboard numbers are trustworthy for old models",
                            "the data loader's split logic is the source of truth",
                            "documentation can follow a deployment"]},
]
_POINTS = [
    ("definitional", "evaluation data", "the held-out set",
     "the 2,400 questions from the March 2024 crawl, never used for tuning and frozen in the team bucket",
     "a fresh random tenth of the corpus that the data loader draws with seed 17 on every training run",
     "both have used the phrase for years and each reads it through their previous team's habits"),
    ("procedural", "baseline comparison", "rerun the baseline",
     "retrain the 2023 BM25 plus cross-encoder pipeline from scratch with the current tokenizer",
     "reuse the cached January leaderboard scores and recompute only the new model",
     "comparing against a baseline is routine, so nobody asks how it is produced"),
    ("criterial", "ship criterion", "good enough to ship",
     "recall at 10 of at least 0.82 on every language slice including the low-resource ones",
     "mean recall at 10 over all queries above last quarter's 0.79",
     "both think of recall at 10 and hear a familiar number"),
    ("scopal", "release contents", "the March release",
     "model weights together with the signed evaluation report reviewed by the board",
     "the inference container image alone, with documents following in April",
     "each assumes the other means the same deliverable because the date matches"),
]
_TURNS = [
    ("M1", "So for the comparison, we score everything on the held-out set, same as last time.",
     "For me the held-out set is the frozen 2,400 March questions; nothing else is comparable.", ["MA1"],
     "Ada opens with the evaluation data and names the set they will score on."),
    ("M2", "Sure, the held-out set is already wired into the loader, so that part is free.",
     "The loader redraws its tenth with seed 17, so it is always there; easy.", ["MA1"],
     "Ben confirms the set is ready on his side."),
    ("M1", "Good. Then we rerun the baseline before we look at any of the new numbers.",
     "Rerunning means retraining the 2023 pipeline with today's tokenizer; it takes two days.", ["MA2"],
     "Ada asks for the baseline to be redone first."),
    ("M2", "Fine by me, rerun the baseline first and then we decide if it is good enough to ship.",
     "I will pull January's cached scores; recomputing only our model is an hour of work.", ["MA2", "MA3"],
     "Ben agrees and moves to the release decision."),
    ("M1", "If it is good enough to ship, it goes into the March release.",
     "Every language slice has to clear 0.82 before I sign anything, and the report goes with it.", ["MA3", "MA4"],
     "Ada ties the decision to the release date."),
    ("M2", "Agreed, the March release it is. I will block out the last week for it.",
     "The container image is what ships in March; the write-up can come in April.", ["MA4"],
     "Ben closes with the schedule."),
]


def valid_stage1(n_points: int = 2) -> dict[str, Any]:
    """A stage-1 output that satisfies every content rule and gate (``n_points`` MAs, MA1
    definitional); its outline has one turn per dialogue turn of :func:`valid_stage2`."""
    points = [{"id": f"MA{i + 1}", "type": t, "topic": topic, "surface_form": sf, "member_a_understanding": a,
               "member_b_understanding": b, "why_undetected": why}
              for i, (t, topic, sf, a, b, why) in enumerate(_POINTS[:n_points])]
    ids = {p["id"] for p in points}
    return {
        "meeting_scenario": ("A research lead and an ML engineer meet to plan the evaluation of a retrained retrieval "
                             "model. The agenda covers the evaluation data, the baseline and the release criterion; "
                             "they expect to leave with a two-week plan."),
        "members": [dict(m, hidden_assumptions=list(m["hidden_assumptions"])) for m in _MEMBERS],
        "misalignment_points": points,
        "conversation_outline": [
            {"turn": i + 1, "speaker": spk, "description": plan, "ma_ids": [m for m in mas if m in ids]}
            for i, (spk, _, _, mas, plan) in enumerate(_TURNS)],
    }


def valid_stage2(n_turns: int = 4) -> dict[str, Any]:
    """A stage-2 dialogue with ``n_turns`` (4-6) alternating turns matching :func:`valid_stage1`;
    the first four voice MA1 and MA2, six voice all four points."""
    return {"turns": [{"turn_idx": i + 1, "speaker_id": spk, "speaker_name": _MEMBERS[i % 2]["name"],
                       "inner_thought": thought, "utterance": said}
                      for i, (spk, said, thought, _, _) in enumerate(_TURNS[:n_turns])]}


def gate_breaking(kind: str, action: str) -> dict[str, Any]:
    """Generator JSON that is well-formed but fails one content gate (``action``):
    stage 1 ``"dots"`` (``"..."`` texts), ``"same_understanding"``, ``"copied"``
    (a field copied from the prompt's description), ``"question"`` (a question as surface form); stage 2 ``"dots"``, ``"absent_ma"``
    (MA2's surface form never said), ``"leak"`` (an utterance quotes M2's private
    reading), ``"wrong_speaker"``, ``"outline_echo"`` (an inner thought retells the outline
    in the first person, as the demo model did)."""
    if kind == "stage1_generator":
        data = valid_stage1()
        p = data["misalignment_points"][0]
        if action == "dots":
            p["member_a_understanding"] = p["member_b_understanding"] = p["why_undetected"] = "..."
        elif action == "same_understanding":
            p["member_b_understanding"] = p["member_a_understanding"]
        elif action == "copied":
            p["surface_form"] = FIELD_DESCRIPTIONS["surface_form"]
        elif action == "question":  # recorded from the embedded Qwen 1.5B demo
            p["surface_form"] = "What version of the dataset did SCALAR use for training?"
        return data
    data = valid_stage2()
    turns = data["turns"]
    if action == "dots":
        for t in turns:
            t["inner_thought"] = t["utterance"] = "..."
    elif action == "absent_ma":
        turns[2]["utterance"] = "Good. Then we compare against last year before we look at the new numbers."
        turns[3]["utterance"] = "Fine by me, we compare first and decide next week."
    elif action == "leak":
        turns[1]["utterance"] = ("Sure, the held-out set is a fresh random tenth of the corpus that the data loader "
                                 "draws with seed 17.")
    elif action == "wrong_speaker":
        turns[1]["speaker_name"] = "Carol Diaz"
    elif action == "outline_echo":
        turns[0]["inner_thought"] = "I opens with the evaluation data and names the set they will score on."
    return data


GATE_ACTIONS = ("dots", "same_understanding", "copied", "question", "absent_ma", "leak", "wrong_speaker",
                "outline_echo")
