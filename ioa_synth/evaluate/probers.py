"""Probers: the detector under evaluation (PROTOCOL.md §6; paper §4.1, §5.1). One class per
``--mode`` in :data:`PROBERS`: ``mcq`` (multiple-choice questions, the protocol's),
``direct`` (free-text items, no simulator) and ``ambiguity`` (the paper's "LLM-ranked"
baseline: four ambiguous expressions, one MCQ around each). All see the same context,
:func:`ioa_synth.evaluate.access.prober_context` of ``--access``, never the MAs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ioa_synth.evaluate.access import prober_context
from ioa_synth.evaluate.inputs import EvalCase
from ioa_synth.evaluate.records import CaseCalls, read_record
from ioa_synth.evaluate.replies import (AmbiguityQuestionsReply, ExpressionsReply, ItemsReply, ProberReply, Question,
                                        parse_expressions, parse_items, parse_question_per_expression, parse_questions)
from ioa_synth.evaluate.text import overlapping_mas
from ioa_synth.llm.client import LLMClient
from ioa_synth.llm.prompts import render_template
from ioa_synth.protocol.schemas import request_schema


@dataclass(frozen=True)
class Probe:
    """What a prober produced for one case: ``questions`` (MCQs, or free-text items with
    empty ``options`` when ``kind == "item"``) and ``extra`` fields for the record (e.g.
    the ambiguity mode's ``expressions``)."""

    questions: list[Question]
    kind: str = "question"
    extra: dict[str, Any] = field(default_factory=dict)


class Prober(Protocol):
    """A probing mode: asks the prober component about one case."""

    mode: str

    def ask(self, case: EvalCase, access: str, client: LLMClient, calls: CaseCalls) -> Probe:
        """The case's questions or items, in the prober's order (possibly none).

        Raises:
            ioa_synth.llm.client.LLMCallError: no usable prober reply.
        """


class McqProber:
    """``mcq``: K multiple-choice questions (stem + 2-5 lettered options), K chosen by the
    prober; reply ``{"questions": [{"question", "options"}]}``; one call (attempt 1)."""

    mode = "mcq"
    template = "evaluate/prober_mcq.jinja2"

    def ask(self, case: EvalCase, access: str, client: LLMClient, calls: CaseCalls) -> Probe:
        prompt = render_template(self.template, **prober_context(case, access))
        return Probe(calls.call(client, "prober", None, 1, prompt, request_schema(ProberReply), parse_questions))


class DirectProber:
    """``direct`` (issue 8; paper §5.1 "direct prompting"): the hidden disagreements the
    prober suspects, as free-text items; reply ``{"items": [{"description"}]}``; one call.
    Items go to the validity filter as they are (no simulator)."""

    mode = "direct"
    template = "evaluate/prober_direct.jinja2"

    def ask(self, case: EvalCase, access: str, client: LLMClient, calls: CaseCalls) -> Probe:
        prompt = render_template(self.template, **prober_context(case, access))
        return Probe(calls.call(client, "prober", None, 1, prompt, request_schema(ItemsReply), parse_items), "item")


class AmbiguityProber:
    """``ambiguity`` (issue 8; paper §5.1, Table 11 "LLM-ranked"): call 1 (attempt 1)
    selects the four expressions most open to several readings, reply
    ``{"expressions": [{"expression", "turn"}]}``, each verbatim in that turn's utterance;
    call 2 (attempt 2) writes one MCQ around each, reply as ``mcq`` with exactly four
    questions in the expressions' order. ``extra["expressions"]`` records each expression
    with ``overlaps_ma`` (``{MA id: token overlap}`` with the MA's surface form, see
    :mod:`ioa_synth.evaluate.text`) and ``overlaps`` (bool)."""

    mode = "ambiguity"
    select_template = "evaluate/prober_ambiguity_select.jinja2"
    mcq_template = "evaluate/prober_ambiguity_mcq.jinja2"

    def ask(self, case: EvalCase, access: str, client: LLMClient, calls: CaseCalls) -> Probe:
        context = prober_context(case, access)
        utterances = {t.turn_idx: t.utterance for t in case.turns}
        prompt = render_template(self.select_template, **context)
        expressions = calls.call(client, "prober", None, 1, prompt, request_schema(ExpressionsReply),
                                 lambda d: parse_expressions(d, utterances))
        prompt = render_template(self.mcq_template, **context, expressions=expressions)
        questions = calls.call(client, "prober", None, 2, prompt, request_schema(AmbiguityQuestionsReply),
                               parse_question_per_expression)
        forms = {p.id: p.surface_form for p in case.profiles.misalignment_points}
        recorded = []
        for e in expressions:
            hits = overlapping_mas(e["expression"], forms)
            recorded.append({**e, "overlaps_ma": hits, "overlaps": bool(hits)})
        return Probe(questions, extra={"expressions": recorded})


#: Probing modes by name (``--mode``).
PROBERS: dict[str, Prober] = {"mcq": McqProber(), "direct": DirectProber(), "ambiguity": AmbiguityProber()}
MODES: tuple[str, ...] = tuple(PROBERS)


class StoredQuestions:
    """The questions of an earlier results folder (``--questions-from``, ``mcq`` only): no
    prober call, so two runs (e.g. with and without ``--permute-seed``) ask the same questions."""

    def __init__(self, results_dir: Path) -> None:
        self.results_dir = results_dir

    def ask(self, case: EvalCase, access: str, client: LLMClient | None, calls: CaseCalls) -> Probe:
        """Raises ValueError when ``results_dir`` holds no scored record of the case."""
        rec = read_record(self.results_dir, case.case_id)
        if rec is None or rec.get("status") != "scored":
            raise ValueError(f"--questions-from {self.results_dir}: no scored record of {case.case_id}")
        if any(q.get("kind") == "item" or not q.get("options") for q in rec["questions"]):
            raise ValueError(f"--questions-from {self.results_dir}: {case.case_id} holds direct-mode items, "
                             "not multiple-choice questions")
        return Probe([Question(q["question"], dict(q["options"])) for q in rec["questions"]])
