"""Which results folders the viewer was given, of what kind, and what the index says of
each: command, models, start and finish, progress, spend against the estimate, fingerprint.

Every folder kind's reading lives under :mod:`ioa_synth.view.read` (this module and one per
kind), so that it can move into the runs layer's one reader of every folder kind later. A
folder is read without writing to it: ``run.json`` and the record files directly, the
catalog through a copy (:mod:`.snapshot`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ioa_synth.core.jsonl import read_json
from ioa_synth.runs.catalog import CATALOG_FILE, Catalog
from ioa_synth.runs.folder_kinds import detect_folder, registered
from ioa_synth.runs.manifest import Manifest, ManifestError, read_manifest
from ioa_synth.runs.spend import spend_report
from ioa_synth.view.read.snapshot import SnapshotError, Snapshots, prepare

#: Kinds with pages of their own; any other registered kind gets its index row and calls page.
PAGED = ("build", "evaluate", "belief", "collab", "meeting")
#: How deep a folder holding several is searched for results folders.
DEPTH = 3


class ViewError(ValueError):
    """A path that cannot be viewed (missing, a file, holding no results folder); one line."""


def _table_sets() -> list:
    """Every capability's catalog tables (created or migrated in the copy only)."""
    from ioa_synth.belief.tables import BELIEF_TABLES
    from ioa_synth.build.tables import BUILD_TABLES
    from ioa_synth.collab.tables import COLLAB_TABLES
    from ioa_synth.evaluate.tables import EVALUATE_TABLES
    from ioa_synth.meetings.tables import MEETING_TABLES

    return [BUILD_TABLES, EVALUATE_TABLES, BELIEF_TABLES, COLLAB_TABLES, MEETING_TABLES]


def _import_kinds() -> None:
    """Import every capability so that each folder kind is registered."""
    import ioa_synth.belief  # noqa: F401
    import ioa_synth.build  # noqa: F401
    import ioa_synth.collab  # noqa: F401
    import ioa_synth.evaluate  # noqa: F401
    import ioa_synth.export  # noqa: F401
    import ioa_synth.meetings  # noqa: F401
    import ioa_synth.train  # noqa: F401


@dataclass
class Folder:
    """One results folder: ``id`` (its number in the URLs), ``path``, ``kind``, ``title``."""

    id: int
    path: Path
    kind: str
    title: str
    given: str = ""
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.given or self.path.name

    def manifest(self) -> Manifest | None:
        try:
            return read_manifest(self.path)
        except ManifestError:
            return None


class Library:
    """The folders given to ``ioa-synth view`` and the catalog copies read from them."""

    def __init__(self, folders: list[Folder], snapshots: Snapshots) -> None:
        self.folders = folders
        self.snapshots = snapshots

    def get(self, fid: int) -> Folder | None:
        return self.folders[fid] if 0 <= fid < len(self.folders) else None

    def catalog(self, folder: Folder) -> Catalog | None:
        """The latest copy of ``folder``'s catalog, or ``None`` when it has none."""
        return self.snapshots.catalog(folder.path, _table_sets(), prepare)

    def close(self) -> None:
        self.snapshots.close()


def _detect(path: Path, snapshots: Snapshots) -> tuple[str, str] | None:
    found = detect_folder(path, open_catalog=False)
    if found is None and (path / CATALOG_FILE).is_file():
        try:
            cat = snapshots.catalog(path, _table_sets(), prepare)
        except SnapshotError as exc:
            raise ViewError(str(exc)) from None
        found = detect_folder(path, catalog=cat, open_catalog=False) if cat is not None else None
    return (found.kind, found.title) if found else None


def open_library(paths: list[str | Path]) -> Library:
    """The results folders at ``paths``: each path is one, or a folder holding some (searched
    :data:`DEPTH` levels down; a results folder's own subfolders are not searched).

    Raises:
        ViewError: a path is missing, a file, or neither a results folder nor holding one.
    """
    _import_kinds()
    snapshots = Snapshots()
    folders: list[Folder] = []
    try:
        for given in paths:
            path = Path(given)
            if not path.exists():
                raise ViewError(f"{given}: no such folder")
            if not path.is_dir():
                raise ViewError(f"{given} is a file, not a results folder (give the folder a run wrote)")
            found = _walk(path.resolve(), snapshots, DEPTH)
            if not found:
                kinds = ", ".join(sorted(registered()))
                raise ViewError(f"{given} is not a results folder and holds none (kinds: {kinds})")
            for sub, (kind, title) in found:
                if all(f.path != sub for f in folders):
                    label = str(given) if sub == path.resolve() else \
                        f"{path.resolve().name}/{sub.relative_to(path.resolve())}"
                    folders.append(Folder(len(folders), sub, kind, title, label))
    except BaseException:
        snapshots.close()
        raise
    return Library(folders, snapshots)


def _walk(path: Path, snapshots: Snapshots, depth: int) -> list[tuple[Path, tuple[str, str]]]:
    kind = _detect(path, snapshots)
    if kind is not None:
        return [(path, kind)]
    if depth == 0:
        return []
    out = []
    for sub in sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name != "private"):
        out += _walk(sub, snapshots, depth - 1)
    return out


# -- the index ---------------------------------------------------------------------------

def component_of(role: str) -> str:
    """The component of a call's ``role`` in any kind (``simulator:M1``, ``prober|mcq:A``)."""
    return re.split(r"[:|]", role or "", maxsplit=1)[0]


def _count(folder: Path, pattern: str) -> int:
    return sum(1 for _ in folder.glob(pattern))


def _progress(folder: Folder, manifest: Manifest | None, cat: Catalog | None) -> tuple[int | None, int | None]:
    """``(done, total)`` units of the folder's kind (``None`` where unknown)."""
    kind, path = folder.kind, folder.path
    if kind == "build" and cat is not None:
        (done, total), = cat.execute("SELECT count(*) FILTER (WHERE status <> 'pending'), count(*) FROM cases")
        return done, total
    if kind == "evaluate":
        # cases scored, as the run's summary counts them (a failed case has a record too, and is not done)
        cases = (_json(path / "summary.json") or {}).get("cases", {})
        done = cases.get("scored") if isinstance(cases.get("scored"), int) else _count(path, "records/**/*.json")
        return done, cases.get("requested")
    if kind == "belief":
        expected = (manifest.model_extra or {}).get("expected_conversations") if manifest else None
        return _count(path, "conversations/*.json"), sum(expected.values()) if isinstance(expected, dict) else None
    if kind == "collab":
        return _count(path, "tasks/**/*.json"), None
    if kind == "meeting":
        session = _json(path / "session.json") or {}
        # the forms filled: answers, then labels, one each per participant (as 'status' counts them)
        return _count(path, "answers/*.json") + _count(path, "labels/*.json"), 2 * len(session.get("participants", []))
    return None, None


def _json(path: Path) -> Any:
    try:
        return read_json(path)
    except ValueError:
        return None


def summary(folder: Folder, catalog: Callable[[Folder], Catalog | None]) -> dict[str, Any]:
    """The index row of ``folder``: ``{kind, title, command, models, started_at, finished_at,
    done, total, spend, fingerprint, calls}``."""
    manifest = folder.manifest()
    cat = catalog(folder)
    row: dict[str, Any] = {"folder": folder, "command": None, "models": {}, "started_at": None, "finished_at": None,
                           "fingerprint": None, "spend": None, "calls": None}
    if manifest is not None:
        row.update(command=manifest.command, started_at=manifest.started_at, finished_at=manifest.finished_at,
                   fingerprint=manifest.fingerprint,
                   models={name: c.get("model") for name, c in manifest.components.items() if isinstance(c, dict)})
    if cat is not None:
        runs = cat.query_dicts("SELECT command, fingerprint, started_at, finished_at FROM runs ORDER BY started_at")
        if runs and manifest is None:
            row.update(command=runs[-1]["command"], fingerprint=runs[-1]["fingerprint"],
                       started_at=str(runs[0]["started_at"])[:19],
                       finished_at=str(runs[-1]["finished_at"])[:19] if runs[-1]["finished_at"] else None)
        if not row["models"]:
            for role, model in cat.execute("SELECT DISTINCT role, model FROM llm_calls ORDER BY 1"):
                row["models"].setdefault(component_of(role), model)
        row["calls"] = cat.execute("SELECT count(*), coalesce(sum(prompt_tokens), 0) + "
                                   "coalesce(sum(completion_tokens), 0) FROM llm_calls")[0]
        row["spend"] = spend_report(cat, component_of)
    if row["command"] is None and folder.kind == "meeting":
        row["command"] = "meeting import"
    row["done"], row["total"] = _progress(folder, manifest, cat)
    return row


def read_json_file(path: Path) -> Any:
    """The JSON in ``path`` or ``None`` (missing or unreadable: a run may be writing it)."""
    return _json(path)


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, default=str)
