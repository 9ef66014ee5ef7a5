"""Scripted replies for builds in another language and for checking what a build sends.

:class:`LanguageResponder` answers a build's requests like
:class:`~ioa_synth.testing.scripted_replies.ProtocolResponder`, with a written case (the
``stage1`` and ``stage2`` JSON of one of ``tests/fixtures/languages/<tag>_case.json``) as
the generator's output. :class:`Billed` wraps any responder so that each reply's ``usage``
is what a counter makes of the request and the reply (as a server bills), so that an
estimate counted with the same counter can be compared with the bill.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Callable

from ioa_synth.testing.scripted_replies import ProtocolResponder, Reply, chat_reply, follow_planned_types


class LanguageResponder(ProtocolResponder):
    """Answers like :class:`ProtocolResponder`, with ``case`` (``{"stage1": ..., "stage2": ...}``)
    as the generator's output, its point types those the request fixes; ``english_turn``:
    every dialogue has turn 5 in English (for the language gate)."""

    def __init__(self, case: dict[str, Any], english_turn: bool = False) -> None:
        super().__init__()
        self.case, self.english_turn = case, english_turn

    def _reply(self, kind: str, body: dict[str, Any], action: str) -> Reply:
        if kind == "stage1_generator" and action == "ok":
            return chat_reply(json.dumps(follow_planned_types(copy.deepcopy(self.case["stage1"]), body),
                                         ensure_ascii=False), model=self.model)
        if kind == "stage2_generator" and action == "ok":
            data = copy.deepcopy(self.case["stage2"])
            if self.english_turn:
                data["turns"][4]["utterance"] = "Can we have the evaluation finished by the end of next week?"
            return chat_reply(json.dumps(data, ensure_ascii=False), model=self.model)
        return super()._reply(kind, body, action)


class Billed:
    """``responder`` whose successful replies carry ``usage`` counted by ``counter``: prompt
    tokens ``counter.messages(request messages)``, completion tokens ``counter.text(content)``
    (a :class:`~ioa_synth.llm.tokens.TokenCounter`)."""

    def __init__(self, responder: Callable[[dict[str, Any], dict[str, str]], Reply], counter: Any) -> None:
        self.responder, self.counter = responder, counter

    def __call__(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        reply = self.responder(body, headers)
        if reply.status != 200 or not isinstance(reply.body, dict) or "choices" not in reply.body:
            return reply
        content = reply.body["choices"][0]["message"]["content"]
        prompt, completion = self.counter.messages(body["messages"]), self.counter.text(content)
        reply.body["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                               "total_tokens": prompt + completion}
        return reply


__all__ = ["Billed", "LanguageResponder"]
