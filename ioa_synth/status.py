"""Summaries of a build directory: per split and cell, counts by status (``status``,
and the table printed at the end of ``build``)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from .catalog import Catalog

STATUSES = ("accepted", "discarded", "failed", "pending")


def cell_counts(catalog: Catalog, split: str | None = None) -> list[dict[str, Any]]:
    """Rows ``{split, domain, task_type, accepted, discarded, failed, pending, total}``
    ordered by split, domain, task type."""
    where, params = ("WHERE split = ?", [split]) if split else ("", [])
    rows = catalog.query_dicts(
        "SELECT split, domain, task_type, "
        + ", ".join(f"count(*) FILTER (WHERE status = '{s}') AS {s}" for s in STATUSES)
        + f", count(*) AS total FROM cases {where} GROUP BY ALL ORDER BY split, domain, task_type", params)
    return rows


def cell_table(rows: list[dict[str, Any]], title: str = "Cases per cell") -> Table:
    """A rich table of :func:`cell_counts` rows with a total line."""
    table = Table(title=title)
    for col in ("split", "domain", "task_type", *STATUSES, "total"):
        table.add_column(col, justify="right" if col in (*STATUSES, "total") else "left")
    for r in rows:
        table.add_row(r["split"], r["domain"], r["task_type"], *(str(r[c]) for c in (*STATUSES, "total")))
    if rows:
        table.add_section()
        table.add_row("all", "", "", *(str(sum(r[c] for r in rows)) for c in (*STATUSES, "total")))
    return table


def status_report(catalog: Catalog) -> dict[str, Any]:
    """Machine-readable status: ``{"cells": [...], "totals": {status: n}, "tokens": {...}}``."""
    cells = cell_counts(catalog)
    totals = {s: sum(r[s] for r in cells) for s in (*STATUSES, "total")}
    tok = catalog.query_dicts(
        "SELECT role, count(*) AS calls, coalesce(sum(prompt_tokens), 0) AS prompt_tokens, "
        "coalesce(sum(completion_tokens), 0) AS completion_tokens FROM llm_calls GROUP BY role ORDER BY role")
    return {"cells": cells, "totals": totals, "tokens": tok}
