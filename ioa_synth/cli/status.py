"""``ioa-synth status --out FOLDER``: where any folder the toolkit writes stands (a build
directory, the results folder of evaluate, belief run, collab run or train's reward, a
live-meeting session, an export), with the estimate its run started from beside what was
spent. A folder a run is writing is read too, from a copy of its catalog and journal
(:mod:`ioa_synth.runs.snapshot`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from ioa_synth.cli.app import app
from ioa_synth.cli.common import PANEL_BUILD, fail, status_dir_callback, warn_unreadable_manifest
from ioa_synth.cli.options import json_option


def _kind_of(out: Path) -> tuple[str, str] | None:
    """``(kind, title)`` of ``out`` by its run.json or marker files (no catalog opened)."""
    from ioa_synth.cli.common import _kinds

    found = _kinds().detect_folder(out, open_catalog=False)
    return (found.kind, found.title) if found else None


def _build_or_catalog_kind(out: Path) -> dict[str, Any] | tuple[str, str]:
    """A folder told by its catalog alone: a build directory's status report, or ``(kind,
    title)`` of another kind (a reward catalog). One open (or snapshot) of the catalog."""
    from ioa_synth.build.status import status_report
    from ioa_synth.build.tables import BUILD_TABLES
    from ioa_synth.cli.common import _kinds
    from ioa_synth.runs.catalog import CATALOG_FILE
    from ioa_synth.runs.snapshot import reading

    if not out.exists():
        fail(f"--out {out}: no such folder")
    if not (out / CATALOG_FILE).is_file():
        fail(f"{out}: no catalog.duckdb here (not a folder an ioa-synth command writes: a build directory, a "
             "results folder, a meeting session or an export)")
    with reading(out, [BUILD_TABLES]) as (cat, snapshot):
        found = _kinds().detect_folder(out, catalog=cat)
        if found is not None and found.kind != "build":
            return found.kind, found.title
        report = status_report(cat)
    report["catalog"] = "snapshot" if snapshot else "read"
    return report


def _progress(kind: str, out: Path):
    """The capability's progress of a folder of ``kind`` (``None`` for a kind without units)."""
    from ioa_synth.runs.manifest import read_manifest

    if kind == "belief":
        from ioa_synth.belief.status import belief_progress

        return belief_progress(out)
    if kind == "collab":
        from ioa_synth.collab.status import collab_progress

        return collab_progress(out, read_manifest(out, "collab"))
    if kind == "meeting":
        from ioa_synth.meetings.status import meeting_progress

        return meeting_progress(out)
    if kind == "export":
        from ioa_synth.export.status import export_progress

        return export_progress(out)
    return None


def _results_report(kind: str, title: str, out: Path) -> dict[str, Any]:
    from ioa_synth.runs.folder_status import results_status
    from ioa_synth.runs.manifest import ManifestError, read_manifest

    try:
        manifest = read_manifest(out) if (out / "run.json").is_file() else None
        progress = _progress(kind, out)
    except (ManifestError, ValueError) as exc:  # a capability's ReportError: an unreadable record
        fail(str(exc))
    return results_status(out, kind, title, manifest, progress)


@app.command(rich_help_panel=PANEL_BUILD)
def status(
    out: Path = typer.Option(..., "--out", help="A build directory, a results folder (evaluate, belief run, collab "
                                                "run, train reward), a meeting session or an export folder",
                             callback=status_dir_callback),
    as_json: bool = json_option(),
) -> None:
    """Show where a folder stands, also while a run writes it.

    A build directory: cases per split and cell, θ pass rates, discard reasons, judge
    health, tokens per component. An evaluate results folder: cases done / total, failed
    cases, tokens per component. A belief or collab results folder: conversations or task
    runs done / total per condition or configuration, tokens per component. A meeting
    session: who has answered and labelled. An export: cases per split file. Each run's
    folder: the estimate the run started from beside what was spent since, per component.
    """
    from ioa_synth.reports.output import wide_console
    from ioa_synth.runs.catalog import CatalogUnusable

    tables: list | None = None
    report: dict[str, Any] | None = None
    warn_unreadable_manifest(out)
    try:
        found = _kind_of(out)
        if found is None or found[0] == "build":
            got = _build_or_catalog_kind(out)
            report, found = (got, ("build", "")) if isinstance(got, dict) else (None, got)
        kind, title = found
        if kind == "evaluate":
            from ioa_synth.evaluate.status import results_status, results_status_tables
            from ioa_synth.runs.manifest import ManifestError

            try:
                report = results_status(out)
            except ManifestError as exc:
                fail(str(exc))
            tables = results_status_tables(report)
        elif kind != "build":
            from ioa_synth.reports.status_tables import results_status_tables as generic_tables

            report = _results_report(kind, title, out)
            tables = generic_tables(report)
    except CatalogUnusable as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(report, indent=2, default=str))
        return
    if tables is None:
        from ioa_synth.build.status import status_tables
        from ioa_synth.reports.status_tables import SNAPSHOT_NOTE

        tables = status_tables(report) + ([SNAPSHOT_NOTE] if report.get("catalog") == "snapshot" else [])
    console = wide_console()
    for table in tables:
        if isinstance(table, str):
            console.print(table, soft_wrap=True, markup=False, highlight=False)
        else:
            console.print(table)
