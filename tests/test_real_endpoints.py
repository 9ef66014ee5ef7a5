"""Real-server behaviours at the HTTP boundary (issue 10): reasoning replies, setup
errors that stop the run, a fingerprint that refuses only what it must, long
Retry-After waits, plain progress lines and exit statuses."""

from __future__ import annotations

import json
import socket

from ioa_helpers import KEY, q

from ioa_synth.llm.scripted_server import ProtocolResponder, Reply, ScriptedServer, request_kind

UNSUPPORTED = ("Unsupported value: 'temperature' does not support 0.3 with this model. "
               "Only the default (1) value is supported.")


def build(cli, seeds, out, *extra):
    return cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "2", *extra)


def statuses(out) -> list[str]:
    return [s for (s,) in q(out, "SELECT status FROM cases ORDER BY case_id")]


def rewrap(change):
    """A responder like ProtocolResponder whose 200 replies' message is edited by ``change(message)``."""
    base = ProtocolResponder()

    def respond(body, headers):
        reply = base(body, headers)
        if reply.status == 200:
            change(reply.body["choices"][0]["message"])
        return reply

    return respond


def test_think_prefixed_replies_are_accepted_without_extra_requests(cli, endpoint, seeds_file, tmp_path):
    def think(message):
        message["content"] = "<think>\nThe user wants JSON. {not this}\n</think>\n\n" + message["content"]

    server = endpoint(responder=rewrap(think))
    out = tmp_path / "out"
    res = build(cli, seeds_file(2), out)
    assert res.exit_code == 0, res.output
    assert statuses(out) == ["accepted", "accepted"]
    assert len(server.requests) == 8  # 4 calls per case, no re-request
    stored = q(out, "SELECT response_text, reply_field, error FROM llm_calls")
    assert len(stored) == 8
    assert all(text.startswith("<think>") and fld == "content" and err is None for text, fld, err in stored)


def test_answer_in_reasoning_content_is_used_and_replayed(cli, endpoint, seeds_file, tmp_path):
    def misplit(message):
        message["reasoning_content"], message["content"] = message["content"], None

    server = endpoint(responder=rewrap(misplit))
    seeds, out = seeds_file(1), tmp_path / "out"
    assert build(cli, seeds, out).exit_code == 0
    assert statuses(out) == ["accepted"]
    assert len(server.requests) == 4
    assert q(out, "SELECT DISTINCT reply_field FROM llm_calls") == [("reasoning_content",)]
    # the stored text is what the server sent, and replays: deleting the record re-runs the case from the catalog
    assert json.loads(q(out, "SELECT response_text FROM llm_calls WHERE role = 'generator' AND stage = 1")[0][0])
    q_cases = q(out, "SELECT path FROM cases")[0][0]
    assert q_cases and json.loads(open(q_cases).read())["dialogue"]["num_turns"] == 4


def test_reasoning_field_named_reasoning_is_used(cli, endpoint, seeds_file, tmp_path):
    def misplit(message):
        message["reasoning"], message["content"] = message["content"], ""

    endpoint(responder=rewrap(misplit))
    out = tmp_path / "out"
    assert build(cli, seeds_file(1), out).exit_code == 0
    assert q(out, "SELECT DISTINCT reply_field FROM llm_calls") == [("reasoning",)]


def refuse_temperature(body, headers, base=ProtocolResponder()):
    """A judge that answers 400 to any request carrying ``temperature``."""
    if request_kind(body).endswith("judge") and "temperature" in body:
        return Reply(status=400, body={"error": {"message": UNSUPPORTED, "type": "invalid_request_error",
                                                 "param": "temperature", "code": "unsupported_value"}})
    return base(body, headers)


def test_setup_error_stops_the_run_then_a_fixed_config_resumes(cli, endpoint, seeds_file, tmp_path):
    server = endpoint(responder=refuse_temperature)
    seeds, out = seeds_file(4), tmp_path / "out"
    res = build(cli, seeds, out)
    assert res.exit_code == 2
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error: judge: HTTP 400") and "Unsupported value: 'temperature'" in last
    assert '"temperature": null for judge' in last
    judge_requests = [r for r in server.requests if request_kind(r["body"]) == "stage1_judge"]
    assert 1 <= len(judge_requests) <= 2  # one per case in flight, none after the first refusal
    assert len(server.requests) <= 4
    assert statuses(out) == ["pending"] * 4  # touched cases stay pending, the rest were never started

    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"judge": {"temperature": None}}))
    n = len(server.requests)
    res = build(cli, seeds, out, "--config", cfg)
    assert res.exit_code == 0, res.output
    assert statuses(out) == ["accepted"] * 4
    # the generator calls of the first run were replayed, not paid again
    new_gen = [r for r in server.requests[n:] if request_kind(r["body"]) == "stage1_generator"]
    assert len(new_gen) == 4 - len(judge_requests)
    fps = q(out, "SELECT DISTINCT fingerprint FROM runs WHERE command = 'build'")
    assert len(fps) == 2  # runs keeps both setups
    # the generator has results now: changing it is refused
    cfg.write_text(json.dumps({"judge": {"temperature": None}, "generator": {"temperature": 0.2}}))
    res = build(cli, seeds, out, "--config", cfg)
    assert res.exit_code == 2 and "generator.temperature: 0.7 -> 0.2" in res.stderr


def test_generator_moved_to_another_port_resumes(cli, seeds_file, tmp_path, monkeypatch):
    seeds, out = seeds_file(2), tmp_path / "out"

    def refuse_dialogue_judging(body, headers, base=ProtocolResponder()):
        if request_kind(body) == "stage2_judge":
            return Reply(status=404, body={"error": {"message": "The model `scripted` does not exist"}})
        return base(body, headers)

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ScriptedServer(refuse_dialogue_judging) as first:
        monkeypatch.setenv("OPENAI_BASE_URL", first.base_url)
        res = build(cli, seeds, out, "--workers", "1")
    assert res.exit_code == 2 and 'set "model" for judge' in res.stderr
    assert statuses(out) == ["pending", "pending"]
    with ScriptedServer(ProtocolResponder()) as moved:
        monkeypatch.setenv("OPENAI_BASE_URL", moved.base_url)
        res = build(cli, seeds, out)
        assert res.exit_code == 0, res.output
        kinds = sorted(request_kind(r["body"]) for r in moved.requests)
    # the first case stopped at its stage-2 judge: only that call and the untouched case's calls are new
    assert kinds == ["stage1_generator", "stage1_judge", "stage2_generator", "stage2_judge", "stage2_judge"]
    assert statuses(out) == ["accepted", "accepted"]
    assert q(out, "SELECT count(DISTINCT base_url) FROM llm_calls WHERE error IS NULL")[0][0] == 2
    # finished cases cost nothing on a third host
    with ScriptedServer(ProtocolResponder()) as third:
        monkeypatch.setenv("OPENAI_BASE_URL", third.base_url)
        assert build(cli, seeds, out).exit_code == 0
        assert third.requests == []


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_generator_names_the_url(cli, seeds_file, tmp_path, monkeypatch):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    monkeypatch.setenv("GENERATOR_BASE_URL", url)
    monkeypatch.setenv("JUDGE_BASE_URL", url)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({c: {"model": "m", "max_retries": 0} for c in ("generator", "judge")}))
    out = tmp_path / "out"
    res = build(cli, seeds_file(3), out, "--config", cfg)
    assert res.exit_code == 2
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: generator: cannot reach {url}") and "GENERATOR_BASE_URL" in last
    assert statuses(out) == ["pending"] * 3


def test_long_retry_after_is_waited_out_up_to_max_wait(cli, endpoint, seeds_file, tmp_path):
    state = {"n": 0}
    base = ProtocolResponder()

    def limited(body, headers):
        state["n"] += 1
        if state["n"] == 1:
            return Reply(status=429, body={"error": {"message": "rate limited"}}, headers={"Retry-After": "1"})
        return base(body, headers)

    server = endpoint(responder=limited)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"generator": {"max_retries": 0, "max_wait": 5}}))
    out = tmp_path / "out"
    res = build(cli, seeds_file(1), out, "--config", cfg)
    assert res.exit_code == 0, res.output
    assert "generator: HTTP 429, waiting 1 s (Retry-After" in res.stderr  # visible in the progress output
    assert statuses(out) == ["accepted"] and len(server.requests) == 5

    state["n"] = 0
    cfg.write_text(json.dumps({"generator": {"max_retries": 0, "max_wait": 0.5}}))
    out2 = tmp_path / "out2"
    res = build(cli, seeds_file(1), out2, "--config", cfg)
    assert res.exit_code == 1  # the wait exceeds max_wait: the case fails, the run says how to retry
    assert "waiting" not in res.stderr and statuses(out2) == ["failed"]


def test_plain_progress_lines_off_a_terminal(cli, endpoint, seeds_file, tmp_path):
    endpoint({"stage1_judge": ["low", "low"]})
    out = tmp_path / "out"
    res = build(cli, seeds_file(2), out, "--workers", "1")
    assert res.exit_code == 0
    lines = res.stderr.splitlines()
    per_case = [ln for ln in lines if ln.startswith("[")]
    assert len(per_case) == 2
    assert per_case[0].startswith("[1/2] test/ml_research/") and " discarded, " in per_case[0]
    assert per_case[1].startswith("[2/2] test/ml_research/") and per_case[1].endswith(" accepted, 600 tokens")
    assert "cases: 2/2 done: 1 accepted, 1 discarded, 0 failed; " in res.stderr
