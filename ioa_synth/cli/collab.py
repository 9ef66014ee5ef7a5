"""``ioa-synth collab run|report|import-hiddenbench``: the multi-agent collaboration study (paper §6.4, App.
D.7-D.8): a team of agents on BigCodeBench or hidden-profile tasks, with and without an
intervention after the discussion. See docs/collab.md."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ioa_synth.cli.common import (check_choice, check_out_folder, config_or_fail, existing_results_folder, fail,
                                  llm_command_errors, lowered_workers, refuse_other_kind, writable_out, write_errors)
from ioa_synth.cli.options import (config_option, detector_option, json_option, limit_option, local_model_option,
                                   seed_option, workers_option)
from ioa_synth.cli.options import prompts_option

collab_app = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                         help="Multi-agent collaboration: a team's task score with and without a detector in its loop.")

RESULTS_HINT = "give the --out folder of an 'ioa-synth collab run'"


def parse_configs(text: str, bench: str, detector_names: list[str]) -> list[str]:
    """The ``--configs`` list, checked: ``single`` (bcb only), ``discussion``,
    ``self-reflection`` and ``mcq:NAME`` with ``NAME`` a ``--detector``; exit 2 otherwise."""
    from ioa_synth.collab.team import PLAIN_CONFIGS

    configs = [c.strip() for c in text.split(",") if c.strip()]
    if not configs:
        fail("--configs must name at least one of single, discussion, self-reflection, mcq:NAME")
    for c in configs:
        if c.startswith("mcq:"):
            name = c[4:]
            if name not in detector_names:
                given = ", ".join(detector_names) or "none"
                fail(f"--configs names {c} but no --detector {name}=CONFIG is given (detectors: {given})")
        elif c not in PLAIN_CONFIGS:
            fail(f"--configs: unknown configuration {c!r}; use single, discussion, self-reflection or mcq:NAME")
    if "single" in configs and bench != "bcb":
        fail("--configs single: the single-agent baseline is defined for --bench bcb only")
    if len(set(configs)) != len(configs):
        fail("--configs names a configuration twice")
    return configs


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
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Run every task under every configuration; re-running resumes.

    Exit status: 0 all tasks ran, 1 some failed (no usable reply), 2 bad input or setup, 130 interrupted."""
    from rich.console import Console

    from ioa_synth.collab.detectors import load_detector
    from ioa_synth.collab.harness import default_time_limit, harness_available
    from ioa_synth.collab.run import RunJob, run_collab
    from ioa_synth.collab.tasks import BENCHES, TasksError, load_tasks
    from ioa_synth.collab.team import CollabSettings
    from ioa_synth.evaluate.detectors import MAX_DETECTORS

    check_choice("--bench", bench, BENCHES)
    if len(detector) > MAX_DETECTORS:
        fail(f"at most {MAX_DETECTORS} detectors (got {len(detector)})")
    try:
        detectors = [load_detector(spec) for spec in detector]
    except ValueError as exc:
        fail(str(exc))
    names = [d.name for d in detectors]
    if len(set(names)) != len(names):
        fail(f"--detector names repeat: {', '.join(names)}")
    config_list = parse_configs(configs, bench, names)
    used = {c[4:] for c in config_list if c.startswith("mcq:")}
    detectors = [d for d in detectors if d.name in used]
    check_out_folder(out)
    refuse_other_kind(out, "collab")
    cfg = config_or_fail(config)
    try:
        all_tasks = load_tasks(tasks, bench)
        time_limit = default_time_limit()
    except (TasksError, ValueError) as exc:
        fail(str(exc))
    if bench == "bcb" and not harness_available():
        fail("--bench bcb needs the BigCodeBench harness: pip install --no-deps bigcodebench==0.2.5 "
             "(scripts/setup.sh installs it)")
    writable_out(out)
    workers, announce = lowered_workers(["discusser"] + (["prober"] if detectors else []), workers)
    announce()
    settings = CollabSettings(bench=bench, seed=seed, time_limit=time_limit, memory_limit_mb=memory_limit,
                              max_extra_rounds=max_extra_rounds)
    job = RunJob(tasks=all_tasks[:limit] if limit else all_tasks, all_tasks=all_tasks, configs=config_list,
                 settings=settings, detectors=detectors, workers=workers)
    args = {"bench": bench, "tasks": str(tasks), "configs": config_list,
            "detectors": {d.name: d.config_path for d in detectors}, "config": str(config) if config else None,
            "workers": workers, "limit": limit, "seed": seed, "memory_limit": memory_limit,
            "max_extra_rounds": settings.max_extra_rounds, "local_model": local_model}
    console = Console(stderr=True)
    with llm_command_errors():
        stats = run_collab(job, out, cfg, local_model, console, args)
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
