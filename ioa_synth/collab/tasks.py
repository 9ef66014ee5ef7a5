"""Task files of the collaboration study (paper §6.4, App. D.7-D.8): BigCodeBench records
and hidden-profile scenarios, read and checked before any call or write.

``bcb``: the JSONL of the official BigCodeBench release, one record per line with
``task_id``, ``complete_prompt`` and/or ``instruct_prompt``, ``code_prompt``, ``test`` (a
``unittest`` module defining ``TestCases``), ``entry_point`` and ``libs``; other keys
(``canonical_solution``, ``doc_struct``) are kept but not needed. The Hard subset
(148 tasks) is such a file.

``hidden-profile``: a JSON document written for this toolkit (docs/collab.md)::

    {"format": "ioa-synth/hidden-profile", "version": 1,
     "scenarios": [{"task_id": "hp-1", "shared": "...", "private": ["...", "...", "..."],
                    "question": "...", "options": {"A": "...", "B": "..."}, "answer": "B"}]}

one private information block per agent (3 or 4), 2-6 lettered options, ``answer`` the
correct option. A JSON list of scenarios, or JSONL with one scenario per line, is read too.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ioa_synth.core.jsonl import json_problem, read_problem
from ioa_synth.text.utf8 import decode_utf8
from ioa_synth.core.validation import first_problem

BENCHES: tuple[str, ...] = ("bcb", "hidden-profile")
#: The ``format`` marker of a hidden-profile document.
HIDDEN_PROFILE_FORMAT = "ioa-synth/hidden-profile"
LETTERS = "ABCDEF"


class TasksError(ValueError):
    """A task file that cannot be used (one line naming the file, and the line or task)."""


class BcbTask(BaseModel):
    """One BigCodeBench record (the official release's field names)."""

    model_config = ConfigDict(extra="allow")

    task_id: str = Field(..., min_length=1)
    complete_prompt: str = ""
    instruct_prompt: str = ""
    code_prompt: str = ""
    test: str = ""
    entry_point: str = Field(..., min_length=1)
    libs: Union[list[str], str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _usable(self) -> "BcbTask":
        if not (self.instruct_prompt.strip() or self.complete_prompt.strip()):
            raise ValueError("no complete_prompt or instruct_prompt")
        if not self.test.strip():
            raise ValueError("no test (the harness needs the task's unittest code)")
        if "TestCases" not in self.test:
            raise ValueError("its test defines no TestCases class (the harness runs TestCases)")
        return self

    @property
    def prompt(self) -> str:
        """What the team is asked to solve: ``instruct_prompt`` (natural language) when
        present, else ``complete_prompt`` (signature and docstring)."""
        return self.instruct_prompt.strip() or self.complete_prompt.strip()

    def digest_fields(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "prompt": self.prompt, "code_prompt": self.code_prompt, "test": self.test,
                "entry_point": self.entry_point}


class HiddenProfileTask(BaseModel):
    """One hidden-profile scenario: the ``shared`` text every agent reads, one ``private``
    block per agent, the ``question`` the group decides, lettered ``options`` and the
    correct ``answer``."""

    model_config = ConfigDict(extra="allow")

    task_id: str = Field(..., min_length=1)
    shared: str = Field(..., min_length=1)
    private: list[str] = Field(..., min_length=3, max_length=4)
    question: str = Field(..., min_length=1)
    options: dict[str, str]
    answer: str

    @field_validator("private")
    @classmethod
    def _blocks(cls, v: list[str]) -> list[str]:
        if any(not b.strip() for b in v):
            raise ValueError("a private information block is blank")
        return v

    @model_validator(mode="after")
    def _options(self) -> "HiddenProfileTask":
        letters = "".join(self.options)
        if not 2 <= len(letters) <= len(LETTERS) or letters != LETTERS[:len(letters)]:
            raise ValueError(f"options must be lettered A, B, ... in order (2-6 of them), got {list(self.options)}")
        if self.answer not in self.options:
            raise ValueError(f"answer {self.answer!r} is not one of the options {letters}")
        return self

    @property
    def agents(self) -> int:
        return len(self.private)

    def digest_fields(self) -> dict[str, Any]:
        return self.model_dump(include={"task_id", "shared", "private", "question", "options", "answer"})


Task = Union[BcbTask, HiddenProfileTask]


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise TasksError(f"--tasks {path}: no such file" if not path.exists() else f"--tasks {path}: not a file")
    try:
        return decode_utf8(path.read_bytes(), path, TasksError)
    except OSError as exc:
        raise TasksError(read_problem(path, exc)) from exc


def _documents(path: Path, text: str) -> tuple[str, list[tuple[int, Any]]]:
    """``("json", [(0, doc)])`` for a JSON document, ``("jsonl", [(line, obj), ...])`` for
    JSON lines."""
    stripped = text.strip()
    if not stripped:
        raise TasksError(f"{path}: empty file; expected BigCodeBench JSONL or a hidden-profile JSON document")
    try:
        return "json", [(0, json.loads(stripped))]
    except json.JSONDecodeError as whole:
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append((n, json.loads(line)))
            except json.JSONDecodeError as exc:
                if len(rows) == 0 and n == 1 and not stripped.startswith("{"):
                    raise TasksError(json_problem(path, whole)) from whole
                raise TasksError(f"{path}:{n}: invalid JSON at column {exc.colno} ({exc.msg}); expected one "
                                 "BigCodeBench record per line") from exc
        return "jsonl", rows


def _kind_of(obj: Any) -> str | None:
    if not isinstance(obj, dict):
        return None
    if "entry_point" in obj or "test" in obj or "code_prompt" in obj:
        return "bcb"
    if "private" in obj or "shared" in obj:
        return "hidden-profile"
    return None


def detect(path: Path, docs: tuple[str, list[tuple[int, Any]]]) -> tuple[str, list[tuple[int, Any]]]:
    """``(bench, [(line, record)])`` of a parsed task file.

    Raises:
        TasksError: neither format.
    """
    shape, rows = docs
    if shape == "json":
        doc = rows[0][1]
        if isinstance(doc, dict) and ("scenarios" in doc or doc.get("format") == HIDDEN_PROFILE_FORMAT):
            scenarios = doc.get("scenarios")
            if not isinstance(scenarios, list):
                raise TasksError(f"{path}: \"scenarios\" must be a list of hidden-profile scenarios")
            return "hidden-profile", [(i, s) for i, s in enumerate(scenarios, 1)]
        if isinstance(doc, list) and doc and all(_kind_of(x) == "hidden-profile" for x in doc):
            return "hidden-profile", [(i, s) for i, s in enumerate(doc, 1)]
        if isinstance(doc, dict) and _kind_of(doc):
            return _kind_of(doc), [(1, doc)]  # type: ignore[return-value]
        raise TasksError(f"{path}: neither BigCodeBench JSONL (task_id, instruct_prompt, test, entry_point per "
                         "line) nor a hidden-profile JSON document (\"scenarios\"); see docs/collab.md")
    kinds = {_kind_of(obj) for _, obj in rows}
    if kinds == {"bcb"}:
        return "bcb", rows
    if kinds == {"hidden-profile"}:
        return "hidden-profile", rows
    bad = next(n for n, obj in rows if _kind_of(obj) is None) if None in kinds else rows[0][0]
    raise TasksError(f"{path}:{bad}: neither a BigCodeBench record (task_id, instruct_prompt, test, entry_point) "
                     "nor a hidden-profile scenario; see docs/collab.md")


def task_id_problem(task_id: str) -> str | None:
    """Why ``task_id`` cannot name a record file (``None``: it can)."""
    parts = task_id.split("/")
    if "__" in task_id or "\\" in task_id or any(p in ("", ".", "..") for p in parts):
        return (f"task_id {task_id!r} is not usable in a file name (no '__', '\\', "
                "empty, '.' or '..' parts)")
    return None


def load_tasks(path: Path, bench: str) -> list[Task]:
    """The tasks of ``path`` for ``--bench bench`` (one of :data:`BENCHES`), in file order.

    Raises:
        TasksError: unreadable, not UTF-8, neither format, the other bench's format, a
            record that misses a field (a task without tests), a repeated task id, or no task.
    """
    bench_of, rows = detect(path, _documents(path, _read_text(path)))
    if bench_of != bench:
        what = "BigCodeBench JSONL" if bench_of == "bcb" else "a hidden-profile scenario file"
        raise TasksError(f"--tasks {path} is {what}, not --bench {bench} tasks; use --bench {bench_of}")
    model = BcbTask if bench == "bcb" else HiddenProfileTask
    tasks: list[Task] = []
    seen: set[str] = set()
    for n, obj in rows:
        where = f"{path}:{n}" if bench == "bcb" else f"{path}: scenario {n}"
        try:
            task = model.model_validate(obj)
        except ValidationError as exc:
            field, msg = first_problem(exc)
            tid = obj.get("task_id") if isinstance(obj, dict) else None
            named = f" ({tid})" if isinstance(tid, str) else ""
            raise TasksError(f"{where}{named}: {field + ': ' if field else ''}{msg}") from exc
        if task.task_id in seen:
            raise TasksError(f"{where}: task_id {task.task_id!r} repeats")
        if (problem := task_id_problem(task.task_id)) is not None:
            raise TasksError(f"{where}: {problem}")
        seen.add(task.task_id)
        tasks.append(task)
    if not tasks:
        raise TasksError(f"{path}: no task")
    return tasks


def tasks_digest(tasks: list[Task]) -> str:
    """sha256 of every task's defining fields, in order: what the setup fingerprint keeps
    of the task file (a changed task is refused once results are stored)."""
    blob = json.dumps([t.digest_fields() for t in tasks], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
