"""The table ids of both papers: what each needs and, once implemented, how it is made.

Each id is one :class:`TableSpec`; a module of this package registers its ids at import
(:func:`register`). :func:`make_table` checks the folders against the spec's
:class:`Needs` (kind by :func:`ioa_synth.runs.folder_kinds.folder_kind`, how many) and
calls the spec's ``build`` on them. Every problem is a :class:`TableError` whose message
is one line.
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
            folders in the order given); ``None``: not implemented yet.
        missing: for an unimplemented id, what is missing (one line).
    """

    table_id: str
    title: str
    ref: str
    needs: tuple[Needs, ...]
    command: str
    build: Callable[[dict[str, list[Path]]], PaperTable] | None = None
    missing: str = ""

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
        raise TableError(f"{s.table_id} is not made from results folders")
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


def describe_needs(s: TableSpec) -> str:
    """What ``s`` needs, all kinds (``"1+ × ... and 0-1 × ..."``), or ``"no results folder"``."""
    return " and ".join(n.describe() for n in s.needs) or "no results folder"


def make_table(table_id: str, folders: list[Path]) -> PaperTable:
    """The table ``table_id`` made from ``folders``.

    Raises:
        TableError: unknown or unimplemented id, folders of another kind or count, or a
            folder its capability's reader refuses (the reader's one line).
    """
    s = spec(table_id)
    if s.build is None:
        raise TableError(f"{table_id} is not implemented yet: {s.missing}")
    return s.build(sort_folders(s, folders))
