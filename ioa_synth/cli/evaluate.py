"""``ioa-synth evaluate``: score probers on a built split with the IoA-Suite protocol."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, NamedTuple, Optional

import typer

from ioa_synth.cli.app import app
from ioa_synth.cli.batch_options import batch_dir_option, batch_mode, batch_option, create_batch_dir
from ioa_synth.cli.common import (PANEL_EVALUATE, check_choice, check_out_folder, config_or_fail, lowered_workers,
                                  fail, folder_kind, refuse_other_kind, llm_command_errors, writable_out)
from ioa_synth.cli.options import access_option, config_option, limit_option, local_model_option, workers_option
from ioa_synth.cli.options import sample_option, seed_option
from ioa_synth.cli.options import prompts_option

if TYPE_CHECKING:
    from ioa_synth.llm.config import ToolkitConfig
    from ioa_synth.runs.batch_mode import BatchMode


@app.command(rich_help_panel=PANEL_EVALUATE)
def evaluate(
    data: Path = typer.Option(..., "--data", help="Folder of cases (*.json, searched recursively), e.g. DIR/test"),
    out: Path = typer.Option(..., "--out", help="Results folder (records/, run.json, summary.json, catalog.duckdb)"),
    config: Optional[Path] = config_option(),
    workers: int = workers_option("Cases"),
    limit: Optional[int] = limit_option("Evaluate the first N cases (by path)"),
    sample: Optional[int] = sample_option(),
    seed: int = seed_option("Seed of the --sample draw"),
    mode: str = typer.Option("mcq", "--mode", help="Prober mode: mcq, direct (free-text items, no simulator), "
                             "ambiguity (4 ambiguous expressions, one MCQ each), "
                             "wordnet (the 4 words with most WordNet senses, one MCQ each)"),
    access: str = access_option(),
    rollouts: int = typer.Option(1, "--rollouts", min=1, max=20, help="Simulator rollouts per participant (modal answer)"),
    permute_seed: Optional[int] = typer.Option(None, "--permute-seed", min=0,
                                               help="Shuffle question and option order (seeded) before simulation"),
    questions_from: Optional[Path] = typer.Option(None, "--questions-from",
                                                  help="Reuse the questions of an earlier results folder (no prober call)"),
    local_model: Optional[str] = local_model_option(),
    batch: bool = batch_option(),
    batch_dir: Optional[Path] = batch_dir_option(),
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Run prober -> simulator -> validity filter on every case; re-running resumes.

    Exit status: 0 every requested case scored, 1 some case failed, 2 bad input or a
    setup error, 75 a --batch-dir wave waits for its output file, 130 interrupted.
    """
    from rich.console import Console

    from ioa_synth.evaluate.case import EvalSettings
    from ioa_synth.evaluate.report import summary_table
    from ioa_synth.evaluate.run import EvalJob, run_evaluate

    cfg, cases, todo, stored, mode_of_batch, workers, announce = evaluate_inputs(
        data, out, config, limit, mode, rollouts, permute_seed, questions_from, workers, batch, batch_dir,
        sample=sample, seed=seed)
    create_batch_dir(mode_of_batch)  # announce: once the catalog is open
    settings = EvalSettings(mode=mode, access=access, rollouts=rollouts, permute_seed=permute_seed)
    job = EvalJob(cases=todo, all_cases=cases, settings=settings, questions_from=questions_from,
                  stored_questions=stored)
    args = {"data": str(data), **settings.as_dict(), "limit": limit, **sample_args(sample, seed, todo),
            "workers": workers,
            "config": str(config) if config else None, "local_model": local_model,
            "questions_from": str(questions_from) if questions_from else None,
            "batch": mode_of_batch is not None, "batch_dir": str(batch_dir) if batch_dir else None}
    from ioa_synth.runs.spend import run_plan

    plan = run_plan(args, paths=("data", "config", "questions_from"))
    params = {"data": data, "out": out, "config": config, "limit": limit, "sample": sample, "seed": seed,
              "mode": mode, "access": access,
              "rollouts": rollouts, "questions_from": questions_from, "local_model": local_model,
              "batch": batch, "batch_dir": batch_dir}

    def estimate(catalog):  # the estimate this run starts from (status shows it beside what was spent)
        from ioa_synth.evaluate.estimate import estimate_of_run

        return estimate_of_run(params, todo, cfg, catalog)

    console = Console(stderr=True)
    with llm_command_errors():
        summary = run_evaluate(job, out, cfg, workers=workers, local_model=local_model, console=console, args=args,
                               on_start=announce, batch=mode_of_batch, estimate=(plan, estimate))
    from ioa_synth.reports.output import wide_console
    from ioa_synth.text.plural import plural

    wide_console().print(summary_table(summary, title=f"{out}: {settings.mode}, access {access}"))
    run = summary["run"]
    console.print(f"this run: {run['scored']} scored, {run['failed']} failed, {run['skipped']} already scored, "
                  f"{plural(run['tokens'], 'token')}; {'complete' if summary['complete'] else 'INCOMPLETE'}: "
                  f"{summary['cases']['scored']}/{summary['cases']['requested']} cases scored", soft_wrap=True)
    if not summary["complete"]:
        console.print(f"{summary['cases']['failed']} case(s) failed (the error is in each failed record under "
                      f"{out / 'records'}); run the same command again to retry them", soft_wrap=True)
        raise typer.Exit(1)


class EvaluateInputs(NamedTuple):
    """What :func:`evaluate_inputs` read and checked."""

    config: ToolkitConfig
    #: every case of ``--data``, by path
    cases: list
    #: the cases to evaluate (``--limit`` or ``--sample``)
    todo: list
    #: the questions of ``--questions-from`` by case id, or ``None``
    stored: dict | None
    #: ``None``: live calls
    batch: BatchMode | None
    #: ``--workers``, lowered to the embedded model's slots when it serves every component
    workers: int
    #: says the lowering once (:func:`~ioa_synth.cli.common.lowered_workers`)
    announce: Callable[[], None]


def evaluate_inputs(data: Path, out: Path, config: Path | None, limit: int | None, mode: str, rollouts: int,
                    permute_seed: int | None, questions_from: Path | None, workers: int, batch: bool,
                    batch_dir: Path | None, *, sample: int | None = None, seed: int = 0) -> EvaluateInputs:
    """Every check of ``evaluate``'s arguments and folders, in order, with nothing written:
    ``evaluate`` and ``estimate evaluate`` both call it, so that they refuse the same input
    with the same line (exit 2). The mode and its options; ``--out``: a folder that could be
    written, not a build directory nor a folder of another kind or holding a user's own
    files; ``--questions-from``: another results folder; then the config, the cases of
    ``--data`` (cut to ``--limit``, or ``--sample`` of them drawn with ``--seed``) and the stored questions, the batch options
    (:func:`~ioa_synth.cli.batch_options.batch_mode`) and the endpoint variables
    (:func:`~ioa_synth.cli.common.lowered_workers`).
    """
    from ioa_synth.evaluate.inputs import InputError, load_cases, pick_cases
    from ioa_synth.evaluate.stored_questions import QuestionsFromError, load_stored_questions
    from ioa_synth.probing.probers import MODES
    from ioa_synth.evaluate.run import needed_components
    from ioa_synth.protocol.sample import SampleError

    check_choice("--mode", mode, MODES)
    if mode == "wordnet":
        from ioa_synth.probing.wordnet import WordNetMissing, load_wordnet
        try:
            load_wordnet()
        except WordNetMissing as exc:
            fail(f"--mode wordnet: {exc}")
    if mode == "direct" and (rollouts != 1 or permute_seed is not None):
        fail("--mode direct has no simulator step: --rollouts and --permute-seed do not apply")
    if mode != "mcq" and questions_from is not None:
        fail(f"--questions-from reuses mcq questions: it needs --mode mcq (got --mode {mode})")
    if sample is not None and limit is not None:
        fail("--sample and --limit both choose the cases: give one (--limit N takes the first N by path, "
             "--sample N a random sample stratified by cell)")
    check_out_folder(out)
    if out.is_dir() and folder_kind(out) == "build":
        fail(f"--out {out} is an 'ioa-synth build' directory (its catalog holds build cases or seeds); "
             "evaluate into a results folder of its own")
    refuse_other_kind(out, "evaluate")
    check_out_folder(questions_from, "--questions-from")
    if questions_from is not None and questions_from.resolve() == out.resolve():
        fail("--questions-from must name another results folder than --out")
    writable_out(out)
    cfg = config_or_fail(config)
    try:
        cases = load_cases(data)
        todo = pick_cases(cases, limit, sample, seed)
        stored = load_stored_questions(questions_from, [c.case_id for c in todo]) if questions_from else None
    except (InputError, QuestionsFromError, SampleError) as exc:
        fail(str(exc))
    if mode == "wordnet" and (other := [c for c in todo if c.language]):
        fail(f"--mode wordnet ranks words by WordNet, which is English; {len(other)} case(s) of --data are in "
             f"another language ({other[0].case_id}: {other[0].language}): use --mode ambiguity or mcq for them")
    needed = needed_components(mode, questions_from is not None)
    mode_of_batch = batch_mode(needed, batch, batch_dir, cfg)
    workers, announce = lowered_workers(needed, workers)
    return EvaluateInputs(cfg, cases, todo, stored, mode_of_batch, workers, announce)



def sample_args(sample: int | None, seed: int, todo: list) -> dict:
    """What ``run.json`` ``args`` records of a sample: ``sample``, ``seed`` and, with
    ``--sample``, the drawn ``sample_cases`` (case ids), which ``status`` counts as the
    run's cases."""
    if sample is None:
        return {"sample": None, "seed": seed}
    return {"sample": sample, "seed": seed, "sample_cases": [c.case_id for c in todo]}
