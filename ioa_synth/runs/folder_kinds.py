"""What kind of folder a path is, read from its manifest (``run.json``,
:mod:`ioa_synth.runs.manifest`): output folders of different commands never mix, and a
command given a folder of another kind says what it was given in one line.

The kinds are those the capabilities register (:mod:`ioa_synth.runs.kind_registry`,
re-exported here). Every kind's folder carries a manifest, whose ``kind`` is the folder's
kind. Two exceptions go through a kind's :class:`~ioa_synth.runs.kind_registry.FolderLayout`:

- a folder written before its kind carried a manifest (a build directory, a meeting session
  or a reward catalog written by the release before typed manifests): it is *migrated*, read as the manifest
  :func:`folder_manifest` makes for it (``migrated_from: "no run.json"``), which the next
  command that writes the folder stores (:func:`migrate_folder`, atomically); a reader
  (``status``) writes nothing;
- a kind registered with ``manifest=False``: its folders are handed to other tools as they
  are (an export's dataset folder, ``train sft``'s warm-start folder).

The runs layer names no kind itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ioa_synth.runs.kind_registry import (FolderKind, FolderLayout, Settings, hint, kind_of_command,  # noqa: F401
                                          register_folder_kind, registered, settings_model, short_title, title)
from ioa_synth.runs.manifest import (MANIFEST_FILE, NO_MANIFEST, Manifest, ManifestError, ensure_manifest,
                                     folder_manifest_of, read_manifest, write_manifest)

if TYPE_CHECKING:  # pragma: no cover
    from ioa_synth.runs.catalog import Catalog


@dataclass(frozen=True)
class Detected:
    """A folder's kind, what told it (``"run.json"``, or ``"layout"`` for a folder without
    one: :class:`~ioa_synth.runs.kind_registry.FolderLayout`) and its title: the registered
    one, or for a kind not registered in this process (its capability not imported) that of
    the command named in its ``run.json`` (``"an 'ioa-synth belief
    run' results folder"``, the form every results folder's title takes)."""

    kind: str
    by: str
    title: str


@dataclass
class _CatalogFacts:
    commands: set[str] = field(default_factory=set)
    rows: dict[str, int] = field(default_factory=dict)


class _View:
    """What detection reads of a folder, each part read once and only when asked."""

    def __init__(self, path: Path, catalog: "Catalog | None", open_catalog: bool) -> None:
        self.path, self._catalog, self._open = path, catalog, open_catalog

    @cached_property
    def manifest(self) -> Manifest | None:
        try:
            return read_manifest(self.path)
        except ManifestError:
            return None

    @cached_property
    def catalog(self) -> _CatalogFacts:
        from ioa_synth.runs.catalog import CATALOG_FILE, Catalog

        if self._catalog is not None:
            return _facts(self._catalog)
        if not self._open or not (self.path / CATALOG_FILE).is_file():
            return _CatalogFacts()
        with Catalog(self.path, read_only=True) as cat:
            return _facts(cat)


def _facts(cat: "Catalog") -> _CatalogFacts:
    tables = {name for (name,) in cat.execute("SELECT table_name FROM information_schema.tables")}
    wanted = {t for entry in _layouts() for t in entry.layout.tables if t in tables}
    rows = {t: cat.execute(f"SELECT count(*) FROM {t}")[0][0] for t in sorted(wanted)}
    commands = {c for (c,) in cat.execute("SELECT DISTINCT command FROM runs")} if "runs" in tables else set()
    return _CatalogFacts(commands, rows)


def _layouts() -> list[FolderKind]:
    return [entry for entry in registered().values() if entry.layout is not None]


def _by_layout(view: "_View") -> FolderKind | None:
    """The kind whose layout ``view``'s folder has (markers first, then its catalog: the
    commands of its runs, rows in a kind's tables, runs of commands no kind claims)."""
    entries = _layouts()
    for entry in entries:
        if entry.layout.marker is not None and entry.layout.marker(view.path):
            return entry
    facts = view.catalog

    def unclaimed(entry: FolderKind) -> set[str]:  # commands of its runs that no other kind claims
        others = {c for other in registered().values() if other.kind != entry.kind
                  for c in (*other.commands, *(other.layout.commands if other.layout else ()))}
        return facts.commands - others

    for test in (lambda e: bool(facts.commands & set(e.layout.commands)),
                 lambda e: any(facts.rows.get(t) for t in e.layout.tables),
                 lambda e: e.layout.other_commands and bool(unclaimed(e))):
        for entry in entries:
            if test(entry):
                return entry
    return None


def _first_command(view: "_View", entry: FolderKind) -> str:
    own = sorted(view.catalog.commands & set(entry.layout.commands if entry.layout else ()))
    return own[0] if own else (entry.commands[0] if entry.commands else entry.kind)


def _detect(path: Path, catalog: "Catalog | None", open_catalog: bool) -> tuple[Detected, Manifest | None] | None:
    if not path.is_dir():
        return None
    view = _View(path, catalog, open_catalog)
    if view.manifest is not None:
        kind = view.manifest.kind
        shown = title(kind) if kind in registered() else f"an 'ioa-synth {view.manifest.command}' results folder"
        return Detected(kind, "run.json", shown), view.manifest
    if (path / MANIFEST_FILE).exists():  # a run.json that does not read: no kind, never migrated over
        return None
    entry = _by_layout(view)
    if entry is None:
        return None
    migrated = folder_manifest_of(entry.kind, _first_command(view, entry), migrated_from=NO_MANIFEST) \
        if entry.manifest else None
    return Detected(entry.kind, "layout", entry.title), migrated


def detect_folder(path: str | Path, *, catalog: "Catalog | None" = None, open_catalog: bool = True) -> Detected | None:
    """The kind of the folder ``path``: its manifest's, else (a folder written without one)
    the kind whose layout it has (see the module docstring), or ``None`` (missing, empty, an
    unreadable ``run.json`` or not recognised). Never writes.

    Args:
        catalog: the folder's catalog when the caller holds it open (it is read, not closed).
        open_catalog: with ``False`` (and no ``catalog``) only ``run.json`` and markers are
            looked at (a run may hold the catalog).

    Raises:
        ioa_synth.runs.catalog.CatalogLocked: the catalog is open in another process.
    """
    found = _detect(Path(path), catalog, open_catalog)
    return found[0] if found else None


def folder_manifest(path: str | Path, *, catalog: "Catalog | None" = None,
                    open_catalog: bool = True) -> Manifest | None:
    """The manifest of the folder ``path``: its ``run.json``, or for a folder written without
    one (a kind's layout) the migrated manifest :func:`migrate_folder` would store; ``None``
    when the folder has no kind or its kind carries no manifest. Never writes."""
    found = _detect(Path(path), catalog, open_catalog)
    return found[1] if found else None


def migrate_folder(path: str | Path, kind: str, *, catalog: "Catalog | None" = None) -> Manifest | None:
    """Store the migrated manifest of a folder of ``kind`` written without one (atomically,
    before a command writes anything else into it); return it, or ``None`` when the folder
    needs none (it has a manifest, is of another kind, or is not there)."""
    found = _detect(Path(path), catalog, True)
    if found is None or found[0].by != "layout" or found[0].kind != kind or found[1] is None:
        return None
    write_manifest(Path(path), found[1])
    return found[1]


def folder_kind(path: str | Path, *, catalog: "Catalog | None" = None, open_catalog: bool = True) -> str | None:
    """The kind of the folder ``path`` (:func:`detect_folder`), or ``None``."""
    found = detect_folder(path, catalog=catalog, open_catalog=open_catalog)
    return found.kind if found else None


class FolderKindMismatch(ValueError):
    """A folder of another kind than the one a command writes or reads; the message is one
    line naming the folder and both kinds."""


def check_folder_kind(path: str | Path, wanted: str, *, catalog: "Catalog | None" = None,
                      open_catalog: bool = True, what: str | None = None, hint: str | None = None) -> None:
    """Raise :class:`FolderKindMismatch` when ``path`` is a folder of another kind than
    ``wanted``: ``"<what> is <its title>, not <wanted's title>; <hint>"`` (``what``
    defaults to the path; ``hint`` to "use a folder of its own")."""
    found = detect_folder(path, catalog=catalog, open_catalog=open_catalog)
    if found is not None and found.kind != wanted:
        raise FolderKindMismatch(f"{what or path} is {found.title}, not {title(wanted)}; "
                                 f"{hint or 'use a folder of its own'}")


def claim_folder(path: str | Path, kind: str, command: str, *, catalog: "Catalog | None" = None,
                 args: dict | None = None, settings: dict | None = None, argv: list[str] | None = None) -> Manifest:
    """Before ``command`` writes into ``path`` (a folder of ``kind``, new or not): migrate a
    folder written without a manifest (:func:`migrate_folder`), else give a new folder its
    manifest (:func:`ioa_synth.runs.manifest.ensure_manifest`); an existing manifest is kept.
    Returns the folder's manifest.

    Raises:
        ManifestError: ``run.json`` is unreadable or of another kind.
    """
    return migrate_folder(path, kind, catalog=catalog) or ensure_manifest(path, kind, command, args=args,
                                                                           settings=settings, argv=argv)
