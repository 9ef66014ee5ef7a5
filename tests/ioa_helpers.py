"""Helpers for the regenerate / audit / annotate / status tests: scripted endpoints
(faked only at the HTTP boundary), catalog queries, one-line error checks."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Callable

import duckdb
from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer, chat_reply, request_kind

KEY = "sk-test-helpers-0123456789"


def q(out: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def kinds(server: ScriptedServer, start: int = 0) -> list[str]:
    """Request kinds the server received from request number ``start`` on."""
    return [request_kind(r["body"]) for r in server.requests[start:]]


def one_line_error(res, *needles: str) -> str:
    """Assert a non-zero exit with exactly one ``error: ...`` line on stderr containing ``needles``."""
    assert res.exit_code != 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def build(cli, seeds: Path, out: Path, *extra: str):
    """``ioa-synth build`` of split test, one worker (so scripted actions hit cases in order)."""
    res = cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1", *extra)
    assert res.exit_code == 0, res.output
    return res


def rescoring(model: str, change: Callable[[str, dict[str, Any]], None]) -> Callable:
    """A responder answering like :class:`ProtocolResponder` whose judge JSON is edited by
    ``change(kind, data)`` and whose replies name ``model``."""
    base = ProtocolResponder(model=model)

    def respond(body: dict[str, Any], headers: dict[str, str]):
        reply = base(body, headers)
        kind = request_kind(body)
        if reply.status != 200 or kind not in ("stage1_judge", "stage2_judge"):
            return reply
        data = json.loads(reply.body["choices"][0]["message"]["content"])
        change(kind, data)
        return chat_reply(json.dumps(data), model=model)

    return respond


class SlowCounting:
    """Wraps a scripted-server responder: answers after ``delay`` seconds and counts the
    200 replies sent (``answered``), for the Ctrl-C tests."""

    def __init__(self, responder, delay: float) -> None:
        self.responder, self.delay, self.answered, self._lock = responder, delay, 0, threading.Lock()

    def __call__(self, body, headers):
        time.sleep(self.delay)
        reply = self.responder(body, headers)
        with self._lock:
            self.answered += reply.status == 200
        return reply


def stored_ok(out: Path) -> int:
    """Number of successful calls stored in ``out``'s catalog."""
    return q(out, "SELECT count(*) FROM llm_calls WHERE error IS NULL")[0][0]


def settled(count: Callable[[], int], quiet: float = 1.0) -> int:
    """``count()`` once it has not changed for ``quiet`` seconds: after a SIGKILL, a request the
    killed process was still sending reaches a scripted server's thread a moment later (on a
    busy machine, after the kill returned), and belongs to the killed run."""
    value, since = count(), time.monotonic()
    while time.monotonic() - since < quiet:
        time.sleep(0.05)
        if count() != value:
            value, since = count(), time.monotonic()
    return value


def json_strings(value: Any) -> list[str]:
    """Every string inside a JSON value (dict values and list items, depth first)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in json_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in json_strings(v)]
    return []


def kill_9_mid_batch_then_resume(cmd: list[str], srv: ScriptedServer, out: Path) -> None:
    """Run ``cmd`` (a ``--batch`` command against ``srv``, whose first batch is held), kill -9
    it once it has polled the held batch, release the batch and run ``cmd`` again to its end.
    Asserts that the resume polled the held batch instead of submitting it again, that no
    wave was submitted twice and that no request line was sent twice."""
    import os
    import signal
    import subprocess

    proc = subprocess.Popen(cmd, env={**os.environ}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while srv.batches.retrieves < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert srv.batches.submissions == 1
    held = next(iter(srv.batches.batches))
    srv.batches.release()
    done = subprocess.run(cmd, env={**os.environ}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = q(out, "SELECT batch_id, wave, status FROM batches ORDER BY wave")
    assert rows[0] == (held, 1, "completed")  # polled, not submitted again
    assert srv.batches.submissions == len(rows) == len({w for _, w, _ in rows})
    sent = [json.loads(x)["custom_id"] for f, data in srv.batches.files.values() if "_output" not in f
            and "_error" not in f for x in data.splitlines()]
    assert len(sent) == len(set(sent))  # no line sent twice
