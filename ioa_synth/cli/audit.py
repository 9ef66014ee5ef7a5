"""``ioa-synth audit``: re-score accepted cases with a second judge (App. B.3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from ioa_synth.cli.app import app
from ioa_synth.cli.common import PANEL_QUALITY, config_or_fail, fail, llm_command_errors, lowered_workers
from ioa_synth.cli.options import limit_option, local_model_option, out_dir_option, split_option, workers_option
from ioa_synth.cli.options import prompts_option


@app.command(rich_help_panel=PANEL_QUALITY)
def audit(
    out: Path = out_dir_option(),
    split: str = split_option(),
    judge_config: Optional[Path] = typer.Option(None, "--judge-config",
                                                help="Config JSON with an 'audit_judge' block (model, temperature...)"),
    limit: Optional[int] = limit_option("Audit at most N accepted cases (spread over cells)"),
    workers: int = workers_option("Judge calls"),
    local_model: Optional[str] = local_model_option("when AUDIT_JUDGE_BASE_URL/OPENAI_BASE_URL is unset"),
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Score accepted cases with the audit judge and compare with the build judge, per dimension.

    Exit status: 0 every selected stage scored, 1 some stage could not be scored, 2 bad
    input or a setup error, 130 interrupted.
    """
    from ioa_synth.build.builddir import BuildDirError
    from ioa_synth.build.audit import run_audit, write_audit_report
    from ioa_synth.reports.output import wide_console
    from ioa_synth.text.plural import plural

    from ioa_synth.build.builddir import series_refusal

    if (refused := series_refusal(out, "audit")) is not None:
        fail(refused)
    cfg = config_or_fail(judge_config)
    workers, announce = lowered_workers(["audit_judge"], workers)  # said once the build is known to be good
    args = {"split": split, "judge_config": str(judge_config) if judge_config else None, "limit": limit,
            "workers": workers, "local_model": local_model}
    try:
        with llm_command_errors():
            report = run_audit(out, split, cfg, limit=limit, workers=workers, local_model=local_model,
                               console=wide_console(stderr=True), args=args, on_start=announce)
    except BuildDirError as exc:
        fail(str(exc))
    paths = write_audit_report(out, report)
    console = wide_console()
    console.print(audit_table(report))
    run = report["run"]
    console.print(f"audit judge {run['model']}: {run['scored']} stage(s) scored now, {run['skipped']} already audited, "
                  f"{run['failed']} failed, {plural(run['tokens'], 'token')}", soft_wrap=True)
    for err in run["errors"][:5]:
        console.print(f"failed: {err}", soft_wrap=True)
    for p in paths:
        console.print(f"wrote {p}", soft_wrap=True)
    if run["failed"]:  # the report covers only what was scored: say so with the exit status
        typer.echo(f"{run['failed']} stage(s) could not be scored; run the same command again to retry them "
                   "(scored stages are kept)", err=True)
        raise typer.Exit(1)


def audit_table(report: dict[str, Any]) -> Table:
    """Rich table of an audit report, one line per rubric dimension."""
    from ioa_synth.reports.output import fmt

    table = Table(title=f"audit of {report['split']}: build judge vs {report['audit_model']} "
                        f"({report['audited_cases']}/{report['accepted_cases']} accepted cases audited)")
    for col in ("stage", "dimension", "n", "build mean", "audit mean", "mean diff", "within ±0.5", "within ±1",
                "all audited: n, mean", "paper audit mean"):
        table.add_column(col, justify="left" if col == "dimension" else "right")
    for r in report["dimensions"]:
        table.add_row(str(r["stage"]), r["dimension"], str(r["n"]), fmt(r["mean_build"]), fmt(r["mean_audit"]),
                      fmt(r["mean_diff"]), fmt(r["within_0_5"], percent=True), fmt(r["within_1"], percent=True),
                      f"{r['audit_items']}, {fmt(r['mean_audit_all'])}", fmt(r["paper_audit_mean"]))
    return table
