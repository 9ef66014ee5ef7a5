"""``ioa-synth audit`` at the HTTP boundary: a second judge scores accepted cases with
the same templates, its scores sit next to the build judge's, the report's numbers
are those of the scripted scores, re-runs make no call, bad input is refused."""

from __future__ import annotations

import json

import polars as pl
import pytest
from ioa_helpers import build, kinds, one_line_error, q, rescoring

from ioa_synth.testing.scripted_server import chat_reply, request_kind

AUDIT_MODEL = "audit-model"


def harsher(kind: str, data: dict) -> None:
    """The audit judge gives MA2 a subtlety of 2 and every dialogue a naturalness of 2."""
    if kind == "stage1_judge":
        data["ma_scores"]["MA2"]["subtlety"] = 2
    else:
        data["dialogue_scores"]["naturalness"] = 2


@pytest.fixture
def built(cli, endpoint, seeds_file, tmp_path):
    """Three accepted cases built against the scripted build endpoint; an audit endpoint."""
    build_server = endpoint()
    out = tmp_path / "out"
    build(cli, seeds_file(3), out)
    audit_server = endpoint(responder=rescoring(AUDIT_MODEL, harsher), models=[AUDIT_MODEL], env="AUDIT_JUDGE")
    return out, build_server, audit_server


def audit(cli, out, *args):
    return cli("audit", "--out", out, "--split", "test", "--workers", "2", *args)


def by_dim(report: dict) -> dict[str, dict]:
    return {r["dimension"]: r for r in report["dimensions"]}


def test_audit_scores_are_stored_beside_the_build_judge(cli, built):
    out, build_server, audit_server = built
    n_build = len(build_server.requests)
    res = audit(cli, out)
    assert res.exit_code == 0, res.output
    assert len(build_server.requests) == n_build  # the build endpoints are not used
    assert sorted(kinds(audit_server)) == ["stage1_judge"] * 3 + ["stage2_judge"] * 3
    # the same judge templates as the build: identical prompts for the same case and stage
    build_prompts = {json.dumps(r["body"]["messages"]) for r in build_server.requests}
    assert all(json.dumps(r["body"]["messages"]) in build_prompts for r in audit_server.requests)
    assert q(out, "SELECT role, model, count(*) FROM llm_calls WHERE role = 'audit_judge' GROUP BY ALL") == [
        ("audit_judge", AUDIT_MODEL, 6)]
    rows = q(out, "SELECT judge_role, judge_model, stage, attempt, count(*) FROM scores WHERE score IS NOT NULL "
                  "GROUP BY ALL ORDER BY ALL")
    assert rows == [("audit_judge", AUDIT_MODEL, 1, 1, 18), ("audit_judge", AUDIT_MODEL, 2, 1, 12),
                    ("judge", "scripted", 1, 1, 18), ("judge", "scripted", 2, 1, 12)]

    report = json.loads((out / "reports" / "audit_test.json").read_text())
    assert report["audit_model"] == AUDIT_MODEL and report["audited_cases"] == 3
    d = by_dim(report)
    assert list(d) == ["subtlety", "specificity", "believability", "naturalness", "implicitness", "coverage",
                       "profile_consistency"]
    # subtlety: 6 points, build 3 everywhere, audit 3 on MA1 and 2 on MA2
    assert d["subtlety"]["n"] == 6
    assert d["subtlety"]["mean_build"] == 3.0 and d["subtlety"]["mean_audit"] == 2.5
    assert d["subtlety"]["mean_diff"] == -0.5
    assert d["subtlety"]["within_0_5"] == 0.5 and d["subtlety"]["within_1"] == 1.0
    assert d["naturalness"]["n"] == 3 and d["naturalness"]["mean_audit"] == 2.0
    assert d["naturalness"]["within_0_5"] == 0.0 and d["naturalness"]["within_1"] == 1.0
    assert d["coverage"]["mean_diff"] == 0.0 and d["coverage"]["within_0_5"] == 1.0
    assert d["subtlety"]["paper_audit_mean"] == 2.65

    csv = pl.read_csv(out / "reports" / "audit_test.csv")
    assert csv.height == 7 and csv["dimension"].to_list() == list(d)
    assert csv.filter(pl.col("dimension") == "subtlety")["mean_audit"].item() == 2.5
    assert "subtlety" in res.stdout and "2.50" in res.stdout and "audit_test.json" in res.stdout


def test_rerun_is_resumable_and_makes_no_call(cli, built):
    out, _, audit_server = built
    assert audit(cli, out, "--limit", "1").exit_code == 0
    assert len(audit_server.requests) == 2
    assert json.loads((out / "reports" / "audit_test.json").read_text())["audited_cases"] == 1
    assert audit(cli, out).exit_code == 0
    assert len(audit_server.requests) == 6  # only the two cases not yet audited
    first = json.loads((out / "reports" / "audit_test.json").read_text())
    res = audit(cli, out)
    assert res.exit_code == 0 and len(audit_server.requests) == 6
    assert "6 already audited" in res.stdout
    again = json.loads((out / "reports" / "audit_test.json").read_text())
    assert again["dimensions"] == first["dimensions"] and again["run"]["scored"] == 0


def test_judge_config_sets_the_audit_model(cli, built, tmp_path):
    out, _, audit_server = built
    cfg = tmp_path / "judge.json"
    cfg.write_text(json.dumps({"audit_judge": {"model": "cross-family", "temperature": 0.0}}))
    assert audit(cli, out, "--judge-config", cfg, "--limit", "1").exit_code == 0
    bodies = [r["body"] for r in audit_server.requests]
    assert {b["model"] for b in bodies} == {"cross-family"} and {b["temperature"] for b in bodies} == {0.0}
    assert q(out, "SELECT DISTINCT judge_model FROM scores WHERE judge_role = 'audit_judge'") == [("cross-family",)]


def test_audit_falls_back_to_openai_endpoint(cli, endpoint, seeds_file, tmp_path):
    server = endpoint()
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    n = len(server.requests)
    assert audit(cli, out).exit_code == 0
    assert sorted(kinds(server, n)) == ["stage1_judge", "stage2_judge"]
    assert q(out, "SELECT DISTINCT judge_model FROM scores WHERE judge_role = 'audit_judge'") == [("scripted",)]


def test_failed_audit_calls_are_reported_and_retried_next_run(cli, built):
    out, _, audit_server = built
    good = audit_server.responder

    def refuse_dialogues(body, headers):  # unusable replies: a case problem, not a setup problem
        if request_kind(body) == "stage2_judge":
            return chat_reply('{"dialogue_scores": not json')
        return good(body, headers)

    audit_server.responder = refuse_dialogues
    res = audit(cli, out)
    assert res.exit_code == 1  # some scores failed: the report is partial, and the exit status says so
    assert "3 failed" in res.stdout and "3 stage(s) could not be scored" in res.stderr
    assert q(out, "SELECT count(DISTINCT case_id) FROM scores WHERE judge_role = 'audit_judge' AND stage = 2")[0][0] == 0
    audit_server.responder = good
    n = len(audit_server.requests)
    assert audit(cli, out).exit_code == 0
    assert sorted(kinds(audit_server, n)) == ["stage2_judge"] * 3


def test_bad_input_is_refused(cli, built, tmp_path):
    out, _, audit_server = built
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json")
    one_line_error(audit(cli, out, "--judge-config", bad_json), "invalid JSON")
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"audit_judge": {"modle": "x"}}))
    one_line_error(audit(cli, out, "--judge-config", unknown), "audit_judge.modle")
    one_line_error(cli("audit", "--out", out, "--split", "dev"), "--split")
    one_line_error(cli("audit", "--out", tmp_path / "none", "--split", "test"), "not a build directory")
    one_line_error(cli("audit", "--out", out, "--split", "val"), "no accepted case in split 'val'")
    assert audit_server.requests == []
    assert not (out / "reports").exists()
