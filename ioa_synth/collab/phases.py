"""What the team runs in flight are doing, for ``collab run``'s progress line: each model
call by the phase of the protocol it belongs to (paper App. D.7), and each harness check.

Every call of a team is a ``discusser`` (or ``detector:NAME``) call, so the progress line's
calls in flight say only ``discusser 40 s``; :meth:`Phases.describe` says what those calls
are: ``in flight: 3 turns, 2 stop votes, 1 check``.
"""

from __future__ import annotations

import threading
from collections import Counter
from contextlib import contextmanager
from typing import Iterator

#: The phase of a call, by the kind in its role (``say:DiscusserA`` -> ``turn``), in the
#: order of the protocol; ``check`` is a BigCodeBench harness check.
PHASES = {"say": "turn", "vote": "stop vote", "reflect": "reflection", "mcq": "detector question",
          "answer": "MCQ answer", "final": "final answer", "code": "solution", "solve": "solution",
          "check": "check"}


def phase_of(kind: str) -> str:
    """The phase named for a call of ``kind`` (the kind itself when unknown)."""
    return PHASES.get(kind, kind)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class Phases:
    """Thread-safe count of the calls and checks in flight, by phase."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._now: Counter[str] = Counter()

    @contextmanager
    def running(self, kind: str) -> Iterator[None]:
        """Count one call (or check: ``kind`` ``check``) of ``kind`` while the block runs."""
        phase = phase_of(kind)
        with self._lock:
            self._now[phase] += 1
        try:
            yield
        finally:
            with self._lock:
                self._now[phase] -= 1

    def describe(self) -> str:
        """``in flight: 3 turns, 2 stop votes, 1 check`` (protocol order); empty when idle."""
        order = list(dict.fromkeys(PHASES.values()))
        with self._lock:
            now = {p: n for p, n in self._now.items() if n > 0}
        parts = [_plural(now[p], p) for p in sorted(now, key=lambda p: (order.index(p) if p in order else 99, p))]
        return "in flight: " + ", ".join(parts) if parts else ""
