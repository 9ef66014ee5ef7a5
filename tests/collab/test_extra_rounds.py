"""The re-discussion after a triggered intervention (paper App. D.7, Table 23): rounds of
every agent's turn and stop-vote until all are ready or ``--max-extra-rounds`` ran, so that
Table 23's additional rounds per task count the rounds the team really talked."""

from __future__ import annotations

import json

import pytest

from ioa_synth.collab.protocol import expected_steps, run_task
from ioa_synth.collab.team import FINAL_STEP, REDISCUSSION_STEP, CollabSettings
from ioa_synth.testing.collab_scripted import CollabScript

from .helpers import HP, bcb_tasks, detector_config, hp_tasks, record
from .test_protocol import FakeCaller


class VotingCaller(FakeCaller):
    """The agents disagree on the detector's second question; in the re-discussion they
    vote ready from round ``extra_ready`` (``None``: never)."""

    def __init__(self, extra_ready):
        super().__init__(ready_after=1, choices={("DiscusserB", "q2"): "B", ("Agent2", "q2"): "B"})
        self.extra_ready = extra_ready

    def _answer(self, ask):
        if ask.role.startswith("vote") and ask.step > REDISCUSSION_STEP:
            rnd = ask.step - REDISCUSSION_STEP
            from types import SimpleNamespace
            return SimpleNamespace(ready=self.extra_ready is not None and rnd >= self.extra_ready, reason="r")
        return super()._answer(ask)


def test_bcb_rediscussion_runs_until_every_agent_votes_ready():
    caller = VotingCaller(extra_ready=3)
    rec = run_task(caller, bcb_tasks(1)[0], "mcq:det", CollabSettings(bench="bcb"))
    extra = [(t["round"], t["agent"]) for t in rec["turns"] if t["phase"] == "rediscussion" and t.get("kind") is None]
    assert extra == [(r, a) for r in (1, 2, 3) for a in ("DiscusserA", "DiscusserB")]
    assert rec["extra_rounds"] == 3 and rec["extra_end"] == "vote"
    votes = [(v["phase"], v["round"], v["ready"]) for v in rec["stop_votes"] if v["phase"] == "rediscussion"]
    assert votes == [("rediscussion", r, r >= 3) for r in (1, 2, 3) for _ in range(2)]
    steps = sorted({a.step for a, _ in caller.asks if a.step > REDISCUSSION_STEP and a.step < FINAL_STEP})
    assert steps == [101, 102, 103]
    # a turn of round 2 says where the re-discussion stands
    say = next(a for a, _ in caller.asks if a.role == "say:DiscusserA" and a.step == 102)
    assert "extra round 2 of at most 4" in say.prompt.messages[1]["content"]


def test_the_cap_binds_when_the_votes_never_come_and_its_last_round_asks_no_vote():
    caller = VotingCaller(extra_ready=None)
    rec = run_task(caller, bcb_tasks(1)[0], "mcq:det", CollabSettings(bench="bcb", max_extra_rounds=2))
    assert rec["extra_rounds"] == 2 and rec["extra_end"] == "cap"
    assert [v["round"] for v in rec["stop_votes"] if v["phase"] == "rediscussion"] == [1, 1]
    # the defaults: the bench's own discussion length
    assert CollabSettings(bench="bcb").max_extra_rounds == 4
    assert CollabSettings(bench="hidden-profile").max_extra_rounds == 8
    task = next(t for t in hp_tasks() if t.agents == 4)
    rec = run_task(VotingCaller(extra_ready=None), task, "mcq:det", CollabSettings(bench="hidden-profile"))
    assert rec["extra_rounds"] == 8 and rec["extra_end"] == "cap"
    assert len([t for t in rec["turns"] if t["phase"] == "rediscussion"]) == 1 + 8 * 4  # the directive, 8 rounds
    assert len(rec["stop_votes"]) == 7 * 4  # hidden profile votes only in the re-discussion, not after round 8


def test_hidden_profile_rediscussion_votes_and_the_schedule_counts_the_cap():
    task = next(t for t in hp_tasks() if t.agents == 3)
    caller = VotingCaller(extra_ready=2)
    rec = run_task(caller, task, "mcq:det", CollabSettings(bench="hidden-profile"))
    assert rec["extra_rounds"] == 2 and rec["extra_end"] == "vote"
    vote = next(a for a, par in caller.asks if a.role == "vote:Agent1")
    assert vote.temperature == 0.0 and task.question in vote.prompt.messages[1]["content"]
    assert expected_steps(task, "mcq:det", CollabSettings(bench="hidden-profile", max_extra_rounds=3)) == \
        8 * 3 + 2 + 3 * 4 - 1 + 1


@pytest.mark.parametrize("bad", [0, 100])
def test_a_cap_out_of_range_is_refused(bad):
    with pytest.raises(ValueError, match="--max-extra-rounds must be 1 to 99"):
        CollabSettings(bench="bcb", max_extra_rounds=bad)


def _run(cli, tmp_path, *extra):
    det = detector_config(tmp_path)
    out = tmp_path / "res"
    return out, cli("collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--configs",
                    "discussion,mcq:probe", "--detector", f"probe={det}", "--workers", "4", *extra)


def test_report_extra_rounds_are_the_mean_of_the_rounds_talked(cli, endpoint, tmp_path):
    tasks = hp_tasks()
    ids = [t.task_id for t in tasks]
    # triggered: tasks 0-2; the team votes ready after 2 rounds, 3 rounds, never (the cap, 4)
    endpoint(responder=CollabScript(tasks=tasks, diverge=set(ids[:3]),
                                    extra_ready={ids[0]: 2, ids[1]: 3, ids[2]: None}))
    out, res = _run(cli, tmp_path, "--max-extra-rounds", "4")
    assert res.exit_code == 0, res.output
    got = {i: (record(out, i, "mcq:probe")["extra_rounds"], record(out, i, "mcq:probe")["extra_end"]) for i in ids}
    assert got == {ids[0]: (2, "vote"), ids[1]: (3, "vote"), ids[2]: (4, "cap"), ids[3]: (0, None),
                   ids[4]: (0, None)}
    report = json.loads((out / "report.json").read_text())
    assert report["trigger_rate"]["mcq:probe"] == pytest.approx(3 / 5)
    assert report["extra_rounds"]["mcq:probe"] == pytest.approx((2 + 3 + 4) / 5)  # 1.8, not the trigger rate
    assert report["extra_rounds"]["discussion"] is None
    assert report["extra_rounds_per_triggered"]["mcq:probe"] == pytest.approx(3.0)
    assert report["cap_rate"]["mcq:probe"] == pytest.approx(1 / 3)
    assert report["max_extra_rounds"] == 4
    md = (out / "report.md").read_text()
    assert "| mcq:probe | 60.0 | +1.80 |" in md and "or 4 rounds (--max-extra-rounds)" in md
    assert json.loads((out / "run.json").read_text())["settings"]["max_extra_rounds"] == 4


def test_another_cap_on_resume_is_refused(cli, endpoint, tmp_path):
    endpoint(responder=CollabScript(tasks=hp_tasks()))
    out, first = _run(cli, tmp_path, "--limit", "1")
    assert first.exit_code == 0, first.output
    _, again = _run(cli, tmp_path, "--limit", "1", "--max-extra-rounds", "3")
    assert again.exit_code == 2 and "study.max_extra_rounds: 8 -> 3" in again.stderr
    _, same = _run(cli, tmp_path, "--limit", "1", "--max-extra-rounds", "8")  # the default, said out loud
    assert same.exit_code == 0, same.output
