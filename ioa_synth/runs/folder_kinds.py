"""What kind of folder a path is, told by the kinds the capabilities register: output
folders of different commands never mix, and a command given a folder of another kind
says what it was given in one line.

A capability registers each kind of folder it writes, at import (its package's
``__init__``)::

    register_folder_kind("evaluate", "an 'ioa-synth evaluate' results folder", commands=("evaluate",),
                         hint="read it with 'ioa-synth report' or 'ioa-synth compare'")

and is recognised by, in this order: the folder's manifest (``run.json``, written by a run
opened with ``kind=...``; :mod:`ioa_synth.runs.manifest`), a ``marker`` (files only, e.g.
a meeting session's ``session.json``), then the folder's catalog: the commands of its
``runs`` (``commands``), rows in the kind's ``tables``, or (``other_commands``) runs of a
command no kind claims. The runs layer names no kind itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # pragma: no cover
    from ioa_synth.runs.catalog import Catalog
    from ioa_synth.runs.manifest import Manifest


@dataclass(frozen=True)
class FolderKind:
    """A registered kind of folder.

    Attributes:
        kind: its name (``"evaluate"``); a manifest's ``kind``.
        title: what it is, with its article, in messages (``"an 'ioa-synth evaluate'
            results folder"``).
        commands: the commands whose runs make it (the first writes its ``run.json``; a
            manifest without ``kind`` of one of these is of this kind).
        tables: catalog tables whose rows make a folder of this kind.
        marker: ``marker(path) -> bool``, files that make one (no catalog opened).
        other_commands: runs of commands that no kind claims make one too.
        hint: what to do with such a folder where another kind is wanted (``"read it
            with ..."``).
    """

    kind: str
    title: str
    commands: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    marker: Callable[[Path], bool] | None = None
    other_commands: bool = False
    hint: str = "use a folder of its own"


_KINDS: dict[str, FolderKind] = {}


def register_folder_kind(kind: str, title: str, *, commands: tuple[str, ...] = (), tables: tuple[str, ...] = (),
                         marker: Callable[[Path], bool] | None = None, other_commands: bool = False,
                         hint: str = "use a folder of its own") -> FolderKind:
    """Register (or replace) the folder kind ``kind``; see :class:`FolderKind`."""
    entry = FolderKind(kind, title, tuple(commands), tuple(tables), marker, other_commands, hint)
    _KINDS[kind] = entry
    return entry


def registered() -> dict[str, FolderKind]:
    """The registered kinds by name, in registration order."""
    return dict(_KINDS)


def kind_of_command(command: str) -> str:
    """The kind whose runs ``command`` makes; for an unclaimed command its first word
    (``"belief run"`` -> ``"belief"``)."""
    for entry in _KINDS.values():
        if command in entry.commands:
            return entry.kind
    return command.split(" ", 1)[0] if command else command


def title(kind: str) -> str:
    """The registered title of ``kind``; for an unregistered kind ``"a '<kind>' results folder"``."""
    entry = _KINDS.get(kind)
    return entry.title if entry else f"a '{kind}' results folder"


def short_title(kind: str) -> str:
    """``"a '<command>' results folder"`` after the command that writes ``kind``'s manifest
    (``"a 'belief run' results folder"``, ``"an 'evaluate' results folder"``)."""
    entry = _KINDS.get(kind)
    name = entry.commands[0] if entry and entry.commands else kind
    return f"{'an' if name[:1] in 'aeiou' else 'a'} '{name}' results folder"


def hint(kind: str) -> str:
    """What to do with a folder of ``kind`` where another kind is wanted."""
    entry = _KINDS.get(kind)
    return entry.hint if entry else "use a folder of its own"


@dataclass(frozen=True)
class Detected:
    """A folder's kind, what told it (``"run.json"``, ``"marker"`` or ``"catalog"``) and its
    title: the registered one, or for a kind not registered in this process (its capability
    not imported) that of the command named in its ``run.json`` (``"an 'ioa-synth belief
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
    def manifest(self) -> "Manifest | None":
        from ioa_synth.runs.manifest import ManifestError, read_manifest

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
    wanted = {t for entry in _KINDS.values() for t in entry.tables if t in tables}
    rows = {t: cat.execute(f"SELECT count(*) FROM {t}")[0][0] for t in sorted(wanted)}
    commands = {c for (c,) in cat.execute("SELECT DISTINCT command FROM runs")} if "runs" in tables else set()
    return _CatalogFacts(commands, rows)


def detect_folder(path: str | Path, *, catalog: "Catalog | None" = None, open_catalog: bool = True) -> Detected | None:
    """The kind of the folder ``path`` (see the module docstring for the order), or ``None``
    (missing, empty or not recognised). Never writes.

    Args:
        catalog: the folder's catalog when the caller holds it open (it is read, not closed).
        open_catalog: with ``False`` (and no ``catalog``) only ``run.json`` and markers are
            looked at (a run may hold the catalog).

    Raises:
        ioa_synth.runs.catalog.CatalogLocked: the catalog is open in another process.
    """
    path = Path(path)
    if not path.is_dir():
        return None
    view = _View(path, catalog, open_catalog)
    if view.manifest is not None:
        kind = view.manifest.kind
        shown = title(kind) if kind in _KINDS else f"an 'ioa-synth {view.manifest.command}' results folder"
        return Detected(kind, "run.json", shown)
    for entry in _KINDS.values():
        if entry.marker is not None and entry.marker(path):
            return Detected(entry.kind, "marker", entry.title)
    facts = view.catalog
    claimed = {c for entry in _KINDS.values() for c in entry.commands}
    for test in (lambda e: bool(facts.commands & set(e.commands)),
                 lambda e: any(facts.rows.get(t) for t in e.tables),
                 lambda e: e.other_commands and bool(facts.commands - claimed)):
        for entry in _KINDS.values():
            if test(entry):
                return Detected(entry.kind, "catalog", entry.title)
    return None


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
