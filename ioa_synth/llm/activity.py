"""What the model calls of a run are doing right now, for the progress line.

Every HTTP try of :class:`~ioa_synth.llm.client.LLMClient` is registered here while it
runs (component, start time, tokens streamed so far when the endpoint streams), and
counted when it ends: tried, failed (an HTTP error, a timeout, or a reply that was
rejected), retried (a failed try followed by another one) and timed out, per component.
:meth:`CallActivity.describe` turns that into the part of a progress line that shows
work is happening while no case has finished yet::

    2 calls in flight: generator 312 s (1,840 tokens), judge 45 s (reading prompt); 1,840 tokens streamed, 6.1 tokens/s per call; 3 tries failed (2 timed out), 3 retried

A call that streams but has no token yet is reading its prompt (a long prompt takes minutes
on a CPU, a resumed run re-reads every prompt its server no longer caches): llama.cpp's
``llama-server`` reports how far (``return_progress``, :meth:`CallActivity.prompt_read`),
shown as ``agent 312 s (reading prompt 1,024/3,311 tokens)``; without that report,
``reading prompt``.

The same counts are what ``ioa-synth status`` reads back from ``llm_calls``.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

#: In-flight calls named one by one in :meth:`CallActivity.describe` (the longest running first).
MAX_LISTED = 4


@dataclass
class _Call:
    component: str
    started: float
    streamed: int = 0
    first_token: float | None = None
    streams: bool = False
    prompt: tuple[int, int] | None = None  # tokens of the prompt read, of its total


@dataclass
class CallActivity:
    """Thread-safe registry of the model calls in flight and counts of finished tries."""

    tried: Counter = field(default_factory=Counter)
    failed: Counter = field(default_factory=Counter)
    retried: Counter = field(default_factory=Counter)
    timed_out: Counter = field(default_factory=Counter)
    streamed_total: int = 0
    _calls: dict[int, _Call] = field(default_factory=dict, repr=False)
    _ids: itertools.count = field(default_factory=itertools.count, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _stream_seconds: float = field(default=0.0, repr=False)

    def begin(self, component: str, streams: bool = False) -> int:
        """Register a try of ``component`` that starts now (``streams``: its reply is streamed,
        so no token yet means its prompt is being read); return its handle."""
        with self._lock:
            handle = next(self._ids)
            self._calls[handle] = _Call(component, time.monotonic(), streams=streams)
            self.tried[component] += 1
        return handle

    def streamed(self, handle: int, tokens: int = 1) -> None:
        """Count ``tokens`` received so far by the streaming try ``handle``."""
        with self._lock:
            call = self._calls.get(handle)
            if call is not None:
                if call.first_token is None:
                    call.first_token = time.monotonic()
                call.streamed += tokens
                self.streamed_total += tokens

    def prompt_read(self, handle: int, processed: int, total: int) -> None:
        """The server has read ``processed`` of the ``total`` prompt tokens of the try ``handle``
        (tokens it had cached count as read)."""
        with self._lock:
            call = self._calls.get(handle)
            if call is not None:
                call.prompt = (processed, total)

    def end(self, handle: int, error: BaseException | str | None = None, timed_out: bool = False) -> None:
        """The try ``handle`` ended, failed when ``error`` is given."""
        with self._lock:
            call = self._calls.pop(handle, None)
            if call is None:
                return
            if call.first_token is not None:
                self._stream_seconds += time.monotonic() - call.first_token
            if error is not None:
                self.failed[call.component] += 1
                self.timed_out[call.component] += timed_out

    def rejected(self, component: str) -> None:
        """A try of ``component`` got a reply that could not be used (invalid JSON, a refusal...)."""
        with self._lock:
            self.failed[component] += 1

    def retrying(self, component: str) -> None:
        """A failed try of ``component`` is followed by another one."""
        with self._lock:
            self.retried[component] += 1

    def in_flight(self) -> list[tuple[str, float, int]]:
        """``(component, seconds running, tokens streamed)`` of each call in flight, longest first."""
        return [c[:3] for c in self._in_flight()]

    def _in_flight(self) -> list[tuple[str, float, int, str]]:
        """As :meth:`in_flight`, each with what it is doing when no token came yet
        (``reading prompt 1,024/3,311 tokens``, ``reading prompt`` or empty)."""
        now = time.monotonic()
        with self._lock:
            calls = [(c.component, now - c.started, c.streamed, _reading(c)) for c in self._calls.values()]
        return sorted(calls, key=lambda c: -c[1])

    def rate(self) -> float | None:
        """Tokens per second of one call: the tokens streamed by the calls in flight and
        finished over their summed streaming time (from each call's first token on), i.e. the
        decoding speed a request sees, not the run's throughput (N calls decoding at once
        stream about N times that); ``None`` before any token."""
        now = time.monotonic()
        with self._lock:
            seconds = self._stream_seconds + sum(now - c.first_token for c in self._calls.values()
                                                 if c.first_token is not None)
            total = self.streamed_total
        return total / seconds if total and seconds > 0 else None

    def describe(self) -> str:
        """The activity part of a progress line (empty when nothing ran and nothing failed)."""
        parts = []
        calls = self._in_flight()
        if calls:
            # a call's state in parentheses after it, so a list of calls never reads as
            # "generator 30 s, reading prompt, generator 30 s" (is "reading prompt" a call?)
            listed = ", ".join(f"{c} {s:.0f} s" + (f" ({n:,} tokens)" if n else f" ({r})" if r else "")
                               for c, s, n, r in calls[:MAX_LISTED])
            more = f", +{len(calls) - MAX_LISTED} more" if len(calls) > MAX_LISTED else ""
            parts.append(f"{len(calls)} call{'s' if len(calls) != 1 else ''} in flight: {listed}{more}")
        if self.streamed_total:
            rate = self.rate()
            parts.append(f"{self.streamed_total:,} tokens streamed" + (f", {rate:.1f} tokens/s per call" if rate else ""))
        failed, timed_out, retried = (sum(c.values()) for c in (self.failed, self.timed_out, self.retried))
        if failed:
            parts.append(f"{failed} tr{'ies' if failed != 1 else 'y'} failed"
                         + (f" ({timed_out} timed out)" if timed_out else "") + f", {retried} retried")
        return "; ".join(parts)


def _reading(call: _Call) -> str:
    """What a streaming call with no token yet is doing: reading its prompt (how far, when
    the server says)."""
    if call.streamed or not call.streams:
        return ""
    if call.prompt is None:
        return "reading prompt"
    done, total = call.prompt
    return f"reading prompt {done:,}/{total:,} tokens" if done < total else f"prompt of {total:,} tokens read"
