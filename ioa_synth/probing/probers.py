"""Probers: the detector under evaluation (paper §4.1, §5.1). One class per
``--mode`` in :data:`PROBERS`: ``mcq`` (multiple-choice questions, the protocol's),
``direct`` (free-text items, no simulator), ``ambiguity`` (the paper's "LLM-ranked"
baseline: four ambiguous expressions, one MCQ around each) and ``wordnet`` (the lexical
baseline: the four most polysemous words by WordNet, one MCQ around each). All see the same context,
:func:`ioa_synth.probing.access.prober_context` of ``--access``, never the MAs. (``evaluate
--questions-from`` asks an earlier run's questions instead:
:mod:`ioa_synth.evaluate.stored_questions`.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ioa_synth.probing.access import prober_context
from ioa_synth.probing.calls import CaseCalls
from ioa_synth.probing.cases import EvalCase
from ioa_synth.probing.replies import (NUM_EXPRESSIONS, AmbiguityQuestionsReply, ExpressionsReply, ItemsReply,
                                       ProberReply, Question, parse_expressions, parse_items,
                                       parse_question_per_expression, parse_questions)
from ioa_synth.probing.wordnet import load_wordnet, polysemous_expressions
from ioa_synth.llm.ahead import RequestsAhead
from ioa_synth.llm.client import LLMClient
from ioa_synth.core.templates import Prompt, render_template
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


def first_prompt(template: str, case: EvalCase, access: str) -> Prompt:
    """A prober's first request for ``case`` under ``access``: ``template`` with the case's
    :func:`prober_context`. Made ahead for the next case while this one's calls are on the
    wire (:func:`prepare_first`); the same prompt either way."""
    return render_template(template, **prober_context(case, access))


#: First prober prompts made ahead (:mod:`ioa_synth.llm.ahead`).
_AHEAD: RequestsAhead[Prompt] = RequestsAhead(first_prompt)


def prepare_first(prober: "Prober", case: EvalCase, access: str) -> None:
    """Start making ``case``'s first prober prompt on the helper thread (no-op for a
    prober that asks nothing, as stored questions)."""
    template = getattr(prober, "first_template", None)
    if template is not None:
        _AHEAD.start((case.case_id, template), template, case, access)


def forget_first(case_id: str) -> None:
    """Drop what was made ahead for a finished case (one asked nothing, or stopped)."""
    _AHEAD.forget(case_id)


def _first(template: str, case: EvalCase, access: str) -> Prompt:
    return _AHEAD.get((case.case_id, template), template, case, access)


class McqProber:
    """``mcq``: K multiple-choice questions (stem + 2-5 lettered options), K chosen by the
    prober; reply ``{"questions": [{"question", "options"}]}``; one call (attempt 1)."""

    mode = "mcq"
    template = first_template = "evaluate/prober_mcq.jinja2"

    def prompt(self, case: EvalCase, access: str) -> Prompt:
        """The prober request's messages for ``case`` under ``access`` (also the prompt of
        the training data, paper App. D.1)."""
        return render_template(self.template, **prober_context(case, access))

    def ask(self, case: EvalCase, access: str, client: LLMClient, calls: CaseCalls) -> Probe:
        return self._ask(_first(self.template, case, access), client, calls)

    def ask_context(self, context: dict[str, Any], client: LLMClient, calls: CaseCalls) -> Probe:
        """The questions for a ready prompt ``context`` (a case's :func:`prober_context`, or a
        live meeting's :func:`~ioa_synth.probing.access.transcript_only_context`)."""
        return self._ask(render_template(self.template, **context), client, calls)

    def _ask(self, prompt: Prompt, client: LLMClient, calls: CaseCalls) -> Probe:
        return Probe(calls.call(client, "prober", None, 1, prompt, request_schema(ProberReply), parse_questions))


class DirectProber:
    """``direct`` (paper §5.1 "direct prompting"): the hidden disagreements the
    prober suspects, as free-text items; reply ``{"items": [{"description"}]}``; one call.
    Items go to the validity filter as they are (no simulator)."""

    mode = "direct"
    template = first_template = "evaluate/prober_direct.jinja2"

    def ask(self, case: EvalCase, access: str, client: LLMClient, calls: CaseCalls) -> Probe:
        prompt = _first(self.template, case, access)
        return Probe(calls.call(client, "prober", None, 1, prompt, request_schema(ItemsReply), parse_items), "item")


class AmbiguityProber:
    """``ambiguity`` (paper §5.1, Table 11 "LLM-ranked"): call 1 (attempt 1)
    selects the four expressions most open to several readings, reply
    ``{"expressions": [{"expression", "turn"}]}``, each verbatim in that turn's utterance;
    call 2 (attempt 2) writes one MCQ around each, reply as ``mcq`` with exactly four
    questions in the expressions' order, question i naming expression i
    (:func:`~ioa_synth.probing.replies.parse_question_per_expression`). ``extra["expressions"]``
    lists the selected ``{expression, turn}``; their overlap with the MAs is scoring work
    (:func:`ioa_synth.evaluate.scoring.expression_overlaps`), done outside the prober."""

    mode = "ambiguity"
    select_template = first_template = "evaluate/prober_ambiguity_select.jinja2"
    mcq_template = "evaluate/prober_ambiguity_mcq.jinja2"

    def ask(self, case: EvalCase, access: str, client: LLMClient, calls: CaseCalls) -> Probe:
        context = prober_context(case, access)
        utterances = {t.turn_idx: t.utterance for t in case.turns}
        prompt = _first(self.select_template, case, access)
        expressions = calls.call(client, "prober", None, 1, prompt, request_schema(ExpressionsReply),
                                 lambda d: parse_expressions(d, utterances))
        prompt = render_template(self.mcq_template, **context, expressions=expressions)
        questions = calls.call(client, "prober", None, 2, prompt, request_schema(AmbiguityQuestionsReply),
                               lambda d: parse_question_per_expression(d, expressions))
        return Probe(questions, extra={"expressions": expressions})


class WordNetProber:
    """``wordnet`` (paper §5.1, Table 11, the lexical baseline): the expressions are not
    chosen by a model but by WordNet, the four content words of the utterances with the most
    senses (:func:`ioa_synth.probing.wordnet.polysemous_expressions`); one call (attempt 1)
    writes one MCQ around each with the ``ambiguity`` mode's second prompt and checks. A
    dialogue with fewer than four words WordNet knows gets no call and no question (K = 0).
    ``extra["expressions"]`` as ``ambiguity``.

    Raises (from :meth:`ask`):
        ioa_synth.probing.wordnet.WordNetMissing: WordNet is not installed (checked by the
            command before any case).
    """

    mode = "wordnet"
    template = AmbiguityProber.mcq_template

    def expressions(self, case: EvalCase) -> list[dict[str, Any]]:
        """The case's selected ``{expression, turn}`` (at most four)."""
        return polysemous_expressions([(t.turn_idx, t.utterance) for t in case.turns], load_wordnet(),
                                      NUM_EXPRESSIONS)

    def prompt(self, case: EvalCase, access: str) -> Prompt:
        """The MCQ request for ``case`` under ``access`` (also what ``estimate`` counts)."""
        return render_template(self.template, **prober_context(case, access), expressions=self.expressions(case))

    def ask(self, case: EvalCase, access: str, client: LLMClient, calls: CaseCalls) -> Probe:
        expressions = self.expressions(case)
        if len(expressions) < NUM_EXPRESSIONS:
            return Probe([], extra={"expressions": expressions})
        prompt = render_template(self.template, **prober_context(case, access), expressions=expressions)
        questions = calls.call(client, "prober", None, 1, prompt, request_schema(AmbiguityQuestionsReply),
                               lambda d: parse_question_per_expression(d, expressions))
        return Probe(questions, extra={"expressions": expressions})


#: Probing modes by name (``--mode``).
PROBERS: dict[str, Prober] = {"mcq": McqProber(), "direct": DirectProber(), "ambiguity": AmbiguityProber(),
                              "wordnet": WordNetProber()}
MODES: tuple[str, ...] = tuple(PROBERS)
