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
