"""Reply shapes of the simulator and the validity filter (paper §4.1), as pydantic models
plus the checks that make a reply unusable, as :mod:`ioa_synth.probing.replies` (the
prober's): a ``ValueError`` makes the client ask again; nothing is guessed or repaired.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ioa_synth.probing.replies import LETTERS, MAX_QUESTIONS, ReplyModel


class Answer(ReplyModel):
    """One simulator answer: a 1-based question number and an option letter."""

    question: int
    option: str = Field(..., json_schema_extra={"enum": list(LETTERS)})


class SimulatorReply(ReplyModel):
    """Simulator: ``{"answers": [{"question": <1-based number>, "option": "<letter>"}]}``."""

    answers: list[Answer] = Field(..., json_schema_extra={"maxItems": MAX_QUESTIONS})


class Judgement(ReplyModel):
    """The validity filter's decision on one divergent question."""

    question: int
    is_meaningful: bool
    is_implicit: bool
    redundant_with: int | None
    hits_ground_truth: str | None = Field(..., json_schema_extra={"maxLength": 8})


class FilterReply(ReplyModel):
    """Validity filter: ``{"judgements": [{"question", "is_meaningful", "is_implicit",
    "redundant_with", "hits_ground_truth"}]}``."""

    judgements: list[Judgement] = Field(..., json_schema_extra={"maxItems": MAX_QUESTIONS})


def parse_answers(data: Any, letters: list[str]) -> dict[int, str]:
    """``{question number: letter}`` of a simulator reply to questions whose options are
    ``letters[n-1]`` (e.g. ``"ABCD"``).

    Raises:
        ValueError: wrong shape, a question answered twice or not at all, an unknown
            question number, or a letter the question does not offer.
    """
    reply = SimulatorReply.model_validate(data)
    got: dict[int, str] = {}
    for a in reply.answers:
        if not 1 <= a.question <= len(letters):
            raise ValueError(f"answer to unknown question {a.question}")
        if a.question in got:
            raise ValueError(f"question {a.question} answered twice")
        if a.option not in letters[a.question - 1]:
            raise ValueError(f"question {a.question} has no option {a.option!r}")
        got[a.question] = a.option
    missing = [n for n in range(1, len(letters) + 1) if n not in got]
    if missing:
        raise ValueError(f"questions not answered: {missing}")
    return got


def parse_judgements(data: Any, shown: list[int], ma_ids: list[str]) -> dict[int, Judgement]:
    """``{question number: Judgement}`` of a filter reply on the divergent questions ``shown``.

    Raises:
        ValueError: wrong shape, a shown question judged twice or not at all, an unshown
            question, ``redundant_with`` not an earlier shown question, or
            ``hits_ground_truth`` not an MA id of this case.
    """
    reply = FilterReply.model_validate(data)
    got: dict[int, Judgement] = {}
    for j in reply.judgements:
        if j.question not in shown:
            raise ValueError(f"judgement of question {j.question}, which was not shown")
        if j.question in got:
            raise ValueError(f"question {j.question} judged twice")
        if j.redundant_with is not None and (j.redundant_with not in shown or j.redundant_with >= j.question):
            raise ValueError(f"question {j.question}: redundant_with {j.redundant_with} is not an earlier shown question")
        if j.hits_ground_truth is not None and j.hits_ground_truth not in ma_ids:
            raise ValueError(f"question {j.question}: hits_ground_truth {j.hits_ground_truth!r} is not one of {ma_ids}")
        got[j.question] = j
    missing = [n for n in shown if n not in got]
    if missing:
        raise ValueError(f"questions not judged: {missing}")
    return got
