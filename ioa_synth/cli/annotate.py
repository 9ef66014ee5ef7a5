"""``ioa-synth annotate export|import|report``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from ioa_synth.cli.app import app
from ioa_synth.cli.common import PANEL_QUALITY, fail
from ioa_synth.cli.options import out_dir_option, split_option
from ioa_synth.text.plural import plural

annotate_app = typer.Typer(help="Human annotation: export a sample, import scores, report agreement.",
                           no_args_is_help=True)
app.add_typer(annotate_app, name="annotate", rich_help_panel=PANEL_QUALITY)

FORMATS = ("label-studio", "csv")


@annotate_app.command("export")
def export_cmd(
    out: Path = out_dir_option(),
    split: str = split_option(),
    per_cell: int = typer.Option(2, "--per-cell", min=1, help="Dialogues drawn from each cell"),
    rng_seed: int = typer.Option(0, "--rng-seed", help="Seed of the sampling RNG"),
    calibration: int = typer.Option(5, "--calibration", min=0, help="Calibration dialogues from outside the sample"),
    fmt: str = typer.Option(..., "--format", help="label-studio or csv"),
) -> None:
    """Write a stratified, score-blind sample (plus calibration dialogues) for annotators."""
    from ioa_synth.annotate.forms import export
    from ioa_synth.annotate.sample import AnnotationError, draw, write_manifest
    from ioa_synth.build.builddir import BuildDirError, accepted_cases, open_catalog
    from ioa_synth.reports.output import wide_console

    if fmt not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)} (got {fmt!r})")
    try:
        with open_catalog(out, read_only=True) as cat:
            accepted = accepted_cases(cat, split)
        manifest = draw(accepted, split, per_cell, rng_seed, calibration)
    except (BuildDirError, AnnotationError) as exc:
        fail(str(exc))
    records = {c.case_id: c for c in accepted}
    try:
        paths = export(out, manifest, records, fmt) + [write_manifest(out, manifest)]
    except AnnotationError as exc:
        fail(str(exc))
    err = wide_console(stderr=True)
    short = manifest.short_cells
    if short:
        listed = ", ".join(f"{cell} ({n})" for cell, n in list(short.items())[:6]) + (", ..." if len(short) > 6 else "")
        err.print(f"warning: {len(short)} cell(s) have fewer than {per_cell} accepted cases: {listed}")
    n_cal = len(manifest.of_set("calibration"))
    if n_cal < calibration:
        err.print(f"warning: only {n_cal} accepted case(s) outside the sample for --calibration {calibration}")
    sample = manifest.of_set("sample")
    console = wide_console()
    console.print(f"{plural(len(sample), 'dialogue')} ({plural(sum(len(c.ma_ids) for c in sample), 'misalignment point')}) "
                  f"in the sample, {plural(n_cal, 'calibration dialogue')}", soft_wrap=True)
    for p in paths:
        console.print(str(p), soft_wrap=True)


@annotate_app.command("import")
def import_cmd(
    file: Path = typer.Argument(..., metavar="FILE", help="A Label Studio JSON export or a filled CSV"),
    out: Path = out_dir_option(),
    annotator: str = typer.Option(..., "--annotator", help="Name of the annotator whose scores these are"),
) -> None:
    """Import one annotator's scores; any bad score rejects the whole file."""
    from ioa_synth.annotate.importer import import_file
    from ioa_synth.annotate.sample import AnnotationError
    from ioa_synth.build.builddir import BuildDirError, open_catalog
    from ioa_synth.reports.output import wide_console

    try:
        with open_catalog(out) as cat:
            summary = import_file(cat, out, file, annotator)
    except (BuildDirError, AnnotationError) as exc:
        fail(str(exc))
    sets = ", ".join(f"{n} {s}" for s, n in summary["sets"].items())
    wide_console().print(f"imported {plural(summary['scores'], 'score')} ({sets}) on {plural(summary['items'], 'item')} "
                         f"of {plural(summary['cases'], 'dialogue')} for annotator {summary['annotator']!r}")


@annotate_app.command("report")
def report_cmd(
    out: Path = out_dir_option(),
    split: Optional[str] = split_option("Only this split (default: every annotated split)"),
    judge: Optional[str] = typer.Option(None, "--judge", metavar="audit|build",
                                        help="LLM judge to pair the humans with: audit (the 'ioa-synth audit' "
                                             "judge) or build (default: audit when the split has audit scores, "
                                             "else build)"),
) -> None:
    """Human vs LLM-judge scores and inter-annotator agreement, per rubric dimension."""
    from ioa_synth.annotate.report import JUDGES, annotated_splits, annotation_report, write_annotation_report
    from ioa_synth.annotate.sample import AnnotationError
    from ioa_synth.build.builddir import BuildDirError, open_catalog
    from ioa_synth.reports.output import wide_console

    if judge is not None and judge not in JUDGES:
        fail(f"--judge must be one of {', '.join(JUDGES)} (got {judge!r})")
    try:
        with open_catalog(out, read_only=True) as cat:
            splits = [split] if split else annotated_splits(cat)
            if not splits:
                raise AnnotationError(f"{out}: no annotations imported yet (run 'ioa-synth annotate import')")
            reports = [annotation_report(cat, s, judge) for s in splits]
    except (BuildDirError, AnnotationError) as exc:
        fail(str(exc))
    console = wide_console()
    for report in reports:
        console.print(judge_line(report), soft_wrap=True)
        console.print(report_table(report))
        for p in write_annotation_report(out, report):
            console.print(f"wrote {p}", soft_wrap=True)


def judge_line(report: dict[str, Any]) -> str:
    """Which judge the humans are paired with, and why."""
    j = report["judge"]
    why = ("default: the split has audit scores" if j["name"] == "audit" else "default: the split has no audit "
           "score") if j["default"] else "--judge"
    models = ", ".join(j["models"]) or "no score of this split"
    return f"{report['split']}: humans vs the {j['name']} judge ({models}; {why})"


def report_table(report: dict[str, Any]) -> Table:
    """Rich table of an annotation report, one line per rubric dimension."""
    from ioa_synth.reports.output import fmt

    items = report["items"]
    table = Table(title=f"annotation of {report['split']}: {', '.join(report['annotators'])} "
                        f"({plural(items['points'], 'point')}, {plural(items['dialogues'], 'dialogue')}) vs the "
                        f"{report['judge']['name']} judge")
    for col in ("stage", "dimension", "n", "human mean", "LLM mean", "within ±0.5", "within ±1", "alpha (ordinal)",
                "kappa (quadratic)", "all rated: n, human mean"):
        table.add_column(col, justify="left" if col == "dimension" else "right")
    for r in report["dimensions"]:
        table.add_row(str(r["stage"]), r["dimension"], str(r["n"]), fmt(r["human_mean"]), fmt(r["llm_mean"]),
                      fmt(r["within_0_5"], percent=True), fmt(r["within_1"], percent=True), fmt(r["alpha"], 3),
                      fmt(r["kappa"], 3), f"{r['human_items']}, {fmt(r['human_mean_all'])}")
    return table
