"""One LLM client layer over the ``openai`` package, shared by every component.

HTTP-level retries (429 honouring ``Retry-After``, 5xx, timeouts, connection errors;
exponential backoff with jitter, bounded by ``max_retries``) are the ``openai``
client's own. On top, :meth:`LLMClient.complete_json` re-requests a reply that is
not valid JSON, fails the caller's parser, or stopped on ``finish_reason ==
"length"`` (bounded by ``content_retries``). None of these retries is a
regeneration round. Every request, successful or not, is reported to ``on_call``
as a :class:`CallRecord` with secrets redacted.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

import httpx
import openai

from ioa_synth.llm.config import ComponentConfig, StructuredOutput

T = TypeVar("T")

#: ``max_tokens`` sent to the embedded model when the config gives none: a schema alone
#: does not guarantee that a small model's output ends.
EMBEDDED_MAX_TOKENS = {"generator": 4096, "judge": 1536, "audit_judge": 1536,
                       "prober": 1536, "simulator": 512, "validity_filter": 1024}


class LLMCallError(RuntimeError):
    """A request that could not produce a usable reply after all retries."""


@dataclass
class Endpoint:
    """A resolved component endpoint. ``api_key`` is never written anywhere."""

    component: str
    base_url: str
    model: str
    api_key: str = field(repr=False)
    temperature: float | None
    structured_output: StructuredOutput
    json_schema_strict: bool
    request_options: dict[str, Any]
    max_retries: int
    content_retries: int
    timeout: float
    embedded: bool = False

    @classmethod
    def from_config(cls, component: str, cfg: ComponentConfig, base_url: str, model: str,
                    api_key: str | None, embedded: bool) -> "Endpoint":
        """Build an endpoint from a component's config and its resolved URL, model and key."""
        so = cfg.structured_output or ("json_object_schema" if embedded else "json_schema")
        options = dict(cfg.request_options)
        if embedded and not {"max_tokens", "max_completion_tokens"} & set(options):
            options["max_tokens"] = EMBEDDED_MAX_TOKENS.get(component, 2048)
        return cls(component=component, base_url=base_url, model=model, api_key=api_key or "no-key",
                   temperature=cfg.effective_temperature(component), structured_output=so,
                   json_schema_strict=cfg.json_schema_strict, request_options=options,
                   max_retries=cfg.max_retries, content_retries=cfg.content_retries, timeout=cfg.timeout,
                   embedded=embedded)

    def identity(self) -> dict[str, Any]:
        """What defines this endpoint's behaviour, for the fingerprint (no key, no port of
        the embedded server)."""
        return {"base_url": "embedded" if self.embedded else self.base_url, "model": self.model,
                "temperature": self.temperature, "structured_output": self.structured_output,
                "json_schema_strict": self.json_schema_strict, "request_options": self.request_options}


@dataclass
class CallRecord:
    """One request as stored in the catalog's ``llm_calls`` (secrets already redacted)."""

    model: str
    base_url: str
    temperature: float | None
    request_json: str
    try_index: int
    response_text: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    error: str | None = None


def response_format(mode: StructuredOutput, schema: dict[str, Any], name: str, strict: bool) -> dict[str, Any] | None:
    """The ``response_format`` request field for a structured-output ``mode``."""
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return None


def redact(text: str | None, secrets: list[str]) -> str | None:
    """``text`` with every secret string replaced by ``***``."""
    if text is None:
        return None
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    return text


class LLMClient:
    """Chat-completions client of one component endpoint (thread-safe).

    Args:
        endpoint: the resolved endpoint.
        http_client: optional ``httpx.Client`` (tests inject transports here).
    """

    def __init__(self, endpoint: Endpoint, http_client: Any = None) -> None:
        self.endpoint = endpoint
        self._client = openai.OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key,
                                     max_retries=endpoint.max_retries, timeout=endpoint.timeout,
                                     http_client=http_client)
        self._secrets = [endpoint.api_key]

    def request_body(self, messages: list[dict[str, str]], schema: dict[str, Any] | None, name: str) -> dict[str, Any]:
        """The chat-completions request (as keyword arguments) for ``messages``."""
        ep = self.endpoint
        body: dict[str, Any] = {"model": ep.model, "messages": messages}
        if ep.temperature is not None:
            body["temperature"] = ep.temperature
        fmt = response_format(ep.structured_output, schema, name, ep.json_schema_strict) if schema else None
        if fmt is not None:
            body["response_format"] = fmt
        body.update(ep.request_options)
        return body

    def complete_json(self, messages: list[dict[str, str]], schema: dict[str, Any] | None, name: str,
                      parse: Callable[[Any], T], on_call: Callable[[CallRecord], None]) -> tuple[T, CallRecord]:
        """Request a JSON reply and return ``(parse(decoded_json), record_of_the_good_call)``.

        Failed tries are passed to ``on_call`` as they happen; the good call is returned,
        not reported, so that the caller can store it together with what it derives.

        Raises:
            LLMCallError: HTTP retries exhausted, a non-retryable HTTP error, or every
                content retry gave invalid JSON / a rejected parse / a length stop.
        """
        body = self.request_body(messages, schema, name)
        sent = {k: v for k, v in body.items() if k != "extra_body"} | body.get("extra_body", {})
        payload = json.dumps(sent, ensure_ascii=False)
        request_json = redact(payload, self._secrets)
        last_error = "no attempt made"
        for try_index in range(self.endpoint.content_retries + 1):
            rec = CallRecord(model=self.endpoint.model, base_url=self.endpoint.base_url,
                             temperature=self.endpoint.temperature, request_json=request_json, try_index=try_index)
            start = time.perf_counter()
            try:
                # the SDK's own POST and retries, sending the body encoded once; the reply is read as plain JSON
                resp = self._client.post("/chat/completions", content=payload.encode(), cast_to=httpx.Response,
                                         options={"headers": {"Content-Type": "application/json"}})
            except openai.APIError as exc:
                rec.latency_ms = (time.perf_counter() - start) * 1000
                rec.error = redact(f"{type(exc).__name__}: {exc}", self._secrets)
                on_call(rec)
                raise LLMCallError(rec.error) from exc
            rec.latency_ms = (time.perf_counter() - start) * 1000
            value, last_error = self._read(resp, rec, parse)
            if last_error is None:
                return value, rec
            on_call(rec)
        raise LLMCallError(f"no usable reply after {self.endpoint.content_retries + 1} tries: {last_error}")

    def _read(self, resp: Any, rec: CallRecord, parse: Callable[[Any], T]) -> tuple[T | None, str | None]:
        try:
            data = resp.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            rec.error = "reply is not a chat-completions JSON object"
            return None, rec.error
        usage = data.get("usage") or {}
        rec.prompt_tokens, rec.completion_tokens = usage.get("prompt_tokens"), usage.get("completion_tokens")
        choices = data.get("choices") or []
        choice = choices[0] if choices and isinstance(choices[0], dict) else None
        content = ((choice or {}).get("message") or {}).get("content")
        rec.finish_reason = (choice or {}).get("finish_reason")
        rec.response_text = redact(content, self._secrets)
        if choice is None or content is None:
            rec.error = "empty reply (no choices or no content)"
        elif rec.finish_reason == "length":
            rec.error = "reply cut off (finish_reason=length)"
        else:
            try:
                return parse(json.loads(_strip_fences(content), strict=False)), None
            except json.JSONDecodeError as exc:
                rec.error = f"invalid JSON: {exc.msg} at char {exc.pos}"
            except ValueError as exc:  # pydantic.ValidationError and JudgementError are ValueErrors
                rec.error = redact(f"reply rejected: {_one_line(exc)}", self._secrets)
        return None, rec.error

    def list_models(self) -> list[str]:
        """Model ids the endpoint serves (``GET /models``); raises ``openai.APIError``."""
        return [m.id for m in self._client.models.list()]

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._client.close()


def _strip_fences(text: str) -> str:
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else ""
        if t.rstrip().endswith("```"):
            t = t.rstrip()[:-3]
    return t


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:500]
