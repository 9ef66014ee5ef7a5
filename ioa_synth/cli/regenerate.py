"""``ioa-synth regenerate``: re-run chosen cases through the loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from ioa_synth.cli.app import app
from ioa_synth.cli.common import PANEL_BUILD, config_or_fail, fail, llm_command_errors, lowered_workers
from ioa_synth.cli.options import config_option, local_model_option, out_dir_option, split_option, workers_option
from ioa_synth.cli.options import prompts_option


@app.command(rich_help_panel=PANEL_BUILD)
def regenerate(
    case_ids: Optional[list[str]] = typer.Argument(None, metavar="CASE_ID",
                                                   help="More case ids (same as --case; '--case A B' works too)"),
    out: Path = out_dir_option(),
    case: Optional[list[str]] = typer.Option(None, "--case", help="Case id (repeatable), e.g. test/business/planning_000"),
    status: Optional[str] = typer.Option(None, "--status", help="discarded or failed (default with no --case: both)"),
    split: Optional[str] = split_option("Only cases of this split"),
    stage: int = typer.Option(1, "--stage", help="1: from the profiles on; 2: the dialogue only, keeping the accepted profiles"),
    config: Optional[Path] = config_option("as for build"),
    workers: int = workers_option("Cases"),
    local_model: Optional[str] = local_model_option(),
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Re-run cases through the loop; earlier calls and scores are kept, attempt numbers continue.

    Exit status: 0 no re-run case failed, 1 some failed, 2 bad input or a setup error,
    130 interrupted.
    """
    from ioa_synth.build.builddir import BuildDirError
    from ioa_synth.build.regenerate import REGENERABLE, RegenerateError, run_regenerate

    case = [c for c in (case or []) + (case_ids or []) if c.strip()]
    if status is not None and status not in REGENERABLE:
        fail(f"--status must be one of {', '.join(REGENERABLE)} (got {status!r})")
    if stage not in (1, 2):
        fail(f"--stage must be 1 or 2 (got {stage})")
    from ioa_synth.build.builddir import series_refusal

    if (refused := series_refusal(out, "regenerate")) is not None:
        fail(refused)
    cfg = config_or_fail(config)
    workers, announce = lowered_workers(["generator", "judge"], workers)  # said once the selection is good
    args = {"case": case or [], "status": status, "split": split, "stage": stage, "workers": workers,
            "local_model": local_model, "config": str(config) if config else None}
    console = Console(stderr=True)
    try:
        with llm_command_errors():
            summary = run_regenerate(out, cfg, case or [], status, split, stage, workers=workers,
                                     local_model=local_model, console=console, args=args, on_start=announce)
    except (BuildDirError, RegenerateError) as exc:
        fail(str(exc))
    _print_summary(summary)
    failed = [r["case_id"] for r in summary["cases"] if r["after"] == "failed"]
    if failed:
        typer.echo(f"{len(failed)} case(s) failed; run the same command again, or ioa-synth regenerate --out {out} "
                   "--status failed, to retry them", err=True)
        raise typer.Exit(1)


def _print_summary(summary: dict[str, Any]) -> None:
    from ioa_synth.reports.output import wide_console
    from ioa_synth.text.plural import plural

    console = wide_console()
    for s in summary["skipped"]:
        console.print(f"skipped {s['case_id']}: {s['reason']}", soft_wrap=True)
    rows = summary["cases"]
    if not rows:
        console.print("nothing to regenerate: no case matches the selection")
        return
    table = Table(title="regenerate")
    for col in ("case", "before → after", "stage 1 attempts", "stage 2 attempts", "note"):
        table.add_column(col)
    for r in rows:
        note = "new attempts failed; previous record kept" if r["kept_previous"] else (r["reason"] or "")
        table.add_row(r["case_id"], f"{r['before']} → {r['after']}", r["attempts"]["stage1"], r["attempts"]["stage2"],
                      note[:160])
    console.print(table)
    changed = sum(r["before"] != r["after"] for r in rows)
    written = sum(r["after"] == "accepted" and not r["kept_previous"] for r in rows)
    console.print(f"{len(rows)} case(s) re-run: {written} accepted with a new record, {changed} changed status, "
                  f"{plural(summary['tokens'], 'token')}", soft_wrap=True)
