"""One chat-completions request apart from the client that sends it: its
``response_format`` field for a structured-output mode, the bound of its per-call ``seed``,
and what the catalog stores of it (:class:`CallRecord`, secrets removed by :func:`redact`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ioa_synth.llm.config import StructuredOutput


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
    reply_field: str | None = None
    #: how the request went: ``live`` (an HTTP request) or ``batch`` (a line of a batch)
    via: str = "live"
    #: the batch line (``custom_id``) that answered, for a batch call
    batch_line: str | None = None
    #: a batch answer already stored by an earlier pass over its case (not stored again)
    already_stored: bool = False


#: Per-call seeds stay below this bound (a non-negative 32-bit signed integer, which every
#: server that takes ``seed`` accepts).
SEED_RANGE = 2**31


def response_format(mode: StructuredOutput, schema: dict[str, Any], name: str, strict: bool) -> dict[str, Any] | None:
    """The ``response_format`` request field for a structured-output ``mode``."""
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return None


#: Shortest key :func:`redact` hides (a provider's real keys are tens of characters).
MIN_SECRET_CHARS = 8


def redact(text: str | None, secrets: list[str]) -> str | None:
    """``text`` with every secret string of :data:`MIN_SECRET_CHARS` or more replaced by
    ``***`` (shorter ones are placeholders such as ``EMPTY`` or ``dummy``, which local
    servers take as keys and which a model may well write in its own text)."""
    if text is None:
        return None
    for s in secrets:
        if s and len(s) >= MIN_SECRET_CHARS:
            text = text.replace(s, "***")
    return text
