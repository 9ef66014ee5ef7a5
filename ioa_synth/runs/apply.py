"""How the catalog's writer applies one batch of journal entries to DuckDB
(:meth:`~ioa_synth.runs.catalog.Catalog.record`): ``(table, row_dict)`` inserts gathered per
table, ``(None, (sql, params))`` statements in order."""

from __future__ import annotations

import re
from typing import Any

import duckdb

from ioa_synth.runs.journal import Entry
from ioa_synth.runs.keyed_updates import distinct_key_runs, keyed_table, merged_update


#: A statement entry that names its one table (it must read and write no other): only the
#: rows of that table queued before it have to be inserted before it runs.
_OWN_TABLE = re.compile(r"\s*(?:UPDATE\s+(\w+)\s+SET|DELETE\s+FROM\s+(\w+))\b", re.IGNORECASE)


def apply_batch(con: duckdb.DuckDBPyConnection, entries: list[Entry], types: dict[str, dict[str, str]] | None = None) -> None:
    """Execute a batch of entries with as few statements as order allows: DuckDB spends a
    fraction of a millisecond on every statement, whatever its size.

    Rows are gathered per table and inserted with one statement, as one list per column
    (``unnest``; binding 20 lists is much faster than a ``VALUES`` list of 20 parameters per
    row). Statements run in order; before each, the rows it may see are inserted: those of
    its own table for an ``UPDATE t SET`` / ``DELETE FROM t`` (:data:`_OWN_TABLE`), all of
    them for any other statement. A table's rows keep their order. A run of one keyed
    ``UPDATE t ... WHERE key = ?`` (a build's case statuses), with no row or other statement
    of ``t`` in between, runs as one statement (:mod:`ioa_synth.runs.keyed_updates`).
    ``types`` caches each table's column types (filled here)."""
    types = {} if types is None else types
    pending: dict[tuple[str, tuple[str, ...]], list[dict[str, Any]]] = {}

    def insert(only: str | None = None) -> None:
        for name, cols in [k for k in pending if only is None or k[0] == only]:
            rows = pending.pop((name, cols))
            if not set(cols) <= types.get(name, {}).keys():  # first use, or a column added since
                types[name] = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() "
                                               "WHERE table_name = ?", [name]).fetchall())
            lists = ", ".join(f"unnest(?::{types[name][c]}[])" for c in cols)
            con.execute(f"INSERT INTO {name} ({', '.join(cols)}) SELECT {lists}", [[r[c] for r in rows] for c in cols])

    held: list[Any] = []  # a run of one keyed UPDATE: [sql, table, [params, ...]]

    def run_held() -> None:
        if held:
            sql, _, params = held
            held.clear()
            for run in distinct_key_runs(params):
                merged = merged_update(sql, run) if len(run) > 1 else None
                for statement in [merged] if merged else [(sql, p) for p in run]:
                    con.execute(*statement)

    for table, payload in entries:
        if table is not None:
            if held and held[1] == table:  # the held statements must not see this row
                run_held()
            pending.setdefault((table, tuple(payload)), []).append(payload)
            continue
        if held and held[0] == payload[0]:
            held[2].append(payload[1])
            continue
        run_held()
        own = _OWN_TABLE.match(payload[0])
        insert(own and (own.group(1) or own.group(2)))
        keyed = keyed_table(payload[0])
        if keyed is not None:
            held.extend([payload[0], keyed, [payload[1]]])
        else:
            con.execute(*payload)
    run_held()
    insert()
