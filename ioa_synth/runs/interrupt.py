"""Ctrl-C for commands that keep LLM calls in flight on worker threads.

Importing polars replaces the process's SIGINT handler (pola-rs/polars#21739), after
which Ctrl-C never wakes a main thread blocked in
``concurrent.futures.wait()``. :class:`InterruptGuard` installs its own handler in the
main thread (after importing polars, so that it wins) and restores the previous one on
exit; :func:`run_interruptible` waits on futures in a timeout loop, so the handler runs
within a fraction of a second.

Behaviour: the first Ctrl-C sets ``guard.stop`` — no new work is submitted, queued work
is dropped, LLM clients sharing the event send no new request — and the in-flight work
gets ``grace`` seconds to finish (what finishes is recorded as usual); then
:class:`RunInterrupted` is raised and the command exits 130. A second Ctrl-C exits the
process at once with status 130 (the catalog journal keeps every call already written).

Usage (build, regenerate, audit, evaluate)::

    with InterruptGuard() as guard, worker_pool(4, "eval") as pool:
        client.stop = guard.stop
        run_interruptible(lambda item: pool.submit(work, item), deque(items),
                          on_done=lambda item, result: ..., workers=4, guard=guard)
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

from ioa_synth.llm import on_wire
from ioa_synth.runs.gc_setup import setup_frozen

T = TypeVar("T")

#: Seconds the in-flight work gets after the first Ctrl-C (or a run-stopping error).
GRACE_SECONDS = 5.0
#: Seconds between two checks of the stop event while waiting on futures.
POLL_SECONDS = 0.2


class RunInterrupted(Exception):
    """The run stopped on Ctrl-C. ``finished``: work items finished in this run (called
    ``unit``, e.g. ``case``); ``abandoned``: items still running when the grace period ran
    out (their threads cannot be killed: the caller should exit the process);
    ``stored_calls``: model calls that got a reply and were stored in this run, which the
    next run reuses (``None`` when the command does not count them); ``failed_tries``:
    failed tries stored in this run (kept for the record; the next run asks those calls
    again). :func:`ioa_synth.runs.context.open_run` sets both from the run's
    recorders, a command may set ``unit``; the message says what is kept."""

    def __init__(self, finished: int, abandoned: int, unit: str = "item", stored_calls: int | None = None,
                 failed_tries: int = 0) -> None:
        super().__init__()
        self.finished, self.abandoned, self.unit = finished, abandoned, unit
        self.stored_calls, self.failed_tries = stored_calls, failed_tries

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
        return text


class InterruptGuard:
    """Context manager owning SIGINT and SIGTERM while a run is in progress (main thread only;
    in another thread it only provides ``stop``). SIGTERM (``timeout``, a job scheduler)
    ends the run as Ctrl-C does.

    Attributes:
        stop: set by the first Ctrl-C, or by :func:`run_interruptible` when work raised.
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


@contextmanager
def worker_pool(workers: int, name: str) -> Iterator[ThreadPoolExecutor]:
    """A thread pool of ``workers`` threads for :func:`run_interruptible`: on a normal end
    it waits for its threads; when the block raises it drops queued work and does not
    wait for threads abandoned after the grace period (the command exits instead)."""
    pool = _WorkerPool(max(1, workers), thread_name_prefix=name)
    try:
        yield pool
    except RunInterrupted as exc:
        pool.shutdown(wait=not exc.abandoned, cancel_futures=True)
        raise
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


class _WorkerPool(ThreadPoolExecutor):
    """A pool whose work items, when they end, tell :mod:`ioa_synth.llm.on_wire` that their
    thread has no reply left to answer (helper jobs held back for it may start)."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:  # type: ignore[override]
        return super().submit(_then_answered, fn, *args, **kwargs)


def _then_answered(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    try:
        return fn(*args, **kwargs)
    finally:
        on_wire.answered()


def run_interruptible(submit: Callable[[T], Future], items: deque[T], on_done: Callable[[T, Any], None],
                      workers: int, guard: InterruptGuard, unit: str = "item") -> int:
    """Keep up to ``workers`` items in flight until ``items`` is empty; return how many finished.

    One item more than ``workers`` is submitted, waiting in the pool's queue, so that a
    worker that finishes takes its next item at once instead of after a round trip through
    this thread; once ``guard.stop`` is set, items not started are cancelled.

    Args:
        submit: starts one item, returning its future (e.g. ``lambda i: pool.submit(f, i)``).
        items: the queue; ``on_done`` may append to it (e.g. reserve draws).
        on_done: ``on_done(item, result)``, called in this thread for each finished item.
        workers: items in flight at once (>= 1).
        guard: the :class:`InterruptGuard` whose ``stop`` ends submission.
        unit: what an item is, for the message of :class:`RunInterrupted` (``case``).

    Raises:
        BaseException: the first exception raised by an item or by ``on_done`` (e.g. a
            :class:`~ioa_synth.llm.errors.SetupError`), after setting ``guard.stop`` and
            giving the other in-flight items ``guard.grace`` seconds.
        RunInterrupted: Ctrl-C was pressed (``abandoned`` counts items still running).

    What the run set up before this call is kept out of the garbage collector's scans
    while it runs (:func:`~ioa_synth.runs.gc_setup.setup_frozen`).
    """
    with setup_frozen():
        return _keep_in_flight(submit, items, on_done, workers, guard, unit)


def _keep_in_flight(submit: Callable[[T], Future], items: deque[T], on_done: Callable[[T, Any], None],
                    workers: int, guard: InterruptGuard, unit: str) -> int:
    running: dict[Future, T] = {}
    error: BaseException | None = None
    finished = 0
    deadline: float | None = None

    def stop_on_error(fut: Future) -> None:
        # in the worker, before it takes the queued item: that item must not start (and send
        # a request) after a setup error or Ctrl-C ended this one
        if not fut.cancelled() and fut.exception() is not None:
            guard.stop.set()
            for other in list(running):
                other.cancel()

    while True:
        while items and len(running) < max(1, workers) + 1 and not guard.stop.is_set():
            item = items.popleft()
            fut = submit(item)
            running[fut] = item
            fut.add_done_callback(stop_on_error)
        if guard.stop.is_set():
            for fut in [f for f in running if f.cancel()]:  # queued, not started: it never runs
                items.appendleft(running.pop(fut))
        if not running:
            break
        if guard.stop.is_set():
            deadline = deadline or time.monotonic() + guard.grace
            if time.monotonic() >= deadline:
                break
        done, _ = wait(running, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
        for fut in done:
            item = running.pop(fut)
            if fut.cancelled():  # queued when the run stopped: it never ran
                items.appendleft(item)
                continue
            try:
                on_done(item, fut.result())
                finished += 1
            except BaseException as exc:  # noqa: BLE001 - re-raised below, after the grace
                if error is None and not (guard.interrupted and _is_stop(exc)):
                    error = exc
                guard.stop.set()
    for fut in running:
        fut.cancel()
    if guard.interrupted:
        raise RunInterrupted(finished, sum(not f.done() for f in running), unit)
    if error is not None:
        raise error
    return finished


def _is_stop(exc: BaseException) -> bool:
    from ioa_synth.llm.errors import StopRun

    return isinstance(exc, StopRun)
