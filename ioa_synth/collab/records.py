"""The task record of a ``collab run``: one file per task and configuration,
``RESULTS/tasks/<task_id>__<config>.json`` (docs/collab.md, Records), written by
:func:`write_record` and read back, typed, by :func:`read_records` (report, status, estimate).

The fields read by name are typed; everything else a record holds (stop-votes, probes,
reflections, the check's details, fields a later release adds) is kept as written
(``extra="allow"``); the file is written from the protocol's own dict, keys in its order. Records written by earlier
releases read: ``bench``, ``extra_end`` and ``check`` may be missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ioa_synth.core.atomic import write_json_atomic
from ioa_synth.core.validation import first_problem


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Turn(_Open):
    """One turn: ``phase`` ``"initial"`` or ``"rediscussion"``, its round (from 1), the agent
    (``Moderator`` for the injected directive, ``"kind": "directive"``) and its text."""

    phase: str
    round: int = Field(ge=0)
    agent: str
    text: str = ""


class Final(_Open):
    """The outcome: BigCodeBench ``{"agent", "code", "reply"}``; hidden profile
    ``{"answers", "vote", "correct"}`` (``vote`` ``None`` on a tie)."""

    code: str | None = None
    vote: str | None = None


class TaskRecord(_Open):
    """One task run under one configuration (paper Tables 6 and 23 count one per task).

    ``triggered`` is ``None`` for ``single``/``discussion`` (no intervention);
    ``extra_rounds`` the re-discussion rounds run (0 untriggered); ``extra_end`` why they
    ended (``"vote"`` or ``"cap"``; ``None`` untriggered, missing before the stop vote
    existed); ``passed`` the score of ``final``."""

    task_id: str = Field(min_length=1)
    config: str = Field(min_length=1)
    bench: str | None = None
    turns: list[Turn]
    final: Final
    passed: bool
    triggered: bool | None
    extra_rounds: int = Field(ge=0)
    extra_end: str | None = None
    probes: list[Any] = []

    @property
    def unit(self) -> str:
        """``<task_id>__<config>``: the record's file stem and its calls' ``case_id``."""
        return f"{self.task_id}__{self.config}"

    def has_extra_end(self) -> bool:
        """Whether the record says why its re-discussion ended (written since the stop vote)."""
        return "extra_end" in self.model_fields_set


class RecordError(ValueError):
    """A task record that cannot be read or is not a task record (one line naming the file)."""


def record_path(out: Path, task_id: str, config: str) -> Path:
    """``RESULTS/tasks/<task_id>__<config>.json`` (BigCodeBench's ``BigCodeBench/13`` puts
    the file in a ``BigCodeBench/`` folder)."""
    return out / "tasks" / f"{task_id}__{config}.json"


def record_files(out: Path) -> list[Path]:
    """Every task record file under ``out/tasks``, at any depth, sorted by path."""
    folder = out / "tasks"
    return sorted(folder.rglob("*__*.json")) if folder.is_dir() else []


def parse_record(data: Any, where: str = "a task record") -> TaskRecord:
    """``data`` (a decoded record) as a :class:`TaskRecord`.

    Raises:
        RecordError: ``"<where>: not a task record (<field>: <problem>)"``.
    """
    try:
        return TaskRecord.model_validate(data)
    except ValidationError as exc:
        field, msg = first_problem(exc, top="the record")
        raise RecordError(f"{where}: not a task record ({field}: {msg})") from None


def read_record(path: Path) -> TaskRecord:
    """The task record in ``path``.

    Raises:
        RecordError: unreadable, not JSON, or not a task record.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path}: unreadable task record ({exc})") from None
    return parse_record(data, str(path))


def read_records(out: Path) -> list[TaskRecord]:
    """Every task record of the results folder ``out`` (:func:`record_files` order).

    Raises:
        RecordError: an unreadable record or one that is not a task record.
    """
    return [read_record(p) for p in record_files(out)]


def write_record(out: Path, record: dict[str, Any]) -> TaskRecord:
    """Check ``record`` (the protocol's dict, scored) and write it atomically to its
    :func:`record_path`, keys in the order the protocol set them; return it typed.

    Raises:
        RecordError: ``record`` is not a task record (nothing written).
    """
    typed = parse_record(record)
    write_json_atomic(record_path(out, typed.task_id, typed.config), record)
    return typed
