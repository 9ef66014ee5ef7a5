"""Read a catalog that a run is writing (``status`` of a running run, ``ioa-synth view``).

DuckDB allows one process to hold a database file open for writing, and a read-only open
by another process is refused while it does (a reader holding it would also stop the next
run from starting). A snapshot copies ``catalog.duckdb``, its write-ahead log and the
journal of the writing run (``catalog.journal``: rows written but not yet committed,
:mod:`ioa_synth.runs.journal`) into a private temporary folder and opens the copy once
writable, the way a resumed run would (the journal's rows are applied to it), then
read-only. What is read is the state of the run at the moment of the copy, including the
rows of its last seconds; the running process is never touched (the files are only read).

- :func:`reading` opens a folder's catalog read-only when it can and a snapshot only while
  another process holds it (``status``).
- :class:`Snapshots` keeps one snapshot per folder until one of the three files changes
  (size or mtime), so a finished folder is copied once and a running one on each reload
  (the viewer, which never opens ``catalog.duckdb`` itself); a caller's ``prepare`` hook adds
  to each copy what it reads often (indexes, summary tables).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from ioa_synth.runs.catalog import CATALOG_FILE, Catalog, CatalogLocked, CatalogUnusable
from ioa_synth.runs.journal import JOURNAL_FILE
from ioa_synth.runs.schema import TableSet

#: The files of a catalog, copied together.
FILES = (CATALOG_FILE, CATALOG_FILE + ".wal", JOURNAL_FILE)
#: Copies tried before giving up on a catalog that changes while it is copied (a copy taken
#: while the writer checkpoints may be torn).
TRIES = 5

#: What a caller adds to a writable copy before it is read (run once per copy).
Prepare = Callable[[Catalog], None]


class SnapshotError(CatalogUnusable):
    """The catalog could not be copied and opened (the message says why)."""


@contextmanager
def reading(folder: str | Path, tables: Sequence[TableSet] = ()) -> Iterator[tuple[Catalog, bool]]:
    """``(catalog, snapshot)``: the folder's catalog opened read-only, or, while another
    process holds it, a snapshot of it (``snapshot`` is then ``True``); the snapshot's
    temporary folder is removed on exit.

    Raises:
        FileNotFoundError: no catalog in ``folder``.
        CatalogUnusable: the catalog (or every copy of it, :class:`SnapshotError`) cannot be read.
    """
    folder = Path(folder)
    try:
        cat = Catalog(folder, read_only=True, tables=tables)
    except CatalogLocked:
        pass
    else:
        with cat:
            yield cat, False
        return
    snaps = Snapshots(prefix="ioa-status-")
    try:
        cat = snaps.catalog(folder, tables)
        if cat is None:  # the run ended and took its catalog away meanwhile
            raise FileNotFoundError(folder / CATALOG_FILE)
        yield cat, True
    finally:
        snaps.close()


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
    the folder's catalog files change, under a temporary folder named ``prefix``…;
    :meth:`close` removes them all. Thread-safe."""

    def __init__(self, prefix: str = "ioa-synth-snapshot-") -> None:
        self._root = Path(tempfile.mkdtemp(prefix=prefix))
        self._copies: dict[Path, _Copy] = {}
        self._retired: dict[Path, _Copy] = {}
        self._lock = threading.Lock()
        self._n = 0

    def catalog(self, folder: Path, tables: Sequence[TableSet] = (), prepare: Prepare | None = None) -> Catalog | None:
        """The latest copy of ``folder``'s catalog (``None`` when it has none), with ``tables``
        (the capability's table sets) created or migrated in the copy and whatever
        ``prepare(catalog)`` adds to the copy (e.g. indexes, a summary table), run once per copy.

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

    def _make(self, folder: Path, stamp: tuple, tables: Sequence[TableSet], prepare: Prepare | None) -> _Copy:
        problem = "it kept changing"
        for attempt in range(TRIES):
            self._n += 1
            target = self._root / f"c{self._n}"
            target.mkdir()
            # the database first, then the journal: the journal keeps every row of the running
            # run until it closes, so whatever the database lacks is in the later copy
            for name, *_ in stamp:
                try:
                    shutil.copy2(folder / name, target / name)
                except FileNotFoundError:  # the run ended (journal removed, WAL checkpointed) meanwhile
                    pass
            after = _stamp(folder)
            if after == stamp or attempt == TRIES - 1:
                try:
                    copy = _open(target, tables, prepare)
                    copy.home = folder  # its records are the folder's, not the copy's
                    return _Copy(stamp, target, copy)
                except Exception as exc:  # noqa: BLE001 - a torn copy fails in DuckDB's or the journal's own ways
                    problem = " ".join(str(exc).split())[:200]
            shutil.rmtree(target, ignore_errors=True)
            stamp = after
            time.sleep(0.05 * (attempt + 1))
        raise SnapshotError(f"cannot read {folder / CATALOG_FILE}: no consistent copy of it could be opened "
                            f"({problem})")

    def close(self) -> None:
        """Close every copy and remove the temporary folder."""
        with self._lock:
            for copy in (*self._copies.values(), *self._retired.values()):
                copy.catalog.close()
            self._copies.clear()
            self._retired.clear()
            shutil.rmtree(self._root, ignore_errors=True)


def _open(target: Path, tables: Sequence[TableSet], prepare: Prepare | None) -> Catalog:
    """Open the copy in ``target``: once writable (re-applying the journal's rows, then
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


def _ready(target: Path, tables: Sequence[TableSet], prepare: Prepare | None) -> None:
    with Catalog(target, tables=tables) as cat:  # writable: re-applies the journal's rows, as a resume does
        if prepare is not None:
            prepare(cat)
