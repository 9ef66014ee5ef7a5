"""``ioa-synth show`` on accepted and discarded cases, chosen attempts and bad input; and
an old build folder whose records and stored replies hold ``meeting_scenario`` in the
earlier object form still works with status, audit, annotate, regenerate and show
."""

from __future__ import annotations

import json

import duckdb
import pytest
from ioa_helpers import build, one_line_error, q

OLD = {"context": "Quarterly planning of the retrieval evaluation.", "agenda": "Data, baseline, ship criterion.",
       "expected_outcome": "A two-week plan."}


@pytest.fixture
def built(cli, endpoint, seeds_file, tmp_path):
    """Case 000 accepted (stage 2 at the second attempt: a dialogue quoting a private
    reading first); case 001 discarded (two all-"..." dialogues)."""
    server = endpoint({"stage2_generator": ["leak", "ok", "dots", "dots"], "stage2_judge": ["ok"]})
    out = tmp_path / "out"
    build(cli, seeds_file(2), out)
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    ids = [r[0] for r in con.execute("SELECT case_id FROM cases ORDER BY status").fetchall()]
    con.close()
    return out, ids, server


def show_json(cli, out, case_id, *extra):
    res = cli("show", "--out", out, case_id, "--json", *extra)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_show_accepted_case_latest_and_chosen_attempt(cli, built):
    out, (accepted, _), _ = built
    view = show_json(cli, out, accepted)
    assert view["status"] == "accepted" and view["record_path"].endswith(f"{accepted}.json")
    s1, s2 = view["stage1"], view["stage2"]
    assert (s1["attempt"], s1["attempts"], s2["attempt"], s2["attempts"]) == (1, [1], 2, [1, 2])
    assert s1["output"]["misalignment_points"][0]["surface_form"] == "the held-out set"
    assert s2["gate_failures"] == [] and s2["problems"] == []
    (verdict,) = s2["verdicts"]
    assert verdict["scores"] == {"naturalness": 3, "implicitness": 3, "coverage": 2, "profile_consistency": 3}
    assert {v["item"] for v in s1["verdicts"]} == {"MA1", "MA2", "overall"}
    assert view["seed"]["seed_id"] and view["discard_reason"] is None
    first = show_json(cli, out, accepted, "--attempt", "1")["stage2"]
    assert first["attempt"] == 1 and first["verdicts"] == []
    assert first["gate_failures"] and "states MA1.member_b_understanding aloud" in first["gate_failures"][0]

    text = cli("show", "--out", out, accepted).stdout
    for needle in ("accepted", "meeting scenario", "Ada Okafor", "the held-out set", "conversation outline",
                   "thinks: For me the held-out set is the frozen 2,400 March questions",
                   "says:   So for the comparison", "judge scores", "naturalness", "No changes needed."):
        assert needle in text, needle
    # scores out of their maximum: coverage 2 is its top, implicitness 2 would be below θ2
    assert "3/3" in text and "2/2" in text and "of the maximum; red: below θ2" in text


def test_show_discarded_case_with_gate_failures_and_reason(cli, built):
    out, (_, discarded), _ = built
    view = show_json(cli, out, discarded)
    assert view["status"] == "discarded" and view["record_path"] is None
    assert view["discard_reason"].startswith("stage 2 failed twice (attempt 1: gate failures: placeholder")
    s2 = view["stage2"]
    assert s2["attempt"] == 2 and s2["verdicts"] == [] and s2["output"]["turns"][0]["utterance"] == "..."
    assert s2["gate_failures"][0].startswith("placeholder instead of content in turn 1.inner_thought ('...')")
    text = cli("show", "--out", out, discarded).stdout
    for needle in ("discarded", "discard reason: stage 2 failed twice", "rule and gate failures",
                   "the judge was not called", "says:   ..."):
        assert needle in text, needle


def test_show_bad_input(cli, built, tmp_path):
    out, (accepted, _), _ = built
    one_line_error(cli("show", "--out", out, "test/law/planning_999"), "unknown case id", "this build has", accepted)
    one_line_error(cli("show", "--out", out, accepted, "--attempt", "7"), "has no attempt 7", "stage 2: 1, 2")
    one_line_error(cli("show", "--out", tmp_path / "nowhere", accepted), "nowhere: no such folder", "not a build directory")
    (tmp_path / "empty").mkdir()
    one_line_error(cli("show", "--out", tmp_path / "empty", accepted), "no catalog.duckdb here", "not a build directory")


def _to_object_form(out):
    """Rewrite a build as an earlier version wrote it: object scenario in records and replies."""
    for path in out.glob("test/**/*.json"):
        record = json.loads(path.read_text())
        record["profiles"]["meeting_scenario"] = OLD
        path.write_text(json.dumps(record))
    con = duckdb.connect(str(out / "catalog.duckdb"))
    for call_id, text in con.execute("SELECT call_id, response_text FROM llm_calls WHERE role = 'generator' "
                                     "AND stage = 1").fetchall():
        data = json.loads(text)
        data["meeting_scenario"] = OLD
        con.execute("UPDATE llm_calls SET response_text = ? WHERE call_id = ?", [json.dumps(data), call_id])
    con.close()


def test_old_folder_with_object_scenario_still_works(cli, endpoint, built):
    out, (accepted, discarded), server = built
    _to_object_form(out)
    joined = "Context: Quarterly planning of the retrieval evaluation.\nAgenda: Data, baseline, ship criterion." \
             "\nExpected outcome: A two-week plan."

    status = json.loads(cli("status", "--out", out, "--json").stdout)
    assert status["ma_types"]["test"]["points"] == 2 and status["ma_types"]["test"]["unreadable_records"] == 0
    assert show_json(cli, out, accepted)["stage1"]["output"]["meeting_scenario"] == joined
    assert "Expected outcome: A two-week plan." in cli("show", "--out", out, accepted).stdout

    audit_server = endpoint(env="AUDIT_JUDGE")
    res = cli("audit", "--out", out, "--split", "test")
    assert res.exit_code == 0, res.output
    judged = " ".join(m["content"] for r in audit_server.requests for m in r["body"]["messages"])
    assert "Agenda: Data, baseline, ship criterion." in judged

    res = cli("annotate", "export", "--out", out, "--split", "test", "--per-cell", "1", "--calibration", "0",
              "--format", "csv")
    assert res.exit_code == 0, res.output
    csv = next((out / "annotation" / "test").glob("*.csv")).read_text()
    assert "Expected outcome: A two-week plan." in csv

    # regenerate --stage 2 keeps the (old-form) accepted profiles of the discarded case
    start = len(server.requests)
    res = cli("regenerate", "--out", out, "--case", discarded, "--stage", "2")
    assert res.exit_code == 0, res.output
    assert show_json(cli, out, discarded)["status"] == "accepted"
    prompt = server.requests[start]["body"]["messages"][-1]["content"]
    assert "Scenario: Context: Quarterly planning" in prompt


def test_show_decodes_think_and_fenced_replies(cli, built):
    """A reasoning model's stored reply keeps its ``<think>`` block (and may be fenced):
    show decodes it as the pipeline did, not as an unreadable reply."""
    out, (accepted, _), _ = built
    con = duckdb.connect(str(out / "catalog.duckdb"))
    con.execute("UPDATE llm_calls SET response_text = '<think>Plan the members first.</think>\n```json\n' "
                "|| response_text || '\n```' WHERE role = 'generator'")
    con.close()
    view = show_json(cli, out, accepted)
    s1, s2 = view["stage1"], view["stage2"]
    assert s1["problems"] == [] and s2["problems"] == [] and s2["gate_failures"] == []
    assert s1["output"]["misalignment_points"][0]["surface_form"] == "the held-out set"
    assert s2["output"]["turns"][0]["utterance"]
    text = cli("show", "--out", out, accepted).stdout
    assert "unreadable reply" not in text and "Ada Okafor" in text


def test_show_without_case_id_picks_the_case_that_got_furthest(cli, built, tmp_path):
    out, (accepted, discarded), _ = built
    res = cli("show", "--out", out, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["case_id"] == accepted
    assert f"showing {accepted}, an accepted case" in res.stderr
    # with no accepted case, the one whose dialogue went furthest (two stage-2 attempts)
    con = duckdb.connect(str(out / "catalog.duckdb"))
    con.execute("UPDATE cases SET status = 'discarded' WHERE case_id = ?", [accepted])
    con.execute("DELETE FROM llm_calls WHERE case_id = ? AND stage = 2", [accepted])
    con.close()
    assert json.loads(cli("show", "--out", out, "--json").stdout)["case_id"] == discarded
    one_line_error(cli("show", "--out", tmp_path / "nowhere"), "nowhere")


def test_furthest_case_is_one_the_stage_2_judge_scored_not_one_that_needed_more_stage_1_attempts(cli, built):
    # a new user's demo: every case had two stage-2 attempts; show picked the one whose stage 1
    # needed a regeneration and whose dialogue never reached the judge, over those the judge scored
    out, (judged, unjudged), _ = built
    con = duckdb.connect(str(out / "catalog.duckdb"))
    con.execute("UPDATE cases SET status = 'discarded' WHERE case_id = ?", [judged])
    con.execute("INSERT INTO llm_calls SELECT * REPLACE (2 AS attempt, call_id || '-2' AS call_id) FROM llm_calls "
                "WHERE case_id = ? AND stage = 1 AND role = 'generator'", [unjudged])
    con.close()
    assert q(out, "SELECT count(*) FROM llm_calls WHERE case_id = ? AND stage = 2 AND role = 'judge'", [unjudged]) \
        == [(0,)]
    assert json.loads(cli("show", "--out", out, "--json").stdout)["case_id"] == judged


def test_a_chosen_dialogue_is_checked_against_the_profiles_it_was_written_from(cli, endpoint, seeds_file, tmp_path):
    # stage 1 passes at attempt 2, stage 2 at attempt 2: dialogue 1 was written from profiles 2,
    # whose MA1 surface form differs from profiles 1's (a fresh user found show pairing 1 with 1)
    endpoint({"stage1_generator": ["question"], "stage2_generator": ["leak"]})
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    (case_id,) = [r[0] for r in duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
                  .execute("SELECT case_id FROM cases").fetchall()]
    view = show_json(cli, out, case_id, "--attempt", "1")
    assert (view["stage1"]["attempt"], view["stage2"]["attempt"], view["stage2"]["profiles_attempt"]) == (1, 1, 2)
    (failure,) = view["stage2"]["gate_failures"]
    assert "states MA1.member_b_understanding aloud" in failure
    latest = show_json(cli, out, case_id)
    assert (latest["stage1"]["attempt"], latest["stage2"]["profiles_attempt"]) == (2, 2)
    assert "written from profiles attempt 2" in cli("show", "--out", out, case_id, "--attempt", "1").stdout


def test_piped_output_width_follows_columns_when_set(cli, built, monkeypatch):
    # piped (not a tty): COLUMNS when the user sets it, else a width that never cuts ids
    out, (accepted, _), _ = built
    monkeypatch.setenv("COLUMNS", "100")
    narrow = cli("show", "--out", out, accepted).stdout
    monkeypatch.delenv("COLUMNS")
    wide = cli("show", "--out", out, accepted).stdout
    assert max(map(len, narrow.splitlines())) <= 100 < max(map(len, wide.splitlines()))


def test_no_attempt_yet_names_the_users_folder_and_says_what_to_do(cli, built, tmp_path):
    """Before any case has a generated attempt, ``show`` names the folder the user gave (not
    the temporary copy it reads while a build runs) and tells a user whose build is still
    running to wait rather than to start one."""
    from ioa_synth.build.show import ShowError, furthest_case

    out, _, _ = built
    con = duckdb.connect(str(out / "catalog.duckdb"))
    con.execute("DELETE FROM llm_calls WHERE role = 'generator'")
    con.execute("UPDATE cases SET status = 'pending'")
    con.close()
    one_line_error(cli("show", "--out", out), str(out), "no case has a generated attempt yet",
                   "run 'ioa-synth build' first")
    mine = tmp_path / "data" / "demo"
    with pytest.raises(ShowError) as caught:
        furthest_case(out, home=mine, running=True)
    message = str(caught.value)
    assert message.startswith(f"{mine}: no case has a generated attempt yet")
    assert str(out) not in message and "run 'ioa-synth build' first" not in message
    assert "ioa-synth status" in message


def test_show_of_a_dialogue_whose_thoughts_are_not_written_yet_says_so_instead_of_failing_gates(
        cli, endpoint, seeds_file, tmp_path):
    # a build stopped (or still running) between the lines pass and the thoughts pass: show
    # used to check the gates on empty thoughts and print "placeholder" failures in red
    endpoint()
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"generator": {"plan": "scaffold"}}))
    out = tmp_path / "out"
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out, "--workers", "1", "--config", cfg)
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(out / "catalog.duckdb"))
    (case_id,) = con.execute("SELECT DISTINCT case_id FROM llm_calls WHERE role = 'generator:thoughts'").fetchone()
    con.execute("DELETE FROM llm_calls WHERE role = 'generator:thoughts'")
    for call_id, text in con.execute("SELECT call_id, response_text FROM llm_calls WHERE stage = 2 "
                                     "AND role = 'generator' AND response_text IS NOT NULL").fetchall():
        lines = {"turns": [{k: v for k, v in t.items() if k != "inner_thought"} for t in json.loads(text)["turns"]]}
        con.execute("UPDATE llm_calls SET response_text = ? WHERE call_id = ?", [json.dumps(lines), call_id])
    con.close()
    res = cli("show", "--out", out, case_id, "--json")
    assert res.exit_code == 0, res.output
    s2 = json.loads(res.stdout)["stage2"]
    assert s2["thoughts_pending"] is True and s2["gate_failures"] == [] and s2["problems"] == []
    assert all(t["inner_thought"] == "" for t in s2["output"]["turns"])
    text = cli("show", "--out", out, case_id).stdout
    assert "the inner thoughts are not yet" in text and "thinks: (not written yet)" in text
    assert "placeholder" not in text and "rule and gate failures" not in text.split("stage 2")[-1]
