"""SimpleQA import (§5): short fact-seeking questions with one answer. Overlong questions
or answers are dropped; a fine-grained relation is inferred by hand-written rules on the
question and answer (questions no rule matches are dropped); the manipulated answer is
the answer of another question of the same topic and relation with a compatible shape,
absent from the target question."""

from __future__ import annotations

import ast
import csv
import io
import random
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable

from ioa_synth.belief.items import Draft, Imported, ItemsError, read_input
from ioa_synth.belief.matching import borrow_answer, mentions, normalize

MAX_QUESTION_CHARS = 300
MAX_ANSWER_CHARS = 60

_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_YEAR = re.compile(r"^\d{4}$")
_DATE = re.compile(rf"^(\d{{1,2}} ({_MONTHS}),? \d{{4}}|({_MONTHS}) \d{{1,2}},? \d{{4}})$", re.I)
_COUNT = re.compile(r"^\d+$")
_ORDINAL = re.compile(r"^(\d+(st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)$", re.I)
_PERSON = re.compile(r"^[A-Z][\w.'-]+(?: (?:[a-z]{1,3} )*[A-Z][\w.'-]*)+$")  # "Rembrandt van Rijn"

#: (relation, question pattern, answer shape) in priority order; the first match wins.
RULES: tuple[tuple[str, str, re.Pattern[str] | None], ...] = (
    ("full_date", r"\b(what|which) (exact )?(date|day)\b|\bday, month,? and year\b", _DATE),
    ("year", r"\b(what|which) year\b|\bin what year\b", _YEAR),
    ("count", r"^how many\b", _COUNT),
    ("ordinal", r"\b(what|which) (number|position|place|rank)\b|\bordinal\b", _ORDINAL),
    ("award_winner", r"^who (won|received|was awarded|was the recipient)\b", _PERSON),
    ("software_patch", r"\bpatch\b", None),
    ("song", r"\b(song|single)\b", None),
    ("album", r"\balbum\b", None),
    ("tour", r"\btour\b", None),
    ("political_party", r"\bpolitical party\b|\bwhich party\b", None),
    ("language", r"\blanguage\b", None),
    ("venue", r"\b(venue|stadium|arena|theat(re|er))\b", None),
    ("state_or_province", r"\b(which|what) (state|province)\b", None),
    ("country", r"\b(which|what) country\b", None),
    ("city", r"\b(which|what) (city|town)\b|\bin which city\b", None),
    ("person", r"^(who|whom)\b|\bwhat (is|was) the (full )?name of the (person|man|woman)\b", _PERSON),
)


def infer_relation(question: str, answer: str) -> str | None:
    """The fine-grained relation of a SimpleQA question, or ``None`` (no rule, or the
    answer does not have the rule's shape)."""
    q = question.strip().lower()
    for relation, pattern, shape in RULES:
        if re.search(pattern, q):
            return relation if shape is None or shape.match(answer.strip()) else None
    return None


def _compatible(relation: str) -> Callable[[str], bool]:
    shape = next((s for r, _, s in RULES if r == relation), None)
    return (lambda a: bool(shape.match(a))) if shape is not None else (lambda a: True)


def _topic(metadata: str) -> str:
    try:
        meta = ast.literal_eval(metadata) if metadata.strip() else {}
    except (ValueError, SyntaxError):
        meta = {}
    return str(meta.get("topic", "")) if isinstance(meta, dict) else ""


def import_simpleqa(path: Path) -> Imported:
    """SimpleQA CSV (``metadata``, ``problem``, ``answer``)."""
    rows = list(csv.DictReader(io.StringIO(read_input(path), newline="")))
    if not rows or not {"problem", "answer"} <= set(rows[0]):
        raise ItemsError(f"{path}: SimpleQA CSV needs the columns metadata, problem, answer")
    dropped: Counter = Counter()
    kept: list[tuple[int, str, str, str, str]] = []
    for n, r in enumerate(rows):
        question, answer = r["problem"].strip(), r["answer"].strip()
        if len(question) > MAX_QUESTION_CHARS or len(answer) > MAX_ANSWER_CHARS or not question or not answer:
            dropped["overlong or empty question or answer"] += 1
            continue
        relation = infer_relation(question, answer)
        if relation is None:
            dropped["no fine-grained relation"] += 1
            continue
        kept.append((n, question, answer, relation, _topic(r.get("metadata") or "")))
    pools: dict[tuple[str, str], list[tuple[str, list[str]]]] = defaultdict(list)
    for _, _, answer, relation, topic in kept:
        pools[(topic, relation)].append((answer, []))
    drafts = []
    for n, question, answer, relation, topic in kept:
        if mentions(question, [answer]):
            dropped["true answer appears in the question"] += 1
            continue
        pool = [p for p in pools[(topic, relation)] if normalize(p[0]) != normalize(answer)]
        picked = borrow_answer(question, [answer], pool, random.Random(f"simpleqa|{n}"), _compatible(relation))
        if picked is None:
            dropped["no answer of the same topic and relation to borrow"] += 1
            continue
        drafts.append(Draft(item_id=f"simpleqa-{n}", source="simpleqa", relation=relation, question=question,
                            true_answer=answer, manipulated_answer=picked[0]))
    return drafts, dropped
