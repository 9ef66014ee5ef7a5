"""Read a catalog that a run is writing (``status`` of a running build or study).

DuckDB allows one process to hold a database file open for writing, and a read-only open
by another process is refused while it does. :func:`reading` opens a folder's catalog
read-only when it can; when another process holds it, it copies ``catalog.duckdb``, its
write-ahead log and the journal of the writing run (``catalog.journal``,
:mod:`ioa_synth.runs.journal`) to a temporary folder and opens the copy the way a resumed
run would: the journal's rows not yet committed are applied to it. What is read is the
state of the run at the moment of the copy, including the rows of its last seconds; the
running process is never touched (the files are only read).
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from ioa_synth.runs.catalog import CATALOG_FILE, Catalog, CatalogLocked, CatalogUnusable
from ioa_synth.runs.journal import JOURNAL_FILE
from ioa_synth.runs.schema import TableSet

#: Copies tried before giving up: a copy taken while the writer checkpoints may be torn.
COPY_TRIES = 3


@contextmanager
def reading(folder: str | Path, tables: Sequence[TableSet] = ()) -> Iterator[tuple[Catalog, bool]]:
    """``(catalog, snapshot)``: the folder's catalog opened read-only, or, while another
    process holds it, a snapshot of it (``snapshot`` is then ``True``); the snapshot's
    temporary folder is removed on exit.

    Raises:
        FileNotFoundError: no catalog in ``folder``.
        CatalogUnusable: the catalog (or every copy of it) cannot be read.
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
    with tempfile.TemporaryDirectory(prefix="ioa-status-") as tmp:
        with _snapshot(folder, Path(tmp), tables) as cat:
            yield cat, True


@contextmanager
def _snapshot(folder: Path, tmp: Path, tables: Sequence[TableSet]) -> Iterator[Catalog]:
    error: Exception | None = None
    for attempt in range(COPY_TRIES):
        copy = tmp / f"copy{attempt}"
        copy.mkdir()
        # the database first, then the journal: the journal keeps every row of the running
        # run until it closes, so whatever the database lacks is in the later copy
        for name in (CATALOG_FILE, CATALOG_FILE + ".wal", JOURNAL_FILE):
            try:
                shutil.copyfile(folder / name, copy / name)
            except FileNotFoundError:
                if name == CATALOG_FILE:
                    raise
        try:
            cat = Catalog(copy, tables=tables)  # writable: re-applies the journal, as a resume does
        except Exception as exc:  # noqa: BLE001 - a torn copy fails in DuckDB's or the journal's own ways
            error = exc
            continue
        with cat:
            yield cat
        return
    raise CatalogUnusable(f"cannot read {folder / CATALOG_FILE} while a run writes it: {error}")
