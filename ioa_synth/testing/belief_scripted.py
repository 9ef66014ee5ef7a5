"""A scripted study for the scripted OpenAI-compatible server
(:class:`ioa_synth.testing.scripted_server.ScriptedServer`): agents, probes and judges whose
replies follow tables, for tests, benchmarks and dry runs without a model.

Utterances read ``Agent {id} r{round}: ...``; a benign agent's utterance carries the
stance scripted for it (``[stance]``), which the scripted stance judge reads back; a probe
answer carries the scripted label (``[label]``), which the scripted belief judge reads
back. The round and step are recovered from the number of transcript lines shown, so
scripts are exact while ``rounds <= memory``.
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable

from ioa_synth.belief.chat import NO_HISTORY
from ioa_synth.testing.scripted_server import Reply, ScriptedStudy, chat_reply

VERDICT_OF = {"true": "endorses_true", "manipulated": "endorses_manipulated", "uncertain": "neither",
              "mixed": "ambiguous"}


def schema_name(body: dict[str, Any]) -> str:
    """The study call a request is, from its response format."""
    fmt = body.get("response_format") or {}
    if "json_schema" in fmt:
        return fmt["json_schema"].get("name", "")
    props = set((fmt.get("schema") or {}).get("properties", {}))
    for name, key in (("belief_message", "message"), ("belief_verdict", "verdict"), ("belief_stance", "stance"),
                      ("belief_item_text", "discussion_seed"), ("belief_answer", "answer")):
        if key in props:
            return name
    return ""


def _transcript_lines(user: str) -> int:
    block = user.split("Conversation so far:\n", 1)[-1].split("\n\n", 1)[0]
    return 0 if block.strip() == NO_HISTORY else len([ln for ln in block.splitlines() if ln.strip()])


@dataclass
class BeliefScript(ScriptedStudy):
    """Replies of a scripted study with ``agents`` per conversation.

    ``labels[(agent, step)]`` is a benign agent's private label (default ``true``);
    ``stances[(agent, round)]`` a benign utterance's stance (default ``unrelated``);
    ``actions[name]`` a list of replies to send first to calls of that schema name
    (``"badjson"``, ``"badlabel"``, ``"500"``); ``latency`` delays every reply.
    """

    agents: int
    labels: dict[tuple[int, int], str] = field(default_factory=dict)
    stances: dict[tuple[int, int], str] = field(default_factory=dict)
    actions: dict[str, list[str]] = field(default_factory=dict)
    latency: float = 0.0
    screen_answers: Callable[[str], str] | None = None
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def request_name(self, body: dict[str, Any]) -> str:
        return schema_name(body)

    def answer(self, name: str, body: dict[str, Any], action: str) -> Reply:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        agent = int(m.group(1)) if (m := re.search(r"\(Agent (\d+)\)", system)) else 0
        if name == "belief_message":
            rnd = _transcript_lines(user) // self.agents + 1
            if "argue for this claim" in system:
                text = "I am sure of it: " + system.split('"')[1]
            else:
                text = f"[{self.stances.get((agent, rnd), 'unrelated')}] my view"
            data: dict[str, Any] = {"message": f"A{agent} r{rnd} {text}"}
        elif name == "belief_answer":
            if self.screen_answers is not None and "Conversation so far" not in user:
                data = {"answer": self.screen_answers(user)}
            else:
                step = _transcript_lines(user) // self.agents
                data = {"answer": f"[{self.labels.get((agent, step), 'true')}] answer of A{agent} at {step}"}
        elif name == "belief_verdict":
            m = re.search(r"Answer to label: \[(\w+)\]", user)
            label = m.group(1) if m else "uncertain"
            data = {"verdict": "endorses_nothing" if action == "badlabel" else VERDICT_OF[label],
                    "confidence": 0.9, "rationale": "scripted"}
        elif name == "belief_stance":
            m = re.search(r"Message to label \(Agent \d+\): A\d+ r\d+ \[(\w+)\]", user)
            stance = m.group(1) if m else "unrelated"
            data = {"stance": "agree" if action == "badlabel" else stance, "mentions_claim": False,
                    "exposed_to_manipulated": "I am sure of it" in user, "confidence": 0.8, "rationale": "scripted"}
        elif name == "belief_item_text":
            q = re.search(r"Question: (.*)", user).group(1)
            t = re.search(r"Correct answer: (.*)", user).group(1)
            f = re.search(r"False answer of the same kind: (.*)", user).group(1)
            seed = f"Let us talk it through: {q}" if action != "leak" else f"Is it {t}? {q}"
            data = {"true_statement": f"The answer is {t}.", "manipulated_statement": f"The answer is {f}.",
                    "discussion_seed": seed}
        else:
            return Reply(status=400, body={"error": {"message": "unknown request"}})
        return chat_reply(json.dumps(data))
