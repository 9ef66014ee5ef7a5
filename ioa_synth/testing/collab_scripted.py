"""A scripted collaboration team for the scripted OpenAI-compatible server
(:class:`ioa_synth.testing.scripted_server.ScriptedServer`): discussers, stop-votes,
reflections, a detector and answers whose replies follow a script, for tests, benchmarks
and dry runs of ``ioa-synth collab run`` without a model.

The planted effect: a BCB coder writes the task's ``canonical_solution`` only when the log
holds a directive turn (an intervention fired), else a solution that fails; a
hidden-profile agent picks the correct option only after a directive, else option ``A``.
An intervention fires on the tasks the script names: ``diverge`` (the discussers answer the
detector's questions differently) and ``flag`` (self-reflection flags a point). So on a
task set the gain of ``mcq:NAME`` over ``discussion`` is exactly the share of ``diverge``
tasks whose scripted answer differs from the no-directive answer.
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ioa_synth.collab.tasks import BcbTask, HiddenProfileTask, Task
from ioa_synth.testing.scripted_server import Reply, ScriptedStudy, chat_reply

#: Text that only a directive turn puts into a log (the two directive templates).
DIRECTIVE_MARKS = ("A check of the discussion found", "members flagged possible hidden disagreements")


def request_name(body: dict[str, Any]) -> str:
    """What a team request is: its schema name, or for a free-text request ``say`` / ``code``."""
    fmt = body.get("response_format") or {}
    if "json_schema" in fmt:
        return fmt["json_schema"].get("name", "")
    props = set((fmt.get("schema") or {}).get("properties", {}))
    for name, key in (("collab_stop_vote", "ready"), ("collab_reflection", "flag"), ("collab_choice", "choice"),
                      ("prober", "questions")):
        if key in props:
            return name
    user = body["messages"][-1]["content"]
    return "code" if "fenced Python code block" in user else "say"


@dataclass
class CollabScript(ScriptedStudy):
    """Replies of a scripted team working on ``tasks``.

    ``diverge``: task ids whose MCQ answers differ between agents (the first agent picks
    ``A``, the others ``B``); ``flag``: task ids on which self-reflection flags a point;
    ``ready_round``: the round from which stop-votes say ready; ``extra_ready``: after a
    directive, the re-discussion round from which stop-votes say ready, per task id
    (``extra_ready_default`` for the others; ``None``: never, so the cap ends it); ``questions``: how many
    MCQs the detector writes; ``solutions[task_id]``: code the coder writes for that task
    whatever the log holds (e.g. one that never ends); ``actions[name]``: replies sent first to requests of that
    name (``"500"``, ``"badjson"``); ``latency``: seconds per reply.
    """

    tasks: list[Task]
    diverge: set[str] = field(default_factory=set)
    flag: set[str] = field(default_factory=set)
    ready_round: int = 1
    extra_ready: dict[str, int | None] = field(default_factory=dict)
    extra_ready_default: int | None = 1
    questions: int = 2
    solutions: dict[str, str] = field(default_factory=dict)
    actions: dict[str, list[str]] = field(default_factory=dict)
    latency: float = 0.0
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def request_name(self, body: dict[str, Any]) -> str:
        return request_name(body)

    def task_of(self, text: str) -> Task:
        """The task a prompt is about (its prompt or question appears in the text)."""
        for task in self.tasks:
            key = task.prompt if isinstance(task, BcbTask) else task.question
            if key in text:
                return task
        raise LookupError("no scripted task in the prompt")

    def answer(self, name: str, body: dict[str, Any], action: str) -> Reply:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        text = system + "\n" + user
        agent = m.group(1) if (m := re.search(r"You are (\w+),", system)) else "?"
        directed = any(mark in user for mark in DIRECTIVE_MARKS)
        if name == "prober":
            data: Any = {"questions": [{"question": f"Which reading of point {i} do you act on?",
                                        "options": {"A": "The first reading", "B": "The second reading"}}
                                       for i in range(1, self.questions + 1)]}
            return chat_reply(json.dumps(data))
        task = self.task_of(text)
        if name == "say":
            rnd = len(re.findall(rf"^{agent}: ", user, flags=re.M)) + 1
            return chat_reply(f"{agent} on {task.task_id}, turn {rnd}: my view of the approach.")
        if name == "collab_stop_vote" and directed:  # a re-discussion round: the agent's turns since the directive
            after = max(user.rfind(mark) for mark in DIRECTIVE_MARKS)
            rnd = len(re.findall(rf"^{agent}: ", user[after:], flags=re.M))
            need = self.extra_ready.get(task.task_id, self.extra_ready_default)
            data = {"ready": need is not None and rnd >= need, "reason": "scripted"}
        elif name == "collab_stop_vote":
            rnd = len(re.findall(rf"^{agent}: ", user, flags=re.M))
            data = {"ready": rnd >= self.ready_round, "reason": "scripted"}
        elif name == "collab_reflection":
            hit = task.task_id in self.flag
            data = {"flag": hit, "disagreements": ["we may read the edge case differently"] if hit else []}
        elif name == "collab_choice" and "Answer this question" in user:
            first = agent in ("DiscusserA", "Agent1")
            choice = "A" if first or task.task_id not in self.diverge else "B"
            data = {"reasoning": f"I assumed reading {choice}. More detail follows.", "choice": choice}
        elif name == "collab_choice":
            assert isinstance(task, HiddenProfileTask)
            data = {"reasoning": "scripted", "choice": task.answer if directed else "A"}
        elif name == "code":
            assert isinstance(task, BcbTask)
            body_text = getattr(task, "canonical_solution", None) if directed else None
            code = self.solutions.get(task.task_id) or task.code_prompt + "\n" + (body_text or "    return None\n")
            return chat_reply(f"```python\n{code}```")
        else:
            return Reply(status=400, body={"error": {"message": f"unknown request {name!r}"}})
        return chat_reply(json.dumps(data))


def planted_gain(tasks: list[Task], triggered: set[str]) -> int:
    """How many of ``tasks`` pass only thanks to a directive turn, when the tasks in
    ``triggered`` get one: the exact number of tasks an intervention gains over
    ``discussion`` under :class:`CollabScript`."""
    gain = 0
    for task in tasks:
        if task.task_id not in triggered:
            continue
        if isinstance(task, BcbTask):
            gain += bool(getattr(task, "canonical_solution", None))
        else:
            gain += task.answer != "A"
    return gain
