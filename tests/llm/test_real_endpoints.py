"""Real-server behaviours at the HTTP boundary: reasoning replies, setup
errors that stop the run, a fingerprint that refuses only what it must, long
Retry-After waits, plain progress lines and exit statuses."""

from __future__ import annotations

import json
import socket

from ioa_helpers import KEY, q

from ioa_synth.testing.scripted_server import ProtocolResponder, Reply, ScriptedServer, request_kind

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
    stored_gen = q(out, "SELECT count(*) FROM llm_calls WHERE role = 'generator' AND error IS NULL")[0][0]
    assert stored_gen >= len(judge_requests)

    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"judge": {"temperature": None}}))
    n = len(server.requests)
    res = build(cli, seeds, out, "--config", cfg)
    assert res.exit_code == 0, res.output
    assert statuses(out) == ["accepted"] * 4
    # the generator calls of the first run were replayed, not paid again
    new_gen = [r for r in server.requests[n:] if request_kind(r["body"]) == "stage1_generator"]
    assert len(new_gen) == 4 - stored_gen
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


def test_not_implemented_is_a_setup_error_asked_once(cli, seeds_file, tmp_path, monkeypatch):
    # llama.cpp answers 501 for a feature it does not implement: no retry can change that
    seeds, out = seeds_file(2), tmp_path / "out"

    def no_judging(body, headers, base=ProtocolResponder()):
        if request_kind(body) == "stage1_judge":
            return Reply(status=501, body={"error": {"code": 501, "type": "not_supported_error",
                                                     "message": "This server does not support this feature"}})
        return base(body, headers)

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ScriptedServer(no_judging) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        res = build(cli, seeds, out, "--workers", "1")
        judged = [r for r in server.requests if request_kind(r["body"]) == "stage1_judge"]
    assert res.exit_code == 2
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error: judge: HTTP 501") and "does not support" in last, res.stderr
    assert len(judged) == 1
    assert statuses(out) == ["pending", "pending"]


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


def test_regenerate_and_audit_stop_on_setup_errors_and_exit_codes(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_judge": ["low", "low"]})
    seeds, out = seeds_file(2), tmp_path / "out"
    assert build(cli, seeds, out, "--workers", "1").exit_code == 0
    assert statuses(out) == ["accepted", "discarded"]
    # regenerate: a case that fails again exits 1 and says how to retry
    server.responder = ProtocolResponder(script={"stage1_generator": ["badjson"] * 3})
    res = cli("regenerate", "--out", out)
    assert res.exit_code == 1 and "--status failed" in res.stderr
    assert statuses(out) == ["accepted", "failed"]
    # a wrong key stops regenerate with exit 2; the case keeps its status
    n = len(server.requests)
    server.responder = lambda body, headers: Reply(status=401, body={"error": {"message": "Incorrect API key"}})
    res = cli("regenerate", "--out", out)
    assert res.exit_code == 2 and "OPENAI_API_KEY" in res.stderr.strip().splitlines()[-1]
    assert len(server.requests) == n + 1 and statuses(out) == ["accepted", "failed"]
    # audit: the same, and nothing scored
    res = cli("audit", "--out", out, "--split", "test")
    assert res.exit_code == 2 and res.stderr.strip().splitlines()[-1].startswith("error: audit_judge: HTTP 401")
    assert q(out, "SELECT count(*) FROM scores WHERE judge_role = 'audit_judge'")[0][0] == 0
    assert 1 <= len(server.requests) - (n + 1) <= 2  # the two stage jobs in flight at once, nothing after


def test_plain_progress_prints_periodic_summaries():
    import io
    import time

    from rich.console import Console

    from ioa_synth.reports.progress import BuildProgress

    buf = io.StringIO()
    with BuildProgress(Console(file=buf, width=80), total=3, summary_every=0.05) as progress:
        progress.advance("accepted", "test/law/planning_000", 1234)
        progress.tokens(1234)
        progress.note("judge: HTTP 429, waiting 30 s (Retry-After; 30 of max_wait 300 s)")
        time.sleep(0.3)
    lines = buf.getvalue().splitlines()
    assert lines[0] == "[1/3] test/law/planning_000 accepted, 1,234 tokens"
    assert lines[1].startswith("judge: HTTP 429, waiting 30 s")
    summaries = [ln for ln in lines if ln.startswith("cases: 1/3 done: 1 accepted, 0 discarded, 0 failed; 1,234 tokens")]
    assert len(summaries) >= 3  # periodic ones plus the closing one


def test_fingerprint_of_an_earlier_version_compares_without_base_url():
    from ioa_synth.llm.client import Endpoint
    from ioa_synth.llm.config import ComponentConfig
    from ioa_synth.core.templates import all_template_hashes
    from ioa_synth.protocol.rubric import load_rubric, rubric_sha256
    from ioa_synth.build.fingerprint import build_component_view as component_view
    from ioa_synth.build.fingerprint import build_setup_description as setup_description

    eps = {c: Endpoint.from_config(c, ComponentConfig(), "http://host-b:9000/v1", "m", None, False)
           for c in ("generator", "judge")}
    now = setup_description(eps)
    v1 = {"fingerprint_version": 1, "templates": all_template_hashes("build"),
          "rubric": {"version": load_rubric().version, "sha256": rubric_sha256()},
          "components": {c: {**ep.identity(), "base_url": "http://host-a:8000/v1"} for c, ep in eps.items()}}
    for c in eps:
        assert component_view(v1, c) == now["components"][c]
    assert all("judge" in t for t in now["components"]["judge"]["templates"])
    assert "rubric" not in now["components"]["generator"]
    assert component_view(v1, "audit_judge") is None


def test_terminal_bar_shows_counts_and_tokens_at_its_next_redraw_and_at_the_end():
    import io

    from rich.console import Console

    from ioa_synth.reports.progress import BuildProgress

    buf = io.StringIO()
    with BuildProgress(Console(file=buf, width=120, force_terminal=True), total=2) as progress:
        progress.tokens(1234)  # no redraw of its own: the bar's text is made once a second
        progress.advance("accepted")
        progress.tokens(5678)
    final = buf.getvalue()[-400:]  # the bar left on screen
    assert "5,678 tokens" in final and "1 accepted" in final and "1/2" in final
