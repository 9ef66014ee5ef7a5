"""Work a thread leaves for the moment its next request is on the wire, and helper work
that waits until no worker is between a reply and its next request.

A worker's calls are sequential, and Python runs one thread at a time: another thread
that wakes while the worker sends its request (the helper that prepares the next request,
:mod:`ioa_synth.llm.ahead`; the catalog writer, :mod:`ioa_synth.runs.journal`) takes the
interpreter at the worker's first system call and holds it for up to the switch interval,
delaying the rest of the send. Measured on a 2-core machine against a 200 ms endpoint: a
judge request reached the server 1.2-1.5 ms after the worker began sending instead of
0.65 ms. Such wake-ups are therefore registered with :func:`after_send` and run by
:func:`requests_sent`, which the transport calls when the request body is written (its
httpcore ``trace`` hook), while the worker waits for the reply.

With many workers, one worker's request being on the wire does not mean the interpreter
is free: 32 workers whose replies arrive together each read, check and answer theirs, and
a helper job started by the first of them (a request prepared ahead, wanted only when
that worker's own reply comes back a whole call later) takes turns with the others'
replies. :func:`when_idle` holds such a job until no worker has a reply it has not
answered yet (:func:`reply_received` to :func:`requests_sent`, or to :func:`answered`,
which the worker pool calls when an item ends without another request). A thread counts
as busy for at most :data:`BUSY_LIMIT_S` after its reply; a job held back is never waited
for: the worker that needs its result makes it itself.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

_local = threading.local()
#: Seconds after its reply that a worker holds back helper jobs at most.
BUSY_LIMIT_S = 0.05
_lock = threading.Lock()
_busy: dict[int, float] = {}  # thread id -> when its reply arrived (time.monotonic)
_held: list[Callable[[], None]] = []


def after_send(action: Callable[[], None]) -> None:
    """Run ``action`` when this thread's next request is written (:func:`requests_sent`);
    a thread that sends no more requests never runs it, so ``action`` must only hasten
    work that happens anyway (a wake-up, a job that is otherwise done on demand)."""
    waiting = getattr(_local, "waiting", None)
    if waiting is None:
        waiting = _local.waiting = []
    waiting.append(action)


def reply_received() -> None:
    """This thread has a reply to answer: :func:`when_idle` jobs wait until it sends its
    next request (or :data:`BUSY_LIMIT_S` passes)."""
    _busy[threading.get_ident()] = time.monotonic()


def requests_sent() -> None:
    """Run what this thread left for when its request is on the wire, in order; then,
    if no other worker is answering a reply, the :func:`when_idle` jobs held back."""
    waiting = getattr(_local, "waiting", None)
    if waiting:
        _local.waiting = []
        for action in waiting:
            action()
    answered()


def answered() -> None:
    """This thread has no reply left to answer (its request is sent, or its work item
    ended without one): the :func:`when_idle` jobs may start unless another worker has one."""
    if _busy.pop(threading.get_ident(), None) is not None or _held:
        _release()


def when_idle(action: Callable[[], None]) -> None:
    """Run ``action`` now if no worker is answering a reply, else when the last one sends
    its request (``action`` must be quick: it hands work to another thread)."""
    with _lock:
        _held.append(action)
    _release()


def _release() -> None:
    now = time.monotonic()
    with _lock:
        for ident in [i for i, since in _busy.items() if now - since > BUSY_LIMIT_S]:
            _busy.pop(ident, None)
        if _busy or not _held:
            return
        ready = _held[:]
        _held.clear()
    for action in ready:
        action()
