"""``meeting report --types``: validated disagreements per type and detector (Table 20) from
the labels a scripted type judge gave the validated disagreements of two sessions."""

from __future__ import annotations

import json

from ioa_synth.testing.type_judge import TypeJudgeResponder

from .conftest import BEST, DISCOVERY, PLAN, fill


def test_meeting_disagreements_per_type(cli, endpoint, tmp_path, probed, meeting_server):
    sessions = []
    for k in range(2):
        d = probed(f"s{k}", seed=k)
        fill(d, PLAN[k], BEST[k], DISCOVERY[k])
        sessions.append(d)
    judge = TypeJudgeResponder(lambda i: "referential" if i.endswith("-1") else "procedural")
    endpoint(responder=judge, env="TYPE_JUDGE")
    labels_dir = tmp_path / "labels"
    res = cli("label-types", *sessions, "--out", labels_dir)
    assert res.exit_code == 0, res.output
    labels = [json.loads(line) for line in (labels_dir / "labels.jsonl").read_text().splitlines()]
    assert {lab["source"] for lab in labels} == {"meeting"} and len(labels) == 4  # validated under 'any'
    res = cli("meeting", "report", *sessions, "--types", labels_dir, "--json")
    assert res.exit_code == 0, res.output
    types = json.loads(res.stdout)["types"]
    rows = {r["type"]: r for r in types["rows"]}
    # PLAN: session 0: alpha q1 valid, beta q1 and q3 valid; session 1: alpha q1 valid
    assert rows["referential"]["alphadetector"] == 2 and rows["referential"]["betadetector"] == 1
    assert rows["procedural"]["betadetector"] == 1 and rows["referential"]["all"] == 3
    assert types["unlabelled"] == 0
    out = tmp_path / "study"
    assert cli("meeting", "report", *sessions, "--types", labels_dir, "--out", out).exit_code == 0
    assert "Validated disagreements per type (Table 20)" in (out / "report.md").read_text()




def test_an_unfinished_session_is_one_error_line(cli, tmp_path, probed):
    res = cli("label-types", probed("unfinished"), "--out", tmp_path / "labels")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "not finished" in res.stderr, res.stderr
    assert not (tmp_path / "labels" / "labels.jsonl").exists()
