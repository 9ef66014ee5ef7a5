"""Waves of a batch-mode run: drive every unit until it is done or parked, send the parked
calls' requests as one batch per endpoint (split at the provider's limits), wait for the
batches, and drive again (:mod:`ioa_synth.runs.batch` answers the calls).

A wave holds every request that is ready: for a build, all stage-1 generations, then their
judges (with the regenerations of outputs the gates stopped), and so on; for evaluate the
prober, then the simulator of both participants, then the filter.

Submitting is ordered so that no kill loses track of a batch and none is sent twice: the
input file is uploaded, then the ``batches`` row (``uploaded``, with the file id) and its
lines are journaled, then the batch is created and its id journaled. A run that finds an
``uploaded`` row looks for a batch made from that file (``batches.list``) before creating
one; a run that finds a batch in flight polls it. With ``--batch-dir`` the input file is
written first and the run stops (:class:`BatchWaiting`, exit 75) until
``DIR/<wave>.output.jsonl`` exists.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable

import openai

from ioa_synth.core.errors import StopRun
from ioa_synth.llm.batch_api import BatchLine, BatchState, FileBatches, LineResult, ProviderBatches, split_lines
from ioa_synth.llm.client import LLMClient
from ioa_synth.llm.errors import SetupError
from ioa_synth.runs.batch import BatchCalls, Pending, insert_new
from ioa_synth.runs.catalog import Catalog, dumps
from ioa_synth.runs.interrupt import RunInterrupted
from ioa_synth.runs.journal import Entry
from ioa_synth.runs.left_running import FILE_PREFIX, in_flight, unused_answers, waiting_line
from ioa_synth.runs.recorder import now_utc
from ioa_synth.text.plural import plural

#: Seconds between two polls of the batches in flight (``IOA_SYNTH_BATCH_POLL_SECONDS``).
POLL_SECONDS = 30.0


class BatchWaiting(StopRun):
    """A ``--batch-dir`` wave waits for its output file: the message says which input to
    run and where its output goes (the command exits 75)."""


def poll_seconds() -> float:
    """Seconds between polls: ``IOA_SYNTH_BATCH_POLL_SECONDS`` or :data:`POLL_SECONDS`."""
    try:
        return max(0.05, float(os.environ.get("IOA_SYNTH_BATCH_POLL_SECONDS", POLL_SECONDS)))
    except ValueError:
        return POLL_SECONDS


class BatchWaves:
    """The waves of one run.

    Args:
        catalog: the run's catalog (``batches`` and the line tables).
        calls: the run's :class:`~ioa_synth.runs.batch.BatchCalls` (every client's ``batch``).
        clients: the run's clients by component (their endpoints' URLs and keys).
        batch_dir: ``--batch-dir`` (file transport), or ``None`` for the provider's Batch API.
        stop: set on Ctrl-C: waiting ends with :class:`RunInterrupted`.
        note: where the batches in flight are described (the progress line).
    """

    def __init__(self, catalog: Catalog, calls: BatchCalls, clients: dict[str, LLMClient], batch_dir: Path | None,
                 stop: threading.Event, note: Callable[[str], None] = lambda text: None) -> None:
        self.catalog, self.calls, self.clients = catalog, calls, clients
        self.batch_dir = Path(batch_dir) if batch_dir is not None else None
        self.stop, self.note = stop, note
        self.poll = poll_seconds()
        self._providers: dict[str, ProviderBatches] = {}
        self._states: dict[str, BatchState] = {}  # the last poll's state of each batch in flight
        self.submitted = 0  # batches this run submitted (or wrote)

    # -- the loop ------------------------------------------------------------------
    def run(self, drive: Callable[[], int]) -> None:
        """Settle the batches in flight, then ``drive()`` (which returns how many units it
        parked) and send the wave it left, until a drive parks nothing.

        Raises:
            BatchWaiting: a ``--batch-dir`` wave has no output yet.
            RunInterrupted: Ctrl-C (no further batch is sent; those in flight stay, the next
                run polls them, and the message says which: :meth:`in_flight`).
            SetupError: a batch failed validation, or a line failed as a setup error does.
        """
        try:
            self.settle()
            while True:
                self.calls.clear_pending()
                parked = drive()
                if not parked:
                    return
                if not self.calls.pending:
                    raise AssertionError(f"{plural(parked, 'unit')} parked with no request to send")
                self.submit()
                self.settle()
        except RunInterrupted as exc:
            try:
                exc.waiting = exc.waiting or self.in_flight()
            except Exception:  # noqa: BLE001 - a catalog that cannot be read now: the interruption is still said
                pass
            raise
        finally:
            for provider in self._providers.values():
                provider.close()

    # -- sending -------------------------------------------------------------------
    def submit(self) -> None:
        """Send the pending lines: one batch per endpoint and model (split at the
        provider's limits), or one ``--batch-dir`` input file per model."""
        pending = sorted(self.calls.pending, key=lambda p: p.line.custom_id)  # taken once sent (below)
        groups: dict[tuple[str, str], list[Pending]] = {}
        for p in pending:
            groups.setdefault((p.base_url, p.model), []).append(p)
        wave = self.calls.wave + 1
        for (base_url, model), items in groups.items():
            components = "+".join(sorted({p.component for p in items}))
            name = f"wave-{wave}" if len(groups) == 1 else f"wave-{wave}-{components}"
            if self.batch_dir is not None:  # every file of the wave is written: writing costs nothing
                self._write(name, wave, components, model, items)
            else:
                for i, part in enumerate(split_lines([BatchLine(p.line.custom_id, p.payload) for p in items])):
                    self._interrupted()  # a request not sent yet stays pending: the next run's drive parks it again
                    ids = {line.custom_id for line in part}
                    self._send(f"{name}-{i + 1}" if i else name, wave, components, base_url, items[0].api_key,
                               [p for p in items if p.line.custom_id in ids], part)
        self.calls.wave = wave
        self.note(f"wave {wave}: {plural(len(pending), 'request')} sent in {plural(len(groups), 'batch', 'batches')}"
                  if self.batch_dir is None else  # nothing is sent: the user runs the files
                  f"wave {wave}: {plural(len(pending), 'request')} written to {plural(len(groups), 'file')} in "
                  f"{self.batch_dir}")
        self.calls.clear_pending()

    def _row(self, batch_id: str, endpoint: str, components: str, wave: int, status: str, input_file_id: str,
             n: int) -> list[Entry]:
        return insert_new("batches", ("endpoint", "input_file_id"), [{
            "batch_id": batch_id, "endpoint": endpoint, "component": components, "wave": wave, "status": status,
            "input_file_id": input_file_id, "output_file_id": None, "error_file_id": None, "n_requests": n,
            "submitted_at": now_utc(), "finished_at": None}])

    def _write(self, name: str, wave: int, components: str, model: str, items: list[Pending]) -> None:
        assert self.batch_dir is not None
        files = FileBatches(self.batch_dir)
        try:
            path = files.write(name, [BatchLine(p.line.custom_id, p.payload) for p in items])
        except FileExistsError as exc:
            raise SetupError(str(exc), components, "") from None
        except OSError as exc:
            raise SetupError(f"cannot write {files.input_path(name)}: {exc.strerror or exc}", components,
                             "check --batch-dir") from None
        endpoint = FILE_PREFIX + str(self.batch_dir)
        self.catalog.record(self._row(name, endpoint, components, wave, "in_progress", path.name, len(items))
                            + self.calls.sent(items, endpoint, name))
        self.submitted += 1

    def _send(self, name: str, wave: int, components: str, base_url: str, api_key: str, items: list[Pending],
              lines: list[BatchLine]) -> None:
        provider = self._provider(base_url, api_key)
        try:
            file_id = provider.upload(f"{name}.jsonl", b"".join(line.jsonl() for line in lines))
        except openai.APIError as exc:
            raise self._setup(exc, components, base_url) from exc
        provisional = f"uploaded:{file_id}"
        self.catalog.record(self._row(provisional, base_url, components, wave, "uploaded", file_id, len(items))
                            + self.calls.sent(items, base_url, provisional))
        self._create(provisional, file_id, base_url, components, name)

    def _create(self, provisional: str, file_id: str, base_url: str, components: str, name: str) -> None:
        provider = self._provider(base_url, None)
        try:
            state = provider.find(file_id) or provider.create(file_id, {"ioa_synth_wave": name})
        except openai.APIError as exc:
            raise self._setup(exc, components, base_url) from exc
        self.catalog.record([
            (None, ("UPDATE batches SET batch_id = ?, status = ? WHERE batch_id = ? AND endpoint = ?",
                    [state.batch_id, state.status, provisional, base_url])),
            (None, ("UPDATE batch_lines SET batch_id = ? WHERE batch_id = ? AND endpoint = ?",
                    [state.batch_id, provisional, base_url]))])
        for line in self.calls.lines_of_batch(base_url, provisional):
            line.batch_id = state.batch_id
        self.submitted += 1

    def _provider(self, base_url: str, api_key: str | None) -> ProviderBatches:
        if base_url not in self._providers:
            client = next((c for c in self.clients.values() if c.endpoint.base_url == base_url), None)
            if client is None and api_key is None:
                raise SetupError(f"a batch in flight was sent to {base_url}, which no component of this run uses",
                                 "batch", "set the <COMPONENT>_BASE_URL it had when the batch was submitted")
            ep = client.endpoint if client is not None else None
            self._providers[base_url] = ProviderBatches(base_url, api_key or (ep.api_key if ep else "no-key"),
                                                        max_retries=ep.max_retries if ep else 5,
                                                        timeout=min(ep.timeout, 600.0) if ep else 600.0)
        return self._providers[base_url]

    @staticmethod
    def _setup(exc: openai.APIError, components: str, base_url: str) -> StopRun:
        from ioa_synth.llm.errors import classify

        setup = classify(exc, components, base_url)
        return setup or SetupError(f"{components}: the Batch API at {base_url} failed: {exc}", components,
                                   "run the same command again to retry")

    # -- waiting -------------------------------------------------------------------
    def _open(self) -> list[dict[str, Any]]:
        return self.catalog.query_dicts(
            "SELECT * FROM batches WHERE status NOT IN ('completed', 'failed', 'expired', 'cancelled') "
            "ORDER BY wave, batch_id")

    def settle(self) -> None:
        """Poll the batches in flight until every one has finished and its answers are
        stored (``--batch-dir``: read the output files there are, else stop)."""
        first = True
        while True:
            rows = self._open()
            if not rows:
                return
            waiting_files: list[dict[str, Any]] = []
            states: list[str] = []
            for row in rows:
                if row["endpoint"].startswith(FILE_PREFIX):
                    if not self._read_file(row):
                        waiting_files.append(row)
                    continue
                if row["status"] == "uploaded":  # killed before the batch's id was stored
                    self._create(row["batch_id"], row["input_file_id"], row["endpoint"], row["component"],
                                 f"wave-{row['wave']}")
                    continue
                state = self._retrieve(row)
                if state.done:
                    self._ingest_provider(row, state)
                else:
                    self._states[state.batch_id] = state
                    states.append(f"{state.batch_id} ({row['component']}) {state.status} "
                                  f"{state.completed + state.failed}/{state.total or row['n_requests']}")
            self._interrupted()  # Ctrl-C while answers were read: stop before the next drive
            if waiting_files:
                raise BatchWaiting(waiting_line(waiting_files, self.clients))
            if states:
                self.note(f"wave {rows[0]['wave']}: {plural(len(states), 'batch', 'batches')} in flight: "
                          + "; ".join(states) + ("" if first else f" (polled every {self.poll:.0f} s)"))
                first = False
                if self.stop.wait(self.poll):
                    self._interrupted()

    def _interrupted(self) -> None:
        """Raise :class:`RunInterrupted` once Ctrl-C was pressed (its count of finished
        units is set by :func:`~ioa_synth.runs.batch_mode.map_in_waves`)."""
        if self.stop.is_set():
            raise RunInterrupted(0, 0, "case")

    def in_flight(self) -> str | None:
        """What a stopped run leaves outside the process, as one clause of its last line
        (``None`` when nothing; :func:`ioa_synth.runs.left_running.in_flight`)."""
        return in_flight(self._open(), self._states, unused_answers(self.catalog))

    def _retrieve(self, row: dict[str, Any]) -> BatchState:
        provider = self._provider(row["endpoint"], None)
        try:
            return provider.retrieve(row["batch_id"])
        except openai.APIError as exc:
            raise self._setup(exc, row["component"], row["endpoint"]) from exc

    def _ingest_provider(self, row: dict[str, Any], state: BatchState) -> None:
        provider = self._provider(row["endpoint"], None)
        try:
            results, _ = provider.results(state)
        except openai.APIError as exc:
            raise self._setup(exc, row["component"], row["endpoint"]) from exc
        why = f"batch {state.status}" + (f": {'; '.join(state.errors[:3])}" if state.errors else "")
        self._ingest(row, results, state.status, state.output_file_id, state.error_file_id, why)
        if state.status == "failed":
            raise SetupError(f"{row['component']}: batch {state.batch_id} failed at {row['endpoint']}: "
                             + ("; ".join(state.errors[:3]) or "no reason given"), row["component"],
                             "fix what the provider names, then run the same command again (its requests are "
                             "sent again)")

    def _read_file(self, row: dict[str, Any]) -> bool:
        files = FileBatches(Path(row["endpoint"][len(FILE_PREFIX):]))
        found = files.results(row["batch_id"])
        if found is None:
            return False
        results, bad = found
        missing = sum(1 for ln in self.calls.lines_of_batch(row["endpoint"], row["batch_id"])
                      if ln.custom_id not in results)
        if missing or bad:
            self.note(f"{files.output_path(row['batch_id'])}: {plural(missing, 'request')} without an answer"
                      + (f", {plural(bad, 'unreadable line')}" if bad else "") + "; asked again in the next wave")
        self._ingest(row, results, "completed", files.output_path(row["batch_id"]).name, None,
                     "no answer in the output file")
        return True

    def _ingest(self, row: dict[str, Any], results: dict[str, LineResult], status: str, output_id: str | None,
                error_id: str | None, why: str) -> None:
        """Store the answers of a finished batch (a line without one: failed, ``why``)."""
        now = now_utc()
        full: dict[str, LineResult] = {}
        rows = []
        for line in self.calls.lines_of_batch(row["endpoint"], row["batch_id"]):
            res = results.get(line.custom_id) or LineResult(line.custom_id, error=f"batch line failed: no reply ({why})")
            full[line.custom_id] = res
            rows.append({"custom_id": line.custom_id, "batch_id": row["batch_id"], "status_code": res.status,
                         "response_json": dumps(res.data) if res.data is not None else None, "error": res.error,
                         "error_json": dumps(res.body) if res.data is None and res.body is not None else None,
                         "received_at": now})
        entries = insert_new("batch_results", "custom_id", rows)
        entries.append((None, ("UPDATE batches SET status = ?, output_file_id = ?, error_file_id = ?, finished_at = ? "
                               "WHERE batch_id = ? AND endpoint = ?",
                               [status, output_id, error_id, now, row["batch_id"], row["endpoint"]])))
        self.catalog.record(entries)
        self.calls.take(row["endpoint"], row["batch_id"], full)
