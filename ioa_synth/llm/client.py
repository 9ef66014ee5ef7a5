"""One LLM client layer over the ``openai`` package, shared by every component.

HTTP-level retries (timeouts, connection errors, 408/409/429/5xx) are decided here, not
by the SDK (its ``max_retries`` is 0): :mod:`ioa_synth.llm.retries` sends a failed try
again after the server's ``Retry-After`` or an exponential backoff with jitter, at most
``max_retries`` times, and never waits longer in all than ``max_wait`` seconds. Every
HTTP try, failed or not, is reported to ``on_call`` as a :class:`CallRecord` (secrets
redacted) and counted in the client's :class:`~ioa_synth.llm.activity.CallActivity`
(calls in flight, failed, retried, timed out) for the progress line. On top,
:meth:`LLMClient.complete_json` re-requests a reply that is not valid JSON, fails the
caller's parser, or stopped on ``finish_reason == "length"`` (bounded by
``content_retries``). None of these retries is a regeneration round.

A leading ``<think>`` block is stripped and a null ``content`` falls back to
``reasoning_content``/``reasoning`` (:mod:`ioa_synth.llm.replies`; the record's
``reply_field`` says which field was used); setup problems raise
:class:`~ioa_synth.llm.errors.SetupError` and latch (no further request to that
endpoint); a provider's content filter or refusal raises
:class:`~ioa_synth.llm.errors.ProviderRefusal` for that case only; with ``stop`` set no
new request starts (:class:`~ioa_synth.llm.errors.CallCancelled`).

The endpoint a client calls is described in :mod:`ioa_synth.llm.endpoint`, the request's
``response_format``, seed bound, stored record and redaction in :mod:`ioa_synth.llm.request`;
their names stay importable from here.
"""

from __future__ import annotations

import contextlib
import copy
import json
import threading
import time
from typing import Any, Callable, Iterator, TypeVar

import openai
from pydantic_core import to_json

from ioa_synth.llm.endpoint import EMBEDDED_MAX_TOKENS, EMBEDDED_TIMEOUT, Endpoint
from ioa_synth.llm.errors import (CallCancelled, LLMCallError, ProviderRefusal, SetupError, StopRun, classify,
                                  content_filter_message)
from ioa_synth.llm.replies import candidate_texts, provider_refusal, reply_json
from ioa_synth.llm.request import SEED_RANGE, CallRecord, redact, response_format
from ioa_synth.llm.retries import STOP_NOTE, RetryPolicy, retry_after
from ioa_synth.llm.on_wire import requests_sent
from ioa_synth.llm.serving import STREAM_OPTIONS, stream_completion
from ioa_synth.llm.transport import ChatPost
from ioa_synth.llm.activity import CallActivity
from ioa_synth.llm.batch_api import BatchSender
from ioa_synth.text.plural import plural

__all__ = ["CallCancelled", "CallRecord", "EMBEDDED_MAX_TOKENS", "EMBEDDED_TIMEOUT", "Endpoint", "LLMCallError",
           "LLMClient", "ProviderRefusal", "SEED_RANGE", "SetupError", "StopRun", "redact", "response_format",
           "retry_after"]

T = TypeVar("T")


class LLMClient:
    """Chat-completions client of one component endpoint (thread-safe).

    Args:
        endpoint: the resolved endpoint.
        http_client: optional ``httpx2.Client`` for the SDK (tests may inject transports here).
        stop: when set, no new request starts (:class:`CallCancelled`); rate-limit
            waits end early.
        on_wait: called with a one-line note (``"judge: HTTP 429, waiting 30 s
            (Retry-After; ...) before retry 1"``) before each wait for a retry, for the progress line.

    ``activity`` (replaceable, e.g. by one shared with the progress display) counts the
    client's tries in flight, failed, retried and timed out.
    """

    def __init__(self, endpoint: Endpoint, http_client: Any = None, stop: threading.Event | None = None,
                 on_wait: Callable[[str], None] | None = None) -> None:
        self.endpoint = endpoint
        # max_retries=0: the SDK would wait out a Retry-After (up to 60-120 s) beyond max_wait, unseen
        self._client = openai.OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key,
                                     max_retries=0, timeout=endpoint.timeout, http_client=http_client)
        self._chat_post = ChatPost(self._client, plain=http_client is None)
        self._secrets = [endpoint.api_key]
        self.stop = stop or threading.Event()
        self.on_wait = on_wait or (lambda note: None)
        self.setup_error: SetupError | None = None
        #: in batch mode, what answers requests instead of the endpoint (:mod:`ioa_synth.runs.batch`)
        self.batch: BatchSender | None = None
        self.activity = CallActivity()
        self.policy = RetryPolicy(endpoint.component, endpoint.max_retries, endpoint.max_wait)

    def request_body(self, messages: list[dict[str, str]], schema: dict[str, Any] | None, name: str,
                     seed: int | None = None, temperature: float | None = None) -> dict[str, Any]:
        """The chat-completions request (as keyword arguments) for ``messages``; ``seed``
        is sent when given and the endpoint's ``seed`` base is not ``None``; ``temperature``
        overrides the endpoint's for this one call (``None``: the endpoint's)."""
        ep = self.endpoint
        body: dict[str, Any] = {"model": ep.model, "messages": messages}
        temp = ep.temperature if temperature is None else temperature
        if temp is not None:
            body["temperature"] = temp
        if seed is not None and ep.seed is not None:
            body["seed"] = seed
        fmt = response_format(ep.structured_output, schema, name, ep.json_schema_strict) if schema else None
        if fmt is not None:
            body["response_format"] = fmt
        body.update(ep.request_options)
        if ep.slots is not None:
            body["stream"] = True  # closing a streamed reply stops the server decoding it
            body["stream_options"] = dict(STREAM_OPTIONS)  # the usage chunk, where the server sends one
            body["return_progress"] = True  # llama-server: how far the prompt is read, for the progress line
        return body

    def complete_json(self, messages: list[dict[str, str]], schema: dict[str, Any] | None, name: str,
                      parse: Callable[[Any], T], on_call: Callable[[CallRecord], None],
                      seed: int | None = None, temperature: float | None = None,
                      decode: Callable[[str], Any] = reply_json) -> tuple[T, CallRecord]:
        """Request a JSON reply and return ``(parse(decoded_json), record_of_the_good_call)``.

        Failed tries are passed to ``on_call`` as they happen; the good call is returned,
        not reported, so that the caller can store it together with what it derives.
        ``seed`` (from :func:`ioa_synth.runs.recorder.call_seed`) is sent as the request's ``seed``, plus the try
        index on a content retry (the same seed would reproduce the same rejected reply);
        the sent value is in each record's ``request_json``. ``temperature`` overrides the
        endpoint's for this call (e.g. a deterministic probe on a sampling agent's model).
        ``decode`` turns the reply text into what ``parse`` gets (default: its JSON; a
        free-text reply, e.g. a chat turn or a fenced code block, passes
        :func:`~ioa_synth.llm.replies.reply_text` with ``schema`` ``None``). A reply cut
        off at ``max_tokens`` is rejected unless ``decode`` says it ``keeps_cut_off`` (a
        chat turn that ran long is still a turn; cut-off JSON is not JSON).

        Raises:
            SetupError: a setup problem (HTTP 400/401/403/404/422, server unreachable);
                every later call of this client raises it again without a request.
            ProviderRefusal: a content filter (HTTP 400 or ``finish_reason``) or a
                ``refusal`` answered this request (not retried: the case fails).
            CallCancelled: ``stop`` is set.
            LLMCallError: HTTP retries exhausted (or their waits would pass
                ``max_wait``), or every content retry gave invalid JSON / a rejected
                parse / a length stop.
        """
        last_error = "no attempt made"
        for try_index in range(self.endpoint.content_retries + 1):
            try_seed = None if seed is None else (seed + try_index) % SEED_RANGE
            body = self.request_body(messages, schema, name, try_seed, temperature)
            sent = {k: v for k, v in body.items() if k != "extra_body"} | body.get("extra_body", {})
            payload = to_json(sent)  # UTF-8 JSON from pydantic-core: a third of json.dumps + encode
            request_json = redact(payload.decode(), self._secrets)
            rec = CallRecord(model=self.endpoint.model, base_url=self.endpoint.base_url,
                             temperature=body.get("temperature"), request_json=request_json, try_index=try_index)
            try:
                reply = self._post(payload, rec, on_call)
            except openai.APIError as exc:
                refused, note = content_filter_message(exc), getattr(exc, STOP_NOTE, None)
                if refused is not None:
                    rec.error = redact(refused, self._secrets)
                elif note:
                    rec.error = f"{rec.error}; not retried: {note}"
                on_call(rec)
                if refused is not None:
                    raise ProviderRefusal(rec.error) from exc
                setup = self.classify(exc)
                if setup is not None:
                    self.setup_error = setup
                    raise setup from exc
                raise LLMCallError(rec.error) from exc
            value, last_error = self._read(reply, rec, parse, decode)
            if last_error is None:
                return value, rec
            self.activity.rejected(self.endpoint.component)
            on_call(rec)
            if rec.reply_field == "refusal":
                raise ProviderRefusal(last_error)
            if try_index < self.endpoint.content_retries:
                self.activity.retrying(self.endpoint.component)
        raise LLMCallError(f"no usable reply after {plural(self.endpoint.content_retries + 1, 'try', 'tries')}: "
                           f"{last_error}")

    def _post(self, payload: bytes, rec: CallRecord, on_call: Callable[[CallRecord], None]) -> Any:
        """Send the body (encoded once) until a try succeeds or
        :class:`~ioa_synth.llm.retries.RetryPolicy` gives up, and return the reply as decoded
        JSON (``None`` when it is not JSON). Each failed try that is sent again is reported
        to ``on_call`` as a copy of ``rec``; the last one is left in ``rec`` (``error``,
        ``latency_ms``) for the caller, with why the retries stopped when their waits would
        pass ``max_wait``. On a server of limited parallelism (``endpoint.slots``) a try
        waits for a free slot first; its timeout and latency count from then."""
        component = self.endpoint.component
        if self.batch is not None:  # answered by a batch line, or parked until a wave answers it
            return self.batch.answer(self, payload, rec, on_call)

        def on_retry(exc: BaseException, delay: float, note: str) -> None:
            self.activity.retrying(component)
            on_call(copy.copy(rec))
            if delay >= 1:
                self.on_wait(note)

        def sleep(seconds: float) -> None:
            if self.stop.wait(seconds):
                raise CallCancelled(f"{component}: the run is stopping during a wait before a retry")

        for attempt in self.policy.retrying(sleep, on_retry):
            with attempt:
                if self.setup_error is not None:
                    raise self.setup_error
                if self.stop.is_set():
                    raise CallCancelled(f"{component}: the run is stopping; request not sent")
                with self._slot():
                    streams = self.endpoint.slots is not None
                    start, handle = time.perf_counter(), self.activity.begin(component, streams)
                    rec.error = None
                    try:
                        data = self._send(payload, lambda: self.activity.streamed(handle),
                                          lambda done, total: self.activity.prompt_read(handle, done, total))
                    except openai.APIError as exc:
                        rec.latency_ms = (time.perf_counter() - start) * 1000
                        rec.error = redact(f"{type(exc).__name__}: {exc}", self._secrets)
                        self.activity.end(handle, exc, timed_out=isinstance(exc, openai.APITimeoutError))
                        raise
                    except BaseException as exc:
                        self.activity.end(handle, exc)
                        raise
                    rec.latency_ms = (time.perf_counter() - start) * 1000
                    self.activity.end(handle)
                    return data
        raise AssertionError("unreachable: tenacity returns or raises")  # pragma: no cover

    @contextlib.contextmanager
    def _slot(self) -> Iterator[None]:
        """Hold one of the server's decoding slots (no-op for a server without a known limit)."""
        slots = self.endpoint.slots
        if slots is None:
            yield
            return
        if not slots.acquire(self.stop):
            raise CallCancelled(f"{self.endpoint.component}: the run is stopping; request not sent")
        try:
            yield
        finally:
            slots.release()

    def _send(self, payload: bytes, on_token: Callable[[], None] = lambda: None,
              on_prompt: Callable[[int, int], None] = lambda done, total: None) -> Any:
        """One request; the reply decoded (``None`` when not JSON). Streamed on a server of
        limited parallelism (closing the stream stops its decoding,
        :func:`ioa_synth.llm.serving.stream_completion`), calling ``on_token()`` per token."""
        if self.endpoint.slots is not None:
            requests_sent()  # the helpers' jobs may start: this call takes seconds
            data = stream_completion(self._client, payload, self.endpoint.timeout, self.stop, on_token, on_prompt)
            if data is None:
                raise CallCancelled(f"{self.endpoint.component}: the run is stopping; reply abandoned")
            return data
        return self._chat_post(payload)

    def _read(self, data: Any, rec: CallRecord, parse: Callable[[Any], T],
              decode: Callable[[str], Any] = reply_json) -> tuple[T | None, str | None]:
        if not isinstance(data, dict):
            rec.error = "reply is not a chat-completions JSON object"
            return None, rec.error
        usage = data.get("usage") or {}
        rec.prompt_tokens, rec.completion_tokens = usage.get("prompt_tokens"), usage.get("completion_tokens")
        choices = data.get("choices") or []
        choice = choices[0] if choices and isinstance(choices[0], dict) else None
        message = (choice or {}).get("message") or {}
        rec.finish_reason = (choice or {}).get("finish_reason")
        candidates = candidate_texts(message) if isinstance(message, dict) else []
        content = message.get("content") if isinstance(message, dict) else None
        rec.response_text = redact(content if isinstance(content, str) else None, self._secrets)
        refused = provider_refusal(choice) if choice is not None else None
        if refused is not None:
            rec.error, text = (redact(t, self._secrets) for t in refused)
            rec.reply_field, rec.response_text = "refusal", text
            return None, rec.error
        if choice is None or not candidates:
            rec.error = "empty reply (no choices, no content and no reasoning field)"
            return None, rec.error
        if rec.finish_reason == "length" and not getattr(decode, "keeps_cut_off", False):
            rec.error = "reply cut off (finish_reason=length)"
            return None, rec.error
        for field_name, text in candidates:
            # the reply as stored, and as parsed: a model that repeats the key (it can read it
            # in an error message or a prompt) must not carry it into the next prompt or a record
            text = redact(text, self._secrets)
            rec.reply_field, rec.response_text = field_name, text
            try:
                return parse(decode(text)), None
            except json.JSONDecodeError as exc:
                rec.error = f"invalid JSON in {field_name}: {exc.msg} at char {exc.pos}"
            except ValueError as exc:  # pydantic.ValidationError and JudgementError are ValueErrors
                rec.error = redact(f"reply rejected: {_one_line(exc)}", self._secrets)
        return None, rec.error

    def classify(self, exc: openai.APIError) -> SetupError | None:
        """:func:`~ioa_synth.llm.errors.classify` for this endpoint, with the key redacted
        from the message (a server may quote it back, e.g. in a 401)."""
        setup = classify(exc, self.endpoint.component, self.endpoint.base_url)
        if setup is not None:
            setup.args = (redact(str(setup), self._secrets),)
            setup.hint = redact(setup.hint, self._secrets) or ""
        return setup

    def list_models(self) -> list[str]:
        """Model ids the endpoint serves (``GET /models``, with the SDK's retries);
        raises ``openai.APIError``."""
        return [m.id for m in self._client.with_options(max_retries=self.endpoint.max_retries).models.list()]

    def close(self) -> None:
        """Release the HTTP connections."""
        self._chat_post.close()
        self._client.close()


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:500]
