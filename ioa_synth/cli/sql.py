"""``ioa-synth sql DIR "SELECT ..."``: query the catalog of any folder that holds one
(:data:`FOLDERS`) with what setup installs (no separate ``duckdb`` command needed)."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import typer

from ioa_synth.cli.app import app
from ioa_synth.cli.common import PANEL_SHARE, check_out_folder, fail
from ioa_synth.cli.options import json_option


#: Every kind of folder that holds a catalog.duckdb, for the help of DIR.
FOLDERS = ("A folder holding catalog.duckdb: a build directory (build, seeds), an 'evaluate', 'belief run' "
           "or 'collab run' results folder, a meeting session folder, the --out folder of 'train score' "
           "(ioa-reward), or the <stem>.calls folder beside the items file of 'belief items import' or 'belief screen'; or a folder of "
           "per-process catalogs (rank<N>/, worker<N>/: the training reward's), read as one")


@app.command(rich_help_panel=PANEL_SHARE)
def sql(
    out: Path = typer.Argument(..., metavar="DIR", help=FOLDERS),
    query: str = typer.Argument(..., metavar="QUERY", help='One SQL query, e.g. "SELECT status, count(*) FROM cases '
                                'GROUP BY 1"'),
    as_csv: bool = typer.Option(False, "--csv", help="Print CSV instead of a table"),
    as_json: bool = json_option("Print one JSON array of row objects instead of a table"),
) -> None:
    """Run one read-only SQL query on DIR/catalog.duckdb and print the result. DIR is any
    folder with a catalog (listed under DIR below). One SELECT statement; no other file is
    read or written: COPY, ATTACH, INSTALL, LOAD are refused."""
    import duckdb

    from contextlib import ExitStack

    from ioa_synth.runs.snapshot import reading

    if as_csv and as_json:
        fail("--csv and --json exclude each other")
    check_out_folder(out, "DIR")
    if not out.exists():  # worded as status and show word it
        fail(f"{out}: no such folder")
    opened = ExitStack()
    try:  # read-only without file access; while a run writes the folder, a copy of its catalog (as status)
        cat, snapshot = opened.enter_context(reading(out))
    except FileNotFoundError:
        cat, snapshot = opened.enter_context(_catalog_set(out)), False
    if snapshot:
        typer.echo("note: a run is writing this folder; the query reads a copy of its catalog, seconds behind",
                   err=True)
    with opened:
        try:
            columns, rows = cat.read_query(query)  # queries only, on a read-only connection without file access
        except ValueError as exc:
            fail(str(exc))
        except duckdb.CatalogException as exc:  # a table or column guessed wrong: say what there is
            fail(f"query failed: {exc}; tables here: {', '.join(_tables(cat))}")
        except duckdb.Error as exc:
            fail(f"query failed: {exc}")
    if as_csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
    elif as_json:
        typer.echo(json.dumps([dict(zip(columns, row)) for row in rows], default=str, ensure_ascii=False, indent=2))
    else:
        from rich.table import Table

        from ioa_synth.reports.output import wide_console

        table = Table(*columns, show_lines=False)
        for row in rows:
            table.add_row(*("NULL" if v is None else str(v) for v in row))
        wide_console().print(table)
        typer.echo(f"{len(rows)} row(s)", err=True)


def _catalog_set(out: Path):
    """The per-process catalogs under ``out`` read as one (a note names those in use)."""
    from ioa_synth.runs.catalog_set import CatalogSet, member_folders

    members = member_folders(out)
    if not members:
        fail(f"{out}: no catalog.duckdb here (not a build directory, results folder, meeting session or "
             "catalog folder)")
    cat = CatalogSet(members)
    if cat.busy:
        typer.echo(f"note: left out {', '.join(p.name for p in cat.busy)} (open in a running process)", err=True)
    if not cat.members:
        cat.close()
        fail(f"{out}: every catalog here is open in a running process ({', '.join(p.name for p in cat.busy)})")
    return cat


def _tables(cat: object) -> list[str]:
    """Names of the catalog's tables and views (``DESCRIBE tab`` shows a table's columns)."""
    _, rows = cat.read_query("SELECT DISTINCT table_name FROM information_schema.tables WHERE table_schema = 'main' "  # type: ignore[attr-defined]
                             "ORDER BY 1")
    return [r[0] for r in rows]
