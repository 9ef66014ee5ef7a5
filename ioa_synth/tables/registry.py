"""The table ids of both papers: what each needs and, once implemented, how it is made.

Each id is one :class:`TableSpec`; a module of this package registers its ids at import
(:func:`register`). :func:`make_table` checks the folders against the spec's
:class:`Needs` (kind by :func:`ioa_synth.runs.folder_kinds.folder_kind`, how many) and the
settings files (``table --settings``) against its :class:`SettingsFile` roles, and calls the
spec's ``build`` on them. Every problem is a :class:`TableError` whose message is one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ioa_synth.runs.folder_kinds import folder_kind, title
from ioa_synth.tables.model import PaperTable


class TableError(ValueError):
    """An unknown or unimplemented id, or folders that do not fit (one line)."""


@dataclass(frozen=True)
class Needs:
    """The folders a table is made from.

    Attributes:
        kind: the folder kind (``"evaluate"``, ``"meeting"``, ``"collab"``, ...).
        min: at least this many folders.
        max: at most this many (``None``: no upper bound).
        each: what one folder stands for (``"one per prober"``).
    """

    kind: str
    min: int = 1
    max: int | None = None
    each: str = ""

    def describe(self) -> str:
        """``"1+ evaluate results folders, one per prober"``."""
        count = str(self.min) if self.max == self.min else f"{self.min}+" if self.max is None else f"{self.min}-{self.max}"
        noun = title(self.kind).removeprefix("an ").removeprefix("a ")
        text = f"{count} × {noun}"
        return f"{text}, {self.each}" if self.each else text


@dataclass(frozen=True)
class SettingsFile:
    """A settings file a table is made from (a settings table: the paper's models, the GRPO
    settings), given with ``table --settings FILE`` or else ``default``.

    Attributes:
        role: its key in the dict ``build`` gets (``"models"``, ``"verl"``); never a folder kind.
        suffixes: the file name endings that make a given file this role (``(".json",)``);
            the roles of one id take disjoint suffixes.
        default: the file read when none of this role is given (the checkout's ``configs/``).
        what: what the file is, in messages (``"a models config (JSON)"``).
    """

    role: str
    suffixes: tuple[str, ...]
    default: Path
    what: str

    def describe(self) -> str:
        """``"a models config (JSON), default configs/paper-models.json"``."""
        return f"{self.what}, default {self.default.parent.name}/{self.default.name}"


@dataclass(frozen=True)
class TableSpec:
    """One table id.

    Attributes:
        table_id: ``"ioa-12"``, ``"belief-fig4"``.
        title: the paper's title of it, shortened.
        ref: where it is in the paper (``"IoA paper, Table 12 (App. E)"``).
        needs: the folders it is made from, one :class:`Needs` per kind; empty when it is not
            made from results folders (a settings table).
        command: the command that makes those folders.
        build: ``build({kind: folders}) -> PaperTable`` (every kind of ``needs`` a key,
            folders in the order given, and every role of ``settings`` a key holding its one
            file); ``None``: not implemented yet.
        missing: for an unimplemented id, what is missing (one line).
        settings: the settings files it is made from (``table --settings``), one per role.
    """

    table_id: str
    title: str
    ref: str
    needs: tuple[Needs, ...]
    command: str
    build: Callable[[dict[str, list[Path]]], PaperTable] | None = None
    missing: str = ""
    settings: tuple[SettingsFile, ...] = ()

    @property
    def implemented(self) -> bool:
        return self.build is not None


_REGISTRY: dict[str, TableSpec] = {}


def register(spec: TableSpec) -> TableSpec:
    """Add ``spec`` (an id registered twice is a programming error: ``ValueError``)."""
    if spec.table_id in _REGISTRY:
        raise ValueError(f"table id {spec.table_id!r} registered twice")
    if spec.build is None and not spec.missing:
        raise ValueError(f"{spec.table_id}: an unimplemented id says what is missing")
    _REGISTRY[spec.table_id] = spec
    return spec


def _sort_key(table_id: str) -> tuple[str, int, str]:
    paper, _, rest = table_id.partition("-")
    digits = "".join(ch for ch in rest if ch.isdigit())
    return paper != "ioa", rest.startswith("fig"), int(digits or 0), rest


def all_specs() -> list[TableSpec]:
    """Every registered id: the IoA paper's first, then the belief study's; tables before figures, by number."""
    return [_REGISTRY[k] for k in sorted(_REGISTRY, key=_sort_key)]


def spec(table_id: str) -> TableSpec:
    """The spec of ``table_id``; :class:`TableError` for an unknown id."""
    try:
        return _REGISTRY[table_id]
    except KeyError:
        raise TableError(f"unknown table id {table_id!r}; 'ioa-synth table --list' shows them") from None


def sort_folders(s: TableSpec, folders: list[Path]) -> dict[str, list[Path]]:
    """``folders`` by kind (in the order given), checked against ``s.needs``.

    Raises:
        TableError: a folder given twice, a missing path, a folder of no kind or of a kind
            ``s`` does not take, or too few / too many of a kind.
    """
    if not s.needs:
        if folders:
            with_config = f"; give its settings with --settings FILE ({describe_needs(s)})" if s.settings else ""
            raise TableError(f"{s.table_id} is not made from results folders{with_config}")
        return {}
    wanted = {n.kind: n for n in s.needs}
    by_kind: dict[str, list[Path]] = {n.kind: [] for n in s.needs}
    seen: dict[Path, Path] = {}
    for folder in folders:
        if folder.resolve() in seen:
            raise TableError(f"{folder} is given twice ({seen[folder.resolve()]}); give each folder once")
        seen[folder.resolve()] = folder
    for folder in folders:
        if not folder.is_dir():
            raise TableError(f"{folder}: not a folder; {s.table_id} needs {describe_needs(s)}")
        kind = folder_kind(folder)
        if kind not in wanted:
            what = "a folder of no known kind" if kind is None else title(kind)
            raise TableError(f"{folder} is {what}; {s.table_id} needs {describe_needs(s)}")
        by_kind[kind].append(folder)
    for n in s.needs:
        got = len(by_kind[n.kind])
        if got < n.min or (n.max is not None and got > n.max):
            raise TableError(f"{s.table_id} needs {n.describe()} (got {got}); make them with: {s.command}")
    return by_kind


def sort_settings(s: TableSpec, files: list[Path]) -> dict[str, list[Path]]:
    """``{role: [file]}`` for every settings role of ``s``: the file given for it (told by its
    suffix), else the role's default.

    Raises:
        TableError: files given to an id without settings, a file of no role's suffix, two
            files of one role, a missing file (given, or the default outside a checkout).
    """
    if files and not s.settings:
        raise TableError(f"{s.table_id} reads no settings file (--settings); it needs {describe_needs(s)}")
    chosen: dict[str, Path] = {}
    for file in files:
        role = next((r for r in s.settings if file.name.lower().endswith(r.suffixes)), None)
        if role is None:
            raise TableError(f"--config {file}: {s.table_id} reads {describe_settings(s)}; told by the file name's "
                             f"ending ({', '.join(x for r in s.settings for x in r.suffixes)})")
        if role.role in chosen:
            raise TableError(f"--config {file}: a second {role.what} (the first: {chosen[role.role]}); give one")
        if not file.is_file():
            raise TableError(f"--config {file}: no such file")
        chosen[role.role] = file
    for role in s.settings:
        if role.role not in chosen:
            if not role.default.is_file():
                raise TableError(f"{s.table_id}: the default {role.default} is not here (it ships in the "
                                 f"repository's configs/, not in an installed package); give --config FILE")
            chosen[role.role] = role.default
    return {role: [path] for role, path in chosen.items()}


def describe_settings(s: TableSpec) -> str:
    """The settings files of ``s`` (``"a models config (JSON), default configs/..."``), or ``""``."""
    return " and ".join(r.describe() for r in s.settings)


def describe_needs(s: TableSpec) -> str:
    """What ``s`` needs: all kinds (``"1+ × ... and 0-1 × ..."``) and settings files, or
    ``"no results folder"``."""
    return " and ".join([*(n.describe() for n in s.needs), *(r.describe() for r in s.settings)]) or "no results folder"


def make_table(table_id: str, folders: list[Path], settings: list[Path] | None = None) -> PaperTable:
    """The table ``table_id`` made from ``folders`` and the ``settings`` files (``--settings``).

    Raises:
        TableError: unknown or unimplemented id, folders of another kind or count, settings
            files it does not read, or a folder or file its reader refuses (the reader's one line).
    """
    s = spec(table_id)
    if s.build is None:
        raise TableError(f"{table_id} is not implemented yet: {s.missing}")
    files = sort_settings(s, list(settings or []))  # before the folders: no catalog opened for a wrong --config
    return s.build({**sort_folders(s, folders), **files})
