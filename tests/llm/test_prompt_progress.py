"""While a long prompt is read (minutes on a CPU; a resumed run re-reads every prompt the
server no longer caches), the progress line says so, and how far, instead of "0 tokens"
beside calls in flight: llama-server reports the prompt tokens read when a streamed request
asks ``return_progress``."""

from __future__ import annotations

import json
import threading

import openai

from ioa_synth.llm.activity import CallActivity
from ioa_synth.llm.serving import stream_completion
from ioa_synth.testing.scripted_server import ScriptedServer, chat_reply


def test_a_streaming_call_without_a_token_is_reading_its_prompt():
    act = CallActivity()
    plain, streamed = act.begin("judge"), act.begin("agent", streams=True)
    line = act.describe()
    assert "agent 0 s (reading prompt)" in line and "judge 0 s" in line and "judge 0 s (reading" not in line
    assert ", reading" not in line  # a call's state is never listed as if it were a call
    act.prompt_read(streamed, 1024, 3311)
    assert "agent 0 s (reading prompt 1,024/3,311 tokens)" in act.describe()
    act.prompt_read(streamed, 3311, 3311)
    assert "agent 0 s (prompt of 3,311 tokens read)" in act.describe()
    act.streamed(streamed, 5)
    assert "agent 0 s (5 tokens)" in act.describe() and "prompt" not in act.describe()
    act.end(plain)
    act.end(streamed)
    assert act.in_flight() == []


def test_the_prompt_progress_llama_server_streams_is_passed_on():
    seen: list[tuple[int, int]] = []
    with ScriptedServer(lambda body, headers: chat_reply("hello there", prompt_tokens=3000)) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-x")
        body = {"model": "scripted", "messages": [{"role": "user", "content": "hi"}], "stream": True,
                "return_progress": True}
        data = stream_completion(client, json.dumps(body).encode(), 30, threading.Event(),
                                 on_prompt=lambda done, total: seen.append((done, total)))
    assert data["choices"][0]["message"]["content"] == "hello there"
    assert seen == [(1500, 3000), (3000, 3000)]


def test_the_embedded_server_is_asked_for_prompt_progress():
    from ioa_synth.llm.client import LLMClient
    from ioa_synth.llm.endpoint import Endpoint
    from ioa_synth.llm.serving import ServerSlots

    ep = Endpoint(component="agent", base_url="http://127.0.0.1:1/v1", model="m", api_key="sk-x", temperature=0.0,
                  structured_output="json_schema", json_schema_strict=False, request_options={}, max_retries=0,
                  content_retries=0, timeout=30.0)
    assert "return_progress" not in LLMClient(ep).request_body([{"role": "user", "content": "x"}], None, "n")
    ep.slots = ServerSlots(1)
    body = LLMClient(ep).request_body([{"role": "user", "content": "x"}], None, "n")
    assert body["stream"] is True and body["return_progress"] is True
