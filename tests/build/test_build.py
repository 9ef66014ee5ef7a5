"""The build loop at the HTTP boundary: every branch of the loop, retries, catalog rows,
resume, fingerprint guard, key redaction and bad seed input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ioa_helpers import q

from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer, request_kind, valid_stage2

KEY = "sk-test-SECRET-0123456789"


def case_rows(out: Path) -> dict[str, tuple]:
    return {r[0]: r[1:] for r in q(out, "SELECT case_id, status, stage1_attempts, stage2_attempts, discard_reason, "
                                        "error, path FROM cases ORDER BY case_id")}


def requests_of(server: ScriptedServer, kind: str) -> list[dict]:
    return [r["body"] for r in server.requests if request_kind(r["body"]) == kind]


def build(cli, seeds, out, *extra):
    return cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "2", *extra)


def test_all_pass_writes_records_and_catalog(cli, endpoint, seeds_file, tmp_path):
    server = endpoint()
    seeds, out = seeds_file(3), tmp_path / "out"
    res = build(cli, seeds, out)
    assert res.exit_code == 0, res.output
    rows = case_rows(out)
    assert len(rows) == 3
    for case_id, (status, a1, a2, reason, error, path) in rows.items():
        assert (status, a1, a2, reason, error) == ("accepted", 1, 1, None, None)
        record = json.loads(Path(path).read_text())
        assert Path(path) == out / f"{case_id}.json"
        assert set(record) >= {"profiles", "dialogue", "seed", "quality"}
        assert set(record["profiles"]) == {"meeting_scenario", "members", "misalignment_points", "conversation_outline"}
        assert record["dialogue"]["num_turns"] == len(record["dialogue"]["turns"]) == 4
        assert set(record["dialogue"]["turns"][0]) == {"turn_idx", "speaker_id", "speaker_name", "inner_thought", "utterance"}
        assert record["quality"]["stage1"]["ma_scores"]["MA1"]["subtlety"] == 3
        assert record["quality"]["stage2"]["dialogue_scores"]["coverage"] == 2
        assert record["seed"]["license"]  # provenance kept
    # case ids: <split>/<domain>/<task_type>_<NNN>
    assert sorted(rows) == ["test/ml_research/design_review_000", "test/ml_research/planning_000",
                            "test/ml_research/troubleshooting_000"]
    calls = q(out, "SELECT stage, role, attempt, count(*) FROM llm_calls WHERE error IS NULL GROUP BY ALL ORDER BY ALL")
    assert calls == [(1, "generator", 1, 3), (1, "judge", 1, 3), (2, "generator", 1, 3), (2, "judge", 1, 3)]
    # 2 MAs x 3 dims + 4 dialogue dims per case, plus the overall feedback row
    assert q(out, "SELECT count(*) FROM scores WHERE score IS NOT NULL")[0][0] == 3 * (6 + 4)
    assert q(out, "SELECT count(*) FROM seeds")[0][0] == 3
    assert q(out, "SELECT count(*) FROM runs WHERE command = 'build' AND finished_at IS NOT NULL")[0][0] == 1
    assert len(server.requests) == 12


def test_stage1_fail_then_regenerate_with_feedback_then_pass(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_judge": ["low"]})
    out = tmp_path / "out"
    assert build(cli, seeds_file(1), out).exit_code == 0
    (status, a1, a2, *_rest), = case_rows(out).values()
    assert (status, a1, a2) == ("accepted", 2, 1)
    gens = requests_of(server, "stage1_generator")
    assert len(gens) == 2
    first, second = (g["messages"][-1]["content"] for g in gens)
    assert "Too obvious" not in first
    assert "Too obvious: anyone would ask which data is meant." in second and "make it subtler" in second
    # the request names every dimension below θ with score/max before the judge's text
    below = second.split("What failed:")[1]
    assert "- MA1: subtlety 1/3" in below and "- MA2: subtlety 1/3" in below and "specificity" not in below
    assert below.index("subtlety 1/3") < below.index("Too obvious")
    assert q(out, "SELECT DISTINCT attempt FROM scores WHERE stage = 1 ORDER BY 1") == [(1,), (2,)]


def test_stage1_fails_twice_is_discarded(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_judge": ["low", "low"]})
    out = tmp_path / "out"
    assert build(cli, seeds_file(1), out).exit_code == 0
    (status, a1, a2, reason, error, path), = case_rows(out).values()
    assert (status, a1, a2, path, error) == ("discarded", 2, 0, None, None)
    assert "stage 1 failed twice" in reason and "below theta_1 on MA1 (subtlety 1/3)" in reason
    assert requests_of(server, "stage2_generator") == []
    assert not list(out.glob("test/**/*.json"))


def test_stage1_rule_violation_uses_the_regeneration_round(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_generator": ["invalid"]})
    out = tmp_path / "out"
    assert build(cli, seeds_file(1), out).exit_code == 0
    (status, a1, *_), = case_rows(out).values()
    assert (status, a1) == ("accepted", 2)
    # the invalid output was never judged; the regeneration request says what was wrong
    assert len(requests_of(server, "stage1_judge")) == 1
    second = requests_of(server, "stage1_generator")[1]["messages"][-1]["content"]
    assert "definitional" in second and "1 misalignment points; give 2 to 4" in second


def test_stage1_rule_violation_twice_is_discarded(cli, endpoint, seeds_file, tmp_path):
    endpoint({"stage1_generator": ["invalid", "invalid"]})
    out = tmp_path / "out"
    assert build(cli, seeds_file(1), out).exit_code == 0
    (status, a1, a2, reason, *_), = case_rows(out).values()
    assert (status, a1, a2) == ("discarded", 2, 0)
    assert "invalid output" in reason


def test_stage2_fail_then_pass_keeps_profiles(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage2_judge": ["low"]})
    out = tmp_path / "out"
    assert build(cli, seeds_file(1), out).exit_code == 0
    (status, a1, a2, *_), = case_rows(out).values()
    assert (status, a1, a2) == ("accepted", 1, 2)
    assert len(requests_of(server, "stage1_generator")) == 1  # profiles not regenerated
    first, second = (g["messages"][-1]["content"] for g in requests_of(server, "stage2_generator"))
    assert "Stilted: rewrite turn 2." in second and "Stilted" not in first
    # same members, points, outline; the regeneration leads with what failed and does not paste the old dialogue
    assert second.startswith("Your previous dialogue was rejected. What failed:")
    assert first.split("Rules:")[0] == "Write the meeting dialogue." + second.split("Write the meeting dialogue.")[1].split("Rules:")[0]
    assert valid_stage2()["turns"][0]["utterance"] not in second


def test_stage2_fails_twice_is_discarded(cli, endpoint, seeds_file, tmp_path):
    endpoint({"stage2_judge": ["low", "low"]})
    out = tmp_path / "out"
    assert build(cli, seeds_file(1), out).exit_code == 0
    (status, a1, a2, reason, *_), = case_rows(out).values()
    assert (status, a1, a2) == ("discarded", 1, 2)
    assert "stage 2 failed twice" in reason and "theta_2" in reason


@pytest.mark.parametrize("fault", ["429", "500", "503", "badjson", "length"])
def test_transient_faults_are_retried_without_using_the_regeneration(cli, endpoint, seeds_file, tmp_path, fault):
    server = endpoint({"stage1_generator": [fault], "stage2_judge": [fault]})
    out = tmp_path / "out"
    assert build(cli, seeds_file(1), out).exit_code == 0
    (status, a1, a2, *_), = case_rows(out).values()
    assert (status, a1, a2) == ("accepted", 1, 1)
    assert len(requests_of(server, "stage1_generator")) == 2
    if fault in ("badjson", "length"):
        errors = [e for (e,) in q(out, "SELECT error FROM llm_calls WHERE error IS NOT NULL ORDER BY created_at")]
        assert len(errors) == 2
        assert all(("invalid JSON" if fault == "badjson" else "finish_reason=length") in e for e in errors)


def test_exhausted_retries_fail_the_case_and_rerun_retries_it(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage2_generator": ["badjson"] * 3})
    seeds, out = seeds_file(2), tmp_path / "out"
    res = build(cli, seeds, out, "--workers", "1")
    assert res.exit_code == 1  # a run ending with a failed case exits 1, after saying how to retry
    assert "1 case(s) failed" in res.stderr and "--status failed" in res.stderr
    rows = case_rows(out)
    assert sorted(r[0] for r in rows.values()) == ["accepted", "failed"]
    failed_id = next(c for c, r in rows.items() if r[0] == "failed")
    assert "no usable reply after 3 tries" in rows[failed_id][4]
    n_before = len(server.requests)
    assert build(cli, seeds, out).exit_code == 0
    assert case_rows(out)[failed_id][0] == "accepted"
    # only the failed step and what follows it were requested again: stage-2 generator + judge
    new = [request_kind(r["body"]) for r in server.requests[n_before:]]
    assert new == ["stage2_generator", "stage2_judge"]


def test_rerun_makes_no_call_for_finished_cases(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_judge": ["low", "low"]})
    seeds, out = seeds_file(3), tmp_path / "out"
    assert build(cli, seeds, out).exit_code == 0
    before, n = case_rows(out), len(server.requests)
    res = build(cli, seeds, out)
    assert res.exit_code == 0
    assert len(server.requests) == n
    assert case_rows(out) == before
    assert "3 already finished" in res.output


def test_changed_setup_is_refused(cli, endpoint, seeds_file, tmp_path):
    endpoint()
    seeds, out = seeds_file(1), tmp_path / "out"
    assert build(cli, seeds, out).exit_code == 0
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"judge": {"temperature": 0.0}}))
    res = build(cli, seeds, out, "--config", cfg)
    assert res.exit_code != 0
    assert "judge.temperature: 0.3 -> 0.0" in res.output and "new --out" in res.output


def test_a_seed_paper_already_in_another_split_is_refused_before_any_call(cli, endpoint, seeds_file, tmp_path):
    """A new user built the demo's papers into split val of the folder that held them in test
    (2026-12-07): the same paper in two splits leaks between them, so it is refused."""
    server = endpoint()
    seeds, out = seeds_file(2), tmp_path / "out"
    assert build(cli, seeds, out).exit_code == 0
    before, n = case_rows(out), len(server.requests)
    catalog = (out / "catalog.duckdb").read_bytes()
    res = cli("build", "--seeds", seeds, "--split", "val", "--out", out)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), res.output
    assert "1 more already in split test" in lines[0] and "--split test" in lines[0]
    assert len(server.requests) == n and case_rows(out) == before and (out / "catalog.duckdb").read_bytes() == catalog
    assert cli("estimate", "build", "--seeds", seeds, "--split", "val", "--out", out).exit_code == 2
    assert build(cli, seeds, out).exit_code == 0  # its own split resumes


def test_two_endpoints_each_with_its_own_key_and_settings(cli, seeds_file, tmp_path, monkeypatch):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({
        "generator": {"model": "gen-model", "temperature": None, "structured_output": "json_schema",
                      "request_options": {"max_tokens": 777, "top_p": 0.9, "extra_body": {"min_p": 0.05}}},
        "judge": {"model": "judge-model", "structured_output": "json_object_schema",
                  "request_options": {"reasoning_effort": "low", "max_completion_tokens": 555}}}))
    with ScriptedServer(ProtocolResponder()) as gen, ScriptedServer(ProtocolResponder()) as judge:
        monkeypatch.setenv("GENERATOR_BASE_URL", gen.base_url)
        monkeypatch.setenv("GENERATOR_API_KEY", "sk-gen-KEY-1111")
        monkeypatch.setenv("JUDGE_BASE_URL", judge.base_url)
        monkeypatch.setenv("JUDGE_API_KEY", "sk-judge-KEY-2222")
        out = tmp_path / "out"
        assert build(cli, seeds_file(1), out, "--config", cfg).exit_code == 0
    assert {request_kind(r["body"]) for r in gen.requests} == {"stage1_generator", "stage2_generator"}
    assert {request_kind(r["body"]) for r in judge.requests} == {"stage1_judge", "stage2_judge"}
    assert {r["headers"]["authorization"] for r in gen.requests} == {"Bearer sk-gen-KEY-1111"}
    assert {r["headers"]["authorization"] for r in judge.requests} == {"Bearer sk-judge-KEY-2222"}
    g, j = gen.requests[0]["body"], judge.requests[0]["body"]
    assert "temperature" not in g and g["max_tokens"] == 777 and g["top_p"] == 0.9 and g["min_p"] == 0.05
    assert g["model"] == "gen-model" and g["response_format"]["type"] == "json_schema"
    assert j["temperature"] == 0.3 and j["reasoning_effort"] == "low" and j["max_completion_tokens"] == 555
    assert j["response_format"]["type"] == "json_object" and "schema" in j["response_format"]
    assert q(out, "SELECT DISTINCT model, base_url FROM llm_calls WHERE role = 'judge'") == [("judge-model", judge.base_url)]
    stored = " ".join(p.read_bytes().decode("latin-1") for p in out.rglob("*") if p.is_file())
    assert "sk-gen-KEY-1111" not in stored and "sk-judge-KEY-2222" not in stored


def test_api_key_never_reaches_disk_even_when_echoed(cli, seeds_file, tmp_path, monkeypatch):
    from ioa_synth.testing.scripted_server import Reply

    def echo_key(body, headers):  # a server that puts the key in an error body
        return Reply(status=400, body={"error": {"message": f"bad request for {headers['authorization']}"}})

    with ScriptedServer(echo_key) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        out = tmp_path / "out"
        res = build(cli, seeds_file(1), out)
    assert res.exit_code == 2  # HTTP 400 is a setup error: the run stops, the case stays pending
    (status, *_), = case_rows(out).values()
    assert status == "pending"
    assert res.stderr.splitlines()[-1].startswith("error: generator: HTTP 400") and "***" in res.stderr
    errors = q(out, "SELECT error FROM llm_calls")
    assert errors and "***" in errors[0][0]
    for p in out.rglob("*"):
        if p.is_file():
            assert KEY.encode() not in p.read_bytes(), p
    assert KEY not in res.output


@pytest.mark.parametrize("line, message", [
    ("{not json", "invalid JSON"),
    ('{"seed_id": "x", "source": "arxiv", "domain": "ml_research", "task_type": "planning", "title": "T"}',
     "abstract: missing field"),
    ('{"seed_id": "x", "source": "arxiv", "domain": "astrology", "task_type": "planning", "title": "T", "abstract": "A"}',
     "unknown domain 'astrology'"),
    ('{"seed_id": "x", "source": "arxiv", "domain": "law", "task_type": "dancing", "title": "T", "abstract": "A"}',
     "unknown task_type 'dancing'"),
])
def test_bad_seed_line_is_named_and_nothing_is_written(cli, seeds_file, tmp_path, line, message):
    seeds = seeds_file(2)
    seeds.write_text(seeds.read_text() + line + "\n")
    out = tmp_path / "out"
    res = build(cli, seeds, out)
    assert res.exit_code == 2
    assert f"{seeds}:3:" in res.output and message in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert not out.exists()


def test_bad_split_and_missing_seed_file(cli, tmp_path):
    res = cli("build", "--seeds", tmp_path / "nope.jsonl", "--split", "test", "--out", tmp_path / "o")
    assert res.exit_code == 2 and "nope.jsonl: cannot read" in res.output
    res = cli("build", "--seeds", tmp_path / "nope.jsonl", "--split", "dev", "--out", tmp_path / "o")
    assert res.exit_code == 2 and "--split must be one of" in res.output
    assert not (tmp_path / "o").exists()


def test_status_json_matches_catalog(cli, endpoint, seeds_file, tmp_path):
    endpoint({"stage1_judge": ["low", "low"]})
    out = tmp_path / "out"
    assert build(cli, seeds_file(2), out, "--workers", "1").exit_code == 0
    res = cli("status", "--out", out, "--json")
    assert res.exit_code == 0
    report = json.loads(res.stdout)
    assert report["totals"]["accepted"] == 1 and report["totals"]["discarded"] == 1
    assert cli("status", "--out", tmp_path / "missing").exit_code == 2
