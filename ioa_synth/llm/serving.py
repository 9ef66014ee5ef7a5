"""Requests to a server that decodes a limited number of replies at once (the embedded
``llama-server`` decodes one per slot): a shared slot count, a streamed reply, a deadline.

Why: requests beyond the server's slots queue inside it, so a client timeout would count
the queue; and a request the client gives up on should stop being decoded, which a
streamed one does when the connection closes (llama.cpp's server checks for a disconnect
as it sends each chunk and cancels the task).

So, for such an endpoint, :func:`stream_completion`:

* sends only while it holds one of the server's :class:`ServerSlots` (waiting for a slot
  is not counted against the timeout; the run stopping ends the wait);
* asks for a streamed reply, counts ``timeout`` from the moment the request is sent and,
  when that deadline passes or the run stops, closes the connection, which ends decoding;
* returns the streamed chunks joined into one chat-completions object, with the ``usage``
  of the stream's final usage chunk when the server sends one. The request asks for it
  (``stream_options: {"include_usage": true}``, :data:`STREAM_OPTIONS`), as the OpenAI API,
  vLLM and llama.cpp's own server understand it; a server that ignores the field (e.g.
  llama-cpp-python's 0.3.36) sends no usage. Without a usage chunk, ``completion_tokens``
  is the number of content chunks (one per decoded token on llama.cpp servers) and
  ``prompt_tokens`` stays unknown (``None``).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import httpx
import openai

#: Seconds between checks of the run's stop flag while waiting for a slot.
_POLL = 0.5

#: Sent with every streamed request: ask for a final chunk carrying the reply's ``usage``.
STREAM_OPTIONS = {"include_usage": True}


class ServerSlots:
    """How many requests one server decodes at once (``size``), shared by every client of
    that server in this process."""

    def __init__(self, size: int) -> None:
        self.size = max(1, int(size))
        self._sem = threading.BoundedSemaphore(self.size)

    def acquire(self, stop: threading.Event) -> bool:
        """Wait for a free slot; False (no slot taken) when ``stop`` is set first."""
        while not self._sem.acquire(timeout=_POLL):
            if stop.is_set():
                return False
        if stop.is_set():
            self._sem.release()
            return False
        return True

    def release(self) -> None:
        self._sem.release()


class GaveUp(openai.APITimeoutError):
    """The reply did not end within the request's deadline; the stream was closed (the
    server stopped decoding it)."""

    def __init__(self, request: httpx.Request, seconds: float) -> None:
        super().__init__(request)
        self.message = f"no complete reply within {seconds:.0f} s (timeout); the request was abandoned"
        self.args = (self.message,)


def stream_completion(client: openai.OpenAI, payload: bytes, timeout: float, stop: threading.Event,
                      on_token: Callable[[], None] = lambda: None,
                      on_prompt: Callable[[int, int], None] = lambda processed, total: None) -> dict[str, Any] | None:
    """POST ``payload`` (a chat-completions body with ``"stream": true``) and return the
    reply as one chat-completions dict; ``None`` when ``stop`` was set (connection closed).
    ``on_token()`` is called for every content chunk (one token on llama.cpp's servers), so a
    progress line can show tokens arriving before the reply ends, and ``on_prompt(processed,
    total)`` for every ``prompt_progress`` chunk (llama-server's report of the prompt tokens
    read, sent when the request asks ``"return_progress": true``: ``processed`` of ``total``,
    the tokens it had cached included, as its README defines the overall progress).

    The ``openai`` client's own retries cover the request until the stream starts.

    Raises:
        GaveUp: the reply did not end within ``timeout`` seconds of the request.
        openai.APIError: the request failed (after the client's retries), or the reply
            broke off (``APIConnectionError``) or stalled (``APITimeoutError``).
    """
    started = time.monotonic()
    stream = client.post("/chat/completions", content=payload, cast_to=object, stream=True,
                         stream_cls=openai.Stream[object],
                         options={"headers": {"Content-Type": "application/json"}})
    parts: list[str] = []
    reasoning: list[str] = []
    finish, chunks, model, usage = None, 0, None, None
    try:
        for chunk in stream:
            if stop.is_set():
                return None
            if time.monotonic() - started > timeout:
                raise GaveUp(stream.response.request, timeout)
            if not isinstance(chunk, dict):
                continue
            model = chunk.get("model", model)
            if isinstance(chunk.get("usage"), dict):  # the final usage chunk (its choices are empty)
                usage = chunk["usage"]
            progress = chunk.get("prompt_progress")
            if isinstance(progress, dict) and isinstance(progress.get("total"), int):
                on_prompt(int(progress.get("processed") or 0), progress["total"])
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    parts.append(delta["content"])
                    chunks += 1
                    on_token()
                for key in ("reasoning_content", "reasoning"):
                    if delta.get(key):
                        reasoning.append(delta[key])
                finish = choice.get("finish_reason") or finish
    except httpx.TimeoutException as exc:  # no byte (not even a keep-alive ping) for `timeout` s
        raise openai.APITimeoutError(stream.response.request) from exc
    except httpx.HTTPError as exc:  # the server went away mid-reply
        raise openai.APIConnectionError(message=f"reply broken off: {exc}", request=stream.response.request) from exc
    finally:
        stream.close()  # a reply not read to its end: the server sees the disconnect and stops
    message: dict[str, Any] = {"role": "assistant", "content": "".join(parts) if parts else None}
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    counted = {"prompt_tokens": None, "completion_tokens": chunks}
    reported = {k: usage.get(k) for k in counted if isinstance(usage.get(k), int)} if usage else {}
    return {"object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": counted | reported}
