"""Batch mode of a run (``build --batch``, ``evaluate --batch``): calls answered by batch
lines instead of HTTP requests, through the very code path of a live call.

A run in batch mode drives its units (cases) as usual, with every client's requests going
to a :class:`BatchCalls` instead of the endpoint (:attr:`ioa_synth.llm.client.LLMClient.batch`)
and its calls through a :class:`~ioa_synth.runs.batch_recorder.BatchRecorder`:

- a call whose answer is stored in ``batch_results`` gets it back as if the endpoint had
  replied: the client reads, parses and retries it exactly as a live reply, and the
  recorder stores it in ``llm_calls`` with ``via = 'batch'`` (once: a later pass over the
  case feeds the same answer again, marked ``already_stored``, so that the case's calls,
  and any record of them, come out as in a live run);
- a call without one becomes a pending line of the next wave and the unit is parked
  (:class:`~ioa_synth.llm.batch_api.CallParked`); so is a call whose line is in a batch
  still in flight.

:mod:`ioa_synth.runs.waves` turns the pending lines into batches and waits for them.
Which lines a call sent, and the answers, are in the catalog (``batch_lines``,
``batch_results``, ``batch_marks``; :mod:`ioa_synth.runs.schema`), so a re-run after Ctrl-C
or ``kill -9`` finds them again and polls, never submitting a line twice.

A line that failed in its batch (an error-file line, an expired or cancelled batch) is
a failed send: stored like a failed HTTP try, sent again in the next wave while the
endpoint's ``max_retries`` allow; a failure that live would not retry (HTTP 400...) is
classified as live classifies it (setup error: the run stops; content filter: the case
fails).
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import hashlib
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import httpx2
import openai

from ioa_synth.llm.batch_api import CallParked, LineResult
from ioa_synth.llm.errors import CallCancelled
from ioa_synth.llm.on_wire import requests_sent
from ioa_synth.llm.request import CallRecord
from ioa_synth.llm.retries import RETRY_STATUSES
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.journal import Entry
from ioa_synth.runs.recorder import CallKey, now_utc

#: The call the current thread is making (set by :class:`BatchRecorder`).
_CURRENT: contextvars.ContextVar[CallKey | None] = contextvars.ContextVar("batch_call", default=None)


@dataclass
class Line:
    """One line sent in a batch: the try ``try_index`` of call ``key``, its ``send``-th
    sending, and its answer once back (``result``); ``stored``: the answer is in ``llm_calls``."""

    custom_id: str
    endpoint: str
    batch_id: str
    wave: int
    key: CallKey
    try_index: int
    send: int
    failed_before: int
    result: LineResult | None = None
    stored: bool = False


@dataclass
class Pending:
    """A request of the next wave: its line (``batch_id`` not yet known), body and endpoint."""

    line: Line
    payload: bytes
    component: str
    base_url: str
    model: str
    api_key: str = field(repr=False)


def custom_id(key: CallKey, try_index: int, send: int, failed_before: int, wave: int) -> str:
    """A line's ``custom_id``: ``<role>-<stage>-<attempt>-<try>-`` and 16 hex digits of the
    SHA-256 of the whole key, so that it is unique in the catalog and still readable."""
    case_id, stage, role, attempt = key
    digest = hashlib.sha256(json.dumps([case_id, stage, role, attempt, try_index, send, failed_before, wave])
                            .encode()).hexdigest()[:16]
    return f"{role.replace(':', '.')}-{stage}-{attempt}-{try_index}-{digest}"


def line_error(result: LineResult, base_url: str) -> openai.APIError:
    """The ``openai`` exception a live request would have raised for a failed line (so
    that :func:`~ioa_synth.llm.errors.classify` and the content-filter check treat it as
    they treat a live reply): a status error, or a timeout for a line without reply."""
    request = httpx2.Request("POST", base_url.rstrip("/") + "/chat/completions")
    if result.status is None:
        return openai.APITimeoutError(request)
    body = result.body if isinstance(result.body, dict) else {"error": {"message": str(result.error)}}
    return openai.APIStatusError(str(result.error), response=httpx2.Response(result.status, request=request, json=body),
                                 body=body)


def retryable(result: LineResult) -> bool:
    """A failed line to send again: no reply (expired, cancelled, a failed batch), HTTP
    408/409/429 or a 5xx other than 501, as a live request is retried."""
    s = result.status
    return s is None or s in RETRY_STATUSES or (s >= 500 and s != 501)


class BatchCalls:
    """The batch lines of one run: what answers its calls, and what waits for the next wave.

    Args:
        catalog: the run's catalog (``batch_lines``, ``batch_results``, ``batch_marks``).

    Thread-safe: workers ask :meth:`answer` while the wave driver collects :attr:`pending`.
    """

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._lock = threading.Lock()
        self._lines: dict[CallKey, dict[int, list[Line]]] = {}  # key -> try index -> its sends
        self._by_key: dict[CallKey, int] = {}  # keys with lines, pending or being made: their failed_before
        self.pending: list[Pending] = []
        self._pending_keys: set[CallKey] = set()
        self.wave = 0
        self.load()

    # -- the catalog ---------------------------------------------------------------
    def load(self) -> None:
        """Read the open lines (of calls not given up since) with their answers and marks."""
        rows = self.catalog.query_dicts(
            "SELECT l.*, r.status_code, r.response_json, r.error, r.error_json, "
            "EXISTS (SELECT 1 FROM batch_marks m WHERE m.custom_id = l.custom_id AND m.mark = 'stored') AS stored "
            "FROM batch_lines l LEFT JOIN (SELECT * FROM batch_results QUALIFY row_number() OVER "
            "(PARTITION BY custom_id ORDER BY received_at DESC) = 1) r USING (custom_id) "
            "WHERE NOT EXISTS (SELECT 1 FROM batch_marks m WHERE m.mark = 'closed' AND m.case_id = l.case_id "
            "AND m.stage = l.stage AND m.role = l.role AND m.attempt = l.attempt AND m.created_at >= l.created_at) "
            "ORDER BY l.created_at, l.send")
        lines: dict[CallKey, dict[int, list[Line]]] = {}
        by_key: dict[CallKey, int] = {}
        for r in rows:
            key = (r["case_id"], r["stage"], r["role"], r["attempt"])
            line = Line(r["custom_id"], r["endpoint"], r["batch_id"], r["wave"], key, r["try_index"], r["send"],
                        r["failed_before"],
                        stored=bool(r["stored"]))
            if r["status_code"] is not None or r["error"] is not None:
                line.result = _result(r)
            lines.setdefault(key, {}).setdefault(line.try_index, []).append(line)
            by_key[key] = line.failed_before
        waves = self.catalog.execute("SELECT coalesce(max(wave), 0) FROM batches")
        with self._lock:
            self._lines, self._by_key = lines, by_key
            self.wave = int(waves[0][0]) if waves else 0

    def lines_of_batch(self, endpoint: str, batch_id: str) -> list[Line]:
        """The open lines sent in batch ``batch_id`` of ``endpoint`` (ids are the provider's:
        two providers may use the same)."""
        with self._lock:
            return [ln for tries in self._lines.values() for group in tries.values() for ln in group
                    if ln.batch_id == batch_id and ln.endpoint == endpoint]

    def take(self, endpoint: str, batch_id: str, results: dict[str, LineResult]) -> None:
        """Give the lines of that batch their answers (already journaled by the caller)."""
        for ln in self.lines_of_batch(endpoint, batch_id):
            if ln.custom_id in results:
                ln.result = results[ln.custom_id]

    def sent(self, pending: list[Pending], endpoint: str, batch_id: str) -> list[Entry]:
        """Register ``pending`` as sent in batch ``batch_id`` of ``endpoint``; the
        ``batch_lines`` rows to journal."""
        rows: list[dict[str, Any]] = []
        now = now_utc()
        with self._lock:
            for p in pending:
                p.line.endpoint, p.line.batch_id = endpoint, batch_id
                self._lines.setdefault(p.line.key, {}).setdefault(p.line.try_index, []).append(p.line)
                self._by_key.setdefault(p.line.key, p.line.failed_before)
                case_id, stage, role, attempt = p.line.key
                rows.append({
                    "custom_id": p.line.custom_id, "endpoint": endpoint, "batch_id": batch_id, "wave": p.line.wave, "case_id": case_id,
                    "stage": stage, "role": role, "attempt": attempt, "try_index": p.line.try_index,
                    "send": p.line.send, "failed_before": p.line.failed_before, "created_at": now})
        return insert_new("batch_lines", "custom_id", rows)

    def clear_pending(self) -> list[Pending]:
        """Take the pending lines (a wave is about to be driven, or sent)."""
        with self._lock:
            taken, self.pending = self.pending, []
            self._pending_keys = set()
        return taken

    # -- answering calls -------------------------------------------------------------
    def has_lines(self, key: CallKey) -> bool:
        with self._lock:
            return key in self._by_key

    def failed_before(self, key: CallKey, default: int) -> int:
        """The failed tries a call's seed starts past: fixed at its first line (the failed
        sends stored since do not move it), else ``default``."""
        with self._lock:
            return self._by_key.get(key, default)

    def answer(self, client: Any, payload: bytes, rec: CallRecord, on_call: Callable[[CallRecord], None]) -> Any:
        """The reply of try ``rec.try_index`` of the current call (see the module docstring).

        Raises:
            CallParked: no answer yet (a line is added to :attr:`pending`, unless one is in flight).
            openai.APIError: the line's failure, as the endpoint would have raised it, once
                it may not be sent again.
            CallCancelled / SetupError: the run is stopping, or the endpoint's setup failed.
        """
        key = _CURRENT.get()
        assert key is not None, "a batch call outside BatchRecorder.call"
        ep = client.endpoint
        if client.setup_error is not None:
            raise client.setup_error
        if client.stop.is_set():
            raise CallCancelled(f"{ep.component}: the run is stopping; request not sent")
        with self._lock:
            sends = list(self._lines.get(key, {}).get(rec.try_index, []))
            failed_before = self._by_key.get(key)
        requests_sent()  # what waits for this thread's request to be on the wire may start
        for n, line in enumerate(sends):
            if line.result is None:
                raise CallParked(line.custom_id)  # in a batch still in flight
            rec.via, rec.batch_line, rec.already_stored = "batch", line.custom_id, line.stored
            rec.latency_ms, rec.error = None, None
            line.stored = True  # the recorder stores what it is handed now
            if line.result.data is not None:
                return line.result.data
            rec.error = line.result.error
            if not retryable(line.result) or n >= ep.max_retries:  # failed for good: a later run asks afresh
                self.catalog.record(self.close(key))
                raise line_error(line.result, ep.base_url)
            on_call(copy.copy(rec))  # a failed send, sent again below
        rec.via, rec.batch_line, rec.already_stored, rec.error = "batch", None, False, None
        if failed_before is None:
            raise AssertionError("the recorder registers the call's failed tries first")
        with self._lock:
            wave = self.wave + 1
            line = Line(custom_id(key, rec.try_index, len(sends), failed_before, wave), "", "", wave, key,
                        rec.try_index, len(sends), failed_before)
            self.pending.append(Pending(line, payload, ep.component, ep.base_url, ep.model, ep.api_key))
            self._pending_keys.add(key)
        raise CallParked(line.custom_id)

    @contextlib.contextmanager
    def making(self, key: CallKey, failed_before: int) -> Iterator[None]:
        """The current thread makes call ``key`` (whose seed starts past ``failed_before``)."""
        with self._lock:
            self._by_key.setdefault(key, failed_before)
        token = _CURRENT.set(key)
        try:
            yield
        finally:
            _CURRENT.reset(token)
            with self._lock:  # a key that never sent a line keeps no seed base
                if key not in self._lines and key not in self._pending_keys:
                    self._by_key.pop(key, None)

    def close(self, key: CallKey) -> list[Entry]:
        """The call ``key`` gave up (its tries are used): forget its lines, so that a later
        run asks it afresh; the ``batch_marks`` row to journal."""
        with self._lock:
            self._lines.pop(key, None)
            self._by_key.pop(key, None)
        case_id, stage, role, attempt = key
        return [("batch_marks", {"custom_id": None, "case_id": case_id, "stage": stage, "role": role,
                                 "attempt": attempt, "mark": "closed", "created_at": now_utc()})]


def _column_types(table: str) -> dict[str, str]:
    from ioa_synth.runs.schema import BATCH_COLUMNS

    return {c.split()[0]: c.split()[1] for c in (x.strip() for x in BATCH_COLUMNS[table].split(",")) if c}


def insert_new(table: str, key: str | tuple[str, ...], rows: list[dict[str, Any]]) -> list[Entry]:
    """One statement inserting those ``rows`` whose ``key`` (a column, or columns) is not in
    ``table`` yet: the catalog re-applies a killed run's journal whole, and a batch row,
    line or answer must not be stored twice."""
    if not rows:
        return []
    types = _column_types(table)
    cols = list(rows[0])
    lists = ", ".join(f"unnest(?::{types[c]}[]) AS {c}" for c in cols)
    same = " AND ".join(f"t.{k} = n.{k}" for k in ((key,) if isinstance(key, str) else key))
    sql = (f"INSERT INTO {table} ({', '.join(cols)}) SELECT * FROM (SELECT {lists}) n "
           f"WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE {same})")
    return [(None, (sql, [[r[c] for r in rows] for c in cols]))]


def _result(row: dict[str, Any]) -> LineResult:
    data = json.loads(row["response_json"]) if row["response_json"] else None
    body = json.loads(row["error_json"]) if row["error_json"] else None
    return LineResult(row["custom_id"], data=data, status=row["status_code"], error=row["error"], body=body)
