"""``ioa-synth belief``: the hidden-belief-collapse study (items, screen, run, report,
reask, agreement). See docs/belief.md."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ioa_synth.cli.batch_options import batch_dir_option, batch_option, create_batch_dir
from ioa_synth.cli.belief_inputs import (DEFAULT_REASK_STEPS, check_items_out, reask_inputs, reask_refusals,
                                         run_inputs, screen_inputs)
from ioa_synth.cli.common import (check_choice, config_or_fail, existing_results_folder, fail,
                                  llm_command_errors, refuse_other_kind)
from ioa_synth.cli.options import (config_option, json_option, limit_option, local_model_option, sample_option,
                                   seed_option, workers_option)
from ioa_synth.cli.options import prompts_option
from ioa_synth.text.plural import plural

belief_app = typer.Typer(help="The hidden belief collapse study: items, screening, chatroom runs, reports.",
                         no_args_is_help=True)
items_app = typer.Typer(help="Import study items.", no_args_is_help=True)
belief_app.add_typer(items_app, name="items")

@items_app.command("import")
def items_import(
    file: Path = typer.Argument(..., metavar="FILE", help="CounterFact JSON, PopQA TSV, SimpleQA CSV or items JSONL"),
    fmt: str = typer.Option(..., "--format", help="counterfact, popqa, simpleqa or jsonl"),
    out: Path = typer.Option(..., "--out", help="Items file to write (JSONL)"),
    config: Optional[Path] = config_option(),
    workers: int = workers_option("Item writer calls"),
    limit: Optional[int] = limit_option("Keep the first N imported items"),
    local_model: Optional[str] = local_model_option(),
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Import items; the item_writer writes missing statements and discussion seeds (its calls
    are kept in OUT's folder under <stem>.calls/ and replayed on a re-run)."""
    from ioa_synth.belief.items import ItemsError, write_items
    from ioa_synth.belief.sources import FORMATS, import_items
    from ioa_synth.belief.writer import write_items as complete

    check_choice("--format", fmt, FORMATS)
    check_items_out(out, file)
    cfg = config_or_fail(config)
    try:
        drafts, dropped = import_items(file, fmt)
    except ItemsError as exc:
        fail(str(exc))
    drafts = drafts[:limit] if limit else drafts
    args = {"file": str(file), "format": fmt, "out": str(out), "limit": limit}
    with llm_command_errors():
        items, written_dropped = complete(drafts, out.parent / f"{out.stem}.calls", cfg, local_model, workers, args)
    dropped.update(written_dropped)
    if not items:
        fail(f"{file}: no item survived the import ({', '.join(f'{n} {r}' for r, n in dropped.items()) or 'empty'})")
    write_items(out, items)
    typer.echo(f"{plural(len(items), 'item')} written to {out}" +
               "".join(f"; dropped {n}: {reason}" for reason, n in sorted(dropped.items())))


@belief_app.command("run")
def run(
    items: Path = typer.Option(..., "--items", help="Items file (JSONL)"),
    out: Path = typer.Option(..., "--out", help="Results folder"),
    agents: int = typer.Option(10, "--agents", min=2, max=64, help="Agents per conversation"),
    attackers: str = typer.Option("0,1,3", "--attackers", help="Attacker counts, comma-separated"),
    rounds: int = typer.Option(16, "--rounds", min=1, max=1000, help="Rounds per conversation"),
    memory: int = typer.Option(5, "--memory", min=1, help="Full rounds of history each agent sees"),
    seed: int = seed_option("Seed of the speaking schedule"),
    prematch: bool = typer.Option(False, "--prematch",
                                  help="Label a private answer naming only one of the item's answers by string "
                                       "match, without the judge (for weak judges; a negated answer such as "
                                       "'not Sydney' then counts as Sydney). Default: the judge labels every answer"),
    config: Optional[Path] = config_option(),
    workers: int = workers_option("Model calls", default=8),
    limit: Optional[int] = limit_option("Use the first N items"),
    local_model: Optional[str] = local_model_option(),
    batch: bool = batch_option(),
    batch_dir: Optional[Path] = batch_dir_option(),
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Run one conversation per item and attacker count; re-running resumes.

    Exit status: 0 all conversations done, 1 some failed, 2 bad input or setup, 75 a
    --batch-dir wave waits for its output file, 130 interrupted.
    """
    from rich.console import Console

    from ioa_synth.belief.report import partial_lines, write_report
    from ioa_synth.belief.run import run_study

    inputs = run_inputs(items, out, agents, attackers, rounds, memory, seed, prematch, config, workers, limit,
                        batch, batch_dir)
    create_batch_dir(inputs.batch)
    job, settings = inputs.job, inputs.job.settings
    args = {"items": str(items), **settings.as_dict(), "workers": workers, "limit": limit,
            "config": str(config) if config else None, "local_model": local_model}
    if inputs.batch is not None:  # recorded only when given: the args of a live run stay as they were
        args |= {"batch": True, "batch_dir": str(batch_dir) if batch_dir else None}
    from ioa_synth.runs.spend import run_plan

    plan = run_plan(args, paths=("items", "config"))

    def estimate(catalog):  # the estimate this run starts from (status shows it beside what was spent)
        from ioa_synth.belief.estimate import estimate_of_run

        return estimate_of_run(job, out, inputs.config, local_model, catalog, batch=inputs.batch is not None)

    console = Console(stderr=True)
    with llm_command_errors():
        stats = run_study(job, out, inputs.config, local_model, console, args, batch=inputs.batch,
                          estimate=(plan, estimate))
    summary = write_report(out)
    console.print(f"{out}: {stats['done']} conversation(s) done, {stats['failed']} failed, {stats['skipped']} "
                  "already done; summary.json written", soft_wrap=True)
    for line in stats.get("errors", []):
        console.print(f"  {line}", soft_wrap=True, markup=False)
    for line in partial_lines(summary) if summary else []:
        console.print(line, soft_wrap=True, markup=False)
    if stats["failed"]:
        raise typer.Exit(1)


@belief_app.command("report")
def report(
    folders: list[Path] = typer.Argument(..., metavar="RESULTS", help="Results folder(s) of 'belief run'"),
    as_json: bool = json_option("Print summary.json instead of the table"),
) -> None:
    """Write summary.json and curves.png (infection per step) and show the headline rates.
    Several folders (a grid: model × source × k): also print the unweighted mean over their cells."""
    import json

    from ioa_synth.belief.plots import plot_curves
    from ioa_synth.belief.report import ReportError, judge_check_lines, partial_lines, summarize, summary_table
    from ioa_synth.reports.output import wide_console
    from ioa_synth.core.atomic import json_bytes, write_all_atomic

    if len(folders) > 1:
        from ioa_synth.cli.belief_grid import grid_report

        grid_report(folders, as_json)
        return
    results = folders[0]
    existing_results_folder(results)
    refuse_other_kind(results, "belief", "RESULTS", hint="give the --out folder of an 'ioa-synth belief run'")
    try:
        summary = summarize(results)
    except ReportError as exc:
        fail(str(exc))
    paths = write_all_atomic({results / "summary.json": json_bytes(summary), results / "curves.png": plot_curves(summary)})
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
    else:
        console = wide_console()
        console.print(summary_table(summary))
        for path in paths:
            console.print(f"wrote {path}", soft_wrap=True)
    for line in partial_lines(summary) + judge_check_lines(summary):
        typer.echo(line, err=True)


@belief_app.command("screen")
def screen(
    items: Path = typer.Option(..., "--items", help="Items file (JSONL)"),
    out: Path = typer.Option(..., "--out", help="Screened items file to write (JSONL)"),
    samples: int = typer.Option(5, "--samples", min=1, max=100, help="Answers per question"),
    min_true: float = typer.Option(0.6, "--min-true", min=0, max=1, help="Least share of true answers"),
    max_manipulated: float = typer.Option(0.05, "--max-manipulated", min=0, max=1,
                                          help="Largest share of manipulated answers"),
    max_both: float = typer.Option(0.10, "--max-both", min=0, max=1, help="Largest share naming both answers"),
    cap_per_relation: Optional[int] = typer.Option(None, "--cap-per-relation", min=1, help="Items kept per relation"),
    config: Optional[Path] = config_option(),
    workers: int = workers_option("Calls"),
    local_model: Optional[str] = local_model_option(),
    batch: bool = batch_option(),
    batch_dir: Optional[Path] = batch_dir_option(),
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Keep the items the screener knows without context (calls kept under <stem>.calls/).

    Exit status: 0, 2 bad input or setup, 75 a --batch-dir wave waits for its output file,
    130 interrupted.
    """
    from rich.table import Table

    from ioa_synth.belief.items import write_items
    from ioa_synth.belief.screen import Thresholds, decide, screen_items
    from ioa_synth.reports.output import wide_console
    from ioa_synth.core.atomic import write_json_atomic

    th = Thresholds(samples, min_true, max_manipulated, max_both, cap_per_relation)
    inputs = screen_inputs(items, out, th, config, batch, batch_dir)
    create_batch_dir(inputs.batch)
    all_items = inputs.items
    args = {"items": str(items), "out": str(out), **th.__dict__}
    if inputs.batch is not None:  # recorded only when given: the args of a live run stay as they were
        args |= {"batch": True, "batch_dir": str(batch_dir) if batch_dir else None}
    with llm_command_errors():
        labels = screen_items(all_items, inputs.work, th, inputs.config, local_model, workers, args,
                              batch=inputs.batch)
    kept, report = decide(all_items, labels, th)
    write_json_atomic(out.parent / f"{out.stem}.screen.json", {"thresholds": th.__dict__, "items": report})
    write_items(out, kept)
    table = Table(title=f"dropped by screening ({len(all_items) - len(kept)} of {len(all_items)})")
    for col in ("item", "relation", "true", "manipulated", "both", "reason"):
        table.add_column(col)
    for item_id, r in report.items():
        if r["dropped"]:
            s = r["shares"]
            table.add_row(item_id, r["relation"], f"{s['true']:.0%}", f"{s['manipulated']:.0%}", f"{s['both']:.0%}",
                          r["dropped"])
    wide_console().print(table)
    typer.echo(f"{len(kept)} of {plural(len(all_items), 'item')} kept in {out}")


@belief_app.command("reask")
def reask(
    results: Path = typer.Argument(..., metavar="RESULTS", help="Results folder of 'belief run'"),
    variant: str = typer.Option(..., "--variant", help="own, anonymized or group"),
    steps: Optional[str] = typer.Option(None, "--steps", show_default=DEFAULT_REASK_STEPS,
                                        help="Probe steps to re-ask, comma-separated (0 to the run's rounds); "
                                             "the default drops steps past the run"),
    config: Optional[Path] = config_option(),
    workers: int = workers_option("Calls"),
    local_model: Optional[str] = local_model_option(),
    sample: Optional[int] = sample_option("conversations", "cell (item source x attacker count k)"),
    seed: int = seed_option("Seed of the --sample draw"),
    batch: bool = batch_option(),
    batch_dir: Optional[Path] = batch_dir_option(),
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Re-ask a probe variant from the stored log (no conversation re-run); the rebuilt default
    probe must equal the stored one byte for byte.

    Exit status: 0, 2 bad input or setup, 75 a --batch-dir wave waits for its output file,
    130 interrupted.
    """
    from ioa_synth.belief.reask import run_reask
    from ioa_synth.belief.report import write_report

    inputs = reask_inputs(results, variant, steps, config, batch, batch_dir)
    step_list = inputs.steps
    args = {"results": str(results), "variant": variant, "steps": step_list, "sample": sample, "seed": seed}
    if inputs.batch is not None:  # recorded only when given: the args of a live run stay as they were
        args |= {"batch": True, "batch_dir": str(batch_dir) if batch_dir else None}
    with reask_refusals(), llm_command_errors():  # the --batch-dir is made once the plan passed its checks
        counts = run_reask(results, variant, step_list, inputs.config, local_model, workers, args, sample, seed,
                           batch=inputs.batch, planned=lambda: create_batch_dir(inputs.batch))
    write_report(results)
    typer.echo(f"{counts['asked']} {variant} answer(s) in {counts['conversations']} conversation(s); "
               "summary.json updated")


@belief_app.command("agreement")
def agreement(
    results: Path = typer.Argument(..., metavar="RESULTS", help="Results folder of 'belief run'"),
    judge_config: Path = typer.Option(..., "--judge-config", help="LLM settings whose belief_judge is the second judge"),
    sample: int = typer.Option(200, "--sample", min=1, help="Private answers to relabel"),
    seed: int = seed_option("Seed of the sample"),
    workers: int = workers_option("Calls"),
    local_model: Optional[str] = local_model_option(),
) -> None:
    """A second judge relabels private answers: agreement, Cohen's kappa, corrected FPI (agreement.json)."""
    from ioa_synth.belief.agreement import run_agreement
    from ioa_synth.belief.report import ReportError
    from ioa_synth.reports.output import fmt

    existing_results_folder(results)
    refuse_other_kind(results, "belief", "RESULTS", hint="give the --out folder of an 'ioa-synth belief run'")
    if not judge_config.is_file():
        fail(f"--judge-config {judge_config}: {'is a directory' if judge_config.is_dir() else 'no such file'}")
    cfg = config_or_fail(judge_config)
    args = {"results": str(results), "judge_config": str(judge_config), "sample": sample, "seed": seed}
    try:
        with llm_command_errors():
            res = run_agreement(results, cfg, sample, seed, local_model, workers, args)
    except ReportError as exc:
        fail(str(exc))
    kappa = fmt(res["kappa"], 3)
    typer.echo(f"{plural(res['n'], 'answer')} relabelled by {res['judge_model']}: agreement {res['agreement']:.1%}, "
               f"Cohen's kappa {kappa}; agreement.json written")
    for key, c in res["conditions"].items():
        if c["fpi"] is not None:
            typer.echo(f"  {key}: FPI {c['fpi']:.1%}, corrected {c['fpi_corrected']:.1%}")
