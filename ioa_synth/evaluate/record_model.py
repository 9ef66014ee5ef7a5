"""The per-case evaluation record, ``RESULTS/records/<case_id>.json`` (docs/evaluate.md),
as one pydantic model: written by ``evaluate`` (:func:`ioa_synth.evaluate.case.evaluate_case`)
and read by ``compare``/``report`` (:mod:`ioa_synth.evaluate.analysis.results`), ``train
sft`` and the training reward.

The file is the model dumped with only the fields that were set, in field order (which is
the order of the released files): a failed record has ``error`` and no ``questions``, a
scored one the reverse; ``expressions`` only in the ``ambiguity`` and ``wordnet`` modes, ``permutation`` only
with ``--permute-seed``, ``replayed`` only on a call stored by an earlier run. Reading is
lenient where released files differ (missing settings take their defaults, unknown fields
are kept), so records made by earlier releases still read; a problem is one line naming
the file (:class:`RecordError`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError, model_validator
from ioa_synth.core.validation import first_problem, more_problems

#: Reasons of a Category-C question, in the order evaluate checks them (paper §4.2, App. E.2).
CReason = Literal["not_diverging", "not_meaningful", "not_implicit", "redundant"]
C_REASONS: tuple[str, ...] = get_args(CReason)


def _share() -> Any:
    return Field(ge=0.0, le=1.0)


class RecordError(ValueError):
    """A record file that cannot be read or does not fit the format; one line naming the file."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")


class Answer(_Open):
    """One participant's answer to one question (mapped back to the prober's option order):
    the modal ``option`` over the rollouts, every rollout's pick, and the share agreeing."""

    option: str | None
    rollouts: list[str | None] = []
    consistency: float | None = None


class RecordQuestion(_Open):
    """One prober question with both answers, the filter's verdict and its category. A
    ``direct``-mode item (``kind == "item"``) has no ``options``, ``answers`` nor
    ``divergent`` (null)."""

    number: int = Field(ge=1)
    key: str = Field(min_length=1)
    kind: Literal["question", "item"] = "question"
    question: str
    options: dict[str, str] | None = None
    answers: dict[str, Answer] | None = None
    divergent: bool | None = None
    filter: dict[str, Any] | None = None
    category: Literal["A", "B", "C"]
    reason: CReason | None = None
    ma_id: str | None = None


class MisalignmentPoint(_Open):
    """A planted MA of the case (``type`` is null in the released data)."""

    id: str
    type: str | None = None
    topic: str | None = None
    surface_form: str | None = None


class Metrics(_Open):
    """Per-dialogue numbers (paper §4.2): P, R, F1 in 0-1, K questions, |A|, |B|, |C|."""

    precision: float = _share()
    recall: float = _share()
    f1: float = _share()
    k: int = Field(ge=0)
    a: int = Field(ge=0)
    b: int = Field(ge=0)
    c: int = Field(ge=0)
    mas_hit: list[str] = []
    num_mas: int = Field(ge=0)


class Expression(_Open):
    """An ``ambiguity``- or ``wordnet``-mode expression (paper §5.1, Table 11): its words, its
    turn, and the MAs whose surface form it overlaps (``{MA id: overlap}``, 0-1; WordNet
    synonyms count in the ``wordnet`` mode)."""

    expression: str
    turn: int | None = None
    overlaps_ma: dict[str, float] = {}
    overlaps: bool = False


class Permutation(_Open):
    """The ``--permute-seed`` order: original question number per shown position, and per
    question ``{shown letter: original letter}``."""

    questions: list[int]
    options: list[dict[str, str]]


class CallEntry(_Open):
    """One try of one model call the case made: the request's messages and the raw reply."""

    component: str
    participant: str | None = None
    rollout: int | None = None
    model: str | None = None
    messages: list[dict[str, Any]] = []
    response: str | None = None
    error: str | None = None
    try_index: int = 0
    replayed: bool = False


class EvalRecord(_Open):
    """One case's record; ``metrics`` and ``c_breakdown`` are present when ``status == "scored"``."""

    case_id: str = Field(min_length=1)
    source_file: str | None = None
    domain: str = "unknown"
    task_type: str = "unknown"
    status: Literal["scored", "failed"]
    mode: str = "mcq"
    access: str = "public"
    rollouts: int = 1
    permute_seed: int | None = None
    #: a probe of a series of meetings: the meeting after which it was made (absent otherwise)
    meeting: int | None = None
    misalignment_points: list[MisalignmentPoint] = []
    expressions: list[Expression] | None = None
    error: str | None = None
    questions: list[RecordQuestion] = []
    metrics: Metrics | None = None
    c_breakdown: dict[CReason, NonNegativeInt] | None = None
    permutation: Permutation | None = None
    calls: list[CallEntry] = []

    @model_validator(mode="after")
    def _scored_has_metrics(self) -> "EvalRecord":
        if self.status == "scored" and (self.metrics is None or self.c_breakdown is None):
            raise ValueError("a scored record needs 'metrics' and 'c_breakdown'")
        return self

    def to_json_bytes(self) -> bytes:
        """The record file's bytes: the fields set, in field order, indented by 2, UTF-8, newline-ended."""
        return self.model_dump_json(indent=2, exclude_unset=True).encode("utf-8") + b"\n"


def validation_problem(path: Path, exc: ValidationError) -> str:
    """One line naming ``path``, the first problem's place and message, and how many more."""
    where, msg = first_problem(exc, top="(top level)")
    return f"{path}: {where}: {msg}{more_problems(exc)}"
