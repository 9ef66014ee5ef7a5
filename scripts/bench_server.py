"""The benchmarks' scripted endpoint: an instrumented ``ScriptedServer`` in a child process,
a capacity probe that measures it without the toolkit, and the environment that points
every component at it.

The server runs in a child process so that its request handling does not compete with the
toolkit for the GIL (a real endpoint is remote). Its handler records, for every request,
``t_in`` (the request line has arrived: ``parse_request`` entry) and ``t_out`` (the reply is
written: ``do_POST`` exit) on ``time.perf_counter`` = CLOCK_MONOTONIC, which both processes
share. Each benchmark script starts it with its own ``--serve`` mode, which builds the
responder and calls :func:`serve_instrumented`.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Self
from unittest import mock

REPO = Path(__file__).resolve().parent.parent


def serve_instrumented(server: Any, backlog: int | None) -> None:
    """Child process body: run ``server`` (a ``ScriptedServer``, not started) with its
    handler timed, re-``listen()`` with ``backlog`` when given, print one JSON line
    ``{base_url, request_queue_size, backlog}``, then answer one-line commands on stdin
    (``log``: print and clear the ``(t_in, t_out, path)`` records; ``stop``)."""
    httpd = getattr(server, "_httpd", None)
    if httpd is None:  # pragma: no cover - ScriptedServer internals changed
        print(json.dumps({"error": "ScriptedServer has no _httpd; update the bench's instrumentation"}), flush=True)
        return
    log: list[tuple[float, float, str]] = []
    lock = threading.Lock()
    base = httpd.RequestHandlerClass

    class Timed(base):  # type: ignore[misc, valid-type]
        def parse_request(self) -> bool:
            self._t_in = time.perf_counter()
            return super().parse_request()

        def _send(self, reply: Any) -> None:
            if reply.delay:  # the latency counts from the request's arrival, as a real endpoint's does
                reply.delay = max(0.0, reply.delay - (time.perf_counter() - self._t_in))
            super()._send(reply)

        def do_POST(self) -> None:
            super().do_POST()
            t_out = time.perf_counter()
            with lock:
                log.append((self._t_in, t_out, self.path))

    httpd.RequestHandlerClass = Timed
    queue = getattr(httpd, "request_queue_size", 5)  # the listen() backlog ScriptedServer was bound with
    if backlog:
        httpd.socket.listen(backlog)  # Linux: re-listen() on a listening socket resizes its accept queue
    with server:
        print(json.dumps({"base_url": server.base_url, "request_queue_size": queue, "backlog": backlog or queue}),
              flush=True)
        for line in sys.stdin:
            cmd = line.strip()
            if cmd == "log":
                with lock:
                    out, log[:] = list(log), []
                    server.requests.clear()
                print(json.dumps(out), flush=True)
            elif cmd == "stop":
                return


class ServerProcess:
    """The scripted server in a child process (``python <script> --serve``, ``script`` being
    the benchmark that builds the responder); ``take_log()`` returns and clears its
    ``(t_in, t_out, path)`` records."""

    def __init__(self, script: str | Path, latency: float, backlog: int | None = None) -> None:
        self._argv = [sys.executable, str(Path(script).resolve()), "--serve", "--latency", str(latency)]
        if backlog:
            self._argv += ["--server-backlog", str(backlog)]

    def __enter__(self) -> Self:
        self._proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                      cwd=str(REPO))
        info = json.loads(self._proc.stdout.readline() or '{"error": "scripted server exited at start"}')
        if "error" in info:
            self.__exit__()
            raise RuntimeError(info["error"])
        self.base_url: str = info["base_url"]
        self.request_queue_size: int = info["request_queue_size"]
        self.backlog: int = info["backlog"]
        assert self.base_url.startswith("http://127.0.0.1:"), self.base_url
        return self

    def take_log(self) -> list[tuple[float, float, str]]:
        self._proc.stdin.write("log\n")
        self._proc.stdin.flush()
        return [tuple(r) for r in json.loads(self._proc.stdout.readline())]

    def chat_log(self) -> list[tuple[float, float, str]]:
        """:meth:`take_log` of the chat requests only, sorted by ``t_in``."""
        return sorted(r for r in self.take_log() if r[2].rstrip("/").endswith("/chat/completions"))

    def __exit__(self, *exc: object) -> None:
        try:
            self._proc.stdin.write("stop\n")
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(5)
        except subprocess.TimeoutExpired:
            self._proc.terminate()
            self._proc.wait(5)


# -- server capacity ---------------------------------------------------------------------
_PROBE = json.dumps({"model": "scripted", "messages": [{"role": "user", "content": "Score the dialogue"}]}).encode()


def _post(conn: http.client.HTTPConnection) -> None:
    conn.request("POST", "/v1/chat/completions", body=_PROBE, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    resp.read()
    if resp.status != 200:
        raise RuntimeError(f"scripted server answered {resp.status}")


def server_capacity(server: ServerProcess, concurrency: int, total_calls: int, latency: float,
                    loop: bool = True) -> dict[str, float]:
    """Burst of ``concurrency`` requests on fresh connections, then a closed loop of
    ``concurrency`` keep-alive clients making ``total_calls`` calls; no toolkit involved."""
    host, port = server.base_url.split("//")[1].split("/")[0].split(":")
    barrier = threading.Barrier(concurrency)
    burst: list[float] = []

    def one_burst() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        barrier.wait()
        t = time.perf_counter()
        _post(conn)
        burst.append(time.perf_counter() - t)
        conn.close()

    _run_threads(one_burst, concurrency)
    if not loop:
        server.take_log()
        return {"burst_max_s": max(burst), "burst_median_s": statistics.median(burst)}
    per_client = max(1, total_calls // concurrency)

    def closed_loop() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        for _ in range(per_client):
            _post(conn)
        conn.close()

    t0 = time.perf_counter()
    _run_threads(closed_loop, concurrency)
    elapsed = time.perf_counter() - t0
    server.take_log()
    return {"burst_max_s": max(burst), "burst_median_s": statistics.median(burst),
            "loop_ratio": (per_client * latency) / elapsed, "loop_calls": per_client * concurrency}


def _run_threads(target: Callable[[], None], n: int) -> None:
    threads = [threading.Thread(target=target) for _ in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()


@contextlib.contextmanager
def endpoint_env(components: tuple[str, ...], base_url_of: Callable[[], str]) -> Iterator[None]:
    """Point every component at the bench server through ``OPENAI_*`` (clearing the
    components' own ``<X>_BASE_URL``/``<X>_API_KEY``) and bypass proxies for loopback;
    the caller's environment is restored on exit. ``base_url_of`` is called on entry."""
    keys = [f"{c}_{v}" for c in ("OPENAI", *components) for v in ("BASE_URL", "API_KEY")] + ["NO_PROXY", "no_proxy"]
    with mock.patch.dict(os.environ):
        for k in keys:
            os.environ.pop(k, None)
        os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = base_url_of(), "bench-not-a-key"
        os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
        yield
