"""The calls of every team run in flight on one pool of threads, the call of the run with
the most steps left first.

A team run is a chain of dependent calls (a hidden-profile discussion: 8 rounds of one turn
per agent, then the answers), and ``collab run`` keeps about twice as many runs in flight
as it has call threads. Served first come first, every run advances at the same pace, so
the runs started last still have most of their chain to go when the others end, and the
threads idle through that tail one call at a time (``scripts/bench_collab.py``: 4-5 s of a
38 s run at 32 workers, in-flight efficiency 0.89-0.92). Served by steps left, the runs
started later catch up and all end together.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from concurrent.futures import Future
from typing import Any, Callable, TypeVar

from ioa_synth.llm import on_wire
from ioa_synth.runs.interrupt import RunInterrupted

T = TypeVar("T")


class PriorityPool:
    """``workers`` threads running submitted calls, the lowest ``priority`` first and in
    submission order among equals. Each call's end tells :mod:`ioa_synth.llm.on_wire`
    that its thread has no reply left to answer, as the run layer's worker pools do."""

    def __init__(self, workers: int, name: str) -> None:
        self._heap: list[tuple[Any, int, Future, Callable[..., Any], tuple[Any, ...]]] = []
        self._cv = threading.Condition()
        self._seq = itertools.count()
        self._closed = False
        self._threads = [threading.Thread(target=self._work, name=f"{name}_{i}", daemon=True)
                         for i in range(max(1, workers))]
        for thread in self._threads:
            thread.start()

    def submit(self, priority: Any, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Queue ``fn(*args)`` with ``priority``; its future.

        Raises:
            RuntimeError: the pool was shut down."""
        fut: Future[T] = Future()
        with self._cv:
            if self._closed:
                raise RuntimeError("the call pool is shut down")
            heapq.heappush(self._heap, (priority, next(self._seq), fut, fn, args))
            self._cv.notify()
        return fut

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._heap and not self._closed:
                    self._cv.wait()
                if not self._heap:
                    return
                _, _, fut, fn, args = heapq.heappop(self._heap)
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller through its future
                fut.set_exception(exc)
            finally:
                on_wire.answered()

    def __enter__(self) -> "PriorityPool":
        return self

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> None:
        """A normal end waits for the calls; an error or Ctrl-C cancels the queued ones and
        waits only for calls of units the interrupted run did not abandon (as
        :func:`ioa_synth.runs.scheduler.worker_pool`)."""
        if exc is None:
            self.shutdown(wait=True)
        else:
            self.shutdown(wait=isinstance(exc, RunInterrupted) and not exc.abandoned, cancel_futures=True)

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """Stop taking calls; with ``cancel_futures`` cancel the queued ones; with ``wait``
        wait for the running ones (the threads are daemons: a run that abandons them exits)."""
        with self._cv:
            self._closed = True
            if cancel_futures:
                for item in self._heap:
                    item[2].cancel()
                self._heap.clear()
            self._cv.notify_all()
        if wait:
            for thread in self._threads:
                thread.join()
