"""Errors of LLM calls, and which of them are *setup* problems (stop the run).

A setup problem is one that every request of a component will hit again: HTTP 400,
401, 403, 404 or 422 (a parameter the model refuses, a wrong key, a base URL without
``/v1``, an unknown model), or a server that cannot be reached even after the HTTP
retries. It stops the run instead of failing one case after another; its message
quotes the server and names the config key or variable most likely at fault.

A *provider refusal* is the opposite: a content filter (HTTP 400 whose error code or
message names a content filter or usage policy, as Azure OpenAI and OpenAI answer for a
flagged prompt; a 200 with ``finish_reason: "content_filter"``) or a model's refusal (a
``refusal`` field) concerns one case's request. It fails that case only
(:class:`ProviderRefusal`); the run goes on and a re-run asks again.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import openai

from ioa_synth.core.errors import LLMCallError, StopRun, StorageFull  # noqa: F401

# LLMCallError, StopRun and StorageFull are defined in core (an atomic write raises StorageFull): re-exported here

#: HTTP statuses that mean "this setup cannot work", not "this case went wrong".
#: (501: the server does not implement what every request asks, e.g. llama.cpp's "not supported")
SETUP_STATUSES = frozenset({400, 401, 403, 404, 422, 501})

#: Phrases of a 400 that are about one request (too long a prompt), not the setup.
CASE_PHRASES = ("context length", "context_length", "maximum context", "context window", "context size",
                "too many tokens", "prompt is too long")


class ProviderRefusal(LLMCallError):
    """The provider filtered or refused one request (content filter, ``refusal``): the
    case fails with this message, which starts with ``content filter`` or ``refusal`` and
    quotes the provider's text; not a setup problem."""


class SetupError(StopRun):
    """The component's setup cannot work (see module docstring).

    Attributes:
        component: the component (``generator``, ``judge``...).
        hint: what to change, naming the config key or environment variable.
    """

    def __init__(self, message: str, component: str, hint: str) -> None:
        super().__init__(f"{message}; {hint}" if hint else message)
        self.component, self.hint = component, hint


class CallCancelled(StopRun):
    """The run is stopping (Ctrl-C or a setup error elsewhere): no new request is sent."""


def server_message(exc: openai.APIStatusError) -> str:
    """The server's own error message of an HTTP error (``error.message`` of the body,
    else the body text), on one line, at most 300 characters."""
    body: Any = exc.body
    if isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        text = inner.get("message") or inner.get("detail") or str(body)
    else:
        text = (exc.response.text if exc.response is not None else "") or str(exc)
        if text.lstrip()[:14].lower().startswith(("<!doctype html", "<html")):  # a web server's error page
            import lxml.html

            page = lxml.html.fromstring(text)
            body = page.find("body")  # the body only: a title repeats its heading ("Error response" twice)
            text = (body if body is not None else page).text_content()
    return " ".join(str(text).split())[:300]


#: Error codes a provider's content filter or usage-policy check answers with (Azure OpenAI:
#: ``content_filter``; OpenAI: ``content_policy_violation``, ``invalid_prompt`` for a flagged prompt).
FILTER_CODES = frozenset({"content_filter", "content_policy_violation", "invalid_prompt", "responsibleaipolicyviolation"})
#: Phrases of an HTTP 400 message that mean the same.
FILTER_PHRASES = ("content filter", "content_filter", "content management policy", "usage policy",
                  "content policy", "safety system", "flagged as potentially")


def content_filter_message(exc: openai.APIError) -> str | None:
    """``content filter: HTTP 400 from the provider: "<its message>"`` when ``exc`` is a
    provider's content filter or usage-policy refusal of one request, else ``None``."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 403, 422):
        return None
    body: Any = exc.body
    inner = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else body
    codes = set()
    if isinstance(inner, dict):
        codes = {str(inner.get(k) or "").lower() for k in ("code", "type")}
        innererror = inner.get("innererror")
        if isinstance(innererror, dict):
            codes.add(str(innererror.get("code") or "").lower())
    message = server_message(exc)
    if not (codes & FILTER_CODES or any(p in message.lower() for p in FILTER_PHRASES)):
        return None
    return f'content filter: HTTP {exc.status_code} from the provider: "{message}"'


def setup_hint(component: str, status: int, message: str, base_url: str, route: str = "/chat/completions") -> str:
    """The config key or variable most likely behind an HTTP ``status`` with ``message``
    (``route``: the path below ``base_url`` that was asked, e.g. ``/models``)."""
    up, low = component.upper(), message.lower()
    if status in (401, 403):
        return f"check {up}_API_KEY (or OPENAI_API_KEY)"
    if "temperature" in low:
        return f'set "temperature": null for {component} in --config'
    if re.search(r"\bseed\b", low):
        return f'set "seed": null for {component} in --config'
    if re.search(r"(?<!completion_)max_tokens", low):
        return f'use "max_completion_tokens" instead of "max_tokens" in {component}.request_options'
    if any(w in low for w in ("response_format", "json_schema", "json schema", "structured", "json_object")):
        return f'set "structured_output" for {component} in --config ("json_object_schema" or "none")'
    if status == 404 and not base_url.rstrip("/").endswith("/v1") and "model" not in low:
        return f"{up}_BASE_URL (or OPENAI_BASE_URL) {base_url} may be missing /v1"
    if "model" in low:
        return f'set "model" for {component} in --config to a model the server lists'
    if status == 404:
        return (f"check {up}_BASE_URL (or OPENAI_BASE_URL) {base_url}: the server there has no "
                f"{route} route (is it an OpenAI-compatible API?)")
    return f"check the {component} block of --config (request_options, structured_output, temperature, seed)"


def classify(exc: openai.APIError, component: str, base_url: str) -> SetupError | None:
    """A :class:`SetupError` for ``exc`` when it is a setup problem, else ``None``.

    ``exc`` is what the ``openai`` client raised after its own retries: an
    ``APIStatusError`` with a status in :data:`SETUP_STATUSES` (unless its message is
    about one over-long request or a content filter), or an ``APIConnectionError`` that
    is not a timeout.
    """
    if content_filter_message(exc) is not None:
        return None
    if isinstance(exc, openai.APIStatusError) and exc.status_code in SETUP_STATUSES:
        message = server_message(exc)
        if any(p in message.lower() for p in CASE_PHRASES):
            return None
        hint = setup_hint(component, exc.status_code, message, base_url, _route(exc, base_url))
        return SetupError(f"{component}: HTTP {exc.status_code} from {base_url}: {message}", component, hint)
    if isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError):
        cause = exc.__cause__
        why = f" ({type(cause).__name__}: {' '.join(str(cause).split())[:120]})" if cause else ""
        return SetupError(f"{component}: cannot reach {base_url}{why}", component,
                          f"check {component.upper()}_BASE_URL (or OPENAI_BASE_URL) and that the server is running")
    return None


def _route(exc: openai.APIStatusError, base_url: str) -> str:
    """The path of the failed request below ``base_url`` (``/chat/completions`` when the
    error carries no request, e.g. one raised by the toolkit's own transport)."""
    try:
        path = exc.request.url.path
    except AttributeError:
        return "/chat/completions"
    base = urlsplit(base_url).path.rstrip("/")
    return (path[len(base):] if base and path.startswith(base) else path) or "/chat/completions"
