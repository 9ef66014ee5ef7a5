"""Generator requests prepared while a judge call is on the wire.

A case's calls are sequential, and the toolkit's work between two of them (reading the
reply, the gates, rendering the next prompt and building its schema) adds to every call's
latency. Part of it does not depend on the reply being waited for: the stage-2 generator
prompt needs the stage-1 output, which is known when the stage-1 judge is asked; the next
case's stage-1 prompt needs only its seed tuple and plan. :class:`RequestsAhead` prepares
such a request on a helper thread while the judge call is in flight (the GIL is free then),
and hands it over only when asked with the very same inputs (the same objects); otherwise,
or when it was not started yet, the request is made on the spot. Nothing about the request
changes, only when its CPU is spent.

A job starts once the request that the calling thread sends next is on the wire, and no
other worker is answering a reply (:mod:`ioa_synth.llm.on_wire`): a helper started before
took the GIL from a worker still sending, or still reading, checking and answering its reply.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Generic, Hashable, TypeVar

from ioa_synth.llm import on_wire
from ioa_synth.llm.on_wire import requests_sent

T = TypeVar("T")
__all__ = ["RequestsAhead", "requests_sent"]

class RequestsAhead(Generic[T]):
    """``prepare(*inputs)`` made ahead on one helper thread, keyed by ``(case_id, ...)``.

    Args:
        prepare: makes a request from its inputs (pure: same inputs, same request).
    """

    def __init__(self, prepare: Callable[..., T]) -> None:
        self._prepare = prepare
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="ahead")
        # key -> (inputs, the helper's future; None until this thread's request is sent)
        self._jobs: dict[tuple[Hashable, ...], tuple[tuple[Any, ...], Future | None]] = {}
        self._lock = threading.Lock()

    def start(self, key: tuple[Hashable, ...], *inputs: Any) -> None:
        """Prepare ``prepare(*inputs)`` for ``key`` on the helper thread once this thread's
        next request is sent (an earlier job of ``key`` with other inputs is dropped)."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and _same(job[0], inputs):
                return
            self._jobs[key] = (inputs, None)
        if job is not None and job[1] is not None:
            job[1].cancel()
        on_wire.after_send(lambda: on_wire.when_idle(lambda: self._submit(key, inputs)))

    def _submit(self, key: tuple[Hashable, ...], inputs: tuple[Any, ...]) -> None:
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and job[1] is None and job[0] is inputs:  # not taken or replaced since
                self._jobs[key] = (inputs, self._pool.submit(self._prepare, *inputs))

    def get(self, key: tuple[Hashable, ...], *inputs: Any) -> T:
        """``prepare(*inputs)``: the one made ahead for ``key`` when it was made from these
        very objects and has started, else made now (an error of the job made ahead is
        raised by making it now)."""
        with self._lock:
            job = self._jobs.pop(key, None)
        if job is not None and job[1] is not None and _same(job[0], inputs) and not job[1].cancel():
            try:
                return job[1].result()
            except Exception:  # noqa: BLE001 - made again below, where the error belongs
                pass
        return self._prepare(*inputs)

    def forget(self, case_id: Hashable) -> None:
        """Drop the jobs of a finished case (made for an attempt that never came)."""
        with self._lock:
            dropped = [self._jobs.pop(k)[1] for k in [k for k in self._jobs if k[0] == case_id]]
        for fut in dropped:
            if fut is not None:
                fut.cancel()


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))
