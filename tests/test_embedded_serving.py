"""Runs on the embedded model finish: its server decodes one request at a time, so the
client sends one at a time (the timeout counts from when the server starts on a request),
``--workers`` is lowered to match, and a reply the client gives up on is closed, which
stops the server decoding it.

The embedded server is played by a scripted one-at-a-time server started through the
same code path (:func:`ioa_synth.llm.endpoints.open_endpoints` starting ``EmbeddedServer``);
one test drives the real llama-cpp-python server."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from ioa_helpers import q

import ioa_synth.llm.local_model as lm
import ioa_synth.llm.local_weights as local_weights
from ioa_synth.llm.client import Endpoint, LLMClient
from ioa_synth.llm.config import ComponentConfig, load_config
from ioa_synth.llm.errors import CallCancelled, LLMCallError
from ioa_synth.testing.scripted_server import ProtocolResponder, Reply, ScriptedServer, chat_reply
from ioa_synth.llm.serving import ServerSlots

LATENCY = 1.0  # seconds the scripted server takes per reply
TIMEOUT = 2.5  # client timeout: enough for one reply, not for a queue of three


class SlowEmbedded:
    """Stands in for :class:`ioa_synth.llm.local_model.EmbeddedServer`: a scripted server
    that, like llama-cpp-python's, answers one request at a time."""

    last: "SlowEmbedded | None" = None

    def __init__(self, name: str, log_path=None, **kw) -> None:
        self.name = self.model = name
        self.parallel = lm.SERVER_PARALLEL
        self.responder = ProtocolResponder(latency=LATENCY, model=name)
        self.server = ScriptedServer(self.responder, models=[name], parallel=lm.SERVER_PARALLEL)
        self.base_url = self.server.base_url
        SlowEmbedded.last = self

    def __enter__(self) -> "SlowEmbedded":
        self.server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)


@pytest.fixture
def slow_embedded(monkeypatch, tmp_path):
    monkeypatch.setattr(lm, "EmbeddedServer", SlowEmbedded)
    monkeypatch.setattr(local_weights, "default_local_model", lambda: "smollm2-135m")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({c: {"timeout": TIMEOUT} for c in ("generator", "judge")}), encoding="utf-8")
    return config


def _no_timeouts_nor_duplicates(out, server: SlowEmbedded) -> None:
    assert server.server.busiest == 1  # never a second request inside the server
    assert server.server.abandoned == 0
    assert q(out, "SELECT count(*) FROM llm_calls WHERE error IS NOT NULL") == [(0,)]
    calls = q(out, "SELECT count(*) FROM llm_calls")[0][0]
    chats = [r for r in server.server.requests if r["path"].endswith("/chat/completions")]
    assert len(chats) == calls  # each reply generated once, none again after a timeout
    assert all(r["body"].get("stream") is True for r in chats)


def test_four_workers_on_a_one_at_a_time_server(cli, seeds_file, slow_embedded, tmp_path):
    out = tmp_path / "b"
    res = cli("build", "--seeds", seeds_file(2), "--split", "test", "--out", out, "--workers", "4",
              "--config", slow_embedded)
    assert res.exit_code == 0, res.stderr
    notes = [ln for ln in res.stderr.splitlines() if "--workers 4 lowered to 1" in ln]
    assert len(notes) == 1, res.stderr
    assert q(out, "SELECT status, count(*) FROM cases GROUP BY 1") == [("accepted", 2)]
    _no_timeouts_nor_duplicates(out, SlowEmbedded.last)


def test_requests_wait_in_the_client_not_in_the_server(seeds_file, slow_embedded, tmp_path):
    """Four cases in flight (no CLI cap): the shared slot keeps the server's queue empty."""
    from ioa_synth.build.run import plan_from_seeds, run_build
    from ioa_synth.seeds.tuples import load_seed_file

    out = tmp_path / "b"
    summary = run_build(plan_from_seeds(load_seed_file(seeds_file(4))), "test", out, load_config(slow_embedded),
                        workers=4)
    assert summary["accepted"] == 4 and summary["failed"] == 0
    _no_timeouts_nor_duplicates(out, SlowEmbedded.last)


def _streaming_client(server: ScriptedServer, timeout: float, stop: threading.Event | None = None) -> LLMClient:
    cfg = ComponentConfig(timeout=timeout, max_retries=0, content_retries=0)
    ep = Endpoint.from_config("judge", cfg, server.base_url, "scripted", None, embedded=True)
    ep.slots = ServerSlots(1)
    return LLMClient(ep, stop=stop)


def _wait_for(check, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return check()


def test_a_reply_given_up_on_stops_being_generated():
    with ScriptedServer(lambda body, headers: Reply(**{**vars(chat_reply('{"a": 1}')), "delay": 5.0})) as server:
        client = _streaming_client(server, timeout=0.5)
        records = []
        with pytest.raises(LLMCallError, match=r"(?i)time(d)? ?out"):
            client.complete_json([{"role": "user", "content": "x"}], None, "x", lambda v: v, records.append)
        assert _wait_for(lambda: server.abandoned == 1)
        assert "abandoned" in records[0].error


def test_stopping_the_run_closes_the_reply():
    stop = threading.Event()
    with ScriptedServer(lambda body, headers: Reply(**{**vars(chat_reply('{"a": 1}')), "delay": 5.0})) as server:
        client = _streaming_client(server, timeout=60, stop=stop)
        threading.Timer(0.5, stop.set).start()
        with pytest.raises(CallCancelled):
            client.complete_json([{"role": "user", "content": "x"}], None, "x", lambda v: v, lambda rec: None)
        assert _wait_for(lambda: server.abandoned == 1)


def test_a_streamed_reply_is_read_whole():
    with ScriptedServer(lambda body, headers: chat_reply('{"answer": "B", "why": "long enough text"}')) as server:
        client = _streaming_client(server, timeout=30)
        value, rec = client.complete_json([{"role": "user", "content": "x"}], None, "x", lambda v: v, lambda r: None)
    assert value == {"answer": "B", "why": "long enough text"}
    assert rec.finish_reason == "stop" and rec.completion_tokens and rec.completion_tokens > 1
    assert json.loads(rec.request_json)["stream"] is True


def test_a_streamed_reply_records_the_usage_chunk_when_the_server_sends_one():
    """The request asks for a final usage chunk; a server that sends it (OpenAI, vLLM,
    llama.cpp) gives the real prompt and completion tokens, one that does not (llama-cpp-python
    0.3.36 ignores ``stream_options``) leaves the chunk count."""
    reply = lambda body, headers: chat_reply('{"answer": "B", "why": "long enough text"}',  # noqa: E731
                                             prompt_tokens=321, completion_tokens=17)
    with ScriptedServer(reply, stream_usage=True) as server:
        client = _streaming_client(server, timeout=30)
        value, rec = client.complete_json([{"role": "user", "content": "x"}], None, "x", lambda v: v, lambda r: None)
        body = server.requests[-1]["body"]
    assert value == {"answer": "B", "why": "long enough text"}
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert (rec.prompt_tokens, rec.completion_tokens) == (321, 17)
    assert client.activity.streamed_total > 1  # tokens still counted as they arrive
    with ScriptedServer(reply) as server:  # no usage chunk: the content chunks are the count
        client = _streaming_client(server, timeout=30)
        _, rec = client.complete_json([{"role": "user", "content": "x"}], None, "x", lambda v: v, lambda r: None)
    assert rec.prompt_tokens is None and rec.completion_tokens == client.activity.streamed_total > 1


def test_streamed_tokens_show_on_the_activity_line_while_the_reply_arrives():
    """Tokens of a streamed reply are counted as they arrive (the progress line's sign of
    life during a long embedded call), and the total equals the stored completion tokens."""
    with ScriptedServer(lambda body, headers: chat_reply('{"answer": "B", "why": "long enough text"}')) as server:
        client = _streaming_client(server, timeout=30)
        _, rec = client.complete_json([{"role": "user", "content": "x"}], None, "x", lambda v: v, lambda r: None)
    assert client.activity.streamed_total == rec.completion_tokens > 1
    assert "tokens streamed" in client.activity.describe()


def test_embedded_timeout_default_is_long_unless_configured():
    ep = Endpoint.from_config("judge", ComponentConfig(), "http://x/v1", "m", None, embedded=True)
    assert ep.timeout >= 3600
    ep = Endpoint.from_config("judge", ComponentConfig(timeout=30), "http://x/v1", "m", None, embedded=True)
    assert ep.timeout == 30
    assert Endpoint.from_config("judge", ComponentConfig(), "http://x/v1", "m", None, embedded=False).timeout == 600


@pytest.mark.embedded
def test_llama_server_stops_a_closed_stream(tmp_path):
    """llama-cpp-python's server stops decoding a streamed reply whose client went away
    (it checks after each token) and then answers the next request."""
    log = tmp_path / "server.log"
    with lm.EmbeddedServer("smollm2-135m", log_path=log, n_ctx=1024) as srv:
        body = {"model": srv.model, "stream": True, "max_tokens": 400, "temperature": 0.7,
                "messages": [{"role": "user", "content": "Write a long story about a lighthouse keeper."}]}
        with httpx.stream("POST", srv.base_url + "/chat/completions", json=body, timeout=120) as resp:
            for n, _ in enumerate(resp.iter_lines()):
                if n >= 6:
                    break  # leave after a few tokens
        small = {"model": srv.model, "max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]}
        assert httpx.post(srv.base_url + "/chat/completions", json=small, timeout=300).status_code == 200
    assert "Disconnected from client" in log.read_text()


def test_the_server_has_no_setting_for_parallel_decoding():
    """SERVER_PARALLEL = 1 rests on llama-cpp-python's server having no such setting (0.3.36);
    a version that adds one should make this fail and the value be revisited."""
    settings = pytest.importorskip("llama_cpp.server.settings")
    names = {*settings.ServerSettings.model_fields, *settings.ModelSettings.model_fields}
    assert not {n for n in names if "parallel" in n or "slot" in n or "concurren" in n}
    assert "interrupt_requests" in names  # started with --interrupt_requests False
