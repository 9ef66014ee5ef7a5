"""``ioa-synth status --out DIR|RESULTS``: where a build directory or an ``evaluate``
results folder stands, with the estimate its run started from beside what was spent."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ioa_synth.cli.app import app
from ioa_synth.cli.common import PANEL_BUILD, fail, folder_kind_of, status_dir_callback
from ioa_synth.cli.options import json_option


@app.command(rich_help_panel=PANEL_BUILD)
def status(
    out: Path = typer.Option(..., "--out", help="A build directory, or the results folder of an 'evaluate' run",
                             callback=status_dir_callback),
    as_json: bool = json_option(),
) -> None:
    """Show where a build directory or an evaluate results folder stands.

    A build directory: cases per split and cell, θ pass rates, discard reasons, judge
    health, tokens per component. An evaluate results folder: cases done / total, failed
    cases, tokens per component. Both: the estimate the run started from beside what was
    spent since, per component.
    """
    from ioa_synth.reports.output import wide_console

    if folder_kind_of(out) == "evaluate":
        from ioa_synth.evaluate.status import results_status, results_status_tables
        from ioa_synth.runs.manifest import ManifestError

        try:
            report = results_status(out)
        except ManifestError as exc:
            fail(str(exc))
        tables = results_status_tables(report)
    else:
        from ioa_synth.build.status import status_report, status_tables
        from ioa_synth.build.tables import BUILD_TABLES
        from ioa_synth.runs.catalog import Catalog

        try:
            cat = Catalog(out, read_only=True, tables=[BUILD_TABLES])
        except FileNotFoundError:
            fail(f"{out}: no catalog.duckdb here (not a build directory nor an evaluate results folder)")
        with cat:
            report = status_report(cat)
        tables = None
    if as_json:
        typer.echo(json.dumps(report, indent=2, default=str))
        return
    console = wide_console()
    for table in tables if tables is not None else status_tables(report):
        if isinstance(table, str):
            console.print(table, soft_wrap=True, markup=False, highlight=False)
        else:
            console.print(table)

