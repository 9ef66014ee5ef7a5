"""Acceptance (issue: multi-agent collaboration): against a scripted endpoint whose agents
get a task right only after a directive turn, ``mcq:NAME`` scores higher than
``discussion`` by exactly the planted amount, and the report's tables match hand counts."""

from __future__ import annotations

import json

import pytest

from ioa_synth.testing.collab_scripted import CollabScript, planted_gain

from .helpers import BCB, HP, bcb_tasks, detector_config, hp_tasks, record


def _run(cli, endpoint, tmp_path, bench, tasks_file, tasks, configs, **script):
    responder = CollabScript(tasks=tasks, **script)
    endpoint(responder=responder)
    det = detector_config(tmp_path)
    out = tmp_path / "res"
    res = cli("collab", "run", "--bench", bench, "--tasks", tasks_file, "--out", out, "--configs", configs,
              "--detector", f"probe={det}", "--limit", str(len(tasks)), "--workers", "4")
    assert res.exit_code == 0, res.output
    return out, responder


@pytest.mark.skipif(not __import__("ioa_synth.collab.harness", fromlist=["x"]).harness_available(),
                    reason="bigcodebench is not installed (scripts/setup.sh installs it)")
def test_bcb_mcq_gain_is_exactly_the_planted_amount(cli, endpoint, tmp_path, monkeypatch):
    monkeypatch.setenv("BIGCODEBENCH_TIMEOUT_PER_TASK", "20")
    tasks = bcb_tasks(6)
    diverge = {tasks[0].task_id, tasks[2].task_id, tasks[3].task_id}
    out, script = _run(cli, endpoint, tmp_path, "bcb", BCB, tasks, "single,discussion,self-reflection,mcq:probe",
                       diverge=diverge, flag={tasks[1].task_id})
    assert planted_gain(tasks, diverge) == 3
    for t in tasks:
        mcq, disc = record(out, t.task_id, "mcq:probe"), record(out, t.task_id, "discussion")
        assert mcq["passed"] is (t.task_id in diverge) and disc["passed"] is False
        assert mcq["check"]["status"] == ("pass" if t.task_id in diverge else "fail")
        assert mcq["triggered"] is (t.task_id in diverge) and disc["triggered"] is None
    report = json.loads((out / "report.json").read_text())
    assert report["n_tasks"] == 6
    sixth = pytest.approx(1 / 6, abs=1e-12)
    assert report["pass_at_1"] == {"single": 0.0, "discussion": 0.0, "self-reflection": sixth, "mcq:probe": 0.5}
    assert report["delta_vs_discussion"] == {"single": 0.0, "discussion": 0.0, "self-reflection": sixth,
                                             "mcq:probe": 0.5}
    assert report["trigger_rate"] == {"single": None, "discussion": None, "self-reflection": sixth, "mcq:probe": 0.5}
    assert report["extra_rounds"] == report["trigger_rate"]
    comp = report["comparisons"]["discussion vs mcq:probe"]
    # three tasks gain 1, three gain 0: |mean| >= 0.5 only when the three signs agree, 2 of 8 patterns
    assert comp["n"] == 6 and comp["diff"] == 0.5 and comp["p_permutation"] == 0.25
    assert comp["ci"][0] <= 0.5 <= comp["ci"][1]
    # the calls: 6 tasks x (single 1; discussion 2 turns + 2 votes + 1 code; ...)
    assert script.counts["code"] == 24 and script.counts["prober"] == 6
    shown = cli("collab", "report", out)
    assert shown.exit_code == 0
    for row in ("mcq:probe", "50.0", "+50.0", "16.7", "+0.50"):
        assert row in shown.stdout
    md = (out / "report.md").read_text()
    assert "| mcq:probe | 6 | 50.0 |" in md and "| mcq:probe | 50.0 | +0.50 | +50.0 |" in md


def test_hidden_profile_mcq_gain_is_exactly_the_planted_amount(cli, endpoint, tmp_path):
    tasks = hp_tasks()
    diverge = {tasks[0].task_id, tasks[1].task_id}
    out, script = _run(cli, endpoint, tmp_path, "hidden-profile", HP, tasks, "discussion,self-reflection,mcq:probe",
                       diverge=diverge, flag={tasks[2].task_id})
    assert planted_gain(tasks, diverge) == 2
    report = json.loads((out / "report.json").read_text())
    assert report["pass_at_1"] == {"discussion": 0.0, "self-reflection": 0.2, "mcq:probe": 0.4}
    assert report["delta_vs_discussion"]["mcq:probe"] == 0.4 and report["trigger_rate"]["mcq:probe"] == 0.4
    rec = record(out, tasks[0].task_id, "mcq:probe")
    assert rec["final"]["vote"] == tasks[0].answer == rec["final"]["correct"] and rec["passed"] is True
    assert len([t for t in rec["turns"] if t["phase"] == "initial"]) == 8 * tasks[0].agents
    rounds = 8 * sum(t.agents for t in tasks)
    # say calls: 8 rounds each for 3 configs, plus one round per triggered task (2 + 1)
    assert script.counts["say"] == 3 * rounds + sum(t.agents for t in tasks[:3])
    shown = cli("collab", "report", out, "--json")
    assert json.loads(shown.stdout) == report
    # the models the numbers came from, per component as run.json names them
    assert report["models"] == {"discusser": "scripted", "detector:probe": "scripted"}
    assert "Models: detector:probe `scripted`; discusser `scripted`" in (out / "report.md").read_text()
    assert "team: scripted; detector probe: scripted" in cli("collab", "report", out).stdout
