"""Seed tuples for ``build --seeds``: one JSON object per line (domain,
task type, one real paper).

Required keys: ``seed_id``, ``source``, ``domain``, ``task_type``, ``title``,
``abstract``; every other key is kept as provenance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ioa_synth.protocol.cells import DOMAINS, TASK_TYPES
from ioa_synth.core.jsonl import iter_jsonl
from ioa_synth.core.validation import first_problem


class SeedError(ValueError):
    """A seed file that cannot be used; the message names the file and line."""


class SeedTuple(BaseModel):
    """A seed tuple (domain d, task type k, content x = title + abstract of one paper)."""

    model_config = ConfigDict(extra="allow")

    seed_id: str
    source: str
    domain: str
    task_type: str
    title: str
    abstract: str

    @field_validator("domain")
    @classmethod
    def _known_domain(cls, v: str) -> str:
        if v not in DOMAINS:
            raise ValueError(f"unknown domain {v!r} (expected one of {', '.join(DOMAINS)})")
        return v

    @field_validator("task_type")
    @classmethod
    def _known_task_type(cls, v: str) -> str:
        if v not in TASK_TYPES:
            raise ValueError(f"unknown task_type {v!r} (expected one of {', '.join(TASK_TYPES)})")
        return v

    @field_validator("seed_id", "title", "abstract")
    @classmethod
    def _non_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v

    def as_record(self) -> dict[str, Any]:
        """The tuple as a plain dict, provenance fields included."""
        return self.model_dump()


def load_seed_file(path: str | Path) -> list[SeedTuple]:
    """Read and validate a seed JSONL file; blank lines are skipped.

    Raises:
        SeedError: unreadable file, invalid JSON, a missing field, an unknown domain or
            task type, or a repeated ``seed_id``; the message names ``path:line``.
    """
    path = Path(path)
    seeds: list[SeedTuple] = []
    seen: set[str] = set()
    for lineno, obj in iter_jsonl(path, SeedError):
        where = f"{path}:{lineno}"
        if not isinstance(obj, dict):
            raise SeedError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        try:
            seed = SeedTuple.model_validate(obj)
        except ValidationError as exc:
            field, msg = first_problem(exc, top="line")
            raise SeedError(f"{where}: {field}: {msg}") from exc
        if seed.seed_id in seen:
            raise SeedError(f"{where}: duplicate seed_id {seed.seed_id!r}")
        seen.add(seed.seed_id)
        seeds.append(seed)
    if not seeds:
        raise SeedError(f"{path}: no seed tuples")
    return seeds
