"""The participant simulator (paper §4.1, App. C.1): one call per
participant per rollout, each answering the whole question set, plus the
``--permute-seed`` shuffle of question and option order (paper Table 14).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from functools import partial
from dataclasses import dataclass
from typing import Any

import numpy as np

from ioa_synth.evaluate.access import simulator_context
from ioa_synth.evaluate.multiparty import TEMPLATES as MULTI, is_multi, participants_of
from ioa_synth.evaluate.multiparty import simulator_context as multi_simulator_context
from ioa_synth.evaluate.replies import SimulatorReply, parse_answers
from ioa_synth.probing.cases import EvalCase
from ioa_synth.probing.calls import CaseCalls
from ioa_synth.probing.replies import LETTERS, Question
from ioa_synth.llm.client import LLMClient
from ioa_synth.core.templates import render_template
from ioa_synth.protocol.schemas import request_schema
from ioa_synth.runs.batch_recorder import gather

TEMPLATE = "evaluate/simulator.jinja2"
PARTICIPANTS = ("M1", "M2")


@dataclass(frozen=True)
class Permutation:
    """How questions are shown: ``order[i]`` is the original number of shown question
    i+1; ``options[i]`` maps a shown letter of that question to its original letter."""

    order: tuple[int, ...]
    options: tuple[dict[str, str], ...]

    @classmethod
    def identity(cls, questions: list[Question]) -> "Permutation":
        """The prober's own question and option order."""
        return cls(tuple(range(1, len(questions) + 1)), tuple({c: c for c in q.options} for q in questions))

    @classmethod
    def shuffled(cls, questions: list[Question], seed: int, case_id: str) -> "Permutation":
        """Question and option order drawn from ``numpy.random.default_rng([seed, h])``,
        ``h`` from the case id: deterministic in (seed, case), different across cases."""
        h = int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16)
        rng = np.random.default_rng([seed, h])
        order = tuple(int(i) + 1 for i in rng.permutation(len(questions)))
        options = []
        for n in order:
            orig = list(questions[n - 1].options)
            shown = [orig[int(i)] for i in rng.permutation(len(orig))]
            options.append({LETTERS[i]: o for i, o in enumerate(shown)})
        return cls(order, tuple(options))

    def present(self, questions: list[Question]) -> list[Question]:
        """The questions as shown to the simulator."""
        out = []
        for n, mapping in zip(self.order, self.options):
            q = questions[n - 1]
            out.append(Question(q.question, {shown: q.options[orig] for shown, orig in mapping.items()}))
        return out

    def to_original(self, answers: dict[int, str]) -> dict[int, str]:
        """Shown ``{number: letter}`` answers in original numbers and letters."""
        return {self.order[i - 1]: self.options[i - 1][letter] for i, letter in answers.items()}

    def as_record(self) -> dict[str, Any]:
        """``{"questions": [original number per shown position], "options": [{shown: original}]}``."""
        return {"questions": list(self.order), "options": [dict(m) for m in self.options]}


def simulate(case: EvalCase, questions: list[Question], perm: Permutation, rollouts: int, client: LLMClient,
             calls: CaseCalls) -> dict[str, list[dict[int, str]]]:
    """Per participant, the answers of each rollout as ``{original number: original letter}``.

    One call per participant per rollout (every participant of a multi-party case:
    :mod:`ioa_synth.evaluate.multiparty`) (attempt = rollout number), none when there are
    no questions.

    Raises:
        ioa_synth.llm.client.LLMCallError: no usable simulator reply.
    """
    participants = participants_of(case)  # M1, M2; M1..MN in a multi-party case
    out: dict[str, list[dict[int, str]]] = {p: [] for p in participants}
    if not questions:
        return out
    shown = perm.present(questions)
    letters = ["".join(q.options) for q in shown]
    schema = request_schema(SimulatorReply)
    prompts = {}
    for p in participants:
        name, context = simulator_prompt(case, p)
        prompts[p] = render_template(name, **context, questions=shown)
    jobs = [(rollout, p) for rollout in range(1, rollouts + 1) for p in participants]
    replies = gather([partial(calls.call, client, "simulator", p, rollout, prompts[p], schema,
                              lambda d: parse_answers(d, letters)) for rollout, p in jobs])
    for (_, p), answers in zip(jobs, replies):  # independent calls: one wave in batch mode
        out[p].append(perm.to_original(answers))
    return out


def simulator_prompt(case: EvalCase, participant: str) -> tuple[str, dict[str, Any]]:
    """``(template name, context but the questions)`` of the simulator playing ``participant``
    of ``case`` (the multi-party template for more than two people)."""
    if is_multi(case):
        return MULTI["simulator"], multi_simulator_context(case, participant)
    return TEMPLATE, simulator_context(case, participant)


def modal(options: list[str]) -> tuple[str, float]:
    """``(modal option, share of rollouts agreeing with it)``; a tie goes to the option
    seen first (paper Table 13 reports agreement with the modal answer)."""
    counts = Counter(options)
    best = max(counts.values())
    choice = next(o for o in options if counts[o] == best)
    return choice, round(best / len(options), 4)
