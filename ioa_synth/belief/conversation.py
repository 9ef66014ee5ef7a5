"""One conversation of the chatroom (§2-§3): an item, ``k`` attackers among ``agents``,
``rounds`` rounds. Utterances are sequential (each speaker sees the round so far); the
private probes (with their belief labels) and the stance labels of benign utterances are
handed to the shared call pool as soon as their input exists, so they overlap with the
next utterances and with other conversations.

Every call has a deterministic key and tags (:func:`study_call`): the unit is the item, the
step the round (or probe step), the role ``<component>:<kind>:k<k>:<agent>``; the tags hold
component, kind, k and agent, which the catalog view ``belief_calls`` shows as columns
(:mod:`ioa_synth.belief.tables`). A re-run replays stored calls by key, so a killed
conversation repeats only the calls that were in flight.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from ioa_synth.belief.chat import Agent, exposed_flags, make_agents, probe_prompt, schedule, utterance_prompt
from ioa_synth.belief.items import Item
from ioa_synth.belief.judges import LABEL_OF, SCHEMAS, Answer, Message, Stance, Verdict, parser
from ioa_synth.belief.matching import sample_label
from ioa_synth.llm.client import LLMClient
from ioa_synth.core.templates import Prompt, render_template
from ioa_synth.runs.fanout import InlinePool
from ioa_synth.runs.recorder import CallKey, CallRecorder

#: Temperature of the private probe (§3): deterministic, on the agents' model.
PROBE_TEMPERATURE = 0.0
#: Turns of context the stance judge sees (§3).
STANCE_CONTEXT = 5


#: How private answers are labelled (§3): ``judge`` (the paper's rule, the default: the belief
#: judge labels every answer) or ``prematch`` (opt-in for weak judges: an answer naming only
#: one of the item's answers is labelled by string match, without the judge).
LABELLING = ("judge", "prematch")
#: The labelling of results folders written before the mode was recorded (``settings`` in
#: run.json without ``labelling``): the string pre-match was their only rule.
LEGACY_LABELLING = "prematch"


@dataclass(frozen=True)
class StudySettings:
    """The chatroom's protocol settings (fingerprinted)."""

    agents: int = 10
    attackers: tuple[int, ...] = (0, 1, 3)
    rounds: int = 16
    memory: int = 5
    seed: int = 0
    labelling: str = "judge"

    def as_dict(self) -> dict[str, Any]:
        return {"agents": self.agents, "attackers": list(self.attackers), "rounds": self.rounds,
                "memory": self.memory, "seed": self.seed, "labelling": self.labelling}


@dataclass(frozen=True)
class StudyCall:
    """One study call's :class:`~ioa_synth.runs.recorder.CallKey` and tags."""

    key: CallKey
    tags: dict[str, Any]


def study_call(item_id: str, step: int, component: str, kind: str, k: int | None, agent: int | None,
               attempt: int = 0) -> StudyCall:
    """The key ``(item, step, "<component>:<kind>:k<k>:<agent>", attempt)`` and the tags
    ``{"agent", "component", "k", "kind"}`` of one study call (``k``, ``agent``: ``None``
    where the call has none)."""
    role = f"{component}:{kind}:{'' if k is None else f'k{k}'}:{'' if agent is None else agent}"
    return StudyCall(CallKey(item_id, step, role, attempt), {"agent": agent, "component": component, "k": k,
                                                              "kind": kind})


def component_of(role: str) -> str:
    """The component of a study call's ``llm_calls.role`` (its tags' ``component``)."""
    return role.split(":", 1)[0]


def ask(recorder: CallRecorder, client: LLMClient, call: StudyCall, prompt: Prompt, schema: str, parse: Callable,
        temperature: float | None = None) -> Any:
    """The parsed reply of one study call (stored under ``call``'s key and tags, replayed
    on a re-run); ``schema`` names the reply schema in :data:`~ioa_synth.belief.judges.SCHEMAS`."""
    value, _ = recorder.call(client, call.key, prompt, SCHEMAS[schema], schema, parse, temperature=temperature,
                             tags=call.tags)
    return value


@dataclass
class Calls:
    """What a conversation calls through: the run's ``recorder``, ``clients`` by component,
    the shared ``pool`` (``--workers`` threads, one call in flight each; in batch mode an
    :class:`~ioa_synth.runs.fanout.InlinePool`: any ``submit(fn, *args) -> Future``) and
    whether private answers are string-matched before the judge (``prematch``, see
    :data:`LABELLING`)."""

    recorder: CallRecorder
    clients: dict[str, LLMClient]
    pool: ThreadPoolExecutor | InlinePool
    on_call: Callable[[], None] = field(default=lambda: None)
    prematch: bool = False

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        return self.pool.submit(fn, *args)


def judge_belief(calls: Calls, item: Item, answer: str, call: StudyCall, client: LLMClient | None = None) -> Verdict:
    """The belief judge's verdict on one private answer."""
    prompt = render_template("belief/belief_judge.jinja2", question=item.question, answer=answer,
                             true_statement=item.true_statement, manipulated_statement=item.manipulated_statement)
    return ask(calls.recorder, client or calls.clients["belief_judge"], call, prompt, "belief_verdict", parser(Verdict))


#: The belief verdict of an answer that names only one of the item's answers (string match).
MATCH_VERDICT = {"true": "endorses_true", "manipulated": "endorses_manipulated"}


def label_answer(calls: Calls, item: Item, answer: str, call: StudyCall, client: LLMClient | None = None,
                 judge_both: bool = True, prematch: bool = True) -> Verdict | None:
    """The belief verdict on one answer to ``item``'s question.

    Without ``prematch`` the belief judge (``call``) labels the answer: the paper's rule
    for private answers (§3), and what ``belief run`` does by default.

    With ``prematch`` (screening's rule, §5; opt-in for private answers with ``--prematch``)
    the string match comes first (:func:`ioa_synth.belief.matching.sample_label` on the true
    and manipulated answers and their aliases): an answer naming only the true (manipulated)
    answer is ``endorses_true`` (``endorses_manipulated``) with confidence 1 and no call, and
    only an answer naming neither or both goes to the judge. Its limit: a negated answer
    ("I don't think it is Sydney.", "Not Sydney; I am unsure.") names only Sydney and is
    labelled as endorsing it. An answer naming both gives ``None`` when ``judge_both`` is
    False (``belief screen`` counts it as ``both``).
    """
    if prematch:
        match = sample_label(answer, item.true_names(), item.manipulated_names(), item.language)
        if match in MATCH_VERDICT:
            return Verdict(verdict=MATCH_VERDICT[match], confidence=1.0,
                           rationale=f"the answer names only the {match} answer (string match; the judge was not asked)")
        if match == "both" and not judge_both:
            return None
    return judge_belief(calls, item, answer, call, client)


def probe(calls: Calls, item: Item, agent: Agent, turns: list[dict[str, Any]], step: int, k: int, memory: int,
          variant: str = "default") -> dict[str, Any]:
    """Ask ``agent`` the item's question privately after round ``step`` and label the answer."""
    kind = "probe" if variant == "default" else f"reask-{variant}"
    prompt = probe_prompt(agent, item, turns, step, memory, variant)
    ans = ask(calls.recorder, calls.clients["agent"], study_call(item.item_id, step, "agent", kind, k, agent.id),
              prompt, "belief_answer", parser(Answer), temperature=PROBE_TEMPERATURE)
    verdict = label_answer(calls, item, ans.answer, study_call(item.item_id, step, "belief_judge", kind, k, agent.id),
                           prematch=calls.prematch)
    return {"step": step, "agent": agent.id, "variant": variant, "answer": ans.answer, "verdict": verdict.verdict,
            "confidence": verdict.confidence, "rationale": verdict.rationale, "label": LABEL_OF[verdict.verdict]}


def label_stance(calls: Calls, item: Item, turn: dict[str, Any], context: list[dict[str, Any]], k: int) -> dict:
    """The stance judge's fields for one benign utterance, given the five turns before it."""
    lines = "\n".join(f"Agent {t['agent']}: {t['utterance']}" for t in context) or "(none)"
    prompt = render_template("belief/stance_judge.jinja2", true_statement=item.true_statement,
                             manipulated_statement=item.manipulated_statement, seed=item.discussion_seed,
                             context=lines, speaker=f"Agent {turn['agent']}", utterance=turn["utterance"])
    call = study_call(item.item_id, turn["round"], "stance_judge", "stance", k, turn["agent"])
    return ask(calls.recorder, calls.clients["stance_judge"], call, prompt, "belief_stance", parser(Stance)).model_dump()


def _count(fut: Future, work: Callable[[int, int], None], calls: int, rnd: int) -> Future:
    """Report ``calls`` done at ``rnd`` to ``work`` once ``fut`` succeeds."""
    fut.add_done_callback(lambda f: None if f.cancelled() or f.exception() is not None else work(calls, rnd))
    return fut


def run_conversation(calls: Calls, item: Item, k: int, settings: StudySettings,
                     work: Callable[[int, int], None] = lambda calls, rnd: None) -> dict[str, Any]:
    """Run one conversation and return its record (``item``, ``k``, ``agents``, ``turns``,
    ``probes``). ``work(calls, round)`` hears of each call done (a probe and its label are
    two) and the round it belongs to, as it happens (for the progress line).

    Raises:
        LLMCallError: a call gave no usable reply after its retries (StopRun: the run stops).
    """
    agents = make_agents(settings.agents, k)
    by_id = {a.id: a for a in agents}
    benign = [a for a in agents if a.role == "benign"]
    turns: list[dict[str, Any]] = []
    probes: list[Future] = [_count(calls.submit(probe, calls, item, a, [], 0, k, settings.memory), work, 2, 0)
                            for a in benign]
    stances: list[tuple[dict[str, Any], Future]] = []
    for rnd, order in enumerate(schedule(settings.agents, settings.rounds, settings.seed), 1):
        for position, aid in enumerate(order):
            agent = by_id[aid]
            prompt = utterance_prompt(agent, item, turns, rnd, settings.memory)
            call = study_call(item.item_id, rnd, "agent", "say", k, aid)
            fut = calls.submit(ask, calls.recorder, calls.clients["agent"], call, prompt, "belief_message",
                               parser(Message))
            turn = {"round": rnd, "position": position, "agent": aid, "utterance": fut.result().message}
            work(1, rnd)
            if agent.role == "benign":
                context = turns[-STANCE_CONTEXT:]
                stances.append((turn, _count(calls.submit(label_stance, calls, item, turn, context, k), work, 1, rnd)))
            turns.append(turn)
        snapshot = list(turns)
        probes += [_count(calls.submit(probe, calls, item, a, snapshot, rnd, k, settings.memory), work, 2, rnd)
                   for a in benign]
    roles = {a.id: a.role for a in agents}
    for turn, flag in zip(turns, exposed_flags(turns, roles)):
        turn["exposed"] = flag
        turn["stance"] = None
    for turn, fut in stances:
        turn["stance"] = fut.result()
    return {"item": item.model_dump(), "k": k, "agents": [a.as_dict() for a in agents], "turns": turns,
            "probes": [f.result() for f in probes]}
