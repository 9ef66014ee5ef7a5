"""What ``label-types`` labels, read from its inputs: one :class:`Unit` per case (one judge
call), holding the case's disagreements.

- a build folder (``ioa-synth build`` or ``build import``; of any meeting size, a
  multi-party point shown with its sides by member): every accepted case of every split; a point's planted type is the build's ``planned_types`` entry, else the record's
  own ``type`` (an imported record without one has none);
- a folder of IoA-Suite record files (``data/<split>/<domain>/<task>_<i>.json``, the
  released format; read as ``evaluate --data`` reads them): case id = path relative to the
  folder without ``.json``; the record's ``type``, when it has one, is the planted type;
- a live-meeting session folder (finished): each disagreement validated under the ``any``
  rule (which holds those of ``majority`` and ``unanimous``), keyed ``<set label>-<n>``
  under the session id; no planted type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ioa_synth.build.builddir import UNTYPED, BuildDirError, accepted_cases, open_catalog
from ioa_synth.build.planted import stored_types
from ioa_synth.evaluate.inputs import InputError, load_cases
from ioa_synth.meetings.forms import divergent
from ioa_synth.meetings.report import session_results
from ioa_synth.meetings.session import Session, SessionError
from ioa_synth.protocol.cells import MA_TYPES, SPLITS
from ioa_synth.protocol.multiparty import sides_of
from ioa_synth.runs.folder_kinds import detect_folder


class ItemsError(ValueError):
    """An input that cannot be labelled; the message is one line naming it."""


@dataclass
class Point:
    """One disagreement: ``id`` (MA id, or ``<set>-<n>``), ``text`` (what the judge reads),
    ``short`` (its surface form or question), ``planted`` (type or ``None``)."""

    id: str
    text: str
    short: str
    planted: str | None = None


@dataclass
class Unit:
    """One case: one judge call over its ``points``; ``context`` goes to the template
    (``members``, ``scenario``, and ``people``: the meeting's size, 2 for the paper's cases)."""

    case_id: str
    source: str
    points: list[Point]
    context: dict[str, Any] = field(default_factory=dict)


def _known(kind: Any) -> str | None:
    kind = str(kind or "").strip().lower()
    return kind if kind in MA_TYPES else None


def _ma_text(p: Any) -> str:
    """What the judge reads of a point; a multi-party point (``build --participants N``)
    names each reading's holders and the neutral members (:func:`_holders`)."""
    if getattr(p, "between", None):
        return _holders(p)
    return (f"topic: {p.topic}; surface form: \"{p.surface_form}\"; M1 understands: {p.member_a_understanding}; "
            f"M2 understands: {p.member_b_understanding}; why it goes unnoticed: {p.why_undetected}")


def _holders(p: Any) -> str:
    """A multi-party point with its sides: ``M1, M3 understand: ...; M2 understands: ...;
    neutral (neither reading): ...``."""
    sides = sides_of(p)
    verb = {s: "understands" if len(sides[s]) == 1 else "understand" for s in ("a", "b")}
    neutral = f"neutral (neither reading): {', '.join(sides['neutral'])}; " if sides["neutral"] else ""
    return (f"topic: {p.topic}; surface form: \"{p.surface_form}\"; {', '.join(sides['a'])} {verb['a']}: "
            f"{p.member_a_understanding}; {', '.join(sides['b'])} {verb['b']}: {p.member_b_understanding}; "
            f"{neutral}why it goes unnoticed: {p.why_undetected}")


def _record_unit(case_id: str, source: str, profiles: Any, planned: tuple[str, ...] | None) -> Unit:
    points = []
    for i, p in enumerate(profiles.misalignment_points):
        given = planned[i] if planned and i < len(planned) else _known(None if p.type == UNTYPED else p.type)
        points.append(Point(p.id, _ma_text(p), p.surface_form, given))
    members = ", ".join(f"{m.id} {m.name}, {m.role}" for m in profiles.members)
    return Unit(case_id, source, points, {"members": members, "scenario": str(profiles.meeting_scenario or ""),
                                          "people": len(profiles.members)})


def build_units(folder: Path) -> list[Unit]:
    """The accepted cases of a build folder, every split (raises :class:`ItemsError`)."""
    try:
        catalog = open_catalog(folder, read_only=True)
    except BuildDirError as exc:
        raise ItemsError(str(exc)) from None
    try:
        units = []
        for split in SPLITS:
            for case in accepted_cases(catalog, split):
                units.append(_record_unit(case.case_id, "build", case.profiles, stored_types(catalog, case.case_id)))
        return units
    except BuildDirError as exc:
        raise ItemsError(str(exc)) from None
    finally:
        catalog.close()


def record_units(folder: Path) -> list[Unit]:
    """The record files under ``folder`` (raises :class:`ItemsError`)."""
    try:
        cases = load_cases(folder)
    except InputError as exc:
        raise ItemsError(str(exc).replace("--data ", "")) from None
    return [_record_unit(c.case_id, "records", c.profiles, None) for c in cases]


def meeting_units(folder: Path) -> list[Unit]:
    """The validated disagreements of a finished session, one unit (raises :class:`ItemsError`)."""
    try:
        session = Session(folder)
        result = session_results(session, "any")
        chosen = {(d["set"], d["n"]): d["answers"] for d in divergent(session)}
    except SessionError as exc:
        raise ItemsError(str(exc)) from None
    points = []
    for row in sorted(result["detectors"].values(), key=lambda r: r["label"]):
        for q in row["validated_questions"]:
            options = "; ".join(f"{k}. {v}" for k, v in q["options"].items())
            picks = ", ".join(f"{pid} chose {letter}" for pid, letter in sorted(chosen[(row["label"], q["n"])].items()))
            points.append(Point(f"{row['label']}-{q['n']}", f"question: {q['question']} options: {options} ({picks})",
                                q["question"]))
    return [Unit(session.session_id, "meeting", points)] if points else []


def units_of(folder: Path) -> list[Unit]:
    """The units of one input, by what the folder is (raises :class:`ItemsError`)."""
    if not folder.is_dir():
        raise ItemsError(f"{folder}: {'a file, not a folder' if folder.exists() else 'no such folder'}")
    found = detect_folder(folder)
    if found is None:
        return record_units(folder)
    if found.kind == "build":
        return build_units(folder)
    if found.kind == "meeting":
        return meeting_units(folder)
    raise ItemsError(f"{folder} is {found.title}; label-types reads a build folder, a folder of record files "
                     "or finished meeting session folders")


def collect(folders: list[Path]) -> list[Unit]:
    """The units of every input, in input order; a case id given twice is refused (raises
    :class:`ItemsError`)."""
    units: list[Unit] = []
    where: dict[str, Path] = {}
    for folder in folders:
        for unit in units_of(folder):
            if unit.case_id in where:
                raise ItemsError(f"case {unit.case_id} is in both {where[unit.case_id]} and {folder}; "
                                 "label each data set into a folder of its own")
            where[unit.case_id] = folder
            units.append(unit)
    return units
