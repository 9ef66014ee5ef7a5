"""When a failed HTTP try of a chat request is sent again, and after how long.

The ``openai`` SDK's own retries are switched off (``max_retries=0``): the SDK would wait
out a ``Retry-After`` of up to 60 or 120 s (depending on its version) on its own, unseen
and beyond the user's ``max_wait``. Here tenacity drives the tries instead:

- retried: timeouts, connection errors, HTTP 408, 409, 429 and 5xx (not 501: the server
  does not implement the request, which no retry changes), at most
  ``max_retries`` times; a 429 that names a ``Retry-After`` is sent again as long as the
  waits fit in ``max_wait`` (so a long rate limit is waited out, within the bound);
- the wait is the server's ``Retry-After`` (``Retry-After-Ms``, seconds or an HTTP date)
  when given, else exponential backoff with jitter (0.5 s doubling to 8 s, as the SDK);
- every wait of one call adds up, and no wait makes the sum exceed ``max_wait``: a
  ``Retry-After: 100`` with ``max_wait`` 5 is not waited at all, the try fails at once
  saying so (:data:`STOP_NOTE` on the exception).
"""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass
from typing import Callable

import httpx
import openai
import tenacity

#: HTTP statuses sent again (as the ``openai`` SDK does).
RETRY_STATUSES = frozenset({408, 409, 429})
#: Name of the attribute set on the last exception when the waits would pass ``max_wait``.
STOP_NOTE = "ioa_retry_note"


def retry_after(response: httpx.Response | None) -> float | None:
    """Seconds a reply asks to wait: ``Retry-After-Ms``, or ``Retry-After`` in seconds or
    as an HTTP date; ``None`` when absent or unreadable."""
    if response is None:
        return None
    headers = response.headers
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def retryable(exc: BaseException) -> bool:
    """True for a timeout, a connection error, HTTP 408/409/429 or 5xx other than 501 (Not Implemented)."""
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRY_STATUSES or (exc.status_code >= 500 and exc.status_code != 501)
    return isinstance(exc, openai.APIConnectionError)  # APITimeoutError is one


def describe_failure(exc: BaseException) -> str:
    """``HTTP 503``, ``timeout`` or ``connection error``: what a failed try met, for notes."""
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}"
    return "timeout" if isinstance(exc, openai.APITimeoutError) else "connection error"


@dataclass
class RetryPolicy:
    """The retry rules of one endpoint (``max_retries`` HTTP retries, ``max_wait`` seconds
    of waiting per call in all); :meth:`retrying` gives the tenacity loop of one call."""

    component: str
    max_retries: int
    max_wait: float
    backoff: tenacity.wait.wait_base = tenacity.wait_exponential(multiplier=0.5, max=8.0) + tenacity.wait_random(0, 0.5)

    def _planned(self, state: tenacity.RetryCallState) -> tuple[float, bool] | None:
        """``(delay, server_directed)`` before the next try, or ``None`` when none may follow."""
        exc = state.outcome.exception() if state.outcome else None
        if exc is None or not retryable(exc):
            return None
        server = retry_after(getattr(exc, "response", None)) if isinstance(exc, openai.APIStatusError) else None
        rate_limited = isinstance(exc, openai.RateLimitError) and server is not None
        if state.attempt_number > self.max_retries and not rate_limited:
            return None
        delay = server if server is not None else self.backoff(state)
        waited = state.idle_for
        if waited + delay > self.max_wait:
            asked = "the server asks to wait" if server is not None else "the next retry would wait"
            setattr(exc, STOP_NOTE, f"{asked} {delay:.0f} s (Retry-After), beyond max_wait {self.max_wait:g} s"
                    if server is not None else f"{asked} {delay:.1f} s, beyond max_wait {self.max_wait:g} s")
            return None
        return delay, server is not None

    def retrying(self, sleep: Callable[[float], None], on_retry: Callable[[BaseException, float, str], None]
                 ) -> tenacity.Retrying:
        """The tenacity loop: ``sleep(seconds)`` waits (and may raise to stop), ``on_retry(exc,
        delay, note)`` is told of each retry before its wait."""
        plans: dict[int, tuple[float, bool] | None] = {}

        def plan(state: tenacity.RetryCallState) -> tuple[float, bool] | None:
            if state.attempt_number not in plans:
                plans[state.attempt_number] = self._planned(state)
            return plans[state.attempt_number]

        def before_sleep(state: tenacity.RetryCallState) -> None:
            exc = state.outcome.exception()
            delay, server = plan(state) or (0.0, False)
            why = "Retry-After" if server else "backoff"
            total = state.idle_for  # tenacity has added the coming wait already
            on_retry(exc, delay, f"{self.component}: {describe_failure(exc)}, waiting {delay:.0f} s ({why}; "
                                 f"{total:.0f} of max_wait {self.max_wait:g} s) before retry {state.attempt_number}")

        return tenacity.Retrying(
            retry=tenacity.retry_if_exception(retryable),
            stop=lambda state: plan(state) is None,
            wait=lambda state: (plan(state) or (0.0, False))[0],
            sleep=sleep, before_sleep=before_sleep, reraise=True)
