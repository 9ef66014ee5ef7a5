"""``meeting report``: per-session counts, rules, the paired bootstrap over sessions,
best-set signs and pooled recall from a scripted merge judge."""

from __future__ import annotations

import json

import pytest

from ioa_synth.evaluate.analysis.bootstrap import paired_bootstrap
from ioa_synth.meetings.forms import save_answers, save_labels
from ioa_synth.meetings.session import Session

from .conftest import DETECTORS, MeetingResponder, set_of

A, B = "alphadetector", "betadetector"
PIDS = ("P1", "P2", "P3")
# Per session and detector: {divergent question number: how many participants label it valid}.
PLAN = [
    {A: {1: 1, 2: 0}, B: {1: 3, 3: 2}},
    {A: {1: 2}, B: {}},
    {A: {1: 3, 2: 3}, B: {2: 1}},
]
BEST = [("A", "A", "A"), ("B", "B", "A"), ("B", "B", "B")]  # by detector initial, per participant
DISCOVERY = [{A: 4, B: 2}, {A: 4, B: 3}, {A: 4, B: 5}]


def fill(session_dir, plan, best, discovery):
    s = Session(session_dir)
    label_of = {det: set_of(session_dir, det) for det in DETECTORS}
    sizes = {label: len(qs) for label, qs in s.question_sets().items()}
    for i, pid in enumerate(PIDS):
        fields = {}
        for det, div in plan.items():
            for n in range(1, sizes[label_of[det]] + 1):
                fields[f"{label_of[det]}-{n}"] = "B" if (n in div and pid == "P3") else "A"
        save_answers(s, pid, fields)
    for i, pid in enumerate(PIDS):
        fields = {"best": label_of[A if best[i] == "A" else B]}
        for det, div in plan.items():
            for n, valid in div.items():
                fields[f"label-{label_of[det]}-{n}"] = "valid" if i < valid else "invalid: other"
            fields[f"discovery-{label_of[det]}"] = str(discovery[det])
            fields[f"willingness-{label_of[det]}"] = "3"
        save_labels(s, pid, fields)


@pytest.fixture
def three_sessions(probed):
    dirs = []
    for k in range(3):
        d = probed(f"s{k}", seed=k)
        fill(d, PLAN[k], BEST[k], DISCOVERY[k])
        dirs.append(d)
    return dirs


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
