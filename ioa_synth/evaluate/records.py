"""Per-case evaluation records (``RESULTS/records/<case_id>.json``), in the layout agreed
for ``evaluate`` and ``compare``/``report`` (see docs/evaluate.md): where each lives and how
it is read. A record's ``calls`` are logged by :class:`ioa_synth.probing.calls.CaseCalls`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ioa_synth.evaluate.record_model import EvalRecord, RecordError, validation_problem
from ioa_synth.core.jsonl import read_json


def record_path(out_dir: Path, case_id: str) -> Path:
    """``RESULTS/records/<case_id>.json`` (``case_id`` is ``<domain>/<case>`` for a split folder)."""
    return Path(out_dir) / "records" / f"{case_id}.json"


def read_record(out_dir: Path, case_id: str) -> EvalRecord | None:
    """The stored record of ``case_id``, or ``None`` when there is none or it is unreadable
    or does not fit the format (the case is then evaluated again)."""
    try:
        return read_eval_record(record_path(out_dir, case_id))
    except RecordError:
        return None



class RunJsonError(ValueError):
    """A results-folder JSON file (a record, ``summary.json``) missing, unreadable or not
    JSON; one line naming the file. (``run.json`` is read by
    :func:`ioa_synth.runs.manifest.read_manifest`.)"""


def read_eval_record(path: Path) -> EvalRecord:
    """The record in ``path`` (:class:`~ioa_synth.evaluate.record_model.EvalRecord`).

    Raises:
        RecordError: the file is missing, unreadable, not UTF-8 or JSON, or not a record.
    """
    try:
        data = read_json_file(path)
    except RunJsonError as exc:
        raise RecordError(str(exc)) from None
    try:
        return EvalRecord.model_validate(data)
    except ValidationError as exc:
        raise RecordError(validation_problem(path, exc)) from None


def read_json_file(path: Path) -> Any:
    """The JSON document in ``path``.

    Raises:
        RunJsonError: the file is missing, unreadable or not valid JSON.
    """
    return read_json(path, RunJsonError, missing="missing (is this an 'ioa-synth evaluate' results folder?)")

