"""Scripted replies for :class:`~ioa_synth.testing.scripted_server.ScriptedServer`.

:class:`Reply` is one HTTP reply; :class:`ProtocolResponder` answers each build stage's
requests with valid IoA-Suite JSON and can be scripted, per request kind, to send low judge
scores, rule-breaking outputs, HTTP errors, invalid JSON or length stops;
:class:`ScriptedStudy` is the base of the studies' scripted responders.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any, Callable

from ioa_synth.testing.scripted_case import GATE_ACTIONS, gate_breaking, valid_stage1, valid_stage2  # noqa: F401

KINDS = ("stage1_generator", "stage1_judge", "stage2_generator", "stage2_judge")


@dataclass
class Reply:
    """An HTTP reply: status, JSON body (or raw text), headers, and a delay in seconds."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: str | None = None


def chat_reply(content: str, finish_reason: str = "stop", model: str = "scripted",
               prompt_tokens: int = 100, completion_tokens: int = 50) -> Reply:
    """A 200 chat-completions reply whose message content is ``content``."""
    return Reply(body={
        "id": "chatcmpl-scripted", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens}})


def request_kind(body: dict[str, Any]) -> str:
    """Which of :data:`KINDS` a chat request is, from its schema or, failing that, its prompt."""
    fmt = body.get("response_format") or {}
    schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
    props = schema.get("properties", {})
    for key, kind in (("meeting_scenario", "stage1_generator"), ("turns", "stage2_generator"),
                      ("ma_scores", "stage1_judge"), ("dialogue_scores", "stage2_judge")):
        if key in props:
            return kind
    text = " ".join(m.get("content", "") for m in body.get("messages", []))
    for marker, kind in (("Score every misalignment point", "stage1_judge"), ("Score the dialogue", "stage2_judge"),
                         ("Write the meeting dialogue", "stage2_generator"), ("Design the participants", "stage1_generator")):
        if marker in text:
            return kind
    return "unknown"


def judge_scores(kind: str, body: dict[str, Any], passing: bool = True) -> dict[str, Any]:
    """Judge JSON for a request: maximal scores (``passing``) or a subtlety/naturalness of 1."""
    if kind == "stage1_judge":
        fmt = body.get("response_format") or {}
        schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
        ids = schema.get("properties", {}).get("ma_scores", {}).get("required") or ["MA1", "MA2"]
        item = {"subtlety": 3 if passing else 1, "specificity": 2, "believability": 2,
                "feedback": "No changes needed." if passing else "Too obvious: anyone would ask which data is meant."}
        return {"ma_scores": {i: dict(item) for i in ids}, "overall_feedback": "ok" if passing else "make it subtler"}
    return {"dialogue_scores": {"naturalness": 3 if passing else 1, "implicitness": 3, "coverage": 2,
                                "profile_consistency": 3,
                                "feedback": "No changes needed." if passing else "Stilted: rewrite turn 2."}}


def follow_planned_types(data: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """Stage-1 JSON whose points take the types the request schema fixes as constants (as a
    server with constrained decoding would write them); other points keep theirs."""
    fmt = body.get("response_format") or {}
    schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
    planned = (schema.get("properties", {}).get("misalignment_points") or {}).get("prefixItems") or []
    for point, item in zip(data.get("misalignment_points", []), planned):
        const = ((item.get("properties") or {}).get("type") or {}).get("const")
        if const:
            point["type"] = const
    return data


class ProtocolResponder:
    """Answers every request kind with valid JSON, unless a scripted action is queued.

    ``script`` maps a kind to a list of actions consumed one per request of that kind:
    ``"ok"``, ``"low"`` (judge: failing scores), ``"inconsistent"`` (judge: a score below
    the maximum with "No changes needed."), ``"invalid"`` (generator: breaks the
    structural rules), one of :data:`GATE_ACTIONS` (generator: fails that content gate,
    see :func:`gate_breaking`), ``"badjson"``, ``"length"``, ``"429"`` (with ``Retry-After: 0``),
    ``"500"``, ``"503"``, ``"400"``. ``latency`` delays every reply (seconds).
    """

    def __init__(self, script: dict[str, list[str]] | None = None, latency: float = 0.0, model: str = "scripted") -> None:
        self.script = defaultdict(deque, {k: deque(v) for k, v in (script or {}).items()})
        self.latency = latency
        self.model = model
        self.counts: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        kind = request_kind(body)
        with self._lock:
            self.counts[kind] += 1
            action = self.script[kind].popleft() if self.script[kind] else "ok"
        reply = self._reply(kind, body, action)
        reply.delay = self.latency
        return reply

    def _reply(self, kind: str, body: dict[str, Any], action: str) -> Reply:
        if action in ("429", "500", "503", "400"):
            headers = {"Retry-After": "0"} if action == "429" else {}
            return Reply(status=int(action), body={"error": {"message": f"scripted {action}", "type": "scripted"}},
                         headers=headers)
        if action == "badjson":
            return chat_reply('{"this is": not json', model=self.model)
        if action == "length":
            return chat_reply('{"cut off', finish_reason="length", model=self.model)
        if kind in ("stage1_generator", "stage2_generator") and action in GATE_ACTIONS:
            data = gate_breaking(kind, action)
        elif kind == "stage1_generator":
            data = follow_planned_types(valid_stage1(), body)
            if action == "invalid":
                data["misalignment_points"] = data["misalignment_points"][:1]
                data["misalignment_points"][0]["type"] = "procedural"
        elif kind == "stage2_generator":
            data = valid_stage2()
        elif kind in ("stage1_judge", "stage2_judge"):
            data = judge_scores(kind, body, passing=action not in ("low", "inconsistent"))
            if action == "inconsistent":
                block = data.get("dialogue_scores") or next(iter(data["ma_scores"].values()))
                block["feedback"] = "No changes needed."
        else:
            return Reply(status=400, body={"error": {"message": "unknown request kind"}})
        return chat_reply(json.dumps(data), model=self.model)


class ScriptedStudy:
    """Base of a scripted study's responder (a dataclass with ``actions``, ``latency``,
    ``counts`` and ``_lock`` fields): counts each request under its name
    (:meth:`request_name`), sends the next scripted action of that name first (``"500"``,
    ``"400"``: that HTTP error; ``"badjson"``: a reply that is not JSON; any other action is
    passed to :meth:`answer`), and delays every reply by ``latency``."""

    actions: dict[str, list[str]]
    latency: float
    counts: dict[str, int]
    _lock: threading.Lock

    def request_name(self, body: dict[str, Any]) -> str:
        raise NotImplementedError

    def answer(self, name: str, body: dict[str, Any], action: str) -> Reply:
        raise NotImplementedError

    def __call__(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        name = self.request_name(body)
        with self._lock:
            self.counts[name] += 1
            queue = self.actions.get(name) or []
            action = queue.pop(0) if queue else "ok"
        if action in ("500", "400"):
            reply = Reply(status=int(action), body={"error": {"message": f"scripted {action}"}})
        elif action == "badjson":
            reply = chat_reply('{"not": json')
        else:
            reply = self.answer(name, body, action)
        reply.delay = self.latency
        return reply


class CountedUsage:
    """A responder's replies with their usage counted by ``counter`` (a
    :class:`~ioa_synth.llm.tokens.TokenCounter`: the prompt's messages and the reply's
    content), as a server bills them: for tests of ``estimate`` against what a run spends."""

    def __init__(self, responder: Callable[[dict[str, Any], dict[str, str]], Reply], counter: Any) -> None:
        self.responder, self.counter = responder, counter

    def __call__(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        reply = self.responder(body, headers)
        if reply.status == 200:
            content = reply.body["choices"][0]["message"]["content"]
            prompt, completion = self.counter.messages(body["messages"]), self.counter.text(content)
            reply.body["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                                   "total_tokens": prompt + completion}
        return reply
