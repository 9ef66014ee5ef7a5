"""Reply shapes of the team's calls (paper App. D.7): stop-votes, self-reflections, MCQ and
final answers as JSON; chat turns and the coder's fenced Python as free text."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: Longest reason, reasoning or flagged point kept from a reply (characters): a small
#: model's runaway string is cut by the schema, not by the record.
MAX_TEXT = 600
MAX_POINTS = 5


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class StopVote(_Reply):
    """``{"ready": bool, "reason": str}``: is the discussion done (BCB, each round's end)."""

    ready: bool
    reason: str = Field("", max_length=MAX_TEXT)


class Reflection(_Reply):
    """``{"flag": bool, "disagreements": [str]}``: the hidden disagreements an agent sees
    in the log (the self-reflection intervention)."""

    flag: bool
    disagreements: list[str] = Field(default_factory=list, max_length=MAX_POINTS)


class Choice(_Reply):
    """``{"reasoning": str, "choice": letter}``: an answer to an MCQ or to the group's decision."""

    reasoning: str = Field("", max_length=MAX_TEXT)
    choice: str


def _string(max_length: int = MAX_TEXT) -> dict[str, Any]:
    return {"type": "string", "maxLength": max_length}


STOP_VOTE_SCHEMA = {"type": "object", "properties": {"ready": {"type": "boolean"}, "reason": _string()},
                    "required": ["ready", "reason"], "additionalProperties": False}
REFLECTION_SCHEMA = {"type": "object", "properties": {
    "flag": {"type": "boolean"},
    "disagreements": {"type": "array", "items": _string(), "maxItems": MAX_POINTS}},
    "required": ["flag", "disagreements"], "additionalProperties": False}


@lru_cache(maxsize=None)
def choice_schema(letters: str) -> dict[str, Any]:
    """The schema of a :class:`Choice` among ``letters`` (e.g. ``"ABCD"``); cached, do not mutate."""
    return {"type": "object", "properties": {"reasoning": _string(), "choice": {"type": "string", "enum": list(letters)}},
            "required": ["reasoning", "choice"], "additionalProperties": False}


def parse_stop_vote(data: Any) -> StopVote:
    return StopVote.model_validate(data)


def parse_reflection(data: Any) -> Reflection:
    out = Reflection.model_validate(data)
    out.disagreements = [d.strip() for d in out.disagreements if d.strip()]
    return out


def choice_parser(letters: str):
    """A parser of a :class:`Choice` whose letter must be one of ``letters``.

    Raises (the parser): ValueError, a letter outside ``letters``."""

    def parse(data: Any) -> Choice:
        out = Choice.model_validate(data)
        out.choice = out.choice.strip().upper()[:1]
        if not out.choice or out.choice not in letters:
            raise ValueError(f"choice must be one of {', '.join(letters)}")
        return out

    return parse


_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.S | re.I)


def extract_code(text: str) -> str:
    """The Python of a coder's reply: the longest fenced block (```python ... ```, or an
    unlabelled fence; an unclosed last fence runs to the end), else the whole reply."""
    blocks = [m.group(1) for m in _FENCE.finditer(text)]
    code = max(blocks, key=len) if blocks else text
    return code.strip("\n") + "\n"


def first_sentence(text: str, limit: int = 300) -> str:
    """The first sentence of ``text`` (up to the first ``.``, ``!`` or ``?`` followed by a
    space or the end), at most ``limit`` characters: the one-sentence reasoning the
    directive turn quotes."""
    text = " ".join(text.split())
    m = re.search(r"[.!?](?=\s|$)", text)
    out = text[: m.end()] if m else text
    return out if len(out) <= limit else out[: limit - 1].rstrip() + "…"
