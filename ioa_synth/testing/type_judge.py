"""A scripted ``type_judge`` (``label-types``) at the HTTP boundary: each request is answered
with ``answer(id)`` for every id its reply schema asks a type for."""

from __future__ import annotations

import json
from typing import Any, Callable

from ioa_synth.testing.scripted_replies import Reply, chat_reply


class TypeJudgeResponder:
    """Responder for :class:`~ioa_synth.testing.scripted_server.ScriptedServer`; ``prompts``
    keeps the user message of each type-judge request, in arrival order."""

    def __init__(self, answer: Callable[[str], str]) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def __call__(self, body: dict[str, Any], headers: dict[str, Any]) -> Reply:
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
        ids = list(schema.get("properties", {}).get("ma_scores", {}).get("properties", {}))
        if not ids:
            return Reply(status=400, body={"error": {"message": "not a type-judge request"}})
        self.prompts.append(body["messages"][-1]["content"])
        return chat_reply(json.dumps({"ma_scores": {i: {"type": self.answer(i)} for i in ids}}), model=body["model"])
