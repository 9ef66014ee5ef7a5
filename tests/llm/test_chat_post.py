"""ChatPost sends on the transport the SDK's HTTP client would pick (a mounted proxy's
included) and raises the SDK's own errors."""

from __future__ import annotations

import json

import httpx2
import openai
import pytest

from ioa_synth.llm.transport import ChatPost


def _sdk(handler, **client_kwargs) -> openai.OpenAI:
    # a mount stands for a proxy route: ChatPost must go through it like the client's send
    http = httpx2.Client(mounts={"http://llm.test": httpx2.MockTransport(handler)}, **client_kwargs)
    return openai.OpenAI(base_url="http://llm.test/v1", api_key="sk-test", http_client=http, max_retries=0)


def test_the_mounted_transport_gets_the_request_with_the_sdk_headers():
    seen = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json={"choices": [{"message": {"content": "{}"}}]})

    reply = ChatPost(_sdk(handler))(b'{"model": "m", "messages": []}')
    assert reply == {"choices": [{"message": {"content": "{}"}}]}
    (req,) = seen
    assert req.method == "POST" and str(req.url) == "http://llm.test/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test"
    assert req.headers["content-type"] == "application/json"
    assert json.loads(req.content) == {"model": "m", "messages": []}
    assert "timeout" in req.extensions


def test_a_status_error_is_the_sdks_own_class_with_its_request():
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(429, json={"error": {"message": "slow down"}})

    with pytest.raises(openai.RateLimitError) as info:
        ChatPost(_sdk(handler))(b"{}")
    assert info.value.request.url.path == "/v1/chat/completions"
    assert "slow down" in str(info.value)


def test_a_broken_connection_is_an_api_connection_error():
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused", request=request)

    with pytest.raises(openai.APIConnectionError):
        ChatPost(_sdk(handler))(b"{}")


def test_a_closed_client_refuses_to_send():
    sdk = _sdk(lambda request: httpx2.Response(200, json={}))
    post = ChatPost(sdk)
    sdk.close()
    with pytest.raises(RuntimeError, match="closed"):
        post(b"{}")


def test_work_left_for_the_helpers_starts_once_the_request_is_on_the_wire():
    """A job started before a request runs while that request waits for its reply, not
    before the request is written (it would take the GIL from the sending worker)."""
    import threading
    import time

    from ioa_synth.llm.ahead import RequestsAhead
    from ioa_synth.testing.scripted_server import ScriptedServer, chat_reply

    arrived: list[float] = []

    def responder(body, headers):
        arrived.append(time.monotonic())
        reply = chat_reply("{}")
        reply.delay = 1.0
        return reply

    ran: list[tuple[str, float]] = []
    ahead = RequestsAhead(lambda: ran.append((threading.current_thread().name, time.monotonic())) or "made")
    with ScriptedServer(responder) as server:
        sdk = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        post = ChatPost(sdk)
        ahead.start(("c1",))
        time.sleep(0.2)
        assert ran == []  # not before this thread sends
        post(b'{"model": "scripted", "messages": []}')
        returned = time.monotonic()
        sdk.close()
    assert len(ran) == 1 and ran[0][0].startswith("ahead")
    assert arrived[0] - 0.05 <= ran[0][1] < returned - 0.5  # while the reply was being waited for
    assert ahead.get(("c1",)) == "made"
