"""From a chat-completions reply to the JSON it carries.

Reasoning models served without a reasoning parser prefix the answer with a
``<think>…</think>`` (or ``<thinking>…</thinking>``) block; some chat templates open the
block in the prompt, so the reply starts inside it and only ``</think>`` appears. A
server whose reasoning parser mis-splits leaves ``content`` null and puts the whole
answer in ``reasoning_content`` (vLLM, DeepSeek) or ``reasoning`` (OpenRouter, Ollama).
:func:`reply_json` and :func:`candidate_texts` cover both, for fresh replies and for
replies replayed from the catalog alike.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Message fields tried, in order, when ``content`` is null or empty.
REASONING_FIELDS = ("reasoning_content", "reasoning")

_THINK = re.compile(r"^\s*<(think|thinking)>.*?</\1>\s*", re.S | re.I)
_CLOSE = re.compile(r"</(think|thinking)>", re.I)


def strip_think(text: str) -> str:
    """``text`` without a leading ``<think>…</think>``/``<thinking>…</thinking>`` block;
    a reply holding a closing tag but no opening one (the template opened the block)
    keeps what follows the last closing tag."""
    stripped = _THINK.sub("", text, count=1)
    if stripped is text or stripped == text:
        closes = list(_CLOSE.finditer(text))
        if closes and not text.lstrip().startswith(("{", "[", "```")):
            return text[closes[-1].end():]
    return stripped


def strip_fences(text: str) -> str:
    """``text`` without a surrounding Markdown code fence (```json … ```)."""
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else ""
        if t.rstrip().endswith("```"):
            t = t.rstrip()[:-3]
    return t


def reply_json(text: str) -> Any:
    """Decode the JSON of a reply text (think block and code fence removed).

    Raises:
        json.JSONDecodeError: the rest is not JSON.
    """
    return json.loads(strip_fences(strip_think(text)), strict=False)


def reply_text(text: str) -> str:
    """The text of a free-text reply (a leading think block removed, spaces around it
    dropped). A reply cut off at ``max_tokens`` is kept as it is (``keeps_cut_off``: the
    client does not reject it for its ``finish_reason``).

    Raises:
        ValueError: nothing is left.
    """
    out = strip_think(text).strip()
    if not out:
        raise ValueError("empty reply text")
    return out


reply_text.keeps_cut_off = True  # type: ignore[attr-defined]


def candidate_texts(message: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field, text)`` pairs to try for a chat ``message``: ``content`` when it is a
    non-empty string, else each non-empty field of :data:`REASONING_FIELDS`."""
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        return [("content", content)]
    return [(f, message[f]) for f in REASONING_FIELDS if isinstance(message.get(f), str) and message[f].strip()]


def provider_refusal(choice: dict[str, Any]) -> tuple[str, str] | None:
    """``(error, provider_text)`` when a chat-completions ``choice`` was filtered or refused
    by the provider, else ``None``.

    - a ``refusal`` string in the message (OpenAI's structured-output refusals):
      ``refusal: "<text>"``;
    - ``finish_reason == "content_filter"`` (OpenAI, Azure OpenAI, vLLM guardrails):
      ``content filter: finish_reason content_filter ...`` naming the categories Azure
      marks ``filtered`` in ``content_filter_results``, and quoting any partial content.
    """
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        return f'refusal: the provider refused the request: "{_quote(refusal)}"', refusal
    if choice.get("finish_reason") != "content_filter":
        return None
    results = choice.get("content_filter_results")
    filtered = sorted(k for k, v in results.items() if isinstance(v, dict) and v.get("filtered")) \
        if isinstance(results, dict) else []
    categories = f" ({', '.join(filtered)})" if filtered else ""
    content = message.get("content") if isinstance(message.get("content"), str) else ""
    partial = f': "{_quote(content)}"' if content.strip() else " (no content)"
    return f"content filter: finish_reason content_filter{categories}; the reply was withheld{partial}", content


def _quote(text: str, limit: int = 300) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[:limit] + "..."
