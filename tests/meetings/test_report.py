"""``meeting report``: per-session counts, rules, the paired bootstrap over sessions,
best-set signs and pooled recall from a scripted merge judge."""

from __future__ import annotations

import json

import pytest

from ioa_synth.stats.bootstrap import paired_bootstrap

from .conftest import A, B, MeetingResponder


def test_across_sessions_paired_bootstrap_and_best_set(cli, three_sessions, tmp_path):
    out = tmp_path / "report"
    res = cli("meeting", "report", *three_sessions, "--out", out, "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert json.loads((out / "report.json").read_text()) == report
    assert "| alphadetector |" in (out / "report.md").read_text()
    per = [r["detectors"] for r in report["sessions"]]
    assert [p[A]["validated"] for p in per] == [1, 1, 2]
    assert [p[B]["validated"] for p in per] == [2, 0, 1]
    assert [p[A]["validity_rate"] for p in per] == [0.5, 1.0, 1.0]
    assert [p[B]["validity_rate"] for p in per] == [1.0, None, 1.0]
    assert [p[A]["best_votes"] for p in per] == [3, 1, 0]
    assert per[0][A]["label_counts"]["valid"] == 1 and per[0][B]["label_counts"]["valid"] == 5
    across = report["across"]
    assert across["detectors"][A]["validated_per_session"] == pytest.approx(4 / 3)
    assert across["detectors"][B]["discovery"] == pytest.approx(10 / 3)  # 9 participants, 3 in each session
    pair = across["pairs"][0]
    assert (pair["a"], pair["b"], pair["sessions"]) == (A, B, 3)
    assert {k: v for k, v in pair["best_set"].items() if k != "test"} == {
        "per_session": [1, -1, -1], "a_better": 1, "tie": 0, "b_better": 2}
    test = pair["tests"]["validated"]
    assert test["diff"] == pytest.approx(-1 / 3) and test["n"] == 3
    assert test == paired_bootstrap([1, 1, 2], [2, 0, 1], resamples=10_000, seed=20260516).as_dict()
    assert test["ci_low"] <= test["diff"] <= test["ci_high"] and 0 < test["p"] <= 1
    assert pair["tests"]["validity_rate"]["n"] == 2  # session 2: beta had no divergent question
    assert report["across"]["bootstrap"]["resamples"] == 10_000 and report["across"]["bootstrap"]["seed"] == 20260516


def test_rules_majority_and_unanimous(cli, three_sessions):
    res = cli("meeting", "report", three_sessions[0], "--rule", "majority", "--json")
    per = json.loads(res.stdout)["sessions"][0]["detectors"]
    assert (per[A]["validated"], per[B]["validated"]) == (0, 2)
    res = cli("meeting", "report", three_sessions[0], "--rule", "unanimous", "--json")
    per = json.loads(res.stdout)["sessions"][0]["detectors"]
    assert (per[A]["validated"], per[B]["validated"]) == (0, 1)
    # --json prints and writes nothing (no --out); without --json the files are written
    assert not (three_sessions[0] / "report.json").exists() and not (three_sessions[0] / "report.md").exists()
    assert "wrote" not in res.stderr
    res = cli("meeting", "report", three_sessions[0])
    assert res.exit_code == 0 and (three_sessions[0] / "report.md").exists()
    written = (three_sessions[0] / "report.json").read_bytes()
    res = cli("meeting", "report", three_sessions[0], "--rule", "majority", "--json")
    assert res.exit_code == 0 and (three_sessions[0] / "report.json").read_bytes() == written
    # several sessions with --json: printed, no --out needed
    res = cli("meeting", "report", *three_sessions, "--json")
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.stdout)["sessions"]) == 3


def test_pooled_recall_with_a_detector_blind_merge_judge(cli, three_sessions, meeting_server):
    def groups(stems):  # 'the baseline' and 'the clean data' are one disagreement
        joined = [i + 1 for i, s in enumerate(stems) if "baseline" in s or "clean data" in s]
        return [joined] + [[i + 1] for i in range(len(stems)) if i + 1 not in joined]

    meeting_server.responder = MeetingResponder(merge_groups=groups)
    before = len(meeting_server.requests)
    res = cli("meeting", "report", three_sessions[0], "--merge-judge", "--json")
    assert res.exit_code == 0, res.output
    per = json.loads(res.stdout)["sessions"][0]
    assert per["merge"] == {"distinct": 2, "items": 3}
    assert per["detectors"][A]["pooled_recall"] == 0.5 and per["detectors"][B]["pooled_recall"] == 1.0
    merge_requests = [json.dumps(r["body"]) for r in meeting_server.requests[before:]]
    assert len(merge_requests) == 1 and A not in merge_requests[0] and "Set A" not in merge_requests[0]
    # a re-run replays the stored grouping (no new request)
    assert cli("meeting", "report", three_sessions[0], "--merge-judge").exit_code == 0
    assert len(meeting_server.requests) == before + 1


def test_unfinished_sessions_and_several_without_out(cli, probed, three_sessions):
    res = cli("meeting", "report", probed("unfinished"))
    assert res.exit_code == 2 and "not finished: 0/3 participants answered" in res.stderr
    res = cli("meeting", "report", *three_sessions[:2])
    assert res.exit_code == 2 and "--out" in res.stderr
