"""One task under one configuration (paper §6.4, App. D.7), as calls through a
:class:`Caller`; the record it returns is ``RESULTS/tasks/<task_id>__<config>.json`` less
the score (:mod:`ioa_synth.collab.scoring` adds ``passed`` and ``check``).

- ``single`` (BCB only): one agent writes the solution directly (temperature 0.2).
- ``discussion``: BCB: DiscusserA and DiscusserB alternate for up to ``bcb_rounds``
  rounds, each round ending with both agents' stop-vote in parallel (temperature 0); the
  discussion ends when both are ready; DiscusserA then writes the solution from the log
  (temperature 0.2, one fenced Python block). Hidden profile: ``hp_rounds`` round-robin
  rounds (each agent sees everything said before it, this round's earlier turns
  included), then every agent's final answer in parallel and the majority vote.
- ``self-reflection``: after the initial discussion every agent reports the hidden
  disagreements it sees (JSON); any flag triggers: the flagged points are injected as a
  directive turn and the team talks again (below).
- ``mcq:NAME``: after the initial discussion the detector ``NAME`` writes MCQs from the
  transcript with the evaluate prober's ``mcq`` prompt (transcript only, as for live
  meetings); every agent answers every question from its own perspective (JSON
  ``{reasoning, choice}``, temperature 0.2); a question the agents answer differently is
  divergent; any divergent question triggers: the divergent questions, each agent's choice
  and one-sentence reasoning are injected as a directive turn that asks each agent to name
  the assumption behind its pick and address the differing reading before changing a
  decision. Untriggered: straight to the solution or the vote.
- The re-discussion after a triggered intervention: rounds in which every agent speaks
  once, each ending with every agent's stop-vote in parallel (temperature 0, as BCB's
  discussion rounds), until all are ready or ``max_extra_rounds`` rounds have run (the
  last allowed round asks no vote: it could not change what happens next). The record's
  ``extra_rounds`` counts them (Table 23's additional rounds) and ``extra_end`` says why
  they ended (``"vote"`` or ``"cap"``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Protocol

from ioa_synth.collab.replies import (REFLECTION_SCHEMA, STOP_VOTE_SCHEMA, choice_parser, choice_schema,
                                      extract_code, first_sentence, parse_reflection, parse_stop_vote)
from ioa_synth.collab.tasks import BcbTask, HiddenProfileTask, Task
from ioa_synth.collab.team import (FINAL_STEP, INTERVENTION_STEP, MODERATOR, REDISCUSSION_STEP, Ask, CollabSettings,
                                   agent_names, answer_prompt, block_order, coder_prompt, directive_text, final_prompt,
                                   reflection_prompt, say_prompt, single_prompt, stop_vote_prompt)
from ioa_synth.core.templates import render_template
from ioa_synth.probing.access import transcript_only_context
from ioa_synth.probing.probers import McqProber
from ioa_synth.probing.replies import ProberReply, parse_questions
from ioa_synth.protocol.schemas import request_schema


class Caller(Protocol):
    """How a task's run makes its calls (the run layer's recorder behind it)."""

    def one(self, ask: Ask) -> Any:
        """The parsed reply of one call.

        Raises:
            ioa_synth.llm.client.LLMCallError: no usable reply (StopRun: the run stops)."""

    def all(self, asks: list[Ask]) -> list[Any]:
        """The parsed replies of calls made concurrently, in order."""


def detector_of(config: str) -> str | None:
    """``NAME`` of ``mcq:NAME``, else ``None``."""
    return config.split(":", 1)[1] if config.startswith("mcq:") else None


def _say(caller: Caller, task: Task, agent: str, turns: list[dict[str, Any]], phase: str, rnd: int,
         step: int, settings: CollabSettings) -> dict[str, Any]:
    text = caller.one(Ask("discusser", step, f"say:{agent}", say_prompt(task, agent, turns, phase, rnd, settings)))
    return {"phase": phase, "round": rnd, "agent": agent, "text": str(text)}


def initial_discussion(caller: Caller, task: Task, settings: CollabSettings) -> tuple[list[dict], list[dict]]:
    """``(turns, stop_votes)`` of the initial discussion."""
    agents = agent_names(task)
    turns: list[dict[str, Any]] = []
    votes: list[dict[str, Any]] = []
    rounds = settings.bcb_rounds if isinstance(task, BcbTask) else settings.hp_rounds
    for rnd in range(1, rounds + 1):
        for agent in agents:
            turns.append(_say(caller, task, agent, turns, "initial", rnd, rnd, settings))
        if isinstance(task, BcbTask) and _all_ready(caller, task, turns, votes, "initial", rnd, rnd, settings):
            break
    return turns, votes


def _all_ready(caller: Caller, task: Task, turns: list[dict[str, Any]], votes: list[dict[str, Any]], phase: str,
               rnd: int, step: int, settings: CollabSettings) -> bool:
    """Ask every agent's stop-vote in parallel (appended to ``votes``); whether all are ready."""
    agents = agent_names(task)
    asks = [Ask("discusser", step, f"vote:{a}", stop_vote_prompt(task, a, turns, settings.seed),
                settings.vote_temperature, STOP_VOTE_SCHEMA, "collab_stop_vote", parse_stop_vote) for a in agents]
    replies = caller.all(asks)
    votes += [{"phase": phase, "round": rnd, "agent": a, "ready": v.ready, "reason": v.reason}
              for a, v in zip(agents, replies)]
    return all(v.ready for v in replies)


def rediscussion(caller: Caller, task: Task, turns: list[dict[str, Any]], votes: list[dict[str, Any]],
                 settings: CollabSettings) -> tuple[int, str]:
    """The re-discussion after the directive turn (already in ``turns``): round k is step
    ``REDISCUSSION_STEP + k``; turns and votes are appended. Returns ``(rounds, end)``
    with ``end`` ``"vote"`` (every agent ready) or ``"cap"`` (``max_extra_rounds`` ran)."""
    cap = settings.extra_cap
    for rnd in range(1, cap + 1):
        step = REDISCUSSION_STEP + rnd
        for agent in agent_names(task):
            turns.append(_say(caller, task, agent, turns, "rediscussion", rnd, step, settings))
        if rnd < cap and _all_ready(caller, task, turns, votes, "rediscussion", rnd, step, settings):
            return rnd, "vote"
    return cap, "cap"


def self_reflection(caller: Caller, task: Task, turns: list[dict[str, Any]], settings: CollabSettings
                    ) -> tuple[list[dict[str, Any]], str | None]:
    """``(reflections, directive text or None)``: any agent's flag triggers."""
    agents = agent_names(task)
    asks = [Ask("discusser", INTERVENTION_STEP, f"reflect:{a}", reflection_prompt(task, a, turns, settings.seed),
                settings.reflection_temperature, REFLECTION_SCHEMA, "collab_reflection", parse_reflection)
            for a in agents]
    replies = caller.all(asks)
    reflections = [{"agent": a, "flag": r.flag, "disagreements": r.disagreements} for a, r in zip(agents, replies)]
    if not any(r["flag"] for r in reflections):
        return reflections, None
    items = [{"agent": r["agent"], "text": d} for r in reflections if r["flag"] for d in r["disagreements"]]
    items = items or [{"agent": r["agent"], "text": "(flagged a hidden disagreement without naming it)"}
                      for r in reflections if r["flag"]]
    return reflections, directive_text("collab/reflection_directive.jinja2", items=items)


def mcq_probe(caller: Caller, task: Task, turns: list[dict[str, Any]], detector: str, settings: CollabSettings
              ) -> tuple[list[dict[str, Any]], str | None]:
    """``(probes, directive text or None)``: the detector's questions on the transcript,
    every agent's answer to each, and the directive when some question is divergent."""
    agents = agent_names(task)
    context = transcript_only_context([(a, a) for a in agents],
                                      [(i, t["agent"], t["text"]) for i, t in enumerate(turns, 1)])
    prompt = render_template(McqProber.template, **context)
    questions = caller.one(Ask(f"detector:{detector}", INTERVENTION_STEP, "mcq", prompt, None,
                               request_schema(ProberReply), "prober", parse_questions))
    asks = []
    for i, q in enumerate(questions, 1):
        qd = {"question": q.question, "options": dict(q.options)}
        letters = "".join(q.options)
        asks += [Ask("discusser", INTERVENTION_STEP, f"answer:{a}:q{i}", answer_prompt(task, a, turns, qd, settings.seed),
                     settings.answer_temperature, choice_schema(letters), "collab_choice", choice_parser(letters))
                 for a in agents]
    replies = iter(caller.all(asks))
    probes = []
    for q in questions:
        answers = {a: (lambda r: {"choice": r.choice, "reasoning": r.reasoning})(next(replies)) for a in agents}
        probes.append({"question": q.question, "options": dict(q.options), "answers": answers,
                       "divergent": len({x["choice"] for x in answers.values()}) > 1})
    divergent = [p for p in probes if p["divergent"]]
    if not divergent:
        return probes, None
    items = [{"question": p["question"], "options": p["options"],
              "answers": [{"agent": a, "choice": x["choice"], "reasoning": first_sentence(x["reasoning"]) or "(none given)"}
                          for a, x in p["answers"].items()]} for p in divergent]
    word = "implementation decision" if isinstance(task, BcbTask) else "choice"
    return probes, directive_text("collab/mcq_directive.jinja2", items=items, decision_word=word)


def majority(choices: list[str]) -> str | None:
    """The option most agents chose; ``None`` on a tie for the most votes (no decision)."""
    counts = Counter(choices).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def finish(caller: Caller, task: Task, turns: list[dict[str, Any]], settings: CollabSettings) -> dict[str, Any]:
    """The ``final`` field: DiscusserA's solution, or every agent's answer and the vote."""
    if isinstance(task, BcbTask):
        agent = agent_names(task)[0]
        reply = caller.one(Ask("discusser", FINAL_STEP, f"code:{agent}", coder_prompt(task, agent, turns),
                               settings.coder_temperature))
        return {"agent": agent, "code": extract_code(str(reply)), "reply": str(reply)}
    assert isinstance(task, HiddenProfileTask)
    agents, letters = agent_names(task), "".join(task.options)
    replies = caller.all([Ask("discusser", FINAL_STEP, f"final:{a}", final_prompt(task, a, turns, settings.seed),
                              settings.final_temperature, choice_schema(letters), "collab_choice",
                              choice_parser(letters)) for a in agents])
    answers = {a: {"choice": r.choice, "reasoning": r.reasoning} for a, r in zip(agents, replies)}
    return {"answers": answers, "vote": majority([x["choice"] for x in answers.values()])}


def expected_steps(task: Task, config: str, settings: CollabSettings) -> int:
    """The most steps (calls, or calls made together) a run of ``task`` under ``config``
    takes: its discussion goes all its rounds and its intervention fires. For scheduling
    (:class:`ioa_synth.collab.run.RecordedCaller`)."""
    if config == "single":
        return 1
    agents = len(agent_names(task))
    if isinstance(task, BcbTask):
        steps = settings.bcb_rounds * (agents + 1)  # each round: the turns, then the stop-votes
    else:
        steps = settings.hp_rounds * agents
    if config != "discussion":  # the reflections, or the questions and the answers; the rounds after
        steps += (1 if config == "self-reflection" else 2) + settings.extra_cap * (agents + 1) - 1
    return steps + 1  # the solution or the final answers


def run_task(caller: Caller, task: Task, config: str, settings: CollabSettings) -> dict[str, Any]:
    """Run ``task`` under ``config`` and return its record (without ``passed``/``check``).

    Raises:
        ioa_synth.llm.client.LLMCallError: a call gave no usable reply.
        ValueError: ``single`` on a hidden-profile task.
    """
    record: dict[str, Any] = {"task_id": task.task_id, "config": config, "bench": settings.bench,
                              "agents": agent_names(task), "turns": [], "stop_votes": [], "probes": [],
                              "reflections": [], "triggered": None, "extra_rounds": 0, "extra_end": None}
    if isinstance(task, HiddenProfileTask):
        order = block_order(task.task_id, task.agents, settings.seed)
        record["private_blocks"] = dict(zip(agent_names(task), order))
    if config == "single":
        if not isinstance(task, BcbTask):
            raise ValueError("the single-agent baseline is defined for --bench bcb only")
        reply = caller.one(Ask("discusser", FINAL_STEP, "solve", single_prompt(task), settings.coder_temperature))
        record["agents"] = ["single"]
        record["final"] = {"agent": "single", "code": extract_code(str(reply)), "reply": str(reply)}
        return record
    turns, votes = initial_discussion(caller, task, settings)
    record["turns"], record["stop_votes"] = turns, votes
    directive = None
    if config == "self-reflection":
        record["reflections"], directive = self_reflection(caller, task, turns, settings)
        record["triggered"] = directive is not None
    elif (name := detector_of(config)) is not None:
        record["detector"] = name
        record["probes"], directive = mcq_probe(caller, task, turns, name, settings)
        record["triggered"] = directive is not None
    if directive is not None:
        turns.append({"phase": "rediscussion", "round": 1, "agent": MODERATOR, "text": directive, "kind": "directive"})
        record["extra_rounds"], record["extra_end"] = rediscussion(caller, task, turns, votes, settings)
    record["final"] = finish(caller, task, turns, settings)
    return record
