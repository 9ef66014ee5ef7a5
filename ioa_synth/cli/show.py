"""``ioa-synth show``: one case's latest (or chosen) attempt, accepted or not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ioa_synth.cli.app import app
from ioa_synth.cli.common import PANEL_BUILD, fail, warn_unreadable_manifest
from ioa_synth.cli.options import json_option, out_dir_option


@app.command(rich_help_panel=PANEL_BUILD)
def show(
    case_id: Optional[str] = typer.Argument(None, metavar="CASE_ID",
                                            help="e.g. test/business/planning_000 (default: the case that got furthest)"),
    out: Path = out_dir_option(),
    attempt: Optional[int] = typer.Option(None, "--attempt", min=1, help="Attempt number (default: the latest)"),
    as_json: bool = json_option("Print JSON instead of rich output"),
) -> None:
    """Show a case (by default the one that got furthest): scenario, profiles, MAs, outline, dialogue with inner thoughts, judge scores and feedback,
    gate failures and the discard reason."""
    from ioa_synth.build.builddir import BuildDirError, require_catalog
    from ioa_synth.build.show import ShowError, case_view, furthest_case
    from ioa_synth.build.show_render import render_case
    from ioa_synth.build.tables import BUILD_TABLES
    from ioa_synth.reports.output import wide_console
    from ioa_synth.runs.snapshot import reading

    picked = case_id is None
    try:
        require_catalog(out)
        warn_unreadable_manifest(out)
        # a build still running holds its catalog: read a snapshot of it (as status does)
        with reading(out, [BUILD_TABLES]) as (cat, snapshot):
            where = cat.out_dir
            if case_id is None:
                case_id = furthest_case(where, home=out, running=snapshot)
            view = case_view(where, case_id.strip().removesuffix(".json"), attempt, home=out)
        if picked:
            which = "an accepted case" if view["status"] == "accepted" else "the case that got furthest"
            typer.echo(f"showing {case_id}, {which} (name a CASE_ID to see another)", err=True)
    except (BuildDirError, ShowError) as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(view, indent=2, default=str))
        return
    render_case(view, wide_console())
