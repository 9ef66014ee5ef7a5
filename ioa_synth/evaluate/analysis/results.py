"""The one reader of an ``ioa-synth evaluate`` results folder, validated with pydantic.

Layout (the results format agreed for issues 7/8)::

    RESULTS/run.json                      # command, args, components, fingerprint
    RESULTS/summary.json                  # optional here: aggregate numbers, "complete" flag
    RESULTS/records/<domain>/<case>.json  # one per scored or failed case

A record is the one :class:`~ioa_synth.evaluate.record_model.EvalRecord` that evaluate
writes; ``run.json`` is the folder's manifest with evaluate's typed settings
(:class:`RunInfo`, read by :func:`ioa_synth.runs.manifest.read_manifest`); in ``summary.json``
only the fields the analyses use are typed, other fields are kept (``extra="allow"``) so
additions to the evaluate output never break the reader. Any problem raises
:class:`ResultsError` whose one-line message names the offending file.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ioa_synth.evaluate.record_model import (C_REASONS, Answer, CReason, EvalRecord, Metrics,  # noqa: F401
                                             MisalignmentPoint, RecordQuestion, validation_problem)
from ioa_synth.evaluate.records import RunJsonError, read_json_file
from ioa_synth.evaluate.run_settings import EvaluateSettings
from ioa_synth.runs.manifest import Manifest, ManifestError, read_manifest

#: The record's parts under the names the analyses use (one model: :mod:`ioa_synth.evaluate.record_model`).
Record = EvalRecord
Question = RecordQuestion


class ResultsError(ValueError):
    """A results folder that cannot be read; the message is one line naming the file."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


#: ``run.json``: the manifest, with evaluate's settings typed (``settings.mode``, ``.access``,
#: ``.rollouts``, ``.permute_seed``; an older manifest's come from its ``args``) and the
#: command line's ``args`` (``data``, ``limit``, ``sample``, ``seed``, ``questions_from``) as given.
RunInfo = Manifest[EvaluateSettings]


class Summary(_Open):
    """``summary.json``, as far as the analyses need it."""

    complete: bool
    cases: dict[str, int] = {}


@dataclass(frozen=True)
class Results:
    """A read results folder. ``records`` maps case id → record (scored and failed)."""

    path: Path
    run: RunInfo
    summary: Summary | None
    records: dict[str, Record]

    @cached_property
    def scored(self) -> dict[str, Record]:
        """The scored records by case id, in case-id order."""
        return {cid: r for cid, r in sorted(self.records.items()) if r.status == "scored"}

    @property
    def failed(self) -> list[str]:
        """Case ids of failed records, sorted."""
        return sorted(cid for cid, r in self.records.items() if r.status == "failed")

    def describe(self) -> dict[str, Any]:
        """Identity of the run for reports: path, fingerprint, mode, access, rollouts, permute seed, counts."""
        s = self.run.settings
        return {"path": str(self.path), "fingerprint": self.run.fingerprint, "data": self.run.args.get("data"),
                "mode": s.mode, "access": s.access, "rollouts": s.rollouts, "permute_seed": s.permute_seed,
                "scored": len(self.scored), "failed": len(self.failed),
                "complete": None if self.summary is None else self.summary.complete}


def _read_json(path: Path) -> Any:
    try:
        return read_json_file(path)
    except RunJsonError as exc:
        raise ResultsError(str(exc)) from None


def _validate(model: type[BaseModel], path: Path, data: Any = None) -> Any:
    """``data`` (read from ``path`` when ``None``) validated as ``model``."""
    try:
        return model.model_validate(_read_json(path) if data is None else data)
    except ValidationError as exc:
        raise ResultsError(validation_problem(path, exc)) from None


def load_results(path: str | Path) -> Results:
    """Read and validate the results folder ``path``.

    Raises :class:`ResultsError` (one line naming the file) when the folder or ``run.json``
    is missing, a file is not valid JSON or does not fit the results format, there are no
    records, or two records carry the same case id.
    """
    root = Path(path)
    if not root.is_dir():
        raise ResultsError(f"{root}: not a folder")
    try:
        manifest = read_manifest(root, "evaluate")
    except ManifestError as exc:
        raise ResultsError(str(exc)) from None
    run: RunInfo = manifest  # typed by read_manifest: evaluate's registered settings model
    summary = _validate(Summary, root / "summary.json") if (root / "summary.json").exists() else None
    files = sorted((root / "records").rglob("*.json")) if (root / "records").is_dir() else []
    if not files:
        raise ResultsError(f"{root / 'records'}: no case records")
    records: dict[str, Record] = {}
    origin: dict[str, Path] = {}
    for file in files:
        record = _validate(Record, file)
        if record.case_id in records:
            raise ResultsError(f"{file}: case id {record.case_id!r} also in {origin[record.case_id]}")
        records[record.case_id] = record
        origin[record.case_id] = file
    return Results(path=root, run=run, summary=summary, records=records)
