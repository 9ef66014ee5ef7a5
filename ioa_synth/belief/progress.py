"""What ``belief run``'s progress line says while conversations are in flight: they
interleave, so whole conversations finish late (a 16-round study shows "0/6 done" for most
of its run). :class:`StudyWork` counts the calls done of the calls expected, the rounds the
conversations in flight have reached, and an ETA from the rate of fresh calls (replayed
calls of a resumed run are done but are not a rate)."""

from __future__ import annotations

import threading
import time
from typing import Callable

from ioa_synth.belief.conversation import StudySettings


def calls_per_conversation(settings: StudySettings, k: int) -> int:
    """The calls of one conversation with ``k`` attackers: every agent speaks each round,
    each benign utterance gets a stance label, and each benign agent is probed at steps
    0..T with a belief label per answer (a label settled by ``--prematch``'s string match
    counts as a call done)."""
    benign = settings.agents - k
    return settings.agents * settings.rounds + benign * settings.rounds + 2 * benign * (settings.rounds + 1)


def duration(seconds: float) -> str:
    """``"45 s"``, ``"14 min"``, ``"2.5 h"``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class StudyWork:
    """Calls of the conversations a run makes (thread-safe).

    Args:
        settings: the study's settings (agents, rounds).
        conversations: ``[(conversation id, k)]`` this run makes.
        reused: the calls answered from the catalog so far (a resumed run's replays), left
            out of the rate.
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(self, settings: StudySettings, conversations: list[tuple[str, int]],
                 reused: Callable[[], int] = lambda: 0, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self.rounds = settings.rounds
        self._expected = {conv: calls_per_conversation(settings, k) for conv, k in conversations}
        self.total = sum(self._expected.values())
        self.done = 0
        self._done_of: dict[str, int] = {}
        self._round: dict[str, int] = {}
        self._failed: set[str] = set()
        self._ended: set[str] = set()
        self._reused, self._clock = reused, clock
        self._start = clock()

    def watch(self, conv: str) -> Callable[[int, int], None]:
        """``work(calls, round)`` for conversation ``conv``: ``calls`` more are done, the
        conversation has reached ``round``."""

        def work(calls: int, rnd: int) -> None:
            with self._lock:
                if conv in self._ended and conv not in self._failed:
                    return  # counted in full when it finished (a future's callback may run after its waiter)
                self.done += calls
                self._done_of[conv] = self._done_of.get(conv, 0) + calls
                if conv in self._failed:  # a call in flight when its conversation failed
                    self.total += calls
                else:
                    self._round[conv] = max(self._round.get(conv, 0), rnd)

        return work

    def finished(self, conv: str, ok: bool) -> None:
        """``conv`` ended: all its calls are done, or (failed) it makes none of those it had left."""
        with self._lock:
            self._round.pop(conv, None)
            self._ended.add(conv)
            expected, done = self._expected.get(conv, 0), self._done_of.get(conv, 0)
            if ok:  # every call of a finished conversation is done
                self.done += expected - done
                self._done_of[conv] = expected
            else:
                self._failed.add(conv)
                self.total -= max(0, expected - done)

    def describe(self) -> str:
        """``calls 412/1,230 (33%); rounds reached 3-5 of 16; ETA 14 min`` (the rounds part
        only while conversations are in flight; the ETA once fresh calls have a rate)."""
        with self._lock:
            done, total, reached = self.done, self.total, sorted(self._round.values())
        share = f" ({done / total:.0%})" if total else ""
        parts = [f"calls {done:,}/{total:,}{share}"]
        if reached:
            span = str(reached[0]) if reached[0] == reached[-1] else f"{reached[0]}-{reached[-1]}"
            parts.append(f"rounds reached {span} of {self.rounds}")
        fresh, elapsed = done - self._reused(), self._clock() - self._start
        if done >= total:
            pass
        elif fresh > 0 and elapsed > 0:
            parts.append(f"ETA {duration((total - done) * elapsed / fresh)}")
        else:
            parts.append("ETA after the first calls")
        return "; ".join(parts)
