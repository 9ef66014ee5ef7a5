"""``ioa-synth table ioa-6 / ioa-23`` on a hidden-profile run against the scripted team of
test_acceptance.py: five tasks, the agents get the answer right only after the MCQ probe's
directive turn on the two planted-divergence tasks, and self-reflection flags one task (the
third) whose extra round does not help.

By hand: Pass@1 discussion 0/5 = 0.0%, self-reflection 1/5 = 20.0%, mcq:probe 2/5 = 40.0%;
trigger rate self-reflection 1/5 = 20.0% (the flagged task), mcq:probe 2/5 = 40.0% (the divergent
ones); extra rounds per task = triggered / tasks (one extra round each): +0.20, +0.40; ΔPass@1 =
Pass@1 − 0.0 (discussion) in points: +20.0, +40.0.
"""

from __future__ import annotations

import io
import shutil
import json

import polars as pl

from ioa_synth.testing.collab_scripted import CollabScript

from .helpers import HP, detector_config, hp_tasks


def test_collab_tables(cli, endpoint, tmp_path):
    tasks = hp_tasks()
    endpoint(responder=CollabScript(tasks=tasks, diverge={tasks[0].task_id, tasks[1].task_id},
                                    flag={tasks[2].task_id}))
    out = tmp_path / "hp"
    res = cli("collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--configs",
              "discussion,self-reflection,mcq:probe", "--detector", f"probe={detector_config(tmp_path)}",
              "--workers", "4")
    assert res.exit_code == 0, res.output
    report = json.loads((out / "report.json").read_text())

    def csv(table_id: str) -> dict[str, dict[str, str]]:
        res = cli("table", table_id, out, "--format", "csv")
        assert res.exit_code == 0, res.output
        return {r["configuration"]: r for r in pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()}

    bench = f"{report['bench']} (5 tasks)"
    t6 = csv("ioa-6")
    assert {c: r[bench] for c, r in t6.items()} == {"discussion": "0.0", "self-reflection": "20.0", "mcq:probe": "40.0"}
    t23 = csv("ioa-23")
    assert list(t23) == ["self-reflection", "mcq:probe"]  # interventions only
    b = report["bench"]
    mcq = t23["mcq:probe"]
    assert (mcq[f"trigger % ({b})"], mcq[f"extra rounds ({b})"], mcq[f"ΔPass@1 ({b})"]) == ("40.0", "+0.40", "+40.0")
    sr = t23["self-reflection"]
    assert (sr[f"trigger % ({b})"], sr[f"extra rounds ({b})"], sr[f"ΔPass@1 ({b})"]) == ("20.0", "+0.20", "+20.0")

    copy = shutil.copytree(out, tmp_path / "copy")
    res = cli("table", "ioa-6", out, copy)  # the same benchmark twice
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "one collab folder per benchmark" in res.stderr


def test_stronger_teams(cli, endpoint, tmp_path):
    # team-a: MCQ fixes the two divergent tasks (40.0); team-b, the same script with no divergence
    # planted: nothing passes (0.0 everywhere)
    tasks = hp_tasks()
    outs = []
    for team, diverge in (("team-a", {tasks[0].task_id, tasks[1].task_id}), ("team-b", set())):
        endpoint(responder=CollabScript(tasks=tasks, diverge=diverge), models=[team])
        config = tmp_path / f"{team}.json"
        config.write_text(json.dumps({"discusser": {"model": team}}), encoding="utf-8")
        out = tmp_path / team
        res = cli("collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--configs",
                  "discussion,mcq:probe", "--detector", f"probe={detector_config(tmp_path)}", "--config", config)
        assert res.exit_code == 0, res.output
        outs.append(out)
    res = cli("table", "ioa-24", *outs, "--format", "csv")
    assert res.exit_code == 0, res.output
    rows = {(r["team model"], r["configuration"]): r for r in
            pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()}
    bench = json.loads((outs[0] / "report.json").read_text())["bench"]
    assert list(rows) == [("team-a", "discussion"), ("team-a", "mcq:probe"), ("team-b", "discussion"),
                          ("team-b", "mcq:probe")]
    assert rows[("team-a", "mcq:probe")][bench] == "40.0" and rows[("team-b", "mcq:probe")][bench] == "0.0"
    copy = shutil.copytree(outs[0], tmp_path / "copy")
    res = cli("table", "ioa-24", outs[0], copy)
    assert res.exit_code == 2 and "a second team-a team on" in res.stderr
