"""The one scheduler of every run: units of work (cases, conversations, items) on a pool of
worker threads, a fixed number in flight, stopped by Ctrl-C or by the first run-stopping
error (:class:`~ioa_synth.llm.errors.StopRun`: a setup error, a full disk).

:meth:`ioa_synth.runs.context.RunContext.map` is the way a command uses it; this module
holds the parts: :func:`worker_pool` (threads that tell :mod:`ioa_synth.llm.on_wire` when
their unit ends) and :func:`run_interruptible` (the loop that keeps units in flight under an
:class:`~ioa_synth.runs.interrupt.InterruptGuard`).

Usage (inside a run)::

    with open_run(catalog, "evaluate", components, config) as run:
        done = run.map(cases, evaluate_one, on_done=count, workers=8, unit="case")
"""

from __future__ import annotations

import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

from ioa_synth.llm import on_wire
from ioa_synth.runs.gc_setup import setup_frozen
from ioa_synth.runs.interrupt import InterruptGuard, RunInterrupted

T = TypeVar("T")

#: Seconds between two checks of the stop event while waiting on futures.
POLL_SECONDS = 0.2


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
        guard: the :class:`~ioa_synth.runs.interrupt.InterruptGuard` whose ``stop`` ends submission.
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
