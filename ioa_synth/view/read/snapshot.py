"""A results folder's catalog read around its writer: DuckDB lets one process write a
catalog and refuses a read-only open while that process holds it (and a reader holding it
would stop the next run from starting), so the viewer never opens ``catalog.duckdb`` itself.
It copies the catalog, its ``.wal`` and the run's journal (``catalog.journal``: rows written
but not yet committed, see :mod:`ioa_synth.runs.journal`) into a private temporary folder,
opens that copy once writable (which re-applies the journal, as after a killed run), and
reads it read-only from then on. A copy is kept until one of the three files changes (size
or mtime), so a finished folder is copied once and a running one on each reload.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ioa_synth.runs.catalog import CATALOG_FILE, Catalog, TableSet
from ioa_synth.runs.journal import JOURNAL_FILE

#: The files of a catalog, copied together.
FILES = (CATALOG_FILE, CATALOG_FILE + ".wal", JOURNAL_FILE)
#: Copies tried before giving up on a catalog that changes while it is copied.
TRIES = 5


class SnapshotError(RuntimeError):
    """The catalog could not be copied and opened (the message says why)."""


def _stamp(folder: Path) -> tuple:
    """``(name, size, mtime_ns)`` of each catalog file present: the copy's cache key."""
    out = []
    for name in FILES:
        try:
            st = (folder / name).stat()
        except FileNotFoundError:
            continue
        out.append((name, st.st_size, st.st_mtime_ns))
    return tuple(out)


@dataclass
class _Copy:
    stamp: tuple
    dir: Path
    catalog: Catalog


class Snapshots:
    """Read-only copies of the catalogs of several folders, one per folder, made again when
    the folder's catalog files change; :meth:`close` removes them all."""

    def __init__(self) -> None:
        self._root = Path(tempfile.mkdtemp(prefix="ioa-synth-view-"))
        self._copies: dict[Path, _Copy] = {}
        self._retired: dict[Path, _Copy] = {}
        self._lock = threading.Lock()
        self._n = 0

    def catalog(self, folder: Path, tables: Sequence[TableSet] = (),
                prepare: Callable[[Catalog], None] | None = None) -> Catalog | None:
        """The latest copy of ``folder``'s catalog (``None`` when it has none), with ``tables``
        (the capability's table sets) created or migrated in the copy, an index on every
        ``case_id`` column (a unit's rows are then found without a scan) and whatever
        ``prepare(catalog)`` adds to the copy (e.g. a summary table), run once per copy.

        Raises:
            SnapshotError: no consistent copy after :data:`TRIES` tries, or DuckDB refused it.
        """
        folder = Path(folder)
        with self._lock:
            stamp = _stamp(folder)
            if not any(name == CATALOG_FILE for name, *_ in stamp):
                return None
            known = self._copies.get(folder)
            if known is not None and known.stamp == stamp:
                return known.catalog
            copy = self._make(folder, stamp, tables, prepare)
            self._copies[folder] = copy
            if known is not None:  # closed one copy later: a request still reading it finishes
                old = self._retired.pop(folder, None)
                if old is not None:
                    old.catalog.close()
                    shutil.rmtree(old.dir, ignore_errors=True)
                self._retired[folder] = known
            return copy.catalog

    def snapshot_dir(self, folder: Path) -> Path | None:
        """The folder of the copy last made of ``folder``'s catalog."""
        known = self._copies.get(Path(folder))
        return known.dir if known else None

    def _make(self, folder: Path, stamp: tuple, tables: Sequence[TableSet],
              prepare: Callable[[Catalog], None] | None) -> _Copy:
        problem = "it kept changing"
        for attempt in range(TRIES):
            self._n += 1
            target = self._root / f"c{self._n}"
            target.mkdir()
            for name, *_ in stamp:
                try:
                    shutil.copy2(folder / name, target / name)
                except FileNotFoundError:  # the run ended (journal removed, WAL checkpointed) meanwhile
                    pass
            after = _stamp(folder)
            if after == stamp or attempt == TRIES - 1:
                try:
                    return _Copy(stamp, target, _open(target, tables, prepare))
                except Exception as exc:  # noqa: BLE001 - a torn copy: try again
                    problem = " ".join(str(exc).split())[:200]
            shutil.rmtree(target, ignore_errors=True)
            stamp = after
            time.sleep(0.05 * (attempt + 1))
        raise SnapshotError(f"{folder / CATALOG_FILE}: could not read a consistent copy ({problem})")

    def close(self) -> None:
        """Close every copy and remove the temporary folder."""
        with self._lock:
            for copy in (*self._copies.values(), *self._retired.values()):
                copy.catalog.close()
            self._copies.clear()
            self._retired.clear()
            shutil.rmtree(self._root, ignore_errors=True)


def _open(target: Path, tables: Sequence[TableSet], prepare: Callable[[Catalog], None] | None) -> Catalog:
    """Open the copy in ``target``: once writable (re-applying the journal's rows, indexing,
    ``prepare``), then read-only. A journal whose rows do not re-apply (one the run committed
    meanwhile, into a keyed table) is dropped: the copy then shows what the run has committed,
    at most a commit window (seconds) behind."""
    try:
        _ready(target, tables, prepare)
    except Exception:  # noqa: BLE001 - retried without the journal; a second failure is raised
        if not (target / JOURNAL_FILE).exists():
            raise
        (target / JOURNAL_FILE).unlink()
        _ready(target, tables, prepare)
    return Catalog(target, read_only=True, tables=tables)


def _ready(target: Path, tables: Sequence[TableSet], prepare: Callable[[Catalog], None] | None) -> None:
    with Catalog(target, tables=tables) as cat:  # re-applies the journal's rows
        _index(cat)
        if prepare is not None:
            prepare(cat)


def _index(cat: Catalog) -> None:
    """An index on ``case_id`` of every table that has one (in the copy only)."""
    for (table,) in cat.execute("SELECT table_name FROM information_schema.columns WHERE column_name = 'case_id' "
                                "AND table_name IN (SELECT table_name FROM information_schema.tables "
                                "WHERE table_type = 'BASE TABLE')"):
        cat.execute(f'CREATE INDEX IF NOT EXISTS "view_{table}_case_id" ON "{table}" (case_id)')
