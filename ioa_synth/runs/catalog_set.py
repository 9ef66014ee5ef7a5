"""Several catalogs read as one. A DuckDB catalog has one writer process, so work spread over
processes (a trainer's ranks, a trainer's reward worker processes) keeps one catalog per
process, each in a member folder of one parent: ``PARENT/rank<N>/`` or ``PARENT/worker<N>/``
(:data:`MEMBER_PATTERN`). :class:`CatalogSet` attaches the members read-only to an in-memory
DuckDB and shows each table as one view over all of them (``UNION ALL BY NAME``, so members
written by different releases still line up), with a ``catalog`` column naming the member.

A member whose writer process is still running cannot be opened (DuckDB's file lock): it is
left out and listed in :attr:`CatalogSet.busy`. Rows a killed writer left in its journal
(``catalog.journal``) are not seen until a process opens that member for writing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

import duckdb

from ioa_synth.runs.catalog import CATALOG_FILE
from ioa_synth.runs.read_query import run_read_query
from ioa_synth.runs.folder_checks import CatalogUnusable
from ioa_synth.runs.recorder import CallKey

#: Names of the member folders of a catalog set (one per writer process).
MEMBER_PATTERN = re.compile(r"(rank|worker)\d+")


def member_folders(parent: Path) -> list[Path]:
    """The member folders under ``parent`` that hold a catalog, in numeric order."""
    if not parent.is_dir():
        return []
    found = [p for p in parent.iterdir() if p.is_dir() and MEMBER_PATTERN.fullmatch(p.name)
             and (p / CATALOG_FILE).is_file()]
    return sorted(found, key=lambda p: (re.sub(r"\d+", "", p.name), int(re.sub(r"\D", "", p.name))))


def is_member(folder: Path) -> bool:
    """Whether ``folder`` is named like a member folder (``rank3``, ``worker0``)."""
    return bool(MEMBER_PATTERN.fullmatch(Path(folder).name))


def _quoted(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


class CatalogSet:
    """The catalogs of ``folders`` read as one (read-only; no other file is read or written
    once opened).

    Raises:
        CatalogUnusable: a member's catalog cannot be read for another reason than a lock.
    """

    def __init__(self, folders: Sequence[Path]) -> None:
        self.members: list[Path] = []
        self.busy: list[Path] = []
        self._con = duckdb.connect(":memory:")
        tables: dict[str, list[str]] = {}
        try:
            for i, folder in enumerate(folders):
                alias = f"member{i}"
                try:
                    self._con.execute(f"ATTACH {_quoted(Path(folder) / CATALOG_FILE)} AS {alias} (READ_ONLY)")
                except duckdb.IOException as exc:
                    if "lock" in str(exc).lower():
                        self.busy.append(Path(folder))
                        continue
                    raise CatalogUnusable(f"cannot read {Path(folder) / CATALOG_FILE}: "
                                          f"{' '.join(str(exc).split())[:200]}") from exc
                self.members.append(Path(folder))
                for (name,) in self._con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ? "
                                                 "AND schema_name = 'main'", [alias]).fetchall():
                    tables.setdefault(name, []).append(f"SELECT {_quoted(Path(folder).name)} AS catalog, * "
                                                       f"FROM {alias}.main.{name}")
            for name, parts in sorted(tables.items()):
                self._con.execute(f'CREATE VIEW "{name}" AS ' + " UNION ALL BY NAME ".join(parts))
            self._con.execute("SET enable_external_access = false")
            self._con.execute("SET lock_configuration = true")
        except BaseException:
            self._con.close()
            raise
        self.tables = sorted(tables)

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple]:
        """Run one query over the views and return its rows."""
        return self._con.execute(sql, list(params or [])).fetchall()

    def read_query(self, sql: str) -> tuple[list[str], list[tuple]]:
        """Run one user-given query (as :meth:`ioa_synth.runs.catalog.Catalog.read_query`)."""
        return run_read_query(self._con, sql)

    def latest_ok(self) -> dict[CallKey, tuple[str, int]]:
        """``{CallKey: (response_text, try_index)}`` of the latest
        successful call per key over every member (what a resumed writer replays)."""
        if "llm_calls" not in self.tables:
            return {}
        rows = self.execute("SELECT case_id, stage, role, attempt, last(response_text ORDER BY created_at), "
                            "last(try_index ORDER BY created_at) FROM llm_calls WHERE error IS NULL GROUP BY ALL")
        return {CallKey(c, s, r, a): (text, tries) for c, s, r, a, text, tries in rows}

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> "CatalogSet":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sibling_calls(folder: Path) -> dict[CallKey, tuple[str, int]]:
    """For a member folder, :meth:`CatalogSet.latest_ok` of the other members of its set
    (those not open in a live process): a process resuming in its own member replays the
    calls every process stored, in this run or earlier ones. Empty for any other folder."""
    folder = Path(folder)
    if not is_member(folder):
        return {}
    others = [f for f in member_folders(folder.parent) if f.resolve() != folder.resolve()]
    if not others:
        return {}
    with CatalogSet(others) as siblings:
        return siblings.latest_ok()
