"""The team's pieces (paper App. D.7): settings, agents, the shared log and the prompts
built from them. Pure functions: a stored record's prompts can be rebuilt from its turns.

A turn is ``{"phase": "initial" | "rediscussion", "round": r, "agent": name, "text": ...}``;
the intervention's directive is a turn of ``agent`` :data:`MODERATOR` with ``"kind":
"directive"``. Every agent sees the whole log (its own turns under its own name).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import asdict, dataclass
from typing import Any, Callable

from ioa_synth.collab.tasks import BcbTask, HiddenProfileTask, Task
from ioa_synth.core.templates import Prompt, render_template

#: The two BCB discussers (App. D.7: identical agents DiscusserA and DiscusserB).
BCB_AGENTS = ("DiscusserA", "DiscusserB")
#: Who speaks the injected directive turn.
MODERATOR = "Moderator"
NO_LOG = "(nothing has been said yet)"

#: Call steps (``llm_calls.stage``): initial round r is step r, the intervention's calls
#: step 50, re-discussion round k step 100 + k (its turns and its stop-votes), the
#: solution or final answers step 200.
INTERVENTION_STEP = 50
REDISCUSSION_STEP = 100
FINAL_STEP = 200
#: The most re-discussion rounds ``--max-extra-rounds`` allows (their steps stay below
#: :data:`FINAL_STEP`).
MAX_EXTRA_ROUNDS_LIMIT = 99

#: Configurations that need no detector (``mcq:NAME`` names one).
PLAIN_CONFIGS = ("single", "discussion", "self-reflection")


@dataclass(frozen=True)
class CollabSettings:
    """The protocol's settings (fingerprinted; App. D.7 values as defaults).

    ``bcb_rounds``: most discussion rounds of a BCB pair (each ends with a stop-vote);
    ``hp_rounds``: round-robin rounds of a hidden-profile group; temperatures of the
    stop-vote, the coder, the MCQ answers and of the structured replies App. D.7 does not
    fix (self-reflection, hidden-profile final answers); the discussion turns use the
    ``discusser`` component's temperature (0.7 unless ``--config`` says otherwise).
    ``seed`` is added to each component's seed base and to the hash that assigns
    hidden-profile blocks. ``time_limit`` (seconds) and ``memory_limit_mb`` bound one
    harness check.

    ``max_extra_rounds``: the cap on the re-discussion after a triggered intervention,
    which otherwise runs until every agent's stop-vote says ready (App. D.7 gives no cap).
    ``None`` (the default) resolves to the bench's own discussion length, ``bcb_rounds``
    (4) or ``hp_rounds`` (8): Table 23's HiddenBench self-reflection row, 100% triggered
    and +7.45 rounds per task, needs a cap of at least 8 there; its BCB rows (at most
    +0.72 / 65.5% = 1.1 rounds per triggered task) stay well inside 4.
    """

    bench: str
    bcb_rounds: int = 4
    hp_rounds: int = 8
    vote_temperature: float = 0.0
    coder_temperature: float = 0.2
    answer_temperature: float = 0.2
    reflection_temperature: float = 0.2
    final_temperature: float = 0.2
    seed: int = 0
    time_limit: float = 240.0
    memory_limit_mb: int = 8192
    max_extra_rounds: int | None = None

    def __post_init__(self) -> None:
        if self.max_extra_rounds is None:
            cap = self.bcb_rounds if self.bench == "bcb" else self.hp_rounds
            object.__setattr__(self, "max_extra_rounds", cap)
        if not 1 <= int(self.max_extra_rounds) <= MAX_EXTRA_ROUNDS_LIMIT:  # type: ignore[arg-type]
            raise ValueError(f"--max-extra-rounds must be 1 to {MAX_EXTRA_ROUNDS_LIMIT} "
                             f"(got {self.max_extra_rounds})")

    @property
    def extra_cap(self) -> int:
        """``max_extra_rounds`` resolved (an int)."""
        return int(self.max_extra_rounds or 1)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Ask:
    """One model call of a task's run: ``component`` (``discusser`` or ``detector:NAME``),
    ``step`` and ``role`` (with the unit, its call key), the ``prompt``, a ``temperature``
    override (``None``: the component's), and for a JSON reply its ``schema``; ``parse``
    gets the decoded JSON, or the reply text when ``schema`` is ``None``."""

    component: str
    step: int
    role: str
    prompt: Prompt
    temperature: float | None = None
    schema: dict[str, Any] | None = None
    name: str = "text"
    parse: Callable[[Any], Any] = lambda x: x


def agent_names(task: Task) -> list[str]:
    """``DiscusserA``, ``DiscusserB`` for BCB; ``Agent1`` .. ``AgentN`` for a scenario."""
    if isinstance(task, BcbTask):
        return list(BCB_AGENTS)
    return [f"Agent{i}" for i in range(1, task.agents + 1)]


def block_order(task_id: str, n: int, seed: int = 0) -> list[int]:
    """Which private block each of ``n`` agents gets: ``range(n)`` shuffled by a
    ``random.Random`` seeded with the first 8 bytes of ``sha256(f"{seed}|{task_id}")``
    (App. D.7: blocks shuffled deterministically by a hash of the task id)."""
    digest = hashlib.sha256(f"{seed}|{task_id}".encode("utf-8")).digest()
    order = list(range(n))
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    return order


def persona(task: Task, agent: str, seed: int = 0) -> str:
    """The system text of ``agent``: a BCB discusser, or the shared scenario plus the
    agent's own private block."""
    if isinstance(task, BcbTask):
        partner = BCB_AGENTS[1] if agent == BCB_AGENTS[0] else BCB_AGENTS[0]
        return render_template("collab/bcb_persona.jinja2", agent=agent, partner=partner).messages[0]["content"]
    names = agent_names(task)
    block = task.private[block_order(task.task_id, task.agents, seed)[names.index(agent)]]
    return render_template("collab/hp_persona.jinja2", agent=agent, n=task.agents, shared=task.shared,
                           private=block).messages[0]["content"]


def render_log(turns: list[dict[str, Any]]) -> str:
    """The log as ``Name: text`` paragraphs (:data:`NO_LOG` when empty)."""
    return "\n\n".join(f"{t['agent']}: {t['text']}" for t in turns) or NO_LOG


def subject(task: Task) -> str:
    """What the team works on, as the reflection and MCQ prompts state it."""
    if isinstance(task, BcbTask):
        return f"The task:\n{task.prompt}"
    options = "\n".join(f"{k}. {v}" for k, v in task.options.items())
    return f"The decision: {task.question}\nOptions:\n{options}"


def others(task: Task, agent: str) -> str:
    """The other members as the prompts name them."""
    rest = [a for a in agent_names(task) if a != agent]
    return rest[0] if len(rest) == 1 else ", ".join(rest[:-1]) + " and " + rest[-1]


def round_note(phase: str, rnd: int, total: int, fixed: bool = False) -> str:
    """Where the discussion stands, as a turn's prompt says it (``total``: the phase's
    most rounds)."""
    if phase == "rediscussion":
        return (f"extra round {rnd} of at most {total} after the check above; respond to it "
                "until everyone agrees it is settled")
    return f"round {rnd} of {total}" if fixed else f"round {rnd} of at most {total}"


def say_prompt(task: Task, agent: str, turns: list[dict[str, Any]], phase: str, rnd: int,
               settings: CollabSettings) -> Prompt:
    """The prompt of ``agent``'s next turn (it sees every earlier turn)."""
    log = render_log(turns)
    extra = phase == "rediscussion"
    if isinstance(task, BcbTask):
        total = settings.extra_cap if extra else settings.bcb_rounds
        return render_template("collab/bcb_discuss.jinja2", persona=persona(task, agent), task=task.prompt, log=log,
                               partner=others(task, agent), round_note=round_note(phase, rnd, total))
    assert isinstance(task, HiddenProfileTask)
    total = settings.extra_cap if extra else settings.hp_rounds
    return render_template("collab/hp_discuss.jinja2", persona=persona(task, agent, settings.seed),
                           question=task.question, options=task.options, log=log,
                           round_note=round_note(phase, rnd, total, fixed=not extra))


def stop_vote_prompt(task: Task, agent: str, turns: list[dict[str, Any]], seed: int = 0) -> Prompt:
    """``agent``'s stop-vote: a BCB discussion round's, or (both benches) a re-discussion
    round's; the reply is ``{"ready", "reason"}``."""
    if isinstance(task, BcbTask):
        return render_template("collab/bcb_stop_vote.jinja2", persona=persona(task, agent), task=task.prompt,
                               log=render_log(turns), partner=others(task, agent))
    return render_template("collab/hp_stop_vote.jinja2", persona=persona(task, agent, seed), question=task.question,
                           options=task.options, log=render_log(turns), others=others(task, agent))


def coder_prompt(task: BcbTask, agent: str, turns: list[dict[str, Any]]) -> Prompt:
    return render_template("collab/bcb_coder.jinja2", persona=persona(task, agent), task=task.prompt,
                           log=render_log(turns), partner=others(task, agent), code_prompt=task.code_prompt.strip())


def single_prompt(task: BcbTask) -> Prompt:
    return render_template("collab/bcb_single.jinja2", task=task.prompt, code_prompt=task.code_prompt.strip())


def final_prompt(task: HiddenProfileTask, agent: str, turns: list[dict[str, Any]], seed: int) -> Prompt:
    return render_template("collab/hp_final.jinja2", persona=persona(task, agent, seed), question=task.question,
                           options=task.options, log=render_log(turns), letters="".join(task.options))


def reflection_prompt(task: Task, agent: str, turns: list[dict[str, Any]], seed: int) -> Prompt:
    return render_template("collab/reflection.jinja2", persona=persona(task, agent, seed), subject=subject(task),
                           log=render_log(turns), others=others(task, agent))


def answer_prompt(task: Task, agent: str, turns: list[dict[str, Any]], question: dict[str, Any], seed: int) -> Prompt:
    return render_template("collab/mcq_answer.jinja2", persona=persona(task, agent, seed), subject=subject(task),
                           log=render_log(turns), question=question["question"], options=question["options"],
                           letters="".join(question["options"]))


def directive_text(template: str, **context: Any) -> str:
    """The text of an injected directive turn (the template's user block)."""
    return render_template(template, **context).messages[1]["content"]
