"""``ioa-synth build import``: IoA-Suite records (the released data, or a sample in its
format) into a build directory, as accepted cases whose provenance is ``imported``.

``RECORDS`` is one of:

- a released data folder holding split folders, ``<split>/<domain>/<task_type>_NNN.json``
  (the middle split may be named ``validation``): the ``--split`` folder is read;
- a split folder, ``<domain>/<task_type>_NNN.json`` under it (``samples/evaluate/test``);
- one record file ``<domain>/<task_type>_NNN.json``.

A record is ``profiles`` + ``dialogue`` as released (paper App. B.4: misalignment points
without ``type``, no outline, no ``seed``), or one this toolkit wrote. Its case id is
``<split>/<domain>/<task_type>_NNN``, read from its path. It is copied to
``DIR/<case_id>.json`` as given, plus ``case_id`` and ``provenance`` = ``{"kind": "imported",
"source", "sha256"}`` (the record's own ``quality`` block, if any, is dropped: no judge of this
build scored it), and gets a ``cases`` row (status ``accepted``, no stage attempt) and a row of
table :data:`TABLE`. No score is written or invented: pass rates and judge health leave
imported cases out; ``audit`` and ``annotate`` score them afresh (attempt 0).

Every record is checked before anything is written. Hidden files (``.name``) are skipped. Refused
(:class:`RecordImportError`, one line): a results folder of another command (an ``ioa-synth
export`` dataset folder, an evaluate run, a meeting session), a path that is no record (not JSON, not ``profiles`` + ``dialogue``, not named
``<domain>/<task_type>_NNN.json``), a record of more than two people whose member ids are not
M1..MN or whose point's sides (``between``, ``neutral``) are no partition of its members,
records of another split than ``--split`` (their folder
or case id says so), and a case id the build directory already holds as a built case (or
imported from other content). Records imported before with the same content are left as
they are.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ioa_synth.build.builddir import IMPORTED, record_stages
from ioa_synth.build.run_settings import folder_settings, record_misfit
from ioa_synth.build.tables import BUILD_TABLES
from ioa_synth.core.atomic import write_bytes_atomic
from ioa_synth.core.jsonl import hidden, json_problem, jsonl_hint, read_problem
from ioa_synth.protocol.cells import DOMAINS, SPLITS, TASK_TYPES
from ioa_synth.protocol.multiparty import MultiStage1Output, member_ids, side_problems
from ioa_synth.runs.catalog import CATALOG_FILE, Catalog
from ioa_synth.runs.folder_kinds import claim_folder
from ioa_synth.runs.interrupt import DeferredInterrupt
from ioa_synth.core.errors import reason_of
from ioa_synth.runs.manifest import MANIFEST_FILE
from ioa_synth.runs.folder_kinds import folder_kind, title as kind_title
from ioa_synth.runs.run_rows import finish_run, start_run
from ioa_synth.text.utf8 import decode_utf8

#: The build's table of imported cases: where each came from.
TABLE = "imported_cases"
COLUMNS = "case_id VARCHAR PRIMARY KEY, split VARCHAR, source VARCHAR, sha256 VARCHAR, run_id VARCHAR, " \
          "imported_at TIMESTAMP"
#: Folder names of each split in released data (the middle split is ``validation`` there).
SPLIT_FOLDERS: dict[str, tuple[str, ...]] = {"train": ("train",), "val": ("val", "validation"), "test": ("test",)}
_NAME = re.compile(r"^(?P<task>[a-z_]+)_(?P<index>\d+)$")


class RecordImportError(ValueError):
    """Records that cannot be imported; the message names the file and the problem."""


@dataclass
class Found:
    """One record to import: its ``case_id``, file and content (parsed ``record``, file ``sha256``)."""

    case_id: str
    domain: str
    task_type: str
    index: int
    path: Path
    record: dict[str, Any]
    sha256: str


def has_table(catalog: Catalog) -> bool:
    """True once something was imported into the catalog's build directory."""
    return bool(catalog.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [TABLE])[0][0])


def _seed_id(record: dict[str, Any]) -> str | None:
    seed = record.get("seed")
    return str(seed["seed_id"]) if isinstance(seed, dict) and seed.get("seed_id") else None


def split_of_folder(name: str) -> str | None:
    """The build split a folder name stands for (``validation`` -> ``val``), or ``None``."""
    return next((s for s, names in SPLIT_FOLDERS.items() if name in names), None)


def record_files(records: Path, split: str) -> list[Path]:
    """The record files ``records`` names for ``split`` (see the module docstring).

    Raises:
        RecordImportError: no such path, a data folder without that split, a folder of another
            split, or no record file at all.
    """
    if records.is_file():
        named = split_of_folder(records.parent.parent.name)
        if named is not None and named != split:
            raise RecordImportError(f"{records}: a record of split {named} (its folder says so); give --split {named}")
        return [records]
    if not records.is_dir():
        raise RecordImportError(f"{records}: no such file or folder")
    kind = folder_kind(records, open_catalog=False)
    if kind not in (None, "build"):
        raise RecordImportError(f"{records} is {kind_title(kind)}, not IoA-Suite records "
                                f"(<split>/<domain>/<task_type>_NNN.json){jsonl_hint(records)}")
    splits = {split_of_folder(p.name): p for p in records.iterdir() if p.is_dir() and split_of_folder(p.name)}
    if splits:
        if split not in splits:
            held = ", ".join(sorted(p.name for p in splits.values()))
            raise RecordImportError(f"{records}: no {'/'.join(SPLIT_FOLDERS[split])} folder here (it holds {held}); "
                               f"choose --split accordingly")
        records = splits[split]
    else:
        named = split_of_folder(records.name)
        if named is not None and named != split:
            raise RecordImportError(f"{records}: the records of split {named} (the folder says so); give --split {named}")
    files = sorted(p for p in records.rglob("*.json")  # a build directory's manifest is no record
                   if not hidden(p, records) and p != records / MANIFEST_FILE)
    if not files:
        raise RecordImportError(f"{records}: no record file (<domain>/<task_type>_NNN.json) here{jsonl_hint(records)}")
    return files


def read_record(path: Path, split: str) -> Found:
    """Read and check one record file of ``split``.

    Raises:
        RecordImportError: see the module docstring.
    """
    domain, name = path.parent.name, path.stem
    m = _NAME.match(name)
    if domain not in DOMAINS or not m or m["task"] not in TASK_TYPES:
        raise RecordImportError(f"{path}: not a record path: expected <domain>/<task_type>_NNN.json with a domain of "
                           f"{', '.join(DOMAINS)} and a task type of {', '.join(TASK_TYPES)}")
    try:
        raw = path.read_bytes()
        record = json.loads(decode_utf8(raw, path, RecordImportError))
    except OSError as exc:
        raise RecordImportError(read_problem(path, exc)) from None
    except json.JSONDecodeError as exc:
        raise RecordImportError(json_problem(path, exc)) from None
    if not isinstance(record, dict) or "profiles" not in record or "dialogue" not in record:
        raise RecordImportError(f"{path}: not an IoA-Suite record (expected an object with \"profiles\" and \"dialogue\")")
    try:
        profiles, _ = record_stages(record)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise RecordImportError(f"{path}: not an IoA-Suite record: profiles/dialogue field {where}: {first['msg']}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RecordImportError(f"{path}: not an IoA-Suite record ({reason_of(exc)})") from None
    problem = _sides_problem(profiles)
    if problem:
        raise RecordImportError(f"{path}: not an IoA-Suite record: {problem}")
    case_id = f"{split}/{domain}/{name}"
    own = record.get("case_id")
    if isinstance(own, str) and own.split("/", 1)[0] in SPLITS and own.split("/", 1)[0] != split:
        raise RecordImportError(f"{path}: the record's case_id {own!r} is of split {own.split('/', 1)[0]}; "
                           f"give --split {own.split('/', 1)[0]}")
    seed = record.get("seed")
    if isinstance(seed, dict):
        for key, value in (("domain", domain), ("task_type", m["task"])):
            if seed.get(key) not in (None, value):
                raise RecordImportError(f"{path}: its seed's {key} is {seed[key]!r} but its path says {value!r}")
    return Found(case_id, domain, m["task"], int(m["index"]), path, record, hashlib.sha256(raw).hexdigest())


def _sides_problem(profiles: Any) -> str | None:
    """What keeps a multi-party record (``build --participants N``: more than two members, or
    points naming their sides) from being read as one: member ids other than M1..MN, or a
    point whose sides are no partition of the members (:func:`~ioa_synth.protocol.multiparty.side_problems`,
    the rule ``evaluate`` reads a multi-party case by). ``None`` for a record without sides."""
    if not isinstance(profiles, MultiStage1Output):
        return None
    ids = [m.id for m in profiles.members]
    if ids != member_ids(len(ids)):
        return f"profiles.members ids are {', '.join(ids)}; a meeting of {len(ids)} has M1..M{len(ids)} in order"
    for i, point in enumerate(profiles.misalignment_points):
        problems = side_problems(point, ids)
        if problems:
            return f"profiles.misalignment_points.{i}.between: {problems[0]}"
    return None


def _existing(out_dir: Path, ids: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """``({case_id: status} of built cases, {case_id: sha256} of imported ones)`` among ``ids``."""
    if not (out_dir / CATALOG_FILE).is_file():
        return {}, {}
    with Catalog(out_dir, read_only=True, tables=[BUILD_TABLES]) as cat:
        imported = {}
        if has_table(cat):
            imported = dict(cat.execute(f"SELECT case_id, sha256 FROM {TABLE} WHERE list_contains(?, case_id)", [ids]))
        built = {c: s for c, s in cat.execute("SELECT case_id, status FROM cases WHERE list_contains(?, case_id)",
                                              [ids]) if c not in imported}
    return built, imported


def import_records(records: Path, split: str, out_dir: Path) -> dict[str, Any]:
    """Import the records ``records`` names into the build directory ``out_dir`` as split
    ``split``; return ``{"imported": [case ids], "unchanged": [case ids], "run_id",
    "interrupted"}`` (``interrupted``: a Ctrl-C came while the import was being written,
    which it completed).

    Raises:
        RecordImportError: see the module docstring (nothing written).
        ioa_synth.runs.catalog.CatalogLocked: the catalog is in use.
    """
    found = [read_record(p, split) for p in record_files(records, split)]
    seen: dict[str, Path] = {}
    for f in found:
        if f.case_id in seen:
            raise RecordImportError(f"{f.path}: case {f.case_id} is also {seen[f.case_id]}")
        seen[f.case_id] = f.path
    built, imported = _existing(out_dir, list(seen))
    for f in found:
        if f.case_id in built:
            raise RecordImportError(f"{out_dir}: {f.case_id} is a case built here (status {built[f.case_id]}); nothing "
                               f"imported (import into another --out)")
        if imported.get(f.case_id) not in (None, f.sha256):
            raise RecordImportError(f"{out_dir}: {f.case_id} was imported from other content than {f.path}; nothing "
                               f"imported (import into another --out)")
    settings = folder_settings(out_dir)
    for f in found:  # a directory holds one meeting size, series length and language (its manifest's)
        misfit = record_misfit(f.record, settings)
        if misfit:
            raise RecordImportError(f"{f.path}: {misfit}; nothing imported (import into another --out)")
    new = [f for f in found if f.case_id not in imported]
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    # the folder's manifest first: an unreadable run.json is refused before anything is written
    claim_folder(out_dir, "build", "build import", args={"records": str(records), "split": split})
    # records and their rows are written whole: a Ctrl-C now waits the second this takes
    with DeferredInterrupt() as held, Catalog(out_dir, tables=[BUILD_TABLES]) as cat:
        cat.ensure_table(TABLE, COLUMNS)
        run_id = start_run(cat, "build import", {"records": str(records), "split": split}, None)
        for f in new:
            copy = {"case_id": f.case_id, **{k: v for k, v in f.record.items() if k not in ("case_id", "quality")},
                    "provenance": {"kind": IMPORTED, "source": str(f.path.resolve()), "sha256": f.sha256}}
            write_bytes_atomic(out_dir / f"{f.case_id}.json",
                               (json.dumps(copy, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        with cat.transaction() as tx:
            for f in new:
                tx.insert("cases", {"case_id": f.case_id, "split": split, "domain": f.domain, "task_type": f.task_type,
                                    "seed_id": _seed_id(f.record), "case_index": f.index, "status": "accepted",
                                    "stage1_attempts": 0, "stage2_attempts": 0,
                                    "path": str(out_dir / f"{f.case_id}.json"), "updated_at": now})
                tx.insert(TABLE, {"case_id": f.case_id, "split": split, "source": str(f.path.resolve()),
                                  "sha256": f.sha256, "run_id": run_id, "imported_at": now})
        summary = {"imported": len(new), "unchanged": len(found) - len(new)}
        finish_run(cat, run_id, summary)
    return {"imported": [f.case_id for f in new], "unchanged": [f.case_id for f in found if f.case_id in imported],
            "run_id": run_id, "interrupted": held.interrupted}


def imported_counts(catalog: Catalog) -> dict[str, int]:
    """``{split: imported cases}`` (empty when nothing was imported)."""
    if not has_table(catalog):
        return {}
    return dict(catalog.execute(f"SELECT split, count(*) FROM {TABLE} GROUP BY split ORDER BY split"))


def imported_source(catalog: Catalog, case_id: str) -> dict[str, Any] | None:
    """``{"source", "sha256", "imported_at"}`` of an imported case, else ``None``."""
    if not has_table(catalog):
        return None
    rows = catalog.query_dicts(f"SELECT source, sha256, imported_at FROM {TABLE} WHERE case_id = ?", [case_id])
    return rows[0] if rows else None
