"""Pacing and retry policy shared by the three seed sources.

One small policy for every source:

- :class:`Pacer` keeps successive requests at least ``interval`` seconds apart and one at
  a time (arXiv API user manual: "no more than one request every three seconds"; NCBI
  E-utilities: at most 3 requests/s, 10 with an API key; OpenAlex: at most 10 requests/s).
- :class:`Backoff` retries 429 and 5xx answers, dropped connections and truncated bodies
  with exponential backoff plus jitter, honouring ``Retry-After`` (RFC 9110 §10.2.3).
  A ``Retry-After`` longer than ``give_up_after`` (OpenAlex's answer once the daily budget
  is spent) raises :class:`RetryLater` so the caller can stop cleanly and say when to resume.
- :class:`PacedRetryAdapter` plugs both into a ``requests`` session (used for arXiv and
  OpenAlex, whose libraries talk through ``requests``); NCBI calls go through
  :meth:`Backoff.call` because ``Bio.Entrez`` uses ``urllib``.

All waits go through one ``sleep`` function and are multiplied by ``scale``;
``IOA_SYNTH_DELAY_SCALE`` (default ``1``) sets the scale, tests set it to ``0``.
"""

from __future__ import annotations

import email.utils
import os
import random
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, TypeVar

import requests
from requests.adapters import HTTPAdapter

T = TypeVar("T")

#: What a source yields: candidate records, and a function that records the progress they
#: represent in the fetch state (called by the fetcher once every candidate was handled).
Batch = tuple[list[dict[str, Any]], Callable[[], None]]


def no_commit() -> None:
    """Commit function of a batch whose progress needs no state (ids already mark it)."""

#: Status codes worth retrying (too many requests, server-side trouble).
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def delay_scale() -> float:
    """The multiplier applied to every wait: ``IOA_SYNTH_DELAY_SCALE`` (default 1.0).

    Raises ``ValueError`` when the variable is set but is not a non-negative number.
    """
    raw = os.environ.get("IOA_SYNTH_DELAY_SCALE", "").strip()
    if not raw:
        return 1.0
    value = float(raw)
    if value < 0:
        raise ValueError("IOA_SYNTH_DELAY_SCALE must be >= 0")
    return value


class SourceError(RuntimeError):
    """A source refused the request for good (bad query, API error); the message says why."""


class RetryLater(Exception):
    """The server asked us to wait longer than we are willing to (e.g. a spent daily budget).

    Attributes:
        seconds: the ``Retry-After`` the server sent.
        resume_at: when a new attempt may start (UTC).
        url: the request that was refused.
    """

    def __init__(self, seconds: float, url: str = "") -> None:
        self.seconds = seconds
        self.url = url
        self.resume_at = datetime.now(timezone.utc) + timedelta(seconds=seconds)
        super().__init__(
            f"server asked to wait {seconds:.0f} s; resume after {self.resume_at:%Y-%m-%d %H:%M} UTC"
        )


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date), else None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


@dataclass
class Pacer:
    """Serialises requests and keeps their starts at least ``interval * scale`` seconds apart."""

    interval: float
    scale: float = 1.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    _last: float | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def wait(self) -> None:
        """Block until the next request may start (call under :attr:`lock`)."""
        if self._last is not None:
            gap = self.interval * self.scale - (self.clock() - self._last)
            if gap > 0:
                self.sleep(gap)
        self._last = self.clock()

    @property
    def lock(self) -> threading.Lock:
        """Held for the whole request, so only one is in flight."""
        return self._lock


@dataclass
class Backoff:
    """Exponential backoff with full jitter, honouring ``Retry-After``.

    The n-th retry (n = 1, 2, ...) waits ``Retry-After`` when the server sent one, else
    ``uniform(0, min(cap, base * 2**(n-1)))`` (plus nothing else); every wait is
    multiplied by ``scale``. A ``Retry-After`` above ``give_up_after`` raises
    :class:`RetryLater` instead of sleeping.
    """

    base: float = 2.0
    cap: float = 120.0
    retries: int = 5
    give_up_after: float = 900.0
    scale: float = 1.0
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)

    def pause(self, attempt: int, retry_after: float | None, url: str = "") -> None:
        """Sleep before retry number ``attempt`` (1-based); may raise :class:`RetryLater`."""
        if retry_after is not None and retry_after > self.give_up_after:
            raise RetryLater(retry_after, url)
        if retry_after is not None:
            wait = retry_after
        else:
            wait = self.rng.uniform(0, min(self.cap, self.base * 2 ** (attempt - 1)))
        if wait * self.scale > 0:
            self.sleep(wait * self.scale)

    def call(
        self,
        fn: Callable[[], T],
        is_transient: Callable[[BaseException], bool],
        retry_after: Callable[[BaseException], float | None] = lambda exc: None,
    ) -> T:
        """Run ``fn``; retry it while ``is_transient(exc)`` holds, waiting ``retry_after(exc)``.

        Permanent errors are re-raised at once, the last transient one after
        :attr:`retries` retries; may raise :class:`RetryLater`.
        """
        attempt = 0
        while True:
            try:
                return fn()
            except Exception as exc:  # noqa: BLE001 - classified just below
                if not is_transient(exc) or attempt >= self.retries:
                    raise
                attempt += 1
                self.pause(attempt, retry_after(exc))


class PacedRetryAdapter(HTTPAdapter):
    """A ``requests`` transport adapter that paces requests and retries transient failures.

    Retries: statuses in :data:`RETRY_STATUSES`, connection errors and bodies cut short
    (``ChunkedEncodingError``: fewer bytes than ``Content-Length``). After the last retry
    the final response (or error) is handed to the library, which reports it its own way.
    """

    def __init__(self, pacer: Pacer, backoff: Backoff) -> None:
        super().__init__()
        self.pacer = pacer
        self.backoff = backoff

    def send(self, request, stream=False, **kwargs):  # type: ignore[override]
        """Send ``request`` (see ``HTTPAdapter.send``) with pacing and retries."""
        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                with self.pacer.lock:
                    self.pacer.wait()
                    resp = super().send(request, stream=stream, **kwargs)
                    if not stream:
                        resp.content  # read now, so a truncated body is retried here
                if resp.status_code not in RETRY_STATUSES or attempt >= self.backoff.retries:
                    return resp
                retry_after = parse_retry_after(resp.headers.get("Retry-After"))
                resp.close()
            except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError):
                if attempt >= self.backoff.retries:
                    raise
            attempt += 1
            self.backoff.pause(attempt, retry_after, request.url or "")


def paced_session(pacer: Pacer, backoff: Backoff, session: requests.Session | None = None) -> requests.Session:
    """Mount a :class:`PacedRetryAdapter` on ``session`` (a new one by default) for http and https."""
    session = session or requests.Session()
    adapter = PacedRetryAdapter(pacer, backoff)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
