"""Many ``UPDATE t SET ... WHERE key = ?`` statements of one batch as one statement.

A build stores each case's outcome as one keyed ``UPDATE cases ... WHERE case_id = ?``
(:mod:`ioa_synth.build.pipeline`), and DuckDB spends about a millisecond on every
``UPDATE`` statement whatever it changes: at one worker that was the largest part of a
batch commit. :func:`merged_update` turns a run of the same statement with different
parameters into one ``UPDATE t SET ... FROM (SELECT unnest(?) ...) v WHERE key = v.key``,
the lists of parameters bound column by column (as the batch inserts bind their rows).

The rewrite is exact only when no two of the statements update the same row (``UPDATE ...
FROM`` with a repeated key picks one source row at random): :func:`distinct_key_runs`
cuts a run where a key repeats, so that the statements of each part touch distinct rows
and the parts run in their order.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Sequence

#: ``UPDATE <table> SET <assignments> WHERE <key> = ?``: the key parameter last, no string
#: literal in the statement (its ``?`` are all parameters).
_KEYED = re.compile(r"\s*UPDATE\s+(\w+)\s+SET\s+([^'\"]+?)\s+WHERE\s+(\w+)\s*=\s*\?\s*;?\s*", re.IGNORECASE | re.DOTALL)
_SCALAR = (str, int, float, bool, type(None))


def keyed_table(sql: str) -> str | None:
    """The table of a statement :func:`merged_update` can merge (``None`` for any other)."""
    found = _KEYED.fullmatch(sql)
    return found.group(1) if found else None


def merged_update(sql: str, params: Sequence[Sequence[Any]]) -> tuple[str, list[list[Any]]] | None:
    """``(statement, lists)``: one statement doing what ``sql`` does once per parameter
    list of ``params`` (their keys all distinct), or ``None`` when ``sql`` is not a keyed
    update, a parameter list does not fit it, or a parameter is not a scalar (str, int,
    float, bool, None or a datetime)."""
    found = _KEYED.fullmatch(sql)
    if found is None or not params:
        return None
    table, assignments, key = found.groups()
    holes = assignments.count("?") + 1  # the SET parameters, then the key
    if any(len(p) != holes or not all(_scalar(v) for v in p) for p in params):
        return None
    names = iter(range(1, holes + 1))
    rewritten = re.sub(r"\?", lambda _: f"ioa_v.ioa_p{next(names)}", assignments)
    columns = ", ".join(f"unnest(?) AS ioa_p{i}" for i in range(1, holes + 1))
    statement = f"UPDATE {table} SET {rewritten} FROM (SELECT {columns}) AS ioa_v WHERE {key} = ioa_v.ioa_p{holes}"
    return statement, [list(col) for col in zip(*params)]


def distinct_key_runs(params: Sequence[Sequence[Any]]) -> Iterator[list[Sequence[Any]]]:
    """``params`` (each ending with its key) cut into consecutive runs of distinct keys."""
    run: list[Sequence[Any]] = []
    keys: set[Any] = set()
    for p in params:
        if p and p[-1] in keys:
            yield run
            run, keys = [], set()
        run.append(p)
        keys.add(p[-1] if p else None)
    if run:
        yield run


def _scalar(value: Any) -> bool:
    return isinstance(value, _SCALAR) or hasattr(value, "isoformat")
