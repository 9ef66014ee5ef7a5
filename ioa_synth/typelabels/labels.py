"""A labels folder's ``labels.jsonl``: one :class:`TypeLabel` per labelled disagreement,
keyed by case id and MA id, written and read here alone; and :class:`TypeLookup`, the
judged type of a disagreement as the reports (Tables 12 and 20) ask for it.

A record folder's case id depends on the folder it was read from (a build's
``test/business/planning_001``, an ``evaluate --data .../test`` run's
``business/planning_001``): the lookup matches a case id exactly, else by whole trailing
path parts when exactly one labelled case fits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ioa_synth.core.atomic import write_text_atomic
from ioa_synth.core.jsonl import iter_jsonl
from ioa_synth.runs.manifest import ManifestError, read_manifest

LABELS_FILE = "labels.jsonl"
SUMMARY_FILE = "summary.json"
#: The folder kind a labels folder is (registered by the package).
KIND = "label-types"


class LabelsError(ValueError):
    """A labels folder that cannot be read; the message is one line naming the file."""


class TypeLabel(BaseModel):
    """One labelled disagreement.

    ``source``: ``build`` (a build folder's accepted record), ``records`` (an IoA-Suite
    record file) or ``meeting`` (a validated meeting disagreement: ``case_id`` the session
    id, ``ma_id`` ``<set>-<question number>``). ``type``: the judged type (App. B.5
    taxonomy), ``None`` when the judge gave none; ``planted``: the type the point was
    planted as (a build's ``planned_types``, or the record's own ``type``), ``None`` when
    unknown; ``text``: the surface form or question the judge read (for people).
    """

    model_config = ConfigDict(extra="forbid")

    case_id: str
    ma_id: str
    source: Literal["build", "records", "meeting"]
    type: str | None
    planted: str | None = None
    text: str = ""


def write_labels(folder: Path, labels: list[TypeLabel]) -> Path:
    """Write ``folder/labels.jsonl`` (atomically), one label per line in the given order."""
    return write_text_atomic(folder / LABELS_FILE, "".join(json.dumps(lab.model_dump(), ensure_ascii=False) + "\n"
                                                             for lab in labels))


def read_labels(folder: Path) -> list[TypeLabel]:
    """The labels of a ``label-types`` folder.

    Raises:
        LabelsError: not a folder, not a ``label-types`` folder (its ``run.json``), no or an
            unreadable ``labels.jsonl``, a line that is not a label.
    """
    if not folder.is_dir():
        raise LabelsError(f"--types {folder}: no such folder")
    try:
        read_manifest(folder, KIND)
    except ManifestError as exc:
        raise LabelsError(f"--types: {exc}") from None
    path = folder / LABELS_FILE
    if not path.is_file():
        raise LabelsError(f"--types {folder}: no {LABELS_FILE} (did 'ioa-synth label-types' finish?)")
    out = []
    for n, data in iter_jsonl(path, LabelsError):
        try:
            out.append(TypeLabel.model_validate(data))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise LabelsError(f"{path}:{n}: field {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    return out


class TypeLookup:
    """``lookup(case_id, ma_id)`` -> judged type or ``None``; ``used`` counts the answered
    look-ups' distinct cases."""

    def __init__(self, labels: list[TypeLabel]) -> None:
        self._types = {(lab.case_id, lab.ma_id): lab.type for lab in labels}
        self._cases = sorted({lab.case_id for lab in labels})
        self._resolved: dict[str, str | None] = {}
        self.used: set[str] = set()

    def case(self, case_id: str) -> str | None:
        """The labelled case ``case_id`` names: itself, or the one labelled case that ends
        with it (or that it ends with) in whole path parts; ``None`` when none or several."""
        if case_id not in self._resolved:
            if case_id in self._cases:
                found: str | None = case_id
            else:
                fits = [c for c in self._cases if c.endswith("/" + case_id) or case_id.endswith("/" + c)]
                found = fits[0] if len(fits) == 1 else None
            self._resolved[case_id] = found
        return self._resolved[case_id]

    def __call__(self, case_id: str, ma_id: str) -> str | None:
        case = self.case(case_id)
        kind = self._types.get((case, ma_id)) if case is not None else None
        if kind is not None:
            self.used.add(case)  # type: ignore[arg-type]
        return kind


def load_lookup(folder: Path) -> TypeLookup:
    """:class:`TypeLookup` over the labels of ``folder`` (raises :class:`LabelsError`)."""
    return TypeLookup(read_labels(folder))
