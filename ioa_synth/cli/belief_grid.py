"""``belief report R1 R2 ...``: the mean over a grid's cells (split from cli/belief.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from ioa_synth.cli.common import existing_results_folder, fail, refuse_other_kind


def grid_report(folders: list[Path], as_json: bool) -> None:
    """Mean over the cells of several runs (:mod:`ioa_synth.belief.grid`); refuses runs
    labelled differently (judge vs pre-match) or sharing a cell, with one line."""
    import json

    from ioa_synth.belief.grid import GridError, grid_mean
    from ioa_synth.belief.report import ReportError, run_labelling, summarize

    for folder in folders:
        existing_results_folder(folder)
        refuse_other_kind(folder, "belief", "RESULTS", hint="give the --out folder of an 'ioa-synth belief run'")
    modes = {run_labelling(f) for f in folders}
    if len(modes) > 1:
        fail(f"the runs label private answers differently ({', '.join(sorted(modes))}); a cell mean needs one labelling")
    try:
        grid = grid_mean([summarize(f) for f in folders])
    except (ReportError, GridError) as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(grid, indent=2))
        return
    typer.echo(f"mean over {grid['n_cells']} cells")
    for path, value in grid["mean"].items():
        typer.echo(f"  {path}: {'–' if value is None else f'{100 * value:.1f}%'}")
