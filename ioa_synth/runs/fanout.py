"""In-unit call fan-out of a batch-mode run: the calls a unit hands to a thread pool
(belief's probes and labels beside its utterances, collab's calls made together) made
instead in the unit's own thread, each into a finished future.

A unit of a batch-mode run is driven again after each wave (:mod:`ioa_synth.runs.waves`);
its calls already answered come back from the catalog at once and the first call without
an answer raises :class:`~ioa_synth.llm.batch_api.CallParked`. Made inline, every call the
unit can make now is tried before the unit waits on any of them: the independent calls
that park (the step-0 probes of every benign agent, and the first utterance) all go out in
the same wave, and a call that needs a parked answer is reached only through that answer's
future, whose ``result()`` raises the :class:`CallParked` (the unit parks). The order of
the calls is the order of submission, so each drive asks the same keys in the same order.

Usage::

    pool = InlinePool() if batch else worker_pool(...)
    fut = pool.submit(ask, key, prompt)   # done already: result, or the exception it raised
    fut.result()                          # raises CallParked while the answer waits
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Callable, TypeVar

from ioa_synth.llm.batch_api import CallParked

T = TypeVar("T")

__all__ = ["InlinePool"]


class InlinePool:
    """A stand-in for a call pool (``submit(fn, *args) -> Future``) that runs ``fn`` now,
    in the calling thread. The future holds the result, or the exception ``fn`` raised (an
    :class:`Exception`, or :class:`CallParked`); anything else (Ctrl-C) propagates at once."""

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        fut: Future[T] = Future()
        fut.set_running_or_notify_cancel()
        try:
            fut.set_result(fn(*args))
        except (Exception, CallParked) as exc:  # noqa: BLE001 - handed to whoever reads the future
            fut.set_exception(exc)
        return fut

    def reorder(self) -> None:
        """Nothing waits in this pool: nothing to reorder."""

    def __enter__(self) -> "InlinePool":
        return self

    def __exit__(self, *exc: object) -> None:
        return None
