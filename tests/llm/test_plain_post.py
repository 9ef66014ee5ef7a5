"""A plain-HTTP endpoint is posted to on one keep-alive ``http.client`` connection per
thread (ChatPost with ``plain``), against real local servers: the same replies and SDK
errors as through httpx, connections reused and replaced when the server drops them, and
httpx kept where a proxy applies."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import openai
import pytest

from ioa_synth.llm.transport import ChatPost

OK = {"choices": [{"message": {"content": "{}"}}]}


class _QuietOnHangUp(ThreadingHTTPServer):
    """A handler still sleeping when its test ends writes to a client that hung up (a timed-out
    or closed call); the default prints that traceback to whatever ``sys.stderr`` a later
    test is capturing (a ``cli`` run whose stderr must be one error line)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class Server:
    """HTTP/1.1 server on 127.0.0.1 whose ``answer(handler, body)`` returns
    ``(status, headers, body_bytes, close_after)``; ``seen`` holds ``(client port, path, lower-cased
    headers, body)`` of every request."""

    def __init__(self, answer: Callable[[Any, bytes], tuple[int, dict[str, str], bytes, bool]]) -> None:
        self.seen: list[tuple[int, str, dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.seen.append((self.client_address[1], self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status, headers, data, close_after = answer(self, body)
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
                self.close_connection = close_after  # without saying so in a header

        self._httpd = _QuietOnHangUp(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> "Server":
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _ok(handler: Any, body: bytes) -> tuple[int, dict[str, str], bytes, bool]:
    return 200, {"Content-Type": "application/json"}, json.dumps(OK).encode(), False


def _post(base_url: str, timeout: float = 10.0) -> tuple[ChatPost, openai.OpenAI]:
    sdk = openai.OpenAI(base_url=base_url, api_key="sk-plain-test", max_retries=0, timeout=timeout)
    return ChatPost(sdk, plain=True), sdk


def test_calls_of_one_thread_share_one_connection_and_carry_the_sdk_headers():
    with Server(_ok) as server:
        post, sdk = _post(server.base_url)
        assert post._plain is not None
        replies = [post(json.dumps({"model": "m", "i": i}).encode()) for i in range(5)]
        post.close()
        sdk.close()
    assert replies == [OK] * 5
    ports = {port for port, *_ in server.seen}
    assert len(ports) == 1  # kept alive
    _, path, headers, body = server.seen[0]
    assert path == "/v1/chat/completions"
    assert headers["authorization"] == "Bearer sk-plain-test"
    assert headers["content-type"] == "application/json"
    assert headers["user-agent"].startswith("OpenAI/Python")
    assert json.loads(body) == {"model": "m", "i": 0}


def test_each_thread_has_its_own_connection():
    with Server(_ok) as server:
        post, sdk = _post(server.base_url)
        replies: list[Any] = []
        threads = [threading.Thread(target=lambda: replies.extend(post(b"{}") for _ in range(3))) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        post.close()
        sdk.close()
    assert replies == [OK] * 12
    assert len({port for port, *_ in server.seen}) == 4


@pytest.mark.parametrize("say_so", [True, False])
def test_a_connection_the_server_closed_is_replaced(say_so: bool):
    """The server closes after every reply, with ``Connection: close`` or silently (as a
    keep-alive timeout does): every call still gets its reply, on a new connection."""
    def answer(handler: Any, body: bytes) -> tuple[int, dict[str, str], bytes, bool]:
        return 200, {"Connection": "close"} if say_so else {}, json.dumps(OK).encode(), True

    with Server(answer) as server:
        post, sdk = _post(server.base_url)
        replies = []
        for _ in range(3):
            replies.append(post(b"{}"))
            time.sleep(0.05)  # the server's close reaches the idle socket
        post.close()
        sdk.close()
    assert replies == [OK] * 3
    assert len({port for port, *_ in server.seen}) == 3
    assert len(server.seen) == 3  # no request sent twice


def test_an_error_status_is_the_sdks_class_with_its_headers():
    def answer(handler: Any, body: bytes) -> tuple[int, dict[str, str], bytes, bool]:
        return 429, {"Retry-After": "7", "Content-Type": "application/json"}, \
            json.dumps({"error": {"message": "slow down"}}).encode(), False

    with Server(answer) as server:
        post, sdk = _post(server.base_url)
        with pytest.raises(openai.RateLimitError) as info:
            post(b"{}")
        sdk.close()
    assert info.value.response.headers["retry-after"] == "7"
    assert info.value.request.url.path == "/v1/chat/completions"
    assert "slow down" in str(info.value)


def test_a_reply_slower_than_the_timeout_is_an_api_timeout_error():
    def answer(handler: Any, body: bytes) -> tuple[int, dict[str, str], bytes, bool]:
        time.sleep(1.0)
        return _ok(handler, body)

    with Server(answer) as server:
        post, sdk = _post(server.base_url, timeout=0.2)
        with pytest.raises(openai.APITimeoutError):
            post(b"{}")
        sdk.close()


def test_no_server_is_an_api_connection_error():
    with Server(_ok) as server:
        url = server.base_url
    post, sdk = _post(url)  # the port is free again: nothing listens there
    with pytest.raises(openai.APIConnectionError):
        post(b"{}")
    sdk.close()


def test_close_wakes_a_call_waiting_for_its_reply_and_refuses_new_ones():
    def answer(handler: Any, body: bytes) -> tuple[int, dict[str, str], bytes, bool]:
        time.sleep(3.0)
        return _ok(handler, body)

    with Server(answer) as server:
        post, sdk = _post(server.base_url)
        errors: list[BaseException] = []

        def call() -> None:
            try:
                post(b"{}")
            except BaseException as exc:  # noqa: BLE001 - what the waiting call raised
                errors.append(exc)

        waiting = threading.Thread(target=call)
        waiting.start()
        time.sleep(0.3)
        started = time.monotonic()
        post.close()
        waiting.join(2.0)
        assert not waiting.is_alive() and time.monotonic() - started < 2.0
        assert isinstance(errors[0], openai.APIConnectionError)
        with pytest.raises(RuntimeError, match="closed"):
            post(b"{}")
        sdk.close()


def test_a_proxy_from_the_environment_keeps_the_httpx_route(monkeypatch: pytest.MonkeyPatch):
    """With ``HTTP_PROXY`` set, the request goes to the proxy, as the SDK's client sends it."""
    with Server(_ok) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url.removesuffix("/v1"))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        post, sdk = _post("http://llm.invalid/v1")
        assert post._plain is None
        assert post(b"{}") == OK
        sdk.close()
    assert proxy.seen[0][1] == "http://llm.invalid/v1/chat/completions"  # the absolute form a proxy gets


def test_work_left_for_the_helpers_starts_once_the_request_is_written():
    from ioa_synth.llm.on_wire import after_send

    arrived: list[float] = []
    ran: list[float] = []

    def answer(handler: Any, body: bytes) -> tuple[int, dict[str, str], bytes, bool]:
        arrived.append(time.monotonic())
        time.sleep(0.5)
        return _ok(handler, body)

    with Server(answer) as server:
        post, sdk = _post(server.base_url)
        after_send(lambda: ran.append(time.monotonic()))
        post(b"{}")
        returned = time.monotonic()
        sdk.close()
    assert len(ran) == 1 and ran[0] < returned - 0.3  # while the reply was awaited
