"""DuckDB provenance catalog kept at ``DIR/catalog.duckdb``.

One :class:`Catalog` per process; every statement goes through one connection
guarded by a lock, so worker threads may share it.

Hot-path writes (LLM calls, scores, status updates) go through :meth:`Catalog.record`:
the rows are appended to ``catalog.journal`` (flushed to the OS, so they survive a
``kill -9`` of the process) and committed to DuckDB in batches by a writer thread
(one transaction per batch instead of one per call). Any read, and closing, first
commits what is queued; opening a catalog re-applies a journal left by a killed run.

The runs layer's tables (``llm_calls``, ``runs``, ``catalog_meta``) and the encoding of JSON
columns are in :mod:`ioa_synth.runs.schema`; a capability passes its own tables when it opens
its catalog (``Catalog(out_dir, tables=[BUILD_TABLES])``), and :mod:`ioa_synth.runs.migrate`
creates them and migrates a catalog of an earlier release in place. The folder checks made before opening and the errors of a catalog that cannot be opened in
:mod:`ioa_synth.runs.folder_checks`, and how a batch is applied in :mod:`ioa_synth.runs.apply`;
their names stay importable from here.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import duckdb

from ioa_synth.runs.apply import apply_batch
from ioa_synth.runs.folder_checks import CatalogLocked, CatalogUnusable, check_utf8, check_writable, shown_path
from ioa_synth.runs.journal import JOURNAL_FILE, Entry, Journal
from ioa_synth.runs.migrate import check_versions, prepare_tables
from ioa_synth.runs.read_query import READ_STATEMENTS, run_read_query
from ioa_synth.runs.schema import META_TABLE, RUNS_TABLES, TableSet, dumps

__all__ = ["CATALOG_FILE", "READ_STATEMENTS", "Catalog", "CatalogLocked", "CatalogUnusable", "TableSet",
           "check_utf8", "check_writable", "dumps", "shown_path"]

CATALOG_FILE = "catalog.duckdb"

class Catalog:
    """Thread-safe handle on ``DIR/catalog.duckdb``.

    Args:
        out_dir: the build directory; created if missing.
        read_only: open for reading only (for ``status``).
        external_access: with ``False`` the connection reads and writes no file but the
            catalog (DuckDB's ``enable_external_access``); default: ``False`` when
            ``read_only``.
        tables: the opening capability's table sets (e.g. the build's ``cases``,
            ``scores``, ``seeds``), besides the runs layer's own (``llm_calls``, ``runs``):
            created and migrated when writable, seen as empty temporary tables when
            ``read_only`` and missing from the file.

    A catalog this handle created is removed again on :meth:`close` when nothing was
    stored in it (a run that stopped at its setup leaves no empty catalog), and so are the
    folders it created for it, when left empty.

    Raises:
        FileNotFoundError: ``read_only`` and no catalog exists there.
        CatalogLocked: another process has the catalog open.
        CatalogUnusable: the folder cannot be written, the path is not valid UTF-8, or
            the catalog was written by a newer release (its table versions are higher).
    """

    def __init__(self, out_dir: str | Path, read_only: bool = False, external_access: bool | None = None,
                 tables: Sequence[TableSet] = ()) -> None:
        self.out_dir = Path(out_dir)
        #: the folder this catalog describes, whose files (records) it names: ``out_dir``, or
        #: for a snapshot copy (:mod:`ioa_synth.runs.snapshot`) the folder it was copied from
        self.home = self.out_dir
        path = self.out_dir / CATALOG_FILE
        check_utf8(path)
        if read_only and not path.exists():
            raise FileNotFoundError(f"no catalog at {path}")
        self._made: list[Path] = []  # what this handle created: folders, then the catalog
        if not read_only:
            check_writable(self.out_dir)
            self._make_folder()
            if not path.exists():
                self._made.append(path)
        self.path = path
        self.read_only = read_only
        self._external_access = external_access = not read_only if external_access is None else external_access
        self._lock = threading.RLock()
        config: dict[str, Any] = {} if external_access else {"enable_external_access": False}
        if not read_only:
            # a run's catalog takes small batches: with DuckDB's pool of one thread per core, its
            # idle workers woke for every commit and spent more CPU than the commit itself
            config["threads"] = 1
        try:
            self._con = duckdb.connect(str(path), read_only=read_only, config=config)
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():
                raise CatalogLocked(f"{path} is in use by another ioa-synth process; wait for it to finish") from exc
            self._remove_made()
            why = ' '.join(str(exc).split())[:200]
            if read_only:  # a reader never writes: the file itself is the problem
                raise CatalogUnusable(f"cannot read {path}: the catalog is damaged or not a DuckDB file ({why})") \
                    from exc
            raise CatalogUnusable(f"cannot write {path}: {why}") from exc
        self._journal: Journal | None = None
        self._column_types: dict[str, dict[str, str]] = {}
        self._in_tx = False
        sets = [RUNS_TABLES, *tables]
        try:
            if read_only:
                prepare_tables(self._con, sets, read_only)
            else:
                check_versions(self._con, path, sets)
                journal = Journal(self.out_dir / JOURNAL_FILE, self._commit_batch, self._lock)
                with self._lock:
                    if path in self._made:  # a new catalog: its tables, then any journal found beside it
                        prepare_tables(self._con, sets, read_only)
                        journal.recover(self._apply_recovered)
                    else:  # a killed run's rows go into the tables as it left them, so the migrations see them
                        journal.recover(self._apply_recovered)
                        prepare_tables(self._con, sets, read_only)
                self._journal = journal
        except BaseException:
            self._con.close()
            self._remove_made()
            raise

    # -- write-behind ------------------------------------------------------------
    def record(self, entries: list[Entry], sync: tuple[Path, ...] | list[Path] = ()) -> None:
        """Queue rows and statements for the next batch commit; returns once they are in
        the journal (safe against a process kill). ``entries`` are ``(table, row_dict)``
        inserts and ``(None, (sql, params))`` statements, applied in order. The files
        ``sync`` (written without fsync) are fsynced before that commit."""
        assert self._journal is not None, "catalog opened read-only"
        self._journal.append(entries, sync)

    def record_now(self, entries: list[Entry]) -> None:
        """Like :meth:`record`, but ahead of what :meth:`record_later` left that the writer
        has not journaled yet, so the caller waits for no other thread's entries
        (:meth:`~ioa_synth.runs.journal.Journal.append_now`): for rows nothing queued earlier
        must precede, such as a model call's own rows."""
        assert self._journal is not None, "catalog opened read-only"
        self._journal.append_now(entries)

    def record_later(self, make: Callable[[], list[Entry]], sync: tuple[Path, ...] | list[Path] = ()) -> None:
        """Like :meth:`record` for the entries ``make()`` returns (and the files ``sync``),
        but made and journaled by the writer thread moments later, off the caller's path
        (:meth:`~ioa_synth.runs.journal.Journal.append_later`); a later :meth:`record`
        or read sees them first."""
        assert self._journal is not None, "catalog opened read-only"
        self._journal.append_later(make, sync)

    def flush(self) -> None:
        """Commit everything queued by :meth:`record` now (not inside a transaction())."""
        if self._journal is not None:
            with self._lock:
                if not self._in_tx:
                    self._journal.drain()

    def _commit_batch(self, entries: list[Entry]) -> None:
        with self._lock:
            self._con.execute("BEGIN TRANSACTION")
            try:
                apply_batch(self._con, entries, self._column_types)
                self._con.execute("COMMIT")
            except BaseException:
                self._con.execute("ROLLBACK")
                raise

    def _apply_recovered(self, entries: list[Entry]) -> None:
        """Re-apply a killed run's journal: inserts whose ``call_id`` is already stored are
        skipped (their batch was committed); statements are idempotent."""
        ids = [row["call_id"] for table, row in entries if table and "call_id" in row]
        done = {r[0] for r in self._con.execute(
            "SELECT call_id FROM llm_calls WHERE list_contains(?, call_id)", [ids]).fetchall()} if ids else set()
        self._commit_batch([(t, r) for t, r in entries if not (t and r.get("call_id") in done)])

    # -- low level -------------------------------------------------------------
    def ensure_table(self, name: str, columns_sql: str) -> None:
        """Create table ``name`` with ``columns_sql`` unless it exists."""
        with self._lock:
            self._con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns_sql})")

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple]:
        """Run one statement and return all rows (empty list for DML)."""
        with self._lock:
            self.flush()
            cur = self._con.execute(sql, params or [])
            try:
                return cur.fetchall()
            except duckdb.Error:
                return []

    def query_dicts(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """Run a query and return rows as dicts keyed by column name."""
        with self._lock:
            self.flush()
            cur = self._con.execute(sql, params or [])
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, row)) for row in cur.fetchall()]

    def read_query(self, sql: str) -> tuple[list[str], list[tuple]]:
        """Run one user-given SQL statement on a catalog opened ``read_only`` (DuckDB then
        refuses writes to the catalog) without external access (no other file is read or
        written): ``(column names, rows)``, both empty for a statement without a result.
        Only queries run (:data:`READ_STATEMENTS`); COPY, EXPORT, ATTACH, INSTALL, LOAD,
        SET and the like are refused before DuckDB sees them.

        Raises:
            ValueError: the catalog is writable or has external access, ``sql`` is not
                exactly one statement (the message gives the count) or not a query.
            duckdb.Error: DuckDB refused or failed the statement.
        """
        if not self.read_only or self._external_access:
            raise ValueError("read_query needs a catalog opened read_only without external access")
        with self._lock:
            return run_read_query(self._con, sql)

    def insert(self, table: str, row: dict[str, Any]) -> None:
        """Insert one row given as a column -> value dict."""
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        self.execute(f"INSERT INTO {table} ({cols}) VALUES ({marks})", list(row.values()))

    def insert_many(self, table: str, rows: Iterable[dict[str, Any]]) -> None:
        """Insert rows (all with the same keys) in one transaction."""
        rows = list(rows)
        if not rows:
            return
        cols = list(rows[0])
        sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})"
        with self._lock:
            self.flush()
            self._con.executemany(sql, [[r[c] for c in cols] for r in rows])

    def transaction(self):
        """Context manager: hold the lock and run the block in one transaction."""
        return _Transaction(self)

    def close(self) -> None:
        """Commit what is queued, remove the journal, close the connection (idempotent);
        remove the catalog again if this handle created it and nothing was stored."""
        journal, self._journal = self._journal, None
        committed = False
        try:
            if journal is not None:
                journal.close()  # not under self._lock: the writer thread may be waiting for it
            committed = True
        finally:  # the connection closes even when the last commit failed (its journal stays)
            with self._lock:
                empty = committed and bool(self._made) and self._is_empty()
                try:
                    self._con.close()
                except duckdb.Error:
                    pass
                if empty:
                    self._remove_made()
                self._made = []

    def _make_folder(self) -> None:
        """Create ``out_dir`` (and missing parents), noting what was created; a folder that
        cannot be created or written raises :class:`CatalogUnusable`."""
        missing = [p for p in (self.out_dir, *self.out_dir.parents) if not p.exists()]
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self._made += sorted(missing, key=lambda p: len(p.parts))
        except OSError as exc:
            self._remove_made()
            where = shown_path(exc.filename or self.out_dir)
            raise CatalogUnusable(f"cannot write in {where}: {exc.strerror or exc}") from None

    def _is_empty(self) -> bool:
        try:
            tables = [t for (t,) in self._con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary "
                                                      "AND table_name <> ?", [META_TABLE]).fetchall()]
            return not any(self._con.execute(f'SELECT 1 FROM "{t}" LIMIT 1').fetchall() for t in tables)
        except duckdb.Error:
            return False

    def _remove_made(self) -> None:
        """Remove what this handle created, newest first; folders only when empty."""
        for p in reversed(self._made):
            try:
                if p.is_dir():
                    p.rmdir()
                else:
                    for extra in (p, p.with_name(p.name + ".wal")):
                        extra.unlink(missing_ok=True)
            except OSError:
                break
        self._made = []

    def __enter__(self) -> "Catalog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Transaction:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def __enter__(self) -> Catalog:
        self.catalog._lock.acquire()
        self.catalog.flush()
        self.catalog._con.execute("BEGIN TRANSACTION")
        self.catalog._in_tx = True
        return self.catalog

    def __exit__(self, exc_type, exc, tb) -> None:
        self.catalog._in_tx = False
        try:
            self.catalog._con.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.catalog._lock.release()
