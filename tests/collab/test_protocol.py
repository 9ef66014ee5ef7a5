"""The team protocol of App. D.7 on a fake caller (no server): who speaks when and sees
what, stop-votes, the interventions' triggers and directive turns, the majority vote."""

from __future__ import annotations

from types import SimpleNamespace

from ioa_synth.collab.protocol import majority, run_task
from ioa_synth.collab.team import FINAL_STEP, INTERVENTION_STEP, MODERATOR, CollabSettings
from ioa_synth.probing.replies import Question
from .helpers import bcb_tasks, hp_tasks


class FakeCaller:
    """Answers by role; logs every ask (with ``parallel`` marking asks made together)."""

    def __init__(self, ready_after=1, flag=False, choices=None, final=None):
        self.asks, self.ready_after, self.flag = [], ready_after, flag
        self.choices = choices or {}
        self.final = final or {}

    def _answer(self, ask):
        kind, _, agent = ask.role.partition(":")
        if kind == "say":
            return f"{agent} speaks at step {ask.step}"
        if kind == "vote":
            return SimpleNamespace(ready=ask.step >= self.ready_after, reason="r")
        if kind == "reflect":
            return SimpleNamespace(flag=self.flag and agent.endswith("B"), disagreements=["the edge case"])
        if ask.component.startswith("detector:"):
            return [Question("Q1?", {"A": "one", "B": "two"}), Question("Q2?", {"A": "x", "B": "y"})]
        if kind == "answer":
            name, q = agent.split(":")
            return SimpleNamespace(choice=self.choices.get((name, q), "A"), reasoning=f"Because {name}. Long tail.")
        if kind == "final":
            return SimpleNamespace(choice=self.final.get(agent, "A"), reasoning="mine")
        return "```python\ndef task_func():\n    return 1\n```"

    def one(self, ask):
        self.asks.append((ask, False))
        return self._answer(ask)

    def all(self, asks):
        self.asks += [(a, True) for a in asks]
        return [self._answer(a) for a in asks]


SETTINGS = CollabSettings(bench="bcb")


def test_bcb_discussion_stops_when_both_are_ready():
    caller = FakeCaller(ready_after=2)
    rec = run_task(caller, bcb_tasks(1)[0], "discussion", SETTINGS)
    assert [(t["round"], t["agent"]) for t in rec["turns"]] == [(1, "DiscusserA"), (1, "DiscusserB"),
                                                                (2, "DiscusserA"), (2, "DiscusserB")]
    votes = [(a.role, a.temperature, par) for a, par in caller.asks if a.role.startswith("vote")]
    assert votes == [("vote:DiscusserA", 0.0, True), ("vote:DiscusserB", 0.0, True)] * 2
    code = caller.asks[-1][0]
    assert code.role == "code:DiscusserA" and code.temperature == 0.2 and code.step == FINAL_STEP
    assert rec["final"]["code"] == "def task_func():\n    return 1\n" and rec["triggered"] is None
    # each turn saw every earlier turn
    says = [a for a, _ in caller.asks if a.role.startswith("say")]
    assert "DiscusserA speaks at step 1" in says[1].prompt.messages[1]["content"]


def test_bcb_discussion_runs_at_most_four_rounds_and_single_asks_once():
    caller = FakeCaller(ready_after=99)
    rec = run_task(caller, bcb_tasks(1)[0], "discussion", SETTINGS)
    assert len(rec["turns"]) == 8 and len(rec["stop_votes"]) == 8
    caller = FakeCaller()
    rec = run_task(caller, bcb_tasks(1)[0], "single", SETTINGS)
    assert [a.role for a, _ in caller.asks] == ["solve"] and rec["turns"] == [] and rec["agents"] == ["single"]


def test_mcq_probe_injects_divergent_questions_then_one_more_round():
    caller = FakeCaller(choices={("DiscusserB", "q2"): "B"})
    rec = run_task(caller, bcb_tasks(1)[0], "mcq:det", SETTINGS)
    answers = [a for a, par in caller.asks if a.role.startswith("answer")]
    assert len(answers) == 4 and all(a.temperature == 0.2 and a.step == INTERVENTION_STEP for a in answers)
    assert [p["divergent"] for p in rec["probes"]] == [False, True] and rec["triggered"] is True
    directive = [t for t in rec["turns"] if t["agent"] == MODERATOR]
    assert len(directive) == 1 and directive[0]["kind"] == "directive"
    text = directive[0]["text"]
    assert "Q2?" in text and "Q1?" not in text and "DiscusserB chose B: Because DiscusserB." in text
    assert "Long tail" not in text and "name the assumption" in text
    assert [(t["phase"], t["agent"]) for t in rec["turns"][-2:]] == [("rediscussion", "DiscusserA"),
                                                                     ("rediscussion", "DiscusserB")]
    assert rec["extra_rounds"] == 1
    # the detector saw the initial transcript through the evaluate prober's mcq prompt
    det = next(a for a, _ in caller.asks if a.component == "detector:det")
    assert "DiscusserB speaks at step 1" in det.prompt.messages[1]["content"]


def test_no_divergence_goes_straight_to_code():
    caller = FakeCaller()
    rec = run_task(caller, bcb_tasks(1)[0], "mcq:det", SETTINGS)
    assert rec["triggered"] is False and rec["extra_rounds"] == 0
    assert all(t["phase"] == "initial" for t in rec["turns"])


def test_self_reflection_any_flag_triggers():
    rec = run_task(FakeCaller(flag=True), bcb_tasks(1)[0], "self-reflection", SETTINGS)
    assert rec["triggered"] is True and [r["flag"] for r in rec["reflections"]] == [False, True]
    assert "DiscusserB: the edge case" in rec["turns"][2]["text"]
    rec = run_task(FakeCaller(flag=False), bcb_tasks(1)[0], "self-reflection", SETTINGS)
    assert rec["triggered"] is False and rec["extra_rounds"] == 0


def test_hidden_profile_round_robin_and_vote():
    task = next(t for t in hp_tasks() if t.agents == 4)
    caller = FakeCaller(final={"Agent1": "B", "Agent2": "B", "Agent3": "C"})
    rec = run_task(caller, task, "discussion", CollabSettings(bench="hidden-profile"))
    assert [t["agent"] for t in rec["turns"]] == ["Agent1", "Agent2", "Agent3", "Agent4"] * 8
    assert [t["round"] for t in rec["turns"]] == [r for r in range(1, 9) for _ in range(4)]
    says = [a for a, _ in caller.asks if a.role.startswith("say")]
    third = says[2].prompt.messages[1]["content"]  # Agent3, round 1: sees Agent1 and Agent2 of this round
    assert "Agent1 speaks" in third and "Agent2 speaks" in third
    assert rec["final"]["vote"] == "B" and sorted(rec["private_blocks"].values()) == [0, 1, 2, 3]


def test_majority_ties_are_no_decision():
    assert majority(["A", "B", "B"]) == "B"
    assert majority(["A", "B", "A", "B"]) is None
    assert majority(["C"]) == "C"
