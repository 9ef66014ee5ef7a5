"""``ioa-synth check``: near-duplicate cases within and across splits (MinHash/LSH)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ioa_synth.cli.app import app
from ioa_synth.cli.common import PANEL_QUALITY, fail
from ioa_synth.cli.options import json_option, out_dir_option, threshold_option
from ioa_synth.text.plural import plural


@app.command(rich_help_panel=PANEL_QUALITY)
def check(
    out: Path = out_dir_option(),
    threshold: float = threshold_option("Jaccard similarity (word 3-grams) at which two cases are near-duplicates"),
    as_json: bool = json_option("Print JSON instead of a table"),
) -> None:
    """List near-duplicate accepted cases (scenario, misalignment points, utterances; member
    names ignored) with their similarity.

    Exit status: 0 no pair spans two splits, 1 some pair does (the splits are not
    disjoint in content), 2 bad input.
    """
    from rich.table import Table

    from ioa_synth.build.builddir import BuildDirError, open_catalog
    from ioa_synth.build.dedup import near_duplicates
    from ioa_synth.reports.output import wide_console

    try:
        with open_catalog(out, read_only=True) as cat:
            pairs = near_duplicates(cat, threshold)
            cases = cat.execute("SELECT count(*) FROM cases WHERE status = 'accepted'")[0][0]
    except BuildDirError as exc:
        fail(str(exc))
    cross = [p for p in pairs if p.cross_split]
    if as_json:
        typer.echo(json.dumps({"threshold": threshold, "accepted_cases": cases, "cross_split": len(cross),
                               "pairs": [{"a": p.a, "b": p.b, "similarity": round(p.similarity, 4),
                                          "cross_split": p.cross_split} for p in pairs]}, indent=2))
    else:
        console = wide_console()
        table = Table(title=f"Near-duplicate cases in {out} (Jaccard >= {threshold}, {plural(cases, 'accepted case')})")
        for col in ("case", "near-duplicate of", "similarity", "splits"):
            table.add_column(col, justify="right" if col == "similarity" else "left")
        for p in pairs:
            table.add_row(p.b, p.a, f"{p.similarity:.2f}", "ACROSS" if p.cross_split else "within",
                          style="red" if p.cross_split else None)
        if not pairs:
            table.add_row("(none)", "", "", "")
        if not cases:  # nothing to compare: say so rather than print an empty table
            console.print(f"{out}: no accepted case to compare yet (status --out {out} shows why)")
            return
        console.print(table)
        console.print(f"{len(pairs)} pair(s), {len(cross)} spanning two splits")
    if cross:
        raise typer.Exit(1)
