"""The calls of every team run in flight on one pool of threads, the call of the run with
the most steps left first.

A team run is a chain of dependent calls (a hidden-profile discussion: 8 rounds of one turn
per agent, then the answers), and ``collab run`` keeps about three times as many runs in
flight as it has call threads. Served first come first, every run advances at the same
pace, so the runs started last still have most of their chain to go when the others end,
and the threads idle through that tail one call at a time (``scripts/bench_collab.py``:
4-5 s of a 38 s run at 32 workers, in-flight efficiency 0.89-0.92). Served by steps left,
the runs started later catch up and all end together.

A call's priority can change while it waits (the rule switches when the last run has
started): it is given as a function, evaluated when the call is queued and again at each
:meth:`PriorityPool.reorder`. Without the second look, calls queued under the first rule
kept their old rank behind every call queued under the new one, and the runs they belonged
to made their first call only when the others had ended, alone in the tail.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from concurrent.futures import Future
from typing import Any, Callable, TypeVar, Union

from ioa_synth.llm import on_wire
from ioa_synth.runs.interrupt import RunInterrupted

T = TypeVar("T")
#: A call's priority: a value (lower goes first), or a function giving it now.
Priority = Union[Any, Callable[[], Any]]


def _value(priority: Priority) -> Any:
    return priority() if callable(priority) else priority


class PriorityPool:
    """``workers`` threads running submitted calls, the lowest ``priority`` first and in
    submission order among equals (a priority given as a function is read when the call is
    queued and again at :meth:`reorder`). Each call's end tells :mod:`ioa_synth.llm.on_wire`
    that its thread has no reply left to answer, as the run layer's worker pools do."""

    def __init__(self, workers: int, name: str) -> None:
        self._heap: list[tuple[Any, int, Future, Callable[..., Any], tuple[Any, ...], Priority]] = []
        self._cv = threading.Condition()
        self._seq = itertools.count()
        self._closed = False
        self._threads = [threading.Thread(target=self._work, name=f"{name}_{i}", daemon=True)
                         for i in range(max(1, workers))]
        for thread in self._threads:
            thread.start()

    def submit(self, priority: Priority, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Queue ``fn(*args)`` with ``priority`` (a value, or a function giving it); its future.

        Raises:
            RuntimeError: the pool was shut down."""
        fut: Future[T] = Future()
        with self._cv:
            if self._closed:
                raise RuntimeError("the call pool is shut down")
            heapq.heappush(self._heap, (_value(priority), next(self._seq), fut, fn, args, priority))
            self._cv.notify()
        return fut

    def reorder(self) -> None:
        """Read again the priority of every queued call given one as a function (the rule it
        follows has changed); the order among equals stays that of submission."""
        with self._cv:
            self._heap = [(_value(item[5]),) + item[1:] for item in self._heap]
            heapq.heapify(self._heap)

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._heap and not self._closed:
                    self._cv.wait()
                if not self._heap:
                    return
                _, _, fut, fn, args, _ = heapq.heappop(self._heap)
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
