"""One user-given SQL query on a catalog, read-only (``ioa-synth sql``, :meth:`Catalog.read_query`,
:class:`~ioa_synth.runs.catalog_set.CatalogSet`)."""

from __future__ import annotations

import duckdb

#: DuckDB statement types :meth:`Catalog.read_query` runs (``SHOW``/``DESCRIBE`` parse as SELECT).
READ_STATEMENTS = ("SELECT", "EXPLAIN")


def run_read_query(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[list[str], list[tuple]]:
    """Run one user-given query on ``con`` (read-only, without external access):
    ``(column names, rows)``; only :data:`READ_STATEMENTS` run.

    Raises:
        ValueError: ``sql`` is not exactly one statement (the message gives the count) or
            not a query.
        duckdb.Error: DuckDB refused or failed the statement.
    """
    statements = con.extract_statements(sql)
    if len(statements) != 1:
        raise ValueError(f"give exactly one SQL statement (got {len(statements)})")
    kind = statements[0].type.name
    if kind not in READ_STATEMENTS:
        raise ValueError(f"only queries are allowed here ({', '.join(READ_STATEMENTS)}); "
                         f"this is {'an' if kind[:1] in 'AEIOU' else 'a'} {kind} statement")
    cur = con.execute(sql)
    columns = [d[0] for d in cur.description or []]
    return columns, cur.fetchall() if columns else []
