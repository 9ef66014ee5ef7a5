"""Write-behind journal of the catalog: rows are appended to a JSONL file (durable against
a process kill once ``append`` returns) and committed to DuckDB in batches by one writer
thread. Opening the catalog after a kill re-applies what the journal holds.

Files written beside the catalog without their own ``fsync`` (a case's record: see
:func:`ioa_synth.core.atomic.write_bytes_atomic`) can be handed to :meth:`Journal.append`
as ``sync``: the writer fsyncs them before it commits the batch, so a status row never
reaches the database before the file it points at is on disk, and the fsync (tens of
milliseconds on a slow disk) is off the worker's path."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from pydantic_core import to_json

from ioa_synth.core.atomic import disk_full
from ioa_synth.llm.on_wire import after_send

JOURNAL_FILE = "catalog.journal"

#: ``(table, row)`` for an insert, ``(None, (sql, params))`` for a statement.
Entry = tuple[str | None, Any]

#: How long the writer lets entries gather before it commits them in one transaction. A
#: DuckDB commit costs milliseconds of CPU whatever its size, so one per call was the
#: largest part of the toolkit's work per call; the rows are safe in the journal meanwhile,
#: and every read commits what is queued first. At one worker (about 5 calls/s against a
#: 200 ms endpoint) a 2 s window still spent 1.2 ms of CPU per call on commits; 10 s, 0.55 ms.
#: A longer window costs nothing but a longer journal to re-apply after a kill.
BATCH_WINDOW_S = 10.0

#: Longest wait of entries left with :meth:`Journal.append_later` by a thread that sends no
#: further request (the writer is otherwise woken when that request is on the wire), and of
#: entries journaled with :meth:`Journal.append_now` before the writer's window starts.
LATER_WAKE_S = 1.0


class Journal:
    """Append-only journal plus the queue of entries not yet committed.

    Args:
        path: the journal file.
        commit: ``commit(entries)`` applies a batch in one transaction (called with the
            catalog's lock held, in append order).
        lock: the catalog's lock; every drain holds it, so batches commit in order.
    """

    def __init__(self, path: Path, commit: Callable[[list[Entry]], None], lock: threading.RLock) -> None:
        self.path = path
        self._commit = commit
        self._lock = lock
        self._cond = threading.Condition()  # guards the lists below
        self._order = threading.Lock()  # held while journaling: lines reach the file in append order
        self._writing = threading.Lock()  # held for one write to the file (append_now needs no _order)
        self._queue: list[Entry] = []
        self._sync: list[Path] = []
        self._later: list[tuple[Callable[[], list[Entry]], Any]] = []
        self._error: BaseException | None = None
        self._closing = False
        self._file = None
        self._writer: threading.Thread | None = None

    def recover(self, apply: Callable[[list[Entry]], None]) -> int:
        """Re-apply entries left by a killed process with ``apply``, then empty the
        journal; returns how many entries were found. A torn last line is ignored."""
        entries: list[Entry] = []
        if self.path.exists():
            for line in self.path.read_bytes().splitlines():
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                entries.append((obj["t"], obj["r"]) if obj.get("t") else (None, (obj["sql"], obj["p"])))
        if entries:
            apply(entries)
        self.path.unlink(missing_ok=True)
        return len(entries)

    def append(self, entries: list[Entry], sync: tuple[Path, ...] | list[Path] = ()) -> None:
        """Journal ``entries`` (one write, flushed to the OS) and queue them for commit;
        the files ``sync`` are fsynced before that commit.

        Raises:
            RuntimeError: an earlier batch failed to commit (the message says why).
        """
        blob = b"".join(_line(e) for e in entries)
        with self._order:
            with self._cond:
                self._raise_if_failed()
                self._start()
            self._journal_later()  # entries appended earlier go first
            self._write(blob)
            with self._cond:
                if not self._queue and not self._sync:
                    self._cond.notify()  # the writer waits for a first entry, then for the window
                self._queue.extend(entries)
                self._sync.extend(sync)

    def append_now(self, entries: list[Entry]) -> None:
        """Journal ``entries`` at once (one write, flushed to the OS) and queue them for
        commit, ahead of what :meth:`append_later` left that is not journaled yet: the caller
        waits for no other thread's entries to be made (a case's record file written, its
        status encoded). For entries that nothing left earlier must precede, such as a call's
        own rows (whatever its unit stores about the call is left after it).

        Raises:
            RuntimeError: an earlier batch failed to commit (the message says why).
        """
        blob = b"".join(_line(e) for e in entries)
        with self._cond:
            self._raise_if_failed()
            self._start()
        self._write(blob)
        with self._cond:  # the writer is not woken: it looks again within LATER_WAKE_S, the rows are safe
            self._queue.extend(entries)

    def append_later(self, make: Callable[[], list[Entry]], sync: tuple[Path, ...] | list[Path] = ()) -> None:
        """Journal the entries ``make()`` returns on the writer thread, in append order
        (``sync`` as in :meth:`append`, for files ``make`` writes),
        within moments rather than before returning: the caller goes on to its next request
        and the rows are encoded and written while that request is on the wire (the writer
        is woken then, :mod:`ioa_synth.llm.on_wire`, or within :data:`LATER_WAKE_S`). A process
        killed in between loses those rows, never their order, so they must be rows a resumed
        run makes again without a request (a case's record and status; a model call's rows
        go through :meth:`append_now`); :meth:`append`, :meth:`drain` and :meth:`close`
        journal them first.

        Raises:
            RuntimeError: an earlier batch failed to commit or ``make`` failed.
        """
        with self._cond:
            self._raise_if_failed()
            self._start()
            self._later.append((make, sync))
        after_send(self._wake)  # not now: waking the writer would slow this thread's next send

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify()

    def _start(self) -> None:
        if self._file is None:
            self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115 - kept open for the run
            self._writer = threading.Thread(target=self._write_loop, name="catalog-writer", daemon=True)
            self._writer.start()

    def _write(self, blob: bytes) -> None:
        if not blob:
            return
        try:
            with self._writing:  # one line never lands inside another thread's
                os.write(self._file.fileno(), blob)
        except OSError as exc:
            full = disk_full(exc, self.path)
            if full is not None:
                raise full from exc
            raise

    def _journal_later(self) -> None:
        """Journal and queue what :meth:`append_later` left, in order (the caller holds
        ``_order``; ``_cond`` is taken only to move items, so that workers queueing more
        never wait for the encoding); a failing ``make`` is kept in ``_error`` and raised."""
        while True:
            with self._cond:
                if not self._later:
                    return
                make, sync = self._later.pop(0)
            try:
                entries = make()
                self._write(b"".join(_line(e) for e in entries))
            except BaseException as exc:
                self._error = exc
                raise
            with self._cond:
                self._queue.extend(entries)
                self._sync.extend(sync)

    def drain(self) -> None:
        """Commit every queued entry now (the caller holds the catalog's lock)."""
        with self._order:
            self._journal_later()
        with self._cond:
            batch, self._queue = self._queue, []
            files, self._sync = self._sync, []
        if files:
            try:
                fsync_files(files)
            except BaseException as exc:
                self._error = exc
                raise
        if batch:
            try:
                self._commit(batch)
            except BaseException as exc:
                self._error = exc
                raise
        self._raise_if_failed()

    def close(self) -> None:
        """Stop the writer, commit what is queued and remove the journal file."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._writer is not None:
            self._writer.join()
        with self._lock:
            try:
                self.drain()
            finally:  # on failure the journal file stays, for the next open to re-apply
                if self._file is not None:
                    self._file.close()
                    self._file = None
            self.path.unlink(missing_ok=True)

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                while not (self._queue or self._sync or self._later) and not self._closing:
                    self._cond.wait(LATER_WAKE_S)
                if self._closing:
                    return
            deadline = time.monotonic() + BATCH_WINDOW_S  # let the entries of the window join the batch
            while True:
                try:
                    with self._order:
                        self._journal_later()
                except BaseException:  # noqa: BLE001 - kept in _error, raised to the next caller
                    return
                with self._cond:
                    left = deadline - time.monotonic()
                    if self._closing or left <= 0:
                        break
                    if not self._later:
                        self._cond.wait(min(left, LATER_WAKE_S))
            try:
                with self._lock:
                    self.drain()
            except BaseException:  # noqa: BLE001 - kept in _error, raised to the next caller
                return

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            from ioa_synth.llm.errors import StorageFull  # loaded with the LLM layer anyway

            if isinstance(self._error, StorageFull):  # the journal's own write: it names the file
                raise self._error
            full = disk_full(self._error, self.path.with_name("catalog.duckdb"))
            if full is not None:
                raise full from self._error
            raise RuntimeError(f"catalog write failed: {self._error}") from self._error


def fsync_files(paths: list[Path]) -> None:
    """fsync each existing file of ``paths`` (a file replaced or removed since is skipped:
    its successor was written the same way)."""
    for path in dict.fromkeys(paths):
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _line(entry: Entry) -> bytes:
    """One journal line. Encoded by pydantic-core: a call's row (its request text mostly
    characters that JSON escapes) took the ``json`` module 3-4 times as long, on the worker's
    path since a reply is journaled before its unit goes on. Timestamps are written in ISO 8601
    (``2026-12-04T17:36:06.605692``), which DuckDB reads back into ``TIMESTAMP`` columns; types
    it does not know are written as ``str()``."""
    table, payload = entry
    obj = {"t": table, "r": payload} if table else {"sql": payload[0], "p": list(payload[1])}
    return to_json(obj, fallback=str, inf_nan_mode="constants") + b"\n"
