"""Reply shapes of the prober (paper §4.1, §5.1), as pydantic models plus the checks that
make a reply unusable (the simulator's and the validity filter's:
:mod:`ioa_synth.evaluate.replies`).

Every ``parse_*`` function raises ``ValueError`` (``pydantic.ValidationError`` is one)
for a reply that breaks its shape; :class:`ioa_synth.llm.client.LLMClient` then asks
again (bounded by ``content_retries``). Nothing is guessed or repaired. Sizes appear
in the JSON schema sent to the endpoint (``json_schema_extra``) so that constrained
decoding ends.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ioa_synth.protocol.gates import is_placeholder
from ioa_synth.text.normalise import ALNUM, NONSPACE, Normaliser

LETTERS = "ABCDE"
MAX_QUESTIONS = 15

_OPTIONS_SCHEMA = {"type": "object", "properties": {c: {"type": "string", "maxLength": 200} for c in LETTERS},
                   "required": ["A", "B"], "additionalProperties": False}


class ReplyModel(BaseModel):
    """A reply shape: no key besides its fields (``additionalProperties: false`` in the schema)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"additionalProperties": False})


class ProbeQuestion(ReplyModel):
    """One multiple-choice question: stem and 2-5 options lettered from A."""

    question: str = Field(..., min_length=1, json_schema_extra={"maxLength": 400})
    options: dict[str, str] = Field(..., json_schema_extra=_OPTIONS_SCHEMA)


class ProberReply(ReplyModel):
    """Prober: ``{"questions": [{"question": "<stem>", "options": {"A": "...", ...}}]}``."""

    questions: list[ProbeQuestion] = Field(..., json_schema_extra={"maxItems": MAX_QUESTIONS})


@dataclass(frozen=True)
class Question:
    """A prober question as asked: stem and ``{letter: text}`` options in order."""

    question: str
    options: dict[str, str]

    @property
    def key(self) -> str:
        """Stable identity across runs: sha1 of stem + options JSON, 12 hex characters."""
        blob = self.question + json.dumps(self.options, ensure_ascii=False, sort_keys=True)
        return hashlib.sha1(blob.encode()).hexdigest()[:12]


def parse_questions(data: Any) -> list[Question]:
    """Questions of a prober reply (possibly none).

    Raises:
        ValueError: wrong shape, a blank or placeholder stem or option (``<stem>``, ``...``:
            a small model copying the reply shape; ``ioa_synth.protocol.gates.is_placeholder``),
            or option letters that are not 2-5 consecutive letters from A.
    """
    reply = ProberReply.model_validate(data)
    out = []
    for i, q in enumerate(reply.questions, 1):
        letters = "".join(q.options)
        if not 2 <= len(letters) <= 5 or letters != LETTERS[: len(letters)]:
            raise ValueError(f"question {i}: options must be lettered A, B, ... (2-5 of them), got {list(q.options)}")
        if is_placeholder(q.question) or any(is_placeholder(str(t)) for t in q.options.values()):
            raise ValueError(f"question {i}: blank or placeholder stem or option (e.g. '<stem>', '...')")
        out.append(Question(q.question.strip(), {k: v.strip() for k, v in q.options.items()}))
    return out


# --- the other modes (paper §5.1): ``direct`` items and ``ambiguity`` expressions -------------------------------

#: Expressions the ``ambiguity`` prober selects per dialogue (paper §5.1, "LLM-ranked").
NUM_EXPRESSIONS = 4


class ProbeItem(ReplyModel):
    """One suspected hidden disagreement, in free text (``direct`` mode)."""

    description: str = Field(..., min_length=1, json_schema_extra={"maxLength": 400})


class ItemsReply(ReplyModel):
    """Direct prober: ``{"items": [{"description": "..."}]}`` (possibly empty)."""

    items: list[ProbeItem] = Field(..., json_schema_extra={"maxItems": MAX_QUESTIONS})


class Expression(ReplyModel):
    """One selected expression: its exact words and the number of the turn that says them."""

    expression: str = Field(..., min_length=1, json_schema_extra={"maxLength": 200})
    turn: int


class ExpressionsReply(ReplyModel):
    """Ambiguity prober, first call: ``{"expressions": [{"expression": "...", "turn": n}]}``,
    exactly :data:`NUM_EXPRESSIONS`."""

    expressions: list[Expression] = Field(..., json_schema_extra={"minItems": NUM_EXPRESSIONS,
                                                                  "maxItems": NUM_EXPRESSIONS})


class AmbiguityQuestionsReply(ReplyModel):
    """Ambiguity prober, second call: the :class:`ProberReply` shape with exactly
    :data:`NUM_EXPRESSIONS` questions, one per selected expression in order."""

    questions: list[ProbeQuestion] = Field(..., json_schema_extra={"minItems": NUM_EXPRESSIONS,
                                                                "maxItems": NUM_EXPRESSIONS})


def parse_items(data: Any) -> list[Question]:
    """Items of a direct prober reply as :class:`Question` with no options (possibly none).

    Raises:
        ValueError: wrong shape or a blank or placeholder description.
    """
    reply = ItemsReply.model_validate(data)
    if any(is_placeholder(i.description) for i in reply.items):
        raise ValueError("blank or placeholder item description")
    return [Question(i.description.strip(), {}) for i in reply.items]


#: Verbatim matching: casefolded, runs of whitespace made one space, punctuation kept.
_VERBATIM = Normaliser(NONSPACE, casefold=True)
#: Word matching: casefolded, every run of other characters than letters and digits made one space.
_WORDS = Normaliser(ALNUM, casefold=True)


def parse_expressions(data: Any, utterances: dict[int, str]) -> list[dict[str, Any]]:
    """``[{"expression", "turn"}]`` of the ambiguity prober's first reply, checked against
    ``utterances`` (``{turn number: utterance}`` of the transcript shown).

    Raises:
        ValueError: wrong shape, not exactly :data:`NUM_EXPRESSIONS` expressions, an unknown
            turn, an expression that does not occur verbatim (ignoring case and runs of
            whitespace) in that turn's utterance, or the same expression twice.
    """
    reply = ExpressionsReply.model_validate(data)
    if len(reply.expressions) != NUM_EXPRESSIONS:
        raise ValueError(f"expected exactly {NUM_EXPRESSIONS} expressions, got {len(reply.expressions)}")
    out: list[dict[str, Any]] = []
    for i, e in enumerate(reply.expressions, 1):
        text = e.expression.strip()
        if e.turn not in utterances:
            raise ValueError(f"expression {i}: no turn {e.turn} in the transcript")
        if not text or _VERBATIM.text(text) not in _VERBATIM.text(utterances[e.turn]):
            raise ValueError(f"expression {i}: {text!r} does not occur verbatim in turn {e.turn}")
        if any(_VERBATIM.text(text) == _VERBATIM.text(o["expression"]) for o in out):
            raise ValueError(f"expression {i}: {text!r} selected twice")
        out.append({"expression": text, "turn": e.turn})
    return out


#: A copied prompt label such as ``Expression 2 (turn 3):`` (scaffolding, not a question).
_LABEL = re.compile(r"\bexpression\s*\d+\s*(\(\s*turn\s*\d+\s*\))?", re.I)


def parse_question_per_expression(data: Any, expressions: list[dict[str, Any]]) -> list[Question]:
    """The ambiguity prober's second reply: exactly one MCQ per selected expression, in the
    expressions' order (shape and checks of :func:`parse_questions`). Question ``i`` is
    about expression ``i``: its stem or an option contains that expression (compared as
    casefolded words); a stem that is only scaffolding copied from the prompt (``Expression
    2: '<the expression>'``: the label and the expression removed, nothing is left but a
    placeholder, ``ioa_synth.protocol.gates.is_placeholder``) is not a question.

    Raises:
        ValueError: as :func:`parse_questions`, not exactly :data:`NUM_EXPRESSIONS`
            questions, a question that does not name its expression (out of order), or a
            scaffolding stem.
    """
    questions = parse_questions(data)
    if len(questions) != NUM_EXPRESSIONS:
        raise ValueError(f"expected one question per expression ({NUM_EXPRESSIONS}), got {len(questions)}")
    for i, (q, e) in enumerate(zip(questions, expressions), 1):
        expr = _WORDS.text(e["expression"])
        if not any(expr in _WORDS.text(text) for text in (q.question, *q.options.values())):
            raise ValueError(f"question {i} does not mention expression {i} ({e['expression']!r}): one question "
                             "per expression, in the expressions' order")
        rest = _WORDS.text(_LABEL.sub(" ", q.question)).replace(expr, " ")
        if is_placeholder(rest) or is_placeholder(_LABEL.sub(" ", q.question).replace(e["expression"], " ")):
            raise ValueError(f"question {i}: the stem {q.question!r} copies the prompt's expression line; "
                             "it is not a question")
    return questions
