"""``ioa-synth regenerate`` at the HTTP boundary: attempt numbers continue, history is
kept, stage 2 keeps the accepted profiles, records are replaced only on acceptance,
bad selections and a changed setup are refused."""

from __future__ import annotations

import json
from pathlib import Path

from ioa_helpers import build, kinds, one_line_error, q

from ioa_synth.testing.scripted_server import ProtocolResponder

PLANNING = "test/ml_research/planning_000"  # the first case built (one worker): it meets the scripted faults
DESIGN = "test/ml_research/design_review_000"


def regen(cli, out: Path, *args: str):
    return cli("regenerate", "--out", out, "--workers", "1", *args)


def attempts(out: Path, case_id: str) -> list[tuple]:
    return q(out, "SELECT stage, role, attempt FROM llm_calls WHERE case_id = ? AND error IS NULL ORDER BY ALL",
             [case_id])


def test_discarded_case_reruns_with_continued_attempts(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_judge": ["low", "low"]})
    out = tmp_path / "out"
    build(cli, seeds_file(2), out)
    assert q(out, "SELECT status FROM cases WHERE case_id = ?", [PLANNING]) == [("discarded",)]
    scores_before = q(out, "SELECT count(*) FROM scores WHERE case_id = ?", [PLANNING])[0][0]
    n = len(server.requests)

    res = regen(cli, out, "--status", "discarded")
    assert res.exit_code == 0, res.output
    assert kinds(server, n) == ["stage1_generator", "stage1_judge", "stage2_generator", "stage2_judge"]
    assert attempts(out, PLANNING) == [(1, "generator", 1), (1, "generator", 2), (1, "generator", 3),
                                       (1, "judge", 1), (1, "judge", 2), (1, "judge", 3),
                                       (2, "generator", 3), (2, "judge", 3)]
    # history kept: the two failed judgements are still there, the new ones added
    assert q(out, "SELECT count(*) FROM scores WHERE case_id = ?", [PLANNING])[0][0] > scores_before
    assert q(out, "SELECT DISTINCT attempt FROM scores WHERE case_id = ? AND stage = 1 ORDER BY 1",
             [PLANNING]) == [(1,), (2,), (3,)]
    status, a1, a2, reason, path = q(out, "SELECT status, stage1_attempts, stage2_attempts, discard_reason, path "
                                          "FROM cases WHERE case_id = ?", [PLANNING])[0]
    assert (status, a1, a2, reason) == ("accepted", 3, 3, None)
    record = json.loads(Path(path).read_text())
    assert record["quality"]["stage1"]["attempt"] == 3 and record["quality"]["stage2"]["attempt"] == 3
    assert q(out, "SELECT count(*) FROM runs WHERE command = 'regenerate' AND finished_at IS NOT NULL")[0][0] == 1
    assert PLANNING in res.stdout and "discarded → accepted" in res.stdout
    # the other case was accepted and not selected: untouched
    assert attempts(out, DESIGN) == [(1, "generator", 1), (1, "judge", 1), (2, "generator", 1), (2, "judge", 1)]


def test_stage2_keeps_the_accepted_profiles(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage2_judge": ["low", "low"]})
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    assert q(out, "SELECT status, stage1_attempts, stage2_attempts FROM cases") == [("discarded", 1, 2)]
    stage1_reply = q(out, "SELECT response_text FROM llm_calls WHERE stage = 1 AND role = 'generator'")[0][0]
    n = len(server.requests)

    res = regen(cli, out, "--case", PLANNING, "--stage", "2")
    assert res.exit_code == 0, res.output
    assert kinds(server, n) == ["stage2_generator", "stage2_judge"]  # no new profiles
    assert [a for a in attempts(out, PLANNING) if a[0] == 2] == [(2, "generator", 1), (2, "generator", 2),
                                                                 (2, "generator", 3), (2, "judge", 1),
                                                                 (2, "judge", 2), (2, "judge", 3)]
    record = json.loads((out / f"{PLANNING}.json").read_text())
    assert record["profiles"] == json.loads(stage1_reply)
    assert record["quality"]["stage1"]["attempt"] == 1
    assert record["quality"]["stage1"]["ma_scores"]["MA1"]["subtlety"] == 3
    assert record["quality"]["stage2"]["attempt"] == 3
    assert q(out, "SELECT status, stage1_attempts, stage2_attempts FROM cases") == [("accepted", 1, 3)]


def test_accepted_case_keeps_its_record_when_new_attempts_fail(cli, endpoint, seeds_file, tmp_path):
    server = endpoint()
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    record_path = out / f"{PLANNING}.json"
    before = record_path.read_bytes()
    server.responder = ProtocolResponder(script={"stage2_judge": ["low", "low"]})

    res = regen(cli, out, "--case", PLANNING, "--stage", "2")
    assert res.exit_code == 0, res.output
    assert record_path.read_bytes() == before
    assert q(out, "SELECT status, path IS NOT NULL, discard_reason FROM cases") == [("accepted", True, None)]
    assert q(out, "SELECT DISTINCT attempt FROM scores WHERE stage = 2 ORDER BY 1") == [(1,), (2,), (3,)]
    assert "accepted → accepted" in res.stdout and "previous record kept" in res.stdout

    # a passing re-run replaces the record, and numbering still continues
    server.responder = ProtocolResponder()
    assert regen(cli, out, "--case", PLANNING, "--stage", "2").exit_code == 0
    assert json.loads(record_path.read_text())["quality"]["stage2"]["attempt"] == 4


def test_status_selection_skips_cases_without_profiles_for_stage2(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_judge": ["low", "low"]})
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    n = len(server.requests)
    res = regen(cli, out, "--status", "discarded", "--stage", "2")
    assert res.exit_code == 0
    assert len(server.requests) == n
    assert "skipped" in res.stdout and "nothing to regenerate" in res.stdout


def test_bad_selections_are_refused(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_judge": ["low", "low"]})
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    n = len(server.requests)
    one_line_error(regen(cli, out, "--case", "test/law/planning_999"), "unknown case id", "test/law/planning_999")
    one_line_error(regen(cli, out, "--status", "accepted"), "--status")
    one_line_error(regen(cli, out, "--stage", "3"), "--stage")
    one_line_error(regen(cli, out, "--split", "dev"), "--split")
    one_line_error(regen(cli, out, "--case", PLANNING, "--stage", "2"), PLANNING, "no stage-1 attempt passed")
    one_line_error(regen(cli, tmp_path / "nowhere"), "not a build directory")
    assert len(server.requests) == n
    assert not (tmp_path / "nowhere").exists()


def test_changed_setup_is_refused(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_judge": ["low", "low"]})
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"generator": {"temperature": 0.1}}))
    n = len(server.requests)
    one_line_error(regen(cli, out, "--config", cfg), "another setup", "generator.temperature")
    assert len(server.requests) == n
    assert q(out, "SELECT count(*) FROM runs WHERE command = 'regenerate'")[0][0] == 0
    assert q(out, "SELECT status FROM cases") == [("discarded",)]


def test_several_cases_in_one_run(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage2_judge": ["low", "low", "low", "low"]})
    out = tmp_path / "out"
    build(cli, seeds_file(3), out)
    assert [s for (s,) in q(out, "SELECT status FROM cases ORDER BY case_id")] == ["discarded", "discarded", "accepted"]
    n = len(server.requests)
    res = regen(cli, out, "--case", DESIGN, PLANNING, "--stage", "2")  # '--case A B' form
    assert res.exit_code == 0, res.output
    assert sorted(kinds(server, n)) == ["stage2_generator"] * 2 + ["stage2_judge"] * 2
    assert [s for (s,) in q(out, "SELECT status FROM cases ORDER BY case_id")] == ["accepted"] * 3
    assert res.stdout.count("discarded → accepted") == 2
    res = regen(cli, out, "--case", DESIGN, "--case", PLANNING, "--stage", "2")  # repeated form
    assert res.exit_code == 0 and res.stdout.count("accepted → accepted") == 2
    assert q(out, "SELECT max(attempt) FROM llm_calls WHERE stage = 2 AND case_id = ?", [DESIGN]) == [(4,)]
