"""Read access to a build directory for the commands that work on finished builds
(``regenerate``, ``audit``, ``annotate``): its catalog, its cases and accepted records.

A record file is ``DIR/<case_id>.json`` as written by the pipeline: ``profiles``,
``dialogue``, ``seed`` and ``quality`` (with the accepted attempt of each stage); or, for a
case brought in by ``build import`` (:mod:`ioa_synth.build.importer`), the IoA-Suite record as
given (misalignment points without ``type``, no outline, no ``seed`` allowed) with a
``provenance`` block ``{"kind": "imported", ...}`` and no ``quality``: no judge scored it here,
so its stages count as attempt 0 (what ``audit`` and ``annotate`` key its scores by).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ioa_synth.build.tables import BUILD_TABLES
from ioa_synth.runs.catalog import CATALOG_FILE, Catalog
from ioa_synth.build.record_files import record_file
from ioa_synth.protocol.series import record_models
from ioa_synth.runs.manifest import ManifestError, read_manifest
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output
from ioa_synth.seeds.tuples import SeedTuple

#: ``provenance.kind`` of a record brought in by ``build import``.
IMPORTED = "imported"
#: The ``type`` shown (in judge prompts, annotation forms, ``show``) for an imported
#: misalignment point that has none: the released data carries no taxonomy label.
UNTYPED = "not given"
#: The seed paper title and abstract an imported record without ``seed`` shows a judge.
NO_SEED = "not given with the imported record"


class BuildDirError(ValueError):
    """Not a build directory, or a record in it that cannot be read; the message says which."""


def open_catalog(out_dir: Path, read_only: bool = False) -> Catalog:
    """The catalog of an existing build directory; raises :class:`BuildDirError` if there is none."""
    require_catalog(out_dir)
    return Catalog(out_dir, read_only=read_only, tables=[BUILD_TABLES])


def require_catalog(out_dir: Path) -> None:
    """Raise :class:`BuildDirError` unless ``out_dir`` holds a catalog (without opening it)."""
    if not Path(out_dir).exists():  # worded as status words it
        raise BuildDirError(f"{out_dir}: no such folder (not a build directory; run 'ioa-synth build')")
    if not (Path(out_dir) / CATALOG_FILE).is_file():
        raise BuildDirError(f"{out_dir}: no {CATALOG_FILE} here (not a build directory; run 'ioa-synth build')")


def seeds_in_other_splits(out_dir: Path, split: str, seed_ids: list[str]) -> dict[str, str]:
    """``{seed_id: split}`` of the ``seed_ids`` that ``out_dir`` already builds in another
    split than ``split`` (``{}`` for a folder without a catalog). A paper in two splits leaks
    between them (the released splits share no seed paper), so ``build --seeds`` refuses it.

    Raises:
        ioa_synth.runs.catalog.CatalogLocked: another process holds the catalog.
    """
    if not seed_ids or not (Path(out_dir) / CATALOG_FILE).is_file():
        return {}
    with Catalog(out_dir, read_only=True, tables=[BUILD_TABLES]) as cat:
        rows = cat.execute("SELECT seed_id, min(split) FROM cases WHERE split <> ? AND list_contains(?, seed_id) "
                           "GROUP BY seed_id ORDER BY seed_id", [split, list(seed_ids)])
    return {seed_id: other for seed_id, other in rows}


class StageAttempts:
    """Mixin of a case that knows its accepted attempt per stage: a class with
    ``stage1_attempt`` and ``stage2_attempt`` (ints: attempt numbers of the loop)
    gets :meth:`attempt`. Used by :class:`AcceptedCase` and the annotation manifest."""

    stage1_attempt: int
    stage2_attempt: int

    def attempt(self, stage: int) -> int:
        """The accepted attempt of ``stage`` (1 or 2).

        Raises:
            AttributeError: no such stage."""
        return getattr(self, f"stage{stage}_attempt")


@dataclass
class AcceptedCase(StageAttempts):
    """An accepted case with its parsed record.

    ``stage1_attempt`` / ``stage2_attempt`` are the accepted attempts (from the record's
    ``quality`` block); ``ma_ids`` the misalignment point ids in record order.
    """

    case_id: str
    split: str
    domain: str
    task_type: str
    path: Path
    record: dict[str, Any]
    profiles: Stage1Output
    dialogue: Stage2Output
    stage1_attempt: int
    stage2_attempt: int

    @property
    def ma_ids(self) -> list[str]:
        """The misalignment point ids (``MA1``, ...) of the accepted profiles, in record order."""
        return [p.id for p in self.profiles.misalignment_points]

    @property
    def imported(self) -> bool:
        """True for a case brought in by ``build import`` (see the module docstring)."""
        return is_imported(self.record)

    def seed_tuple(self) -> SeedTuple:
        """The case's seed tuple: the record's ``seed``; for an imported record without a
        complete one, a tuple whose title and abstract say so (:data:`NO_SEED`).

        Raises:
            pydantic.ValidationError: a built record whose ``seed`` is malformed.
        """
        seed = self.record.get("seed")
        if not self.imported:
            return SeedTuple.model_validate(seed)
        try:
            return SeedTuple.model_validate(seed)
        except (ValidationError, TypeError):
            given = seed if isinstance(seed, dict) else {}
            return SeedTuple(seed_id=str(given.get("seed_id") or f"{IMPORTED}:{self.case_id}"), source=IMPORTED,
                             domain=self.domain, task_type=self.task_type, title=NO_SEED, abstract=NO_SEED)


def is_imported(record: Any) -> bool:
    """True when ``record`` (a parsed record file) was brought in by ``build import``."""
    return isinstance(record, dict) and isinstance(record.get("provenance"), dict) \
        and record["provenance"].get("kind") == IMPORTED


def build_participants(out_dir: Path) -> int:
    """People per meeting of the build directory ``out_dir``: its manifest's
    ``settings.participants`` (2 when absent, or for a directory without a manifest)."""
    try:
        manifest = read_manifest(out_dir, "build")
    except ManifestError:  # no manifest (an older directory): a two-person build
        return 2
    return manifest.settings.participants or 2


def build_meetings(out_dir: Path) -> int:
    """Meetings per case of the build directory ``out_dir``: its manifest's
    ``settings.meetings`` (1 when absent, or for a directory without a manifest)."""
    try:
        manifest = read_manifest(out_dir, "build")
    except ManifestError:
        return 1
    return manifest.settings.meetings or 1


def series_refusal(out_dir: Path, command: str) -> str | None:
    """The one line ``command`` (``regenerate``, ``audit``) prints for a series build
    (``build --meetings K``), which it does not run yet, or ``None``."""
    k = build_meetings(out_dir)
    if k == 1:
        return None
    return (f"{out_dir} is a series of {k} meetings per case (build --meetings {k}); {command} runs on "
            "one-meeting builds only so far: build the cases again into a new --out instead")


def record_stages(record: dict[str, Any]) -> tuple[Stage1Output, Stage2Output]:
    """A record's ``profiles`` and ``dialogue`` as stage outputs. For the released format: a
    misalignment point without ``type`` gets :data:`UNTYPED`, a missing outline is empty, and
    a turn without ``speaker_name`` gets its member's name (the record file is not changed).

    Raises:
        KeyError, TypeError, ValueError, pydantic.ValidationError: not a record.
    """
    profiles = dict(record["profiles"])
    points = list(profiles["misalignment_points"])
    untyped = {i for i, p in enumerate(points) if isinstance(p, dict) and p.get("type") is None}
    profiles["misalignment_points"] = [{**p, "type": "other"} if i in untyped else p for i, p in enumerate(points)]
    profiles.setdefault("conversation_outline", [])
    model, dialogue_model = record_models(profiles, record["dialogue"]["turns"])
    parsed = model.model_validate(profiles)  # a multi-party record keeps its sides, a series its meetings
    if untyped:  # validated with a taxonomy type, then shown as not given
        parsed = parsed.model_copy(update={"misalignment_points": [
            p.model_copy(update={"type": UNTYPED}) if i in untyped else p
            for i, p in enumerate(parsed.misalignment_points)]})
    names = {m.id: m.name for m in parsed.members}
    turns = [t if not isinstance(t, dict) or t.get("speaker_name") else {**t, "speaker_name": names.get(t.get("speaker_id"))}
             for t in record["dialogue"]["turns"]]
    return parsed, dialogue_model.model_validate({"turns": turns})


def load_accepted(row: dict[str, Any], catalog: Catalog) -> AcceptedCase:
    """Parse the record of an accepted ``cases`` row (keys ``case_id, split, domain,
    task_type``) of the build directory ``catalog`` describes (:func:`record_file`).
    Raises :class:`BuildDirError` for a missing or malformed record."""
    path = record_file(catalog, row["case_id"])
    try:
        record = json.loads(path.read_text(encoding="utf-8-sig"))
        if is_imported(record):
            profiles, dialogue = record_stages(record)
            attempts = 0, 0
        else:
            quality = record["quality"]
            model, dialogue_model = record_models(record["profiles"], record["dialogue"]["turns"])
            profiles = model.model_validate(record["profiles"])
            dialogue = dialogue_model.model_validate({"turns": record["dialogue"]["turns"]})
            attempts = int(quality["stage1"]["attempt"]), int(quality["stage2"]["attempt"])
    except (OSError, json.JSONDecodeError) as exc:
        raise BuildDirError(f"{row['case_id']}: cannot read its record {path} ({exc})") from exc
    except (KeyError, TypeError, ValueError, ValidationError) as exc:
        raise BuildDirError(f"{row['case_id']}: malformed record {path} ({type(exc).__name__}: "
                            f"{' '.join(str(exc).split())[:200]})") from exc
    return AcceptedCase(row["case_id"], row["split"], row["domain"], row["task_type"], path, record,
                        profiles, dialogue, *attempts)


def accepted_cases(catalog: Catalog, split: str) -> list[AcceptedCase]:
    """Accepted cases of ``split`` in round-robin cell order (index, then domain, task
    type), so that any prefix spreads over the cells. Raises :class:`BuildDirError`."""
    rows = catalog.query_dicts(
        "SELECT case_id, split, domain, task_type, path FROM cases WHERE split = ? AND status = 'accepted' "
        "ORDER BY case_index, domain, task_type", [split])
    return [load_accepted(r, catalog) for r in rows]
