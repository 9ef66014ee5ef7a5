"""``ioa-synth compare`` and ``ioa-synth report`` : analyses of
``ioa-synth evaluate`` results folders (``ioa_synth.evaluate.analysis``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ioa_synth.cli.app import app
from ioa_synth.cli.label_types import load_type_labels, types_option
from ioa_synth.cli.common import (PANEL_EVALUATE, check_choice, check_out_folder, fail, refuse_other_kind,
                                  write_errors)
from ioa_synth.cli.options import json_option, seed_option
from ioa_synth.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED


def _load(path: Path):
    from ioa_synth.evaluate.analysis.results import ResultsError, load_results

    refuse_other_kind(path, "evaluate", "RESULTS", hint="give the --out folder of an 'ioa-synth evaluate' run")
    try:
        return load_results(path)
    except ResultsError as exc:
        fail(str(exc))


@app.command("compare", rich_help_panel=PANEL_EVALUATE)
def compare_cmd(
    results_a: Path = typer.Argument(..., metavar="RESULTS_A",
                                     help="Results folder of run A (written by 'ioa-synth evaluate')"),
    results_b: Path = typer.Argument(..., metavar="RESULTS_B", help="Results folder of run B"),
    resamples: int = typer.Option(DEFAULT_RESAMPLES, "--resamples", min=1, help="Bootstrap resamples"),
    seed: int = seed_option("Seed of the bootstrap RNG", default=DEFAULT_SEED),
    intersect: bool = typer.Option(False, "--intersect", help="Compare the shared scored cases when the sets differ"),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for compare.json, compare.md and, for a re-run, "
                                                             "order_sensitivity.png (default: .)"),
    as_json: bool = json_option("Print compare.json to stdout instead of the tables"),
) -> None:
    """Compare two evaluate runs: paired bootstrap of ΔF1/ΔP/ΔR, per-type recall, C reasons, re-run consistency
    (with order_sensitivity.png when B re-runs A)."""
    from ioa_synth.evaluate.analysis.compare import (ORDER_CHART, CompareError, compare, compare_tables, intro_lines,
                                                     order_sensitivity_png)
    from ioa_synth.evaluate.analysis.render import markdown_document, to_rich
    from ioa_synth.reports.output import wide_console
    from ioa_synth.core.atomic import json_bytes, write_all_atomic

    folder = check_out_folder(out) or Path(".")
    a = _load(results_a)
    if results_b.exists() and results_a.resolve() == results_b.resolve():
        fail(f"{results_a} and {results_b} are the same results folder: compare would compare a run with itself; "
             "name two evaluate runs")
    b = _load(results_b)
    try:
        result = compare(a, b, intersect=intersect, resamples=resamples, seed=seed)
    except CompareError as exc:
        fail(str(exc))
    tables = compare_tables(result)
    with write_errors():
        doc = markdown_document("Comparison of two evaluation runs", intro_lines(result), tables)
        files = {folder / "compare.json": json_bytes(result), folder / "compare.md": doc.encode()}
        chart = order_sensitivity_png(result)
        if chart is not None:
            files[folder / ORDER_CHART] = chart
        paths = write_all_atomic(files)
    if as_json:
        typer.echo(json.dumps(result, indent=2, ensure_ascii=False))
        return
    console = wide_console()
    for line in intro_lines(result):
        console.print(line, soft_wrap=True)
    for table in tables:
        console.print(to_rich(table))
    for p in paths:
        console.print(f"wrote {p}", soft_wrap=True)


@app.command("report", rich_help_panel=PANEL_EVALUATE)
def report_cmd(
    results: Path = typer.Argument(..., metavar="RESULTS", help="Results folder (written by 'ioa-synth evaluate')"),
    by: str = typer.Option("domain", "--by", help="domain, task_type or type"),
    as_json: bool = json_option("Print the report JSON to stdout instead of the tables"),
    types: Optional[Path] = types_option("the MA types of --by type, ahead of the records' own (the released data has none)"),
) -> None:
    """Breakdown of one evaluate run per domain, task type or MA type (table, Markdown, PNG chart)."""
    from ioa_synth.evaluate.analysis.render import to_rich
    from ioa_synth.evaluate.analysis.report import (ReportError, build_report, intro_lines, report_tables,
                                                    write_report_files)
    from ioa_synth.evaluate.analysis.tables import GROUPINGS
    from ioa_synth.reports.output import reports_dir, wide_console

    check_choice("--by", by, GROUPINGS)
    if types is not None and by != "type":
        fail("--types needs --by type")
    res = _load(results)
    check_out_folder(reports_dir(results), "report folder")
    type_of = load_type_labels(types) if types is not None else None
    try:
        report = build_report(res, by, type_of)
    except ReportError as exc:
        fail(str(exc))
    if type_of is not None:
        report["types"] = {"labels": str(types), "labelled_cases": len(type_of.used), "cases": len(res.scored)}
    with write_errors():
        paths = write_report_files(res, report)
    if as_json:
        typer.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    console = wide_console()
    for line in intro_lines(report):
        console.print(line, soft_wrap=True)
    for table in report_tables(report):
        console.print(to_rich(table))
    for p in paths:
        console.print(f"wrote {p}", soft_wrap=True)
