"""``ioa-synth collab run|report|import-hiddenbench``: the multi-agent collaboration study (paper §6.4, App.
D.7-D.8): a team of agents on BigCodeBench or hidden-profile tasks, with and without an
intervention after the discussion. See docs/collab.md."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ioa_synth.cli.batch_options import batch_dir_option, batch_option, create_batch_dir
from ioa_synth.cli.common import existing_results_folder, fail, llm_command_errors, refuse_other_kind, write_errors
from ioa_synth.cli.options import (config_option, detector_option, json_option, limit_option, local_model_option,
                                   seed_option, workers_option)
from ioa_synth.cli.options import prompts_option

collab_app = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                         help="Multi-agent collaboration: a team's task score with and without a detector in its loop.")

RESULTS_HINT = "give the --out folder of an 'ioa-synth collab run'"


@collab_app.command("run")
def run(
    bench: str = typer.Option(..., "--bench", help="bcb (BigCodeBench JSONL) or hidden-profile (scenario JSON)"),
    tasks: Path = typer.Option(..., "--tasks", help="Task file: BigCodeBench JSONL or hidden-profile JSON"),
    out: Path = typer.Option(..., "--out", help="Results folder"),
    configs: str = typer.Option(..., "--configs", help="Comma-separated: single (bcb only), discussion, "
                                "self-reflection, mcq:NAME (NAME a --detector)"),
    detector: List[str] = detector_option(required=False),
    config: Optional[Path] = config_option("the discusser block"),
    workers: int = workers_option("Model calls", default=8),
    limit: Optional[int] = limit_option("Use the first N tasks"),
    seed: int = seed_option("Added to every sampling seed and to the hidden-profile block shuffle"),
    memory_limit: int = typer.Option(8192, "--memory-limit", min=256, help="MB of memory a BCB solution's check may use"),
    max_extra_rounds: Optional[int] = typer.Option(
        None, "--max-extra-rounds", min=1, max=99, metavar="N",
        help="Most re-discussion rounds after a triggered intervention; they end earlier when every agent's "
             "stop-vote says ready. Default: the bench's discussion length, 4 (bcb) or 8 (hidden-profile): the "
             "paper (App. D.7) gives no cap, and its Table 23 (HiddenBench self-reflection: 100% triggered, +7.45 "
             "rounds per task) needs at least 8"),
    local_model: Optional[str] = local_model_option(),
    batch: bool = batch_option(),
    batch_dir: Optional[Path] = batch_dir_option(),
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Run every task under every configuration; re-running resumes.

    Exit status: 0 all tasks ran, 1 some failed (no usable reply), 2 bad input or setup, 75 a --batch-dir
    wave waits for its output file, 130 interrupted."""
    from rich.console import Console

    from ioa_synth.cli.collab_inputs import run_inputs
    from ioa_synth.collab.run import run_collab

    inputs = run_inputs(bench, tasks, out, configs, detector, config, workers, limit, seed, memory_limit,
                        max_extra_rounds, batch, batch_dir)
    inputs.announce()
    create_batch_dir(inputs.batch)
    job, settings = inputs.job, inputs.job.settings
    args = {"bench": bench, "tasks": str(tasks), "configs": job.configs,
            "detectors": {d.name: d.config_path for d in job.detectors}, "config": str(config) if config else None,
            "workers": job.workers, "limit": limit, "seed": seed, "memory_limit": memory_limit,
            "max_extra_rounds": settings.max_extra_rounds, "local_model": local_model}
    if inputs.batch is not None:  # recorded only when given: the args of a live run stay as they were
        args |= {"batch": True, "batch_dir": str(batch_dir) if batch_dir else None}
    from ioa_synth.runs.spend import run_plan

    plan = run_plan(args, paths=("tasks", "config"))

    def estimate(catalog):  # the estimate this run starts from (status shows it beside what was spent)
        from ioa_synth.collab.estimate import estimate_of_run

        return estimate_of_run(job, out, inputs.config, local_model, catalog, batch=inputs.batch is not None)

    console = Console(stderr=True)
    with llm_command_errors():
        stats = run_collab(job, out, inputs.config, local_model, console, args, batch=inputs.batch,
                           estimate=(plan, estimate))
    written = _write_report(out)
    console.print(f"{out}: {stats['done']} task run(s) done ({stats['passed']} passed), {stats['failed']} failed, "
                  f"{stats['skipped']} already done" + ("; report.json and report.md written" if written else ""),
                  soft_wrap=True)
    for line in stats.get("errors", []):
        console.print(f"  {line}", soft_wrap=True, markup=False)
    if stats["failed"]:
        raise typer.Exit(1)


def _write_report(out: Path) -> dict | None:
    from ioa_synth.collab.report import ReportError, build_report, markdown, read_records
    from ioa_synth.core.atomic import json_bytes, write_all_atomic

    try:
        report = build_report(read_records(out), *_run_facts(out))
    except ReportError:
        return None
    write_all_atomic({out / "report.json": json_bytes(report), out / "report.md": markdown(report).encode("utf-8")})
    return report


def _run_facts(out: Path) -> tuple[str | None, dict[str, str], int | None]:
    """The ``--bench`` of the run that wrote ``out/run.json``, its components' models and its
    re-discussion cap (``None``, ``{}``, ``None``: no readable manifest)."""
    from ioa_synth.runs.manifest import ManifestError, read_manifest

    try:
        manifest = read_manifest(out, kind="collab")
    except ManifestError:
        return None, {}, None
    models = {name: str(c["model"]) for name, c in manifest.components.items() if isinstance(c, dict) and c.get("model")}
    cap = manifest.settings.max_extra_rounds
    return manifest.args.get("bench"), models, cap if isinstance(cap, int) else None


@collab_app.command("report")
def report(
    results: Path = typer.Argument(..., metavar="RESULTS", help="Results folder of 'collab run'"),
    as_json: bool = json_option("Print report.json instead of the tables"),
) -> None:
    """Write report.json and report.md; show Table 6 (Pass@1) and Table 23 (trigger rate, extra rounds, ΔPass@1)."""
    import json

    from ioa_synth.collab.report import ReportError, models_line, read_records, tables
    from ioa_synth.reports.output import wide_console
    from ioa_synth.runs.manifest import ManifestError, read_manifest

    existing_results_folder(results)
    refuse_other_kind(results, "collab", "RESULTS", hint=RESULTS_HINT)
    try:
        read_manifest(results, kind="collab")
    except ManifestError as exc:
        fail(str(exc))
    try:
        read_records(results)
    except ReportError as exc:
        fail(str(exc))
    result = _write_report(results)
    assert result is not None
    if as_json:
        typer.echo(json.dumps(result, indent=2, ensure_ascii=False))
        return
    console = wide_console()
    if models_line(result):
        console.print(f"models: {models_line(result)}", soft_wrap=True, markup=False)
    for table in tables(result):
        console.print(table)
    console.print(f"wrote {results / 'report.json'} and {results / 'report.md'}", soft_wrap=True)


@collab_app.command("import-hiddenbench")
def import_hiddenbench(
    file: Path = typer.Argument(..., metavar="FILE", help="HiddenBench scenarios: JSON (a list) or JSONL"),
    out: Path = typer.Option(..., "--out", metavar="TASKS.jsonl",
                             help="New file: one hidden-profile scenario per line, for collab run --tasks"),
) -> None:
    """Convert HiddenBench scenarios into hidden-profile tasks (docs/collab.md lists the fields read).

    Exit status: 0 written, 2 bad input (one error line, nothing written; an existing --out is refused)."""
    from ioa_synth.collab.hiddenbench import HiddenBenchError, jsonl_bytes
    from ioa_synth.collab.hiddenbench import import_hiddenbench as convert_file
    from ioa_synth.core.atomic import write_bytes_atomic

    if out.exists():
        fail(f"--out {out} exists; give a new file (an existing file is never overwritten)")
    try:
        records = convert_file(file)
    except HiddenBenchError as exc:
        fail(str(exc))
    with write_errors():
        write_bytes_atomic(out, jsonl_bytes(records))
    agents = sorted({len(r["private"]) for r in records})
    typer.echo(f"{out}: {len(records)} scenario(s) ({' or '.join(map(str, agents))} agents); "
               f"run them with: ioa-synth collab run --bench hidden-profile --tasks {out} ...", err=True)
