"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests, benchmarks and
dry runs of a pipeline without a model.

:class:`ScriptedServer` serves ``POST /v1/chat/completions`` and ``GET /v1/models``
from a responder function (and, given a :class:`~ioa_synth.testing.scripted_batches.ScriptedBatches`,
the Batch API's Files and Batches routes, answered by the same function). The responders
(:class:`ProtocolResponder` and the replies it sends) live in
:mod:`ioa_synth.testing.scripted_replies` and are importable from here too.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from ioa_synth.testing.scripted_batches import ScriptedBatches
from ioa_synth.testing.scripted_case import GATE_ACTIONS, gate_breaking, valid_stage1, valid_stage2  # noqa: F401
from ioa_synth.testing.scripted_replies import (KINDS, ProtocolResponder, Reply, ScriptedStudy, chat_reply,  # noqa: F401
                                                follow_planned_types, judge_scores, request_kind)


class ScriptedServer:
    """OpenAI-compatible HTTP server on 127.0.0.1 (free port) in a background thread.

    ``responder(body, headers) -> Reply`` answers chat completions; every request
    (path, headers, body) is kept in ``requests``. Use as a context manager; the
    API base URL is ``base_url`` (ending in ``/v1``).

    A request with ``"stream": true`` gets its 200 reply as server-sent events, the content
    in a few chunks spread over the reply's ``delay``; a client that goes away mid-stream
    ends it (counted in ``abandoned``), as llama.cpp's server does. With
    ``parallel=n`` at most n chat requests are answered at once, the others wait inside
    the server (llama.cpp's server answers one per slot). ``busiest`` is the most chat
    requests seen inside the server at once (waiting or answered). With ``stream_usage``, a
    streamed reply that asks for it (``stream_options.include_usage``) ends with a usage
    chunk (empty ``choices``, the reply's ``usage``), as the OpenAI API sends it; without,
    no chunk carries usage, as llama-cpp-python's server (0.3.36) does. A streamed request
    asking ``"return_progress": true`` first gets two ``prompt_progress`` chunks (half and all
    of the reply's ``prompt_tokens`` read), as llama.cpp's ``llama-server`` sends them.
    """

    def __init__(self, responder: Callable[[dict[str, Any], dict[str, str]], Reply], models: list[str] | None = None,
                 parallel: int | None = None, stream_usage: bool = False, batches: "ScriptedBatches | None" = None) -> None:
        self.responder = responder
        #: the Files and Batches routes (:mod:`ioa_synth.testing.scripted_batches`), answered by ``responder``
        self.batches = batches
        if batches is not None:
            batches.respond = responder
        self.stream_usage = stream_usage
        self.models = models or ["scripted"]
        self.requests: list[dict[str, Any]] = []
        self.abandoned = 0
        self.busiest = 0
        self._inside = 0
        self._count_lock = threading.Lock()
        self._decoding = threading.BoundedSemaphore(parallel) if parallel else None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # silence
                pass

            def _send(self, reply: Reply) -> None:
                if reply.delay:
                    time.sleep(reply.delay)
                data = (reply.raw if reply.raw is not None else json.dumps(reply.body)).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self._leave()
                self.wfile.write(data)

            def _stream(self, reply: Reply, with_usage: bool = False, progress: bool = False) -> None:
                choice = reply.body["choices"][0]
                text = choice["message"].get("content") or ""
                pieces = [text[i:i + max(1, len(text) // 8)] for i in range(0, len(text), max(1, len(text) // 8))]
                events = []
                if progress:  # llama-server's prompt_progress chunks, when the request asks return_progress
                    total = int((reply.body.get("usage") or {}).get("prompt_tokens") or 100)
                    events += [{"choices": [], "prompt_progress": {"total": total, "cache": 0, "processed": n,
                                                                   "time_ms": n}} for n in (total // 2, total)]
                events += [{"choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}]
                events += [{"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
                events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
                if with_usage and reply.body.get("usage"):
                    events.append({"choices": [], "usage": reply.body["usage"]})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    for event in events:
                        time.sleep(reply.delay / len(events))
                        self.wfile.write(f"data: {json.dumps({'model': outer.models[0], **event})}\n\n".encode())
                    self._leave()
                    self.wfile.write(b"data: [DONE]\n\n")
                except OSError:  # the client closed the connection: stop "decoding"
                    with outer._count_lock:
                        outer.abandoned += 1

            def _chat(self, body: dict[str, Any], headers: dict[str, str]) -> None:
                reply = outer.responder(body, headers)
                if body.get("stream") and reply.status == 200 and reply.raw is None:
                    asked = bool((body.get("stream_options") or {}).get("include_usage"))
                    self._stream(reply, with_usage=outer.stream_usage and asked,
                                 progress=bool(body.get("return_progress")))
                else:
                    self._send(reply)

            def _batch_route(self, method: str, body: bytes) -> bool:
                if outer.batches is None:
                    return False
                headers = {k.lower(): v for k, v in self.headers.items()}
                answer = outer.batches.handle(method, self.path, headers, body)
                if answer is None:
                    return False
                status, payload = answer
                if isinstance(payload, bytes):
                    self._send(Reply(status=status, raw=payload.decode()))
                else:
                    self._send(Reply(status=status, body=payload))
                return True

            def do_GET(self) -> None:  # noqa: N802
                if self._batch_route("GET", b""):
                    return
                if self.path.rstrip("/").endswith("/models"):
                    self._send(Reply(body={"object": "list", "data": [
                        {"id": m, "object": "model", "owned_by": "scripted"} for m in outer.models]}))
                else:
                    self._send(Reply(status=404, body={"error": {"message": "not found"}}))

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self._batch_route("POST", raw):
                    return
                body = json.loads(raw or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.requests.append({"path": self.path, "headers": headers, "body": body})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(Reply(status=404, body={"error": {"message": "not found"}}))
                    return
                with outer._count_lock:
                    outer._inside += 1
                    outer.busiest = max(outer.busiest, outer._inside)
                self._inside = True
                try:
                    if outer._decoding is None:
                        self._chat(body, headers)
                    else:
                        with outer._decoding:
                            self._chat(body, headers)
                finally:
                    self._leave()

            def _leave(self) -> None:
                """The request is no longer inside: called before the reply's last bytes are
                written, since a client that has them may send its next request at once."""
                if getattr(self, "_inside", False):
                    self._inside = False
                    with outer._count_lock:
                        outer._inside -= 1

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # bursts of new connections from many workers

            def handle_error(self, request: Any, client_address: Any) -> None:
                # a client that went away (a killed build, a reset keep-alive connection) is no
                # server error; printed, it landed in whatever stderr a later test was capturing
                if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
                    super().handle_error(request, client_address)

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
