"""Runs on the embedded model finish: its server decodes a few requests at once (one per
slot), so the client sends at most that many (the timeout counts from when the server
starts on a request), ``--workers`` is lowered to match, and a reply the client gives up on
is closed, which stops the server decoding it.

The embedded server is played by a scripted server of two slots started through the same
code path (:func:`ioa_synth.llm.endpoints.open_endpoints` starting ``EmbeddedServer``); the
tests marked ``embedded`` drive the real ``llama-server``."""

from __future__ import annotations

import json
import re
import threading
import time

import duckdb
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
SLOTS = 2  # IOA_SYNTH_EMBEDDED_SLOTS in these tests


class SlowEmbedded:
    """Stands in for :class:`ioa_synth.llm.local_model.EmbeddedServer`: a scripted server
    that, like llama-server, decodes as many requests at once as it has slots
    (:func:`~ioa_synth.llm.local_model.embedded_slots`) and queues the others."""

    last: "SlowEmbedded | None" = None

    def __init__(self, name: str, log_path=None, **kw) -> None:
        self.name = self.model = name
        self.parallel = lm.embedded_slots()
        self.server = "scripted-llama-server"  # the fingerprinted server build
        self.responder = ProtocolResponder(latency=LATENCY, model=name)
        self.scripted = ScriptedServer(self.responder, models=[name], parallel=self.parallel)
        self.base_url = self.scripted.base_url
        SlowEmbedded.last = self

    def __enter__(self) -> "SlowEmbedded":
        self.scripted.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.scripted.__exit__(*exc)


@pytest.fixture
def slow_embedded(monkeypatch, tmp_path):
    monkeypatch.setenv(lm.SLOTS_ENV, str(SLOTS))
    monkeypatch.setattr(lm, "EmbeddedServer", SlowEmbedded)
    monkeypatch.setattr(local_weights, "default_local_model", lambda: "smollm2-135m")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({c: {"timeout": TIMEOUT} for c in ("generator", "judge")}), encoding="utf-8")
    return config


def _no_timeouts_nor_duplicates(out, server: SlowEmbedded) -> None:
    assert server.scripted.busiest == SLOTS  # every slot used, never a request queued inside the server
    assert server.scripted.abandoned == 0
    assert q(out, "SELECT count(*) FROM llm_calls WHERE error IS NOT NULL") == [(0,)]
    calls = q(out, "SELECT count(*) FROM llm_calls")[0][0]
    chats = [r for r in server.scripted.requests if r["path"].endswith("/chat/completions")]
    assert len(chats) == calls  # each reply generated once, none again after a timeout
    assert all(r["body"].get("stream") is True for r in chats)


def test_four_workers_on_a_two_slot_server(cli, seeds_file, slow_embedded, tmp_path):
    out = tmp_path / "b"
    res = cli("build", "--seeds", seeds_file(3), "--split", "test", "--out", out, "--workers", "4",
              "--config", slow_embedded)
    assert res.exit_code == 0, res.stderr
    notes = [ln for ln in res.stderr.splitlines() if "--workers 4 lowered to 2" in ln]
    assert len(notes) == 1 and lm.SLOTS_ENV in notes[0], res.stderr
    assert q(out, "SELECT status, count(*) FROM cases GROUP BY 1") == [("accepted", 3)]
    _no_timeouts_nor_duplicates(out, SlowEmbedded.last)
    fingerprint = json.loads(q(out, "SELECT fingerprint_json FROM runs")[0][0])
    assert fingerprint["components"]["judge"]["server"] == "scripted-llama-server"
    assert fingerprint["components"]["judge"]["structured_output"] == "json_schema"
    chats = [r["body"] for r in SlowEmbedded.last.scripted.requests if r["path"].endswith("/chat/completions")]
    assert all(b["response_format"]["type"] == "json_schema" for b in chats)  # llama-server's native path


def test_workers_up_to_the_slots_are_kept_and_a_bad_slot_count_is_one_error_line(
        cli, seeds_file, slow_embedded, tmp_path, monkeypatch):
    res = cli("build", "--seeds", seeds_file(2), "--split", "test", "--out", tmp_path / "b", "--workers", "2",
              "--config", slow_embedded)
    assert res.exit_code == 0 and "lowered" not in res.stderr, res.stderr
    assert SlowEmbedded.last.scripted.busiest == 2
    monkeypatch.setenv(lm.SLOTS_ENV, "0")
    res = cli("build", "--seeds", seeds_file(2), "--split", "test", "--out", tmp_path / "c", "--config", slow_embedded)
    assert res.exit_code == 2 and res.stderr.strip().count("\n") == 0, res.stderr
    assert res.stderr.startswith("error: ") and lm.SLOTS_ENV in res.stderr
    assert not (tmp_path / "c").exists()


def test_slots_follow_cores_and_memory_unless_set(monkeypatch):
    monkeypatch.delenv(lm.SLOTS_ENV, raising=False)
    plenty = 64 << 30
    for cores, memory, slots in ((1, plenty, 2), (2, plenty, 4), (16, plenty, lm.MAX_AUTO_SLOTS),
                                 (2, lm.MEMORY_RESERVE + 2 * lm.N_CTX * lm.KV_BYTES_PER_TOKEN, 2),
                                 (2, lm.MEMORY_RESERVE // 2, 1)):
        monkeypatch.setattr(lm, "_cores", lambda: cores)
        monkeypatch.setattr(lm, "_available_memory", lambda: memory)
        assert lm.embedded_slots() == slots, (cores, memory)
    monkeypatch.setenv(lm.SLOTS_ENV, " 6 ")
    assert lm.embedded_slots() == 6
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv(lm.SLOTS_ENV, bad)
        with pytest.raises(local_weights.LocalModelError, match=lm.SLOTS_ENV):
            lm.embedded_slots()


def test_requests_wait_in_the_client_not_in_the_server(seeds_file, slow_embedded, tmp_path):
    """Four cases in flight (no CLI cap): the shared slots keep the server's queue empty."""
    from ioa_synth.build.run import plan_from_seeds, run_build
    from ioa_synth.seeds.tuples import load_seed_file

    out = tmp_path / "b"
    summary = run_build(plan_from_seeds(load_seed_file(seeds_file(4))), "test", out, load_config(slow_embedded),
                        workers=4)
    assert summary["accepted"] == 4 and summary["failed"] == 0
    _no_timeouts_nor_duplicates(out, SlowEmbedded.last)


def _as_made_before_llama_server(out) -> None:
    """Rewrite the stored setups as embedded runs on llama-cpp-python's server stored them:
    no ``server`` field, ``structured_output`` ``json_object_schema``."""
    from ioa_synth.runs.fingerprint import fingerprint

    con = duckdb.connect(str(out / "catalog.duckdb"))
    try:
        for run_id, stored in con.execute("SELECT run_id, fingerprint_json FROM runs").fetchall():
            desc = json.loads(stored)
            for comp in desc["components"].values():
                del comp["server"]
                comp["structured_output"] = "json_object_schema"
            con.execute("UPDATE runs SET fingerprint_json = ?, fingerprint = ? WHERE run_id = ?",
                        [json.dumps(desc), fingerprint(desc), run_id])
    finally:
        con.close()


def test_a_build_made_on_the_old_embedded_server_is_refused_unless_nothing_succeeded(
        cli, seeds_file, slow_embedded, tmp_path):
    """The server build and the native schema path are part of each embedded component's
    fingerprint: a folder whose calls came from the llama-cpp-python server is refused with
    one line once it holds successful calls, and resumes while it holds none."""
    out = tmp_path / "b"
    args = ("build", "--seeds", seeds_file(1), "--split", "test", "--out", out, "--workers", "2",
            "--config", slow_embedded)
    assert cli(*args).exit_code == 0
    _as_made_before_llama_server(out)
    res = cli(*args)
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert res.stderr.startswith("error: ") and "successful generator call(s)" in res.stderr
    assert "generator.server: None -> 'scripted-llama-server'" in res.stderr
    assert "generator.structured_output: 'json_object_schema' -> 'json_schema'" in res.stderr
    con = duckdb.connect(str(out / "catalog.duckdb"))
    con.execute("UPDATE llm_calls SET error = 'timed out'")  # as if no call had succeeded yet
    con.close()
    res = cli(*args)
    assert res.exit_code == 0, res.stderr


def test_a_schema_llama_server_cannot_convert_names_structured_output():
    """llama.cpp's words for a schema it cannot turn into a grammar (HTTP 400) point at the key."""
    from ioa_synth.llm.errors import setup_hint

    said = ("Unable to generate parser for this template. Automatic parser generation failed: JSON schema "
            "conversion failed:\nInvalid pattern ^(abc$: unbalanced parentheses")
    assert 'set "structured_output" for judge' in setup_hint("judge", 400, said, "http://127.0.0.1:1/v1")


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
        # our deadline's wording, or the SDK's when its read timeout fires before the first byte
        assert re.search(r"abandoned|timed out", records[0].error), records[0].error


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


STORY = [{"role": "user", "content": "Write a long story about a lighthouse keeper."}]


@pytest.mark.embedded
def test_llama_server_decodes_its_slots_at_once_and_stops_a_closed_stream(tmp_path):
    """On the real server: two streamed replies on two slots arrive interleaved (decoded at
    once, not one after the other); a stream the client leaves is cancelled (its slot stops
    after a few tokens, not 400) and the server answers the next request."""
    log = tmp_path / "server.log"
    with lm.EmbeddedServer("smollm2-135m", log_path=log, n_ctx=1024, slots=2) as srv:
        story = {"model": srv.model, "stream": True, "max_tokens": 40, "temperature": 0.7, "messages": STORY}
        arrivals: list[tuple[float, int]] = []

        def read(i: int) -> None:
            with httpx.stream("POST", srv.base_url + "/chat/completions", json=story | {"seed": i},
                              timeout=600) as resp:
                arrivals.extend((time.monotonic(), i) for line in resp.iter_lines() if line.startswith("data: {"))

        threads = [threading.Thread(target=read, args=(i,)) for i in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        first_done = min(max(t for t, j in arrivals if j == i) for i in (0, 1))
        before = [sum(1 for t, j in arrivals if j == i and t < first_done) for i in (0, 1)]
        assert min(before) >= 5, before  # both were decoding before either ended

        with httpx.stream("POST", srv.base_url + "/chat/completions", json=story | {"max_tokens": 400},
                          timeout=600) as resp:
            for n, _ in enumerate(resp.iter_lines()):
                if n >= 6:
                    break  # leave after a few tokens
        small = {"model": srv.model, "max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]}
        assert httpx.post(srv.base_url + "/chat/completions", json=small, timeout=600).status_code == 200
    text = log.read_text()
    (task,) = re.findall(r"cancel task, id_task = (\d+)", text)
    (kept,) = re.findall(rf"task {task} \| stop processing: n_tokens = (\d+)", text)
    assert int(kept) < 100  # prompt (~30 tokens) and a few decoded, not the 400 asked for


@pytest.mark.embedded
def test_request_schemas_compile_to_llama_server_grammars(tmp_path):
    """The build's request schemas (both plan modes' stage 1, stage 2, the judge's) become
    grammars on the real server, which refuses a schema it cannot convert (HTTP 400, not a
    silent fallback to free JSON); the grammar holds the model to the schema's constants."""
    from conftest import real_seed_tuples

    from ioa_synth.protocol.judgement import judge_schema
    from ioa_synth.protocol.plan import CasePlan, points_for, stage2_schema
    from ioa_synth.protocol.plan_modes import stage1_request_schema
    from ioa_synth.protocol.rubric import load_rubric
    from ioa_synth.protocol.schemas import Stage1Output
    from ioa_synth.testing.scripted_server import valid_stage1

    seed = next(s["seed_id"] for s in real_seed_tuples(60) if points_for(s["seed_id"]) == 4)
    types4 = ("definitional", "procedural", "criterial", "scopal")
    profiles = Stage1Output.model_validate(valid_stage1())
    rubric = load_rubric()
    schemas = {"plan": CasePlan.for_seed(seed).stage1_schema(),
               "scaffold": stage1_request_schema("scaffold", seed, types4),
               "protocol": stage1_request_schema("protocol", seed, types4),
               "stage2": stage2_schema(profiles),
               "judge1": judge_schema(rubric.stage(1), [p.id for p in profiles.misalignment_points]),
               "judge2": judge_schema(rubric.stage(2), []),
               "broken": {"type": "string", "pattern": "^(unclosed$"}}
    with lm.EmbeddedServer("smollm2-135m", log_path=tmp_path / "server.log", n_ctx=4096, slots=1) as srv:
        def ask(schema: dict, max_tokens: int = 1) -> httpx.Response:
            body = {"model": srv.model, "max_tokens": max_tokens, "temperature": 0.7, "seed": 1,
                    "messages": [{"role": "user", "content": "Write the JSON."}],
                    "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}}
            return httpx.post(srv.base_url + "/chat/completions", json=body, timeout=600)

        codes = {name: ask(schema).status_code for name, schema in schemas.items()}
        assert codes == {**{n: 200 for n in schemas}, "broken": 400}, codes
        head = ask(schemas["stage2"], max_tokens=60).json()["choices"][0]["message"]["content"]
    first = profiles.conversation_outline[0].speaker
    name = next(m.name for m in profiles.members if m.id == first)
    assert re.match(rf'\{{\s*"turns"\s*:\s*\[\s*\{{\s*"turn_idx"\s*:\s*1\s*,\s*"speaker_id"\s*:\s*"{first}"\s*,'
                    rf'\s*"speaker_name"\s*:\s*"{re.escape(name)}"', head), head
