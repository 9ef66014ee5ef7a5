"""Ctrl-C for commands that keep LLM calls in flight on worker threads.

Importing polars replaces the process's SIGINT handler (pola-rs/polars#21739), after
which Ctrl-C never wakes a main thread blocked in
``concurrent.futures.wait()``. :class:`InterruptGuard` installs its own handler in the
main thread (after importing polars, so that it wins) and restores the previous one on
exit; the scheduler (:mod:`ioa_synth.runs.scheduler`) waits on futures in a timeout loop,
so the handler runs within a fraction of a second.

Behaviour: the first Ctrl-C sets ``guard.stop`` — no new work is submitted, queued work
is dropped, LLM clients sharing the event send no new request — and the in-flight work
gets ``grace`` seconds to finish (what finishes is recorded as usual); then
:class:`RunInterrupted` is raised and the command exits 130. A second Ctrl-C exits the
process at once with status 130 (the catalog journal keeps every call already written).

Every run opened by :func:`ioa_synth.runs.context.open_run` holds a guard; its
:meth:`~ioa_synth.runs.context.RunContext.map` schedules the run's units under it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any, Callable

#: Seconds the in-flight work gets after the first Ctrl-C (or a run-stopping error).
GRACE_SECONDS = 5.0


class RunInterrupted(Exception):
    """The run stopped on Ctrl-C. ``finished``: work items finished in this run (called
    ``unit``, e.g. ``case``); ``abandoned``: items still running when the grace period ran
    out (their threads cannot be killed: the caller should exit the process);
    ``stored_calls``: model calls that got a reply and were stored in this run, which the
    next run reuses (``None`` when the command does not count them); ``failed_tries``:
    failed tries stored in this run (kept for the record; the next run asks those calls
    again). :func:`ioa_synth.runs.context.open_run` sets both from the run's
    recorders, a command may set ``unit``; the message says what is kept. ``waiting``:
    what the run leaves running outside the process, as a clause of the message (batch
    mode's batches still running at the provider, ``--batch-dir`` files waiting for their
    output: :meth:`ioa_synth.runs.waves.BatchWaves.in_flight`)."""

    def __init__(self, finished: int, abandoned: int, unit: str = "item", stored_calls: int | None = None,
                 failed_tries: int = 0, waiting: str | None = None) -> None:
        super().__init__()
        self.finished, self.abandoned, self.unit = finished, abandoned, unit
        self.stored_calls, self.failed_tries = stored_calls, failed_tries
        self.waiting = waiting

    def __str__(self) -> str:
        from ioa_synth.text.plural import plural

        text = f"interrupted: {plural(self.finished, self.unit)} finished"
        if self.stored_calls is not None:
            stored = plural(self.stored_calls + self.failed_tries, "model call")
            if not self.stored_calls + self.failed_tries:
                text += ", no model call stored"
            elif self.failed_tries:
                text += (f", {stored} stored ({plural(self.stored_calls, 'reply', 'replies')} the next run reuses, "
                         f"{plural(self.failed_tries, 'failed try', 'failed tries')})")
            else:
                replies = "its reply" if self.stored_calls == 1 else "their replies"
                text += f", {stored} stored (the next run reuses {replies})"
        if self.abandoned:
            were = "was" if self.abandoned == 1 else "were"
            text += f"; {plural(self.abandoned, self.unit)} still running {were} abandoned"
        if self.waiting:
            text += f"; {self.waiting}"
        return text


class InterruptGuard:
    """Context manager owning SIGINT and SIGTERM while a run is in progress (main thread only;
    in another thread it only provides ``stop``). SIGTERM (``timeout``, a job scheduler)
    ends the run as Ctrl-C does.

    Attributes:
        stop: set by the first Ctrl-C, or by the scheduler when work raised
            (:func:`ioa_synth.runs.scheduler.run_interruptible`).
        interrupted: True once Ctrl-C was pressed.
        grace: seconds given to in-flight work after ``stop`` is set.
    """

    def __init__(self, grace: float = GRACE_SECONDS, notice: Callable[[str], None] | None = None) -> None:
        self.stop = threading.Event()
        self.interrupted = False
        self.grace = grace
        self._notice = notice or (lambda text: print(text, file=sys.stderr, flush=True))
        self._previous: Any = None
        self._previous_term: Any = None
        self._installed = False

    def _handle(self, signum: int, frame: object) -> None:
        if self.interrupted:
            self._notice("interrupted again: exiting now; run the same command again to resume")
            os._exit(130)
        self.interrupted = True
        self.stop.set()
        self._notice(f"interrupted: no new calls; waiting up to {self.grace:.0f} s for calls in flight "
                     "(Ctrl-C again to quit at once)")

    def __enter__(self) -> "InterruptGuard":
        if threading.current_thread() is threading.main_thread():
            try:  # polars installs its own SIGINT handler on first import: let it do so before ours
                import polars  # noqa: F401
            except ImportError:  # pragma: no cover - polars is a dependency
                pass
            self._previous = signal.signal(signal.SIGINT, self._handle)
            # a job scheduler's or `timeout`'s stop: ended like a Ctrl-C, the run's row and calls kept
            self._previous_term = signal.signal(signal.SIGTERM, self._handle)
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous if self._previous is not None else signal.default_int_handler)
            signal.signal(signal.SIGTERM, self._previous_term if self._previous_term is not None else signal.SIG_DFL)
            self._installed = False


class DeferredInterrupt:
    """Context manager holding Ctrl-C (SIGINT) back while a short write that must not be cut
    in half runs (record files, then their catalog rows): a Ctrl-C inside it is remembered
    (``interrupted``) and the write finishes; Python's default SIGINT would otherwise stop
    it anywhere, DuckDB mid-query included ("Query interrupted"). Main thread only;
    elsewhere it does nothing."""

    def __init__(self) -> None:
        self.interrupted = False
        self._previous: Any = None

    def _handle(self, signum: int, frame: object) -> None:
        self.interrupted = True

    def __enter__(self) -> "DeferredInterrupt":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None
