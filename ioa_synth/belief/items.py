"""The study's item (§5): a factual question with its true answer and a type-compatible
manipulated answer, the two statements and the neutral discussion seed; and the JSONL
files that hold items."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_serializer

from ioa_synth.belief.matching import mentions
from ioa_synth.core.atomic import write_text_atomic
from ioa_synth.text.utf8 import decode_utf8
from ioa_synth.core.jsonl import json_problem, read_problem
from ioa_synth.core.validation import first_problem
from ioa_synth.text.languages import DEFAULT_LANGUAGE, UnknownLanguage, language_tag, supported_languages

#: Fields the item writer fills in when an imported item lacks them.
WRITTEN_FIELDS = ("true_statement", "manipulated_statement", "discussion_seed")


class ItemsError(ValueError):
    """An unusable items file; the message names the file, line and problem."""


class Item(BaseModel):
    """One item. ``true_aliases`` / ``manipulated_aliases`` include other spellings of each
    answer (the answer itself is always matched too)."""

    model_config = ConfigDict(extra="forbid")

    item_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=120)
    source: str = Field(min_length=1)
    relation: str = Field(min_length=1)
    question: str = Field(min_length=1)
    true_answer: str = Field(min_length=1)
    true_aliases: list[str] = Field(default_factory=list)
    manipulated_answer: str = Field(min_length=1)
    manipulated_aliases: list[str] = Field(default_factory=list)
    true_statement: str = Field(min_length=1)
    manipulated_statement: str = Field(min_length=1)
    discussion_seed: str = Field(min_length=1)
    #: the language of the question, answers and statements (BCP-47, read as the registry's tag;
    #: absent: English, the paper's): the answers are matched by its rule
    #: (:mod:`ioa_synth.belief.matching`). Written only when set, so English items, their
    #: files and their digest stay as they were.
    language: str | None = None

    @field_validator("language")
    @classmethod
    def _language(cls, v: str | None) -> str | None:
        if v is None:
            return None
        try:
            tag = language_tag(v)
        except UnknownLanguage:
            raise ValueError(f"no rules for {v!r}; supported: {', '.join(supported_languages())}") from None
        return None if tag == DEFAULT_LANGUAGE else tag

    @model_serializer(mode="wrap")
    def _without_english(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        if data.get("language") is None:
            data.pop("language", None)
        return data

    @field_validator("item_id", "source", "relation", "question", "true_answer", "manipulated_answer")
    @classmethod
    def _stripped(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank")
        return v.strip()

    def true_names(self) -> list[str]:
        """The true answer and its aliases."""
        return [self.true_answer, *self.true_aliases]

    def manipulated_names(self) -> list[str]:
        """The manipulated answer and its aliases."""
        return [self.manipulated_answer, *self.manipulated_aliases]


class Draft(Item):
    """An imported item before the item writer: statements and seed may be missing."""

    true_statement: str = ""
    manipulated_statement: str = ""
    discussion_seed: str = ""

    def missing(self) -> bool:
        """True when the writer still has to fill a field."""
        return not all(getattr(self, f).strip() for f in WRITTEN_FIELDS)


#: What an importer returns: the drafts and ``{reason: count}`` of the records it dropped.
Imported = tuple[list[Draft], Counter]


def check_written(item: Item) -> str | None:
    """Why the written fields are unusable (``None``: usable): a seed that names either
    answer, or a statement without its own answer."""
    lang = item.language
    if (mentions(item.discussion_seed, item.true_names(), lang)
            or mentions(item.discussion_seed, item.manipulated_names(), lang)):
        return "the discussion seed names an answer"
    if not mentions(item.true_statement, item.true_names(), lang):
        return "the true statement lacks the true answer"
    if not mentions(item.manipulated_statement, item.manipulated_names(), lang):
        return "the manipulated statement lacks the manipulated answer"
    return None


def read_input(path: Path) -> str:
    """The text of an input file of the study (UTF-8, a BOM allowed).

    Raises:
        ItemsError: unreadable, or not UTF-8 (one line naming the file).
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ItemsError(read_problem(path, exc)) from exc
    return decode_utf8(raw, path, ItemsError)


def _read_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    text = read_input(path)
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ItemsError(json_problem(f"{path}:{n}", exc, in_line=True)) from exc
        if not isinstance(data, dict):
            raise ItemsError(f"{path}:{n}: a line must be a JSON object")
        rows.append((n, data))
    return rows


def _validate(model: type[Item], path: Path, n: int, data: dict[str, Any]) -> Item:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        where, msg = first_problem(exc, top="line")
        raise ItemsError(f"{path}:{n}: {where}: {msg}") from exc


def _unique(path: Path, items: list[Any]) -> list[Any]:
    seen: set[str] = set()
    for it in items:
        if it.item_id in seen:
            raise ItemsError(f"{path}: item_id {it.item_id!r} appears twice")
        seen.add(it.item_id)
    if not items:
        raise ItemsError(f"{path}: no items")
    return items


def load_items(path: Path) -> list[Item]:
    """Read complete items (one JSON object a line).

    Raises:
        ItemsError: unreadable file, malformed line, missing or bad field, duplicate id, no item.
    """
    return _unique(path, [_validate(Item, path, n, d) for n, d in _read_lines(path)])


def load_drafts(path: Path) -> list[Draft]:
    """Read items whose statements and seed may be missing (``--format jsonl`` import)."""
    return _unique(path, [_validate(Draft, path, n, d) for n, d in _read_lines(path)])  # type: ignore[arg-type]


def write_items(path: Path, items: list[Item]) -> None:
    """Write ``items`` as JSONL, atomically."""
    write_text_atomic(path, "".join(json.dumps(i.model_dump(), ensure_ascii=False) + "\n" for i in items))


def items_digest(items: list[Item]) -> str:
    """sha256 of the items' canonical JSON (fingerprints a run's inputs)."""
    import hashlib

    blob = json.dumps([i.model_dump() for i in items], sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()
