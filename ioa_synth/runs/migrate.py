"""Bringing a catalog's tables to this release on open (:class:`~ioa_synth.runs.schema.TableSet`).

Writable open: every registered table set gets its missing tables, the migrations past the
version stored in ``catalog_meta`` (one transaction: a catalog is migrated entirely or not
at all), its views, and its new version. A catalog that existed before ``catalog_meta`` did
is at version 1 in every table set, and so is a table set that a catalog of a later release
has never seen: each migration touches only rows it has not migrated yet, so running one on
rows written by a newer release changes nothing. A table set stored at a newer version than
this release knows is refused (one line naming the versions).

A journal left by a killed run is applied before the migrations (the catalog's version is
checked first), so the rows it holds are migrated with the others.

Read-only open: nothing in the file changes; a registered table the catalog lacks is
created as an empty temporary table (a build's readers see no cases in a folder made by the
seed commands only, as before the tables were registered per capability).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import duckdb

from ioa_synth import __version__
from ioa_synth.runs.folder_checks import CatalogUnusable, shown_path
from ioa_synth.runs.schema import META_COLUMNS, META_TABLE, TableSet


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {name for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall()}


def stored_versions(con: duckdb.DuckDBPyConnection) -> dict[str, int] | None:
    """``{part: version}`` from ``catalog_meta``; ``None`` when the catalog has no such table."""
    if META_TABLE not in _tables(con):
        return None
    return dict(con.execute(f"SELECT part, version FROM {META_TABLE}").fetchall())


def check_versions(con: duckdb.DuckDBPyConnection, path: Path, sets: Sequence[TableSet]) -> None:
    """Refuse a catalog in which one of ``sets`` is stored at a newer version than this release's.

    Raises:
        CatalogUnusable: naming the table set, its stored version and the release's.
    """
    stored = stored_versions(con) or {}
    for ts in sets:
        have = stored.get(ts.part)
        if have is not None and have > ts.version:
            raise CatalogUnusable(
                f"{shown_path(path)} was written by a newer ioa-synth (its {ts.part} tables are at catalog version "
                f"{have}; ioa-synth {__version__} knows up to version {ts.version}); upgrade ioa-synth to use it")


def prepare_tables(con: duckdb.DuckDBPyConnection, sets: Sequence[TableSet], read_only: bool) -> None:
    """Create, migrate and version ``sets`` in the catalog (see the module doc); call
    :func:`check_versions` first."""
    existing = _tables(con)
    if read_only:
        for ts in sets:
            for name, columns in ts.tables.items():
                if name not in existing:
                    con.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name} ({columns})")
        return
    stored = stored_versions(con) or {}
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(f"CREATE TABLE IF NOT EXISTS {META_TABLE} ({META_COLUMNS})")
        for ts in sets:
            # a table set this catalog has not versioned: fresh in a new catalog, else from version 1
            have = stored.get(ts.part, 1 if existing else ts.version)
            for name, columns in ts.tables.items():
                con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns})")
            for migration in ts.migrations:
                if migration.version > have:
                    for statement in migration.statements:
                        con.execute(statement)
            for view in ts.views:
                con.execute(view)
            if stored.get(ts.part) != ts.version:
                con.execute(f"INSERT OR REPLACE INTO {META_TABLE} VALUES (?, ?, ?)",
                            [ts.part, ts.version, datetime.now(timezone.utc).replace(tzinfo=None)])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
