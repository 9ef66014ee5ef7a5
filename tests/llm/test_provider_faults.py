"""Faults that real providers play, at the HTTP boundary: content filters and refusals (a
case failure, not a setup error), Retry-After beyond max_wait, retried and timed-out tries
made visible, billed tokens of rejected tries, and calls in flight on the progress line."""

from __future__ import annotations

import json
import threading
import time

from ioa_helpers import q

from ioa_synth.testing.scripted_server import ProtocolResponder, Reply, ScriptedServer, chat_reply, request_kind

FILTER_TEXT = ("The response was filtered due to the prompt triggering Azure OpenAI's content management policy. "
               "Please modify your prompt and retry.")
REFUSAL_TEXT = "I'm sorry, but I can't help with that request."


def build(cli, seeds, out, *extra):
    return cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1", *extra)


def statuses(out) -> list[str]:
    return [s for (s,) in q(out, "SELECT status FROM cases ORDER BY case_id")]


def content_filter_400() -> Reply:
    return Reply(status=400, body={"error": {
        "message": FILTER_TEXT, "type": None, "param": "prompt", "code": "content_filter", "status": 400,
        "innererror": {"code": "ResponsibleAIPolicyViolation",
                       "content_filter_result": {"violence": {"filtered": True, "severity": "medium"}}}}})


class FirstOf:
    """Answers the first ``n`` requests of ``kind`` with ``fault()``, the rest like ProtocolResponder."""

    def __init__(self, kind: str, fault, n: int = 1) -> None:
        self.kind, self.fault, self.left = kind, fault, n
        self.base = ProtocolResponder()
        self.lock = threading.Lock()

    def __call__(self, body, headers):
        with self.lock:
            hit = request_kind(body) == self.kind and self.left > 0
            self.left -= hit
        return self.fault() if hit else self.base(body, headers)


def test_content_filter_400_fails_that_case_only_and_a_rerun_asks_again(cli, endpoint, seeds_file, tmp_path):
    server = endpoint(responder=FirstOf("stage1_generator", content_filter_400))
    seeds, out = seeds_file(4), tmp_path / "out"
    res = build(cli, seeds, out)
    assert res.exit_code == 1, res.output  # a failed case, not a setup error (2)
    assert "validity_filter" not in res.stderr and "error:" not in res.stderr
    assert sorted(statuses(out)) == ["accepted", "accepted", "accepted", "failed"]
    (error,) = q(out, "SELECT error FROM cases WHERE status = 'failed'")[0]
    assert error.startswith("content filter: HTTP 400") and "content management policy" in error
    stored = q(out, "SELECT error FROM llm_calls WHERE error IS NOT NULL")
    assert len(stored) == 1 and stored[0][0].startswith("content filter") and FILTER_TEXT[:40] in stored[0][0]
    n = len(server.requests)
    res = build(cli, seeds, out)  # the filter lets it through now: the case is asked again
    assert res.exit_code == 0, res.output
    assert statuses(out) == ["accepted"] * 4 and len(server.requests) == n + 4


def test_refusal_and_finish_reason_content_filter_are_quoted(cli, endpoint, seeds_file, tmp_path):
    def refusal():
        reply = chat_reply("", prompt_tokens=120, completion_tokens=12)
        reply.body["choices"][0]["message"] = {"role": "assistant", "content": None, "refusal": REFUSAL_TEXT}
        return reply

    def filtered():
        reply = chat_reply('{"meeting_sce', finish_reason="content_filter", prompt_tokens=90, completion_tokens=4)
        reply.body["choices"][0]["content_filter_results"] = {"hate": {"filtered": False},
                                                             "self_harm": {"filtered": True, "severity": "high"}}
        return reply

    faults = iter([refusal, filtered])
    endpoint(responder=FirstOf("stage1_generator", lambda: next(faults)(), n=2))
    out = tmp_path / "out"
    res = build(cli, seeds_file(3), out)
    assert res.exit_code == 1, res.output
    assert sorted(statuses(out)) == ["accepted", "failed", "failed"]
    errors = sorted(e for (e,) in q(out, "SELECT error FROM cases WHERE status = 'failed'"))
    assert errors[1] == f'refusal: the provider refused the request: "{REFUSAL_TEXT}"'
    assert errors[0].startswith("content filter: finish_reason content_filter (self_harm)") and '{"meeting_sce' in errors[0]
    rows = q(out, "SELECT reply_field, response_text, prompt_tokens FROM llm_calls WHERE error IS NOT NULL "
                  "ORDER BY prompt_tokens DESC")
    assert rows == [("refusal", REFUSAL_TEXT, 120), ("refusal", '{"meeting_sce', 90)]  # no re-request of a refusal


def test_retry_after_beyond_max_wait_is_not_waited_and_says_so(cli, endpoint, seeds_file, tmp_path):
    limited = FirstOf("stage1_generator", lambda: Reply(status=429, body={"error": {"message": "slow down"}},
                                                         headers={"Retry-After": "100"}))
    server = endpoint(responder=limited)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"generator": {"max_retries": 3, "max_wait": 5}}))
    out = tmp_path / "out"
    res = build(cli, seeds_file(2), out, "--config", cfg)
    assert res.exit_code == 1, res.output
    assert sorted(statuses(out)) == ["accepted", "failed"]
    (error,) = q(out, "SELECT error FROM cases WHERE status = 'failed'")[0]
    assert "RateLimitError" in error and "the server asks to wait 100 s (Retry-After), beyond max_wait 5 s" in error
    first_case = [r for r in server.requests if request_kind(r["body"]) == "stage1_generator"]
    assert len(first_case) == 2  # one try for the limited case (not re-sent), one for the other case
    assert "generator: HTTP 429, waiting" not in res.stderr  # no wait was announced


def test_retry_after_within_max_wait_is_noted_on_the_progress_line(cli, endpoint, seeds_file, tmp_path):
    endpoint(responder=FirstOf("stage1_generator", lambda: Reply(status=429, body={"error": {"message": "slow"}},
                                                                 headers={"Retry-After": "1"}), n=2))
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"generator": {"max_retries": 0, "max_wait": 5}}))
    out = tmp_path / "out"
    res = build(cli, seeds_file(1), out, "--config", cfg)
    assert res.exit_code == 0, res.output
    assert "generator: HTTP 429, waiting 1 s (Retry-After; 1 of max_wait 5 s) before retry 1" in res.stderr
    assert "generator: HTTP 429, waiting 1 s (Retry-After; 2 of max_wait 5 s) before retry 2" in res.stderr
    rows = q(out, "SELECT error FROM llm_calls WHERE role = 'generator' AND stage = 1 ORDER BY created_at")
    assert [e is None for (e,) in rows] == [False, False, True]  # every try stored


def test_timed_out_and_retried_tries_are_counted_in_progress_and_status(cli, endpoint, seeds_file, tmp_path):
    base = ProtocolResponder()
    state = {"n": 0}

    def slow_first(body, headers):
        reply = base(body, headers)
        if request_kind(body) == "stage1_judge":
            state["n"] += 1
            if state["n"] == 1:
                reply.delay = 2.0  # past the 0.5 s timeout
        return reply

    endpoint(responder=slow_first)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"judge": {"timeout": 0.5, "max_retries": 2}}))
    out = tmp_path / "out"
    res = build(cli, seeds_file(1), out, "--config", cfg)
    assert res.exit_code == 0, res.output
    assert statuses(out) == ["accepted"]
    assert "1 try failed (1 timed out), 1 retried" in res.stderr  # the closing summary line
    report = json.loads(cli("status", "--out", out, "--json").stdout)
    judge = next(r for r in report["tokens"] if r["role"] == "judge")
    assert (judge["calls"], judge["failed_calls"], judge["retried_calls"], judge["timed_out_calls"]) == (3, 1, 1, 1)
    res = cli("status", "--out", out)
    assert "timed out" in res.stdout and "retried" in res.stdout


def test_rejected_tries_count_in_every_token_total(cli, endpoint, seeds_file, tmp_path):
    endpoint({"stage1_generator": ["badjson", "length"], "stage1_judge": ["badjson"]})
    out = tmp_path / "out"
    res = build(cli, seeds_file(2), out)
    assert res.exit_code == 0, res.output
    per_case = {ln.split()[1]: int(ln.rsplit(", ", 1)[1].split()[0].replace(",", ""))
                for ln in res.stderr.splitlines() if ln.startswith("[")}
    stored = dict(q(out, "SELECT case_id, sum(prompt_tokens + completion_tokens) FROM llm_calls GROUP BY case_id"))
    assert per_case == stored
    assert sorted(per_case.values()) == [600, 1050]  # 4 good calls; + 3 rejected tries of 150
    total = sum(stored.values())
    assert f"; {total:,} tokens in finished calls;" in res.stderr
    (summary,) = q(out, "SELECT summary_json FROM runs WHERE command = 'build'")[0]
    assert json.loads(summary)["tokens"] == total
    report = json.loads(cli("status", "--out", out, "--json").stdout)
    assert sum(r["prompt_tokens"] + r["completion_tokens"] for r in report["tokens"]) == total
    assert sum(r["failed_tokens"] for r in report["tokens"]) == 450


def test_progress_shows_calls_in_flight_before_any_case_finishes():
    import io

    from rich.console import Console

    from ioa_synth.llm.client import Endpoint, LLMClient
    from ioa_synth.llm.config import ComponentConfig
    from ioa_synth.reports.progress import BuildProgress

    release = threading.Event()

    def slow(body, headers):
        release.wait(20)
        return chat_reply('{"ok": true}')

    with ScriptedServer(slow) as server:
        ep = Endpoint.from_config("generator", ComponentConfig(), server.base_url, "scripted", "k", False)
        client = LLMClient(ep)
        buf = io.StringIO()
        progress = BuildProgress(Console(file=buf, width=200), total=1, summary_every=0.2)
        progress.watch(client)
        with progress:
            worker = threading.Thread(target=client.complete_json,
                                      args=([{"role": "user", "content": "x"}], None, "x", lambda v: v, lambda r: None))
            worker.start()
            deadline = time.monotonic() + 10
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.5)
            line = progress.summary_line()
            release.set()
            worker.join()
        client.close()
    assert line.startswith("cases: 0/1 done: 0 accepted, 0 discarded, 0 failed; 0 tokens in finished calls;")
    assert "; 1 call in flight: generator " in line and line.endswith(" s")
    periodic = [ln for ln in buf.getvalue().splitlines() if "call in flight: generator" in ln]
    assert periodic  # the plain summary lines said so while the call ran


def test_activity_line_lists_the_longest_calls_and_counts_failures():
    from ioa_synth.llm.activity import CallActivity

    act = CallActivity()
    handles = [act.begin("simulator") for _ in range(5)] + [act.begin("prober")]
    act.streamed(handles[0], 40)
    act.end(handles[1], "HTTP 503")
    act.retrying("simulator")
    act.rejected("prober")
    line = act.describe()
    assert line.startswith("5 calls in flight: simulator ") and ", +1 more;" in line and "(40 tokens)" in line
    assert "40 tokens streamed" in line and "tokens/s per call" in line
    assert line.endswith("2 tries failed, 1 retried")
    assert (act.tried["simulator"], act.failed["simulator"], act.failed["prober"]) == (5, 1, 1)
    for h in handles:
        act.end(h)
    assert act.in_flight() == [] and not act.describe().startswith("5 calls")
