"""DuckDB provenance catalog kept at ``DIR/catalog.duckdb``.

One :class:`Catalog` per process; every statement goes through one connection
guarded by a lock, so worker threads may share it. Each statement commits on its
own, so a ``kill -9`` loses at most the statement in flight.

Tables (columns beyond these may be added by later modules with ``ensure_table``):

- ``cases``: one row per case (seed tuple in a split); ``status`` in
  ``pending | accepted | discarded | failed``.
- ``llm_calls``: every request sent to an endpoint, with its reply or error.
- ``scores``: every rubric score given by a judge (build or audit).
- ``seeds``: the seed tuples a build used, as given.
- ``runs``: one row per command run, with the setup fingerprint.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Iterable, Sequence

import duckdb

CATALOG_FILE = "catalog.duckdb"

SCHEMA: dict[str, str] = {
    "cases": """
        case_id VARCHAR PRIMARY KEY, split VARCHAR, domain VARCHAR, task_type VARCHAR,
        seed_id VARCHAR, case_index INTEGER, status VARCHAR,
        stage1_attempts INTEGER DEFAULT 0, stage2_attempts INTEGER DEFAULT 0,
        path VARCHAR, discard_reason VARCHAR, error VARCHAR, updated_at TIMESTAMP
    """,
    "llm_calls": """
        call_id BIGINT, case_id VARCHAR, stage INTEGER, role VARCHAR, attempt INTEGER,
        try_index INTEGER, model VARCHAR, base_url VARCHAR, temperature DOUBLE,
        template_sha256 VARCHAR, request_json VARCHAR, response_text VARCHAR,
        finish_reason VARCHAR, prompt_tokens INTEGER, completion_tokens INTEGER,
        latency_ms DOUBLE, error VARCHAR, run_id VARCHAR, created_at TIMESTAMP
    """,
    "scores": """
        case_id VARCHAR, stage INTEGER, attempt INTEGER, judge_role VARCHAR, judge_model VARCHAR,
        item VARCHAR, dimension VARCHAR, score INTEGER, feedback VARCHAR, created_at TIMESTAMP
    """,
    "seeds": """
        seed_id VARCHAR, split VARCHAR, source VARCHAR, domain VARCHAR, task_type VARCHAR,
        title VARCHAR, abstract VARCHAR, seed_json VARCHAR, PRIMARY KEY (seed_id, split)
    """,
    "runs": """
        run_id VARCHAR PRIMARY KEY, command VARCHAR, args_json VARCHAR, fingerprint VARCHAR,
        fingerprint_json VARCHAR, toolkit_version VARCHAR, started_at TIMESTAMP,
        finished_at TIMESTAMP, summary_json VARCHAR
    """,
}


class Catalog:
    """Thread-safe handle on ``DIR/catalog.duckdb``.

    Args:
        out_dir: the build directory; created if missing.
        read_only: open without the write lock (for ``status``); raises
            ``FileNotFoundError`` when no catalog exists there.
    """

    def __init__(self, out_dir: str | Path, read_only: bool = False) -> None:
        self.out_dir = Path(out_dir)
        path = self.out_dir / CATALOG_FILE
        if read_only and not path.exists():
            raise FileNotFoundError(f"no catalog at {path}")
        if not read_only:
            self.out_dir.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        self._con = duckdb.connect(str(path), read_only=read_only)
        if not read_only:
            for name, cols in SCHEMA.items():
                self.ensure_table(name, cols)

    # -- low level -------------------------------------------------------------
    def ensure_table(self, name: str, columns_sql: str) -> None:
        """Create table ``name`` with ``columns_sql`` unless it exists."""
        with self._lock:
            self._con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns_sql})")

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple]:
        """Run one statement and return all rows (empty list for DML)."""
        with self._lock:
            cur = self._con.execute(sql, params or [])
            try:
                return cur.fetchall()
            except duckdb.Error:
                return []

    def query_dicts(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """Run a query and return rows as dicts keyed by column name."""
        with self._lock:
            cur = self._con.execute(sql, params or [])
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, row)) for row in cur.fetchall()]

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
            self._con.executemany(sql, [[r[c] for c in cols] for r in rows])

    def transaction(self):
        """Context manager: hold the lock and run the block in one transaction."""
        return _Transaction(self)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            try:
                self._con.close()
            except duckdb.Error:
                pass

    def __enter__(self) -> "Catalog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Transaction:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def __enter__(self) -> Catalog:
        self.catalog._lock.acquire()
        self.catalog._con.execute("BEGIN TRANSACTION")
        return self.catalog

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.catalog._con.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.catalog._lock.release()


def dumps(obj: Any) -> str:
    """Compact, key-sorted JSON used for every JSON column of the catalog."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
