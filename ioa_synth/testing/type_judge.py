"""A scripted ``type_judge`` (``label-types``) at the HTTP boundary: each request is answered
with ``answer(id)`` for every id its reply schema asks a type for; and a build's stage-1
judge that reads each point's type as planned (:class:`PlanReadingJudge`)."""

from __future__ import annotations

import json
from typing import Any, Callable

from ioa_synth.testing.scripted_replies import Reply, chat_reply, request_kind


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


class PlanReadingJudge:
    """Wraps a build's responder (``base``): its stage-1 judge reads every point's type as
    the case's stage-1 request fixed it (the schema's ``const``), as a judge agreeing with
    the plan would; ``planned`` keeps those types by seed title, ``judged`` counts the
    verdicts that carried a type. Every other reply is ``base``'s."""

    def __init__(self, base: Callable[[dict[str, Any], dict[str, Any]], Reply]) -> None:
        self.base = base
        self.planned: dict[str, list[str]] = {}
        self.judged = 0

    def __call__(self, body: dict[str, Any], headers: dict[str, Any]) -> Reply:
        reply = self.base(body, headers)
        kind = request_kind(body)
        if kind not in ("stage1_generator", "stage1_judge") or reply.status != 200:
            return reply
        title = "\n".join(m["content"] for m in body["messages"]).split("Title: ", 1)[-1].split("\n", 1)[0]
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        if kind == "stage1_generator":
            points = schema["properties"]["misalignment_points"].get("prefixItems") or []
            self.planned[title] = [p["properties"]["type"].get("const") for p in points]
            return reply
        data = json.loads(reply.body["choices"][0]["message"]["content"])
        asks = schema["properties"]["ma_scores"]["properties"]
        for i, (ma, block) in enumerate(data["ma_scores"].items()):
            if "type" in asks.get(ma, {}).get("properties", {}):
                block["type"] = self.planned[title][i]
                self.judged += 1
        return chat_reply(json.dumps(data), model=reply.body.get("model", "scripted"))
