"""``ioa-synth build`` (``status`` is in :mod:`ioa_synth.cli.status`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, NamedTuple, Optional

import typer
from rich.console import Console

from ioa_synth.cli.app import app
from ioa_synth.cli.batch_options import batch_dir_option, batch_mode, batch_option, create_batch_dir
from ioa_synth.cli.common import (PANEL_BUILD, fail, llm_command_errors, lowered_workers, refuse_other_kind,
                                  writable_out)
from ioa_synth.cli.options import (config_option, limit_option, local_model_option, out_dir_option,
                                   split_option, threshold_option, workers_option)
from ioa_synth.cli.options import prompts_option
from ioa_synth.llm.config import ConfigError, ToolkitConfig, load_config
from ioa_synth.seeds.tuples import SeedError, load_seed_file
from ioa_synth.text.plural import plural

if TYPE_CHECKING:
    from ioa_synth.runs.batch_mode import BatchMode

#: The LLM components a build calls.
BUILD_COMPONENTS = ["generator", "judge"]


@app.command(rich_help_panel=PANEL_BUILD)
def build(
    split: str = split_option(),
    out: Path = out_dir_option(),
    seeds: Optional[Path] = typer.Option(None, "--seeds", help="Seed tuples (JSONL); default: the pool from 'seeds assign'"),
    config: Optional[Path] = config_option(),
    workers: int = workers_option("Cases"),
    limit: Optional[int] = limit_option("Build at most N seed tuples"),
    local_model: Optional[str] = local_model_option(),
    type_mix: str = typer.Option("paper", "--type-mix", help="Target mix of disagreement types: paper (Table 10), "
                                 "uniform, a JSON file of shares per type, or none (no type planned)"),
    dedup: bool = typer.Option(False, "--dedup", help="Discard an accepted case that nearly copies an earlier one"),
    threshold: float = threshold_option("Jaccard similarity of a near-copy (with --dedup)"),
    batch: bool = batch_option(),
    batch_dir: Optional[Path] = batch_dir_option(),
    participants: int = typer.Option(2, "--participants", min=2, max=6,
                                     help="People per meeting, 2-6 (2: the paper's two-person meetings)"),
    meetings: int = typer.Option(1, "--meetings", min=1, max=5,
                                 help="Meetings per case, 1-5 (1: the paper's single meeting; 2-5: a series among "
                                      "the same people, each point planted in one meeting and surfacing in a later "
                                      "one or never)"),
    language: Optional[str] = typer.Option(None, "--language", metavar="TAG",
                                           help="Language of the cases, a BCP-47 tag: en (the default, the paper's), "
                                                "de, es, fr, zh, ja; another than en needs the 'languages' extra"),
    prompts: Optional[Path] = prompts_option(),  # last: checked once --config is parsed
) -> None:
    """Generate, judge and gate cases of one split; re-running resumes.

    To bring in released IoA-Suite records instead: ioa-synth build import RECORDS --split S --out DIR.

    Exit status: 0 every case accepted or discarded, 1 some case failed, 2 bad input or
    a setup error, 75 a --batch-dir wave waits for its output file, 130 interrupted.
    """
    from ioa_synth.build.run import run_build

    cfg, plans, split_seeds, mode, workers, announce = build_inputs(
        split, out, seeds, config, limit, type_mix, workers, batch, batch_dir,
        language)  # announce: once the catalog is open
    create_batch_dir(mode)
    console = Console(stderr=True)
    args = {"split": split, "seeds": str(seeds) if seeds else None, "workers": workers, "limit": limit,
            "local_model": local_model, "config": str(config) if config else None, "type_mix": type_mix,
            "dedup": threshold if dedup else None, "batch": mode is not None,
            "batch_dir": str(batch_dir) if batch_dir else None} | ({"language": language} if language else {})
    if participants != 2:  # a two-person build records its arguments as before
        args["participants"] = participants
    if meetings != 1:  # a one-meeting build records its arguments as before
        args["meetings"] = meetings
    from ioa_synth.runs.spend import run_plan

    plan = run_plan(args, paths=("seeds", "config"))

    def estimate(catalog):  # the estimate this run starts from (status shows it beside what was spent)
        from ioa_synth.build.estimate import prepared_estimate

        return prepared_estimate(plans, split, catalog, cfg, local_model, type_mix, mode is not None, split_seeds,
                                 participants=participants, meetings=meetings, language=language)

    with llm_command_errors():
        summary = run_build(plans, split, out, cfg, workers=workers, local_model=local_model, console=console,
                            args=args, type_mix=type_mix, dedup=threshold if dedup else None, on_start=announce,
                            batch=mode, estimate=(plan, estimate), split_seeds=split_seeds,
                            participants=participants, language=language, meetings=meetings)
    from ioa_synth.build.status import cell_counts, cell_table  # (polars: after the run, not before its first call)
    from ioa_synth.build.tables import BUILD_TABLES
    from ioa_synth.reports.output import wide_console
    from ioa_synth.runs.catalog import Catalog

    console = wide_console(stderr=True)  # off a terminal: wide enough that no id is cut
    # read-only: a status, show or sql started as the run closed may hold the file (readers share it)
    with Catalog(out, read_only=True, tables=[BUILD_TABLES]) as cat:
        table = cell_table(cell_counts(cat, split), title=f"{out} - {split}")
    for column in table.columns:  # on a narrow terminal: wrap names rather than cut them; numbers stay whole
        column.no_wrap, column.overflow = column.justify == "right", "fold"
    console.print(table)
    console.print(f"this run: {summary['accepted']} accepted, {summary['discarded']} discarded, "
                  f"{summary['failed']} failed, {summary['skipped']} already finished, "
                  f"{plural(summary['reserve_drawn'], 'reserve tuple')} drawn, {plural(summary['tokens'], 'token')}"
                  + (f", {plural(summary['reused_calls'], 'stored reply', 'stored replies')} reused"
                     if summary.get("reused_calls") else ""),
                  soft_wrap=True)
    for cell, left in summary.get("reserve_left", {}).items():
        console.print(f"reserve left in {cell}: {left}", soft_wrap=True)
    if summary["failed"]:
        console.print(f"{summary['failed']} case(s) failed (the error is in the catalog: ioa-synth sql {out} "
                      f"\"SELECT case_id, error FROM cases WHERE status = 'failed'\"); run the same command again, "
                      f"or ioa-synth regenerate --out {out} --status failed, to retry them", soft_wrap=True)
        raise typer.Exit(1)


class BuildInputs(NamedTuple):
    """What :func:`build_inputs` read and checked."""

    config: ToolkitConfig
    #: ``{cell: CellPlan}``: the seed tuples to build, by cell
    plans: dict
    #: the split's whole seed list before ``--limit``, what its types are planted over
    split_seeds: list
    #: ``None``: live calls
    batch: BatchMode | None
    #: ``--workers``, lowered to the embedded model's slots when it serves every component
    workers: int
    #: says the lowering once (:func:`~ioa_synth.cli.common.lowered_workers`)
    announce: Callable[[], None]


def build_inputs(split: str, out: Path, seeds: Path | None, config: Path | None, limit: int | None, type_mix: str,
                 workers: int, batch: bool, batch_dir: Path | None, language: str | None = None) -> BuildInputs:
    """Every check of ``build``'s arguments and folders, in order, with nothing written:
    ``build`` and ``estimate build`` both call it, so that they refuse the same input with
    the same line (exit 2). ``--out`` must be a folder that could be written, of no other
    kind and without a user's own files; then the type mix, the config, the seed tuples
    (``--seeds``, else the pool of ``seeds assign`` in ``--out``, cut to ``--limit``), the
    batch options (:func:`~ioa_synth.cli.batch_options.batch_mode`) and the endpoint
    variables (:func:`~ioa_synth.cli.common.lowered_workers`). First of all, ``--language``:
    a tag the registry serves (:mod:`ioa_synth.text.languages`) and, for another language than
    English, the ``languages`` extra installed (its language gate).
    """
    from ioa_synth.protocol.planting import TypeMixError, load_type_mix
    from ioa_synth.text.detect import MissingExtra, require_detector
    from ioa_synth.text.languages import UnknownLanguage, language_tag

    try:
        require_detector(language_tag(language))
    except (UnknownLanguage, MissingExtra) as exc:
        fail(str(exc))

    if out.exists() and not out.is_dir():
        fail(f"--out {out} exists and is not a directory")
    writable_out(out)
    refuse_other_kind(out, "build")
    try:
        load_type_mix(type_mix)
        cfg = load_config(config)
        plans, split_seeds = _load_plans(out, split, seeds, limit)
    except (TypeMixError, SeedError, ConfigError, ValueError) as exc:
        fail(str(exc))
    mode = batch_mode(BUILD_COMPONENTS, batch, batch_dir, cfg)
    workers, announce = lowered_workers(BUILD_COMPONENTS, workers)
    return BuildInputs(cfg, plans, split_seeds, mode, workers, announce)


def _load_plans(out: Path, split: str, seeds: Path | None, limit: int | None) -> tuple[dict, list]:
    """The cell plans (:class:`~ioa_synth.build.run.CellPlan`) a build of ``split`` runs, from
    the ``--seeds`` file or the pool ``seeds assign`` made in ``out``, cut to ``--limit``,
    and the split's whole seed list before the cut (what its types are planted over).

    Raises:
        SeedError / ValueError: an unreadable seed file, or no ``--seeds`` and no pool.
    """
    from ioa_synth.build.run import plan_from_seeds

    if seeds is not None:
        from ioa_synth.build.builddir import seeds_in_other_splits

        tuples = load_seed_file(seeds)
        elsewhere = seeds_in_other_splits(out, split, [t.seed_id for t in tuples])
        if elsewhere:
            first, other = next(iter(elsewhere.items()))
            more = f" and {len(elsewhere) - 1} more" if len(elsewhere) > 1 else ""
            raise ValueError(f"{seeds}: {first}{more} already in split {other} of {out}; a seed paper in two splits "
                             f"leaks between them: give --split {other}, or another seeds file or --out")
        return plan_from_seeds(tuples[:limit] if limit else tuples), tuples
    return _pool_plans(out, split, limit)


def _pool_plans(out: Path, split: str, limit: int | None) -> tuple[dict, list]:
    from collections import deque

    from ioa_synth.build.run import CellPlan

    try:
        from ioa_synth.seeds.pool import load_pool
    except ImportError as exc:  # pragma: no cover
        raise ValueError("no --seeds given and the seeds module is unavailable") from exc
    if not (out / "catalog.duckdb").exists():
        raise ValueError(f"no --seeds given and {out} has no assigned seed pool (run 'ioa-synth seeds assign' first)")
    pool = load_pool(out, split)
    whole = [s for primary, reserve in pool.values() for s in (*primary, *reserve)]
    plans = {cell: CellPlan(primary=list(p), reserve=deque(r), target=len(p)) for cell, (p, r) in pool.items() if p or r}
    if limit:
        budget = limit
        for plan in plans.values():
            plan.primary = plan.primary[: max(0, min(len(plan.primary), budget))]
            plan.target = len(plan.primary)
            budget -= len(plan.primary)
        plans = {c: p for c, p in plans.items() if p.primary}
    return plans, whole
