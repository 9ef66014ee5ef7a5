"""Helpers of the scale tests (estimate, batch mode): a responder whose replies depend on
the request alone (so live and batch runs, which send in different orders, get the same
ones), record comparison, and a scripted server with the Batch API."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ioa_synth.testing.scripted_server import ProtocolResponder, chat_reply, judge_scores, request_kind


def _share(*parts: object) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32


class KeyedResponder:
    """Valid IoA-Suite replies; a judge gives failing scores when a hash of the seed title
    and the request's ``seed`` falls below ``fail_share`` (different draws for a
    regeneration, whose seed differs), and ``badjson_share`` of generator replies are
    not JSON. Usage: ``count(text)`` tokens (default: characters / 4)."""

    def __init__(self, fail_share: float = 0.0, badjson_share: float = 0.0, count=None) -> None:
        self.base = ProtocolResponder()
        self.fail_share, self.badjson_share = fail_share, badjson_share
        self.count = count or (lambda text: max(1, len(text) // 4))

    def __call__(self, body: dict[str, Any], headers: dict[str, str]):
        kind = request_kind(body)
        text = " ".join(m["content"] for m in body["messages"])
        title = text.split("Title: ", 1)[-1].split("\n", 1)[0][:200]
        if kind.endswith("generator") and _share("bad", title, body.get("seed"), kind) < self.badjson_share:
            content = '{"this is": not json'
        elif kind.endswith("judge"):
            passing = _share(title, body.get("seed"), kind) >= self.fail_share
            content = json.dumps(judge_scores(kind, body, passing=passing))
        else:
            reply = self.base(body, headers)
            if reply.status != 200:
                return reply
            content = reply.body["choices"][0]["message"]["content"]
        prompt = "".join(m["content"] for m in body["messages"])
        return chat_reply(content, prompt_tokens=self.count(prompt), completion_tokens=self.count(content))


def records(out: Path) -> dict[str, dict]:
    """Accepted build records by path below ``out``."""
    return {str(p.relative_to(out)): json.loads(p.read_text()) for p in sorted(out.rglob("*.json"))
            if "quality" in p.read_text()}
