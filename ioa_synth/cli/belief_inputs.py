"""The checks of the arguments of ``belief run``, ``belief screen`` and ``belief reask``,
each shared by the command and its estimate (:func:`run_inputs`, :func:`screen_inputs`,
:func:`reask_inputs`: what one refuses the other refuses, with the same line), and the
readers of the study's list and items options."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, NamedTuple

from ioa_synth.cli.batch_options import batch_mode
from ioa_synth.cli.common import (check_choice, check_out_folder, config_or_fail, existing_results_folder, fail,
                                  refuse_other_kind, writable_out)

if TYPE_CHECKING:
    from ioa_synth.belief.items import Item
    from ioa_synth.belief.run import RunJob
    from ioa_synth.belief.screen import Thresholds
    from ioa_synth.llm.config import ToolkitConfig
    from ioa_synth.runs.batch_mode import BatchMode


def int_list(option: str, text: str) -> list[int]:
    """The comma-separated integers of ``option`` (at least one); exit 2 with one line otherwise."""
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        fail(f"{option} must be comma-separated integers (got {text!r})")
    if not values:
        fail(f"{option} must name at least one value")
    return values


def load_items_or_fail(path: Path):
    """The study items of ``path`` (:func:`ioa_synth.belief.items.load_items`); exit 2 with
    one line when the file cannot be read as items."""
    from ioa_synth.belief.items import ItemsError, load_items

    try:
        return load_items(path)
    except ItemsError as exc:
        fail(str(exc))


class RunInputs(NamedTuple):
    """What :func:`run_inputs` read and checked."""

    config: ToolkitConfig
    job: RunJob
    #: ``None``: live calls
    batch: BatchMode | None


def run_inputs(items: Path, out: Path, agents: int, attackers: str, rounds: int, memory: int, seed: int,
               prematch: bool, config: Path | None, workers: int, limit: int | None, batch: bool,
               batch_dir: Path | None) -> RunInputs:
    """Every check of ``belief run``'s arguments and folders, in order, with nothing
    written: ``belief run`` and ``estimate belief run`` both call it, so that they refuse
    the same input with the same line (exit 2). The attacker counts; ``--out``: a folder
    that could be written, not one of another kind; the config, the items file, and the
    batch options (:func:`~ioa_synth.cli.batch_options.batch_mode`: ``--batch`` with
    ``--batch-dir``, an embedded component, ``--batch-dir`` without a ``model``)."""
    from ioa_synth.belief.conversation import StudySettings
    from ioa_synth.belief.run import COMPONENTS, RunJob

    ks = int_list("--attackers", attackers)
    if rounds < 1:
        fail(f"--rounds must be at least 1 (got {rounds})")
    bad = [k for k in ks if k < 0 or k >= agents]
    if bad:
        fail(f"--attackers must be between 0 and --agents - 1 = {agents - 1} (got {bad[0]})")
    if len(set(ks)) != len(ks):
        fail("--attackers names a count twice")
    check_out_folder(out)
    refuse_other_kind(out, "belief")
    writable_out(out)
    cfg = config_or_fail(config)
    all_items = load_items_or_fail(items)
    settings = StudySettings(agents=agents, attackers=tuple(ks), rounds=rounds, memory=memory, seed=seed,
                             labelling="prematch" if prematch else "judge")
    job = RunJob(items=all_items[:limit] if limit else all_items, all_items=all_items, settings=settings,
                 workers=workers)
    return RunInputs(cfg, job, batch_mode(COMPONENTS, batch, batch_dir, cfg))


#: The paper's re-ask steps (§3); ``belief reask`` drops those past a shorter run.
DEFAULT_REASK_STEPS = "1,4,8,16"
#: The components of ``belief screen`` and of ``belief reask``.
SCREEN_COMPONENTS = ["screener", "belief_judge"]
REASK_COMPONENTS = ["agent", "belief_judge"]


def check_items_out(out: Path, source: Path) -> None:
    """Exit 2 with one line, before any work, when ``out`` (an items file a command writes)
    is a folder, the input file itself, or an existing file that is not an items file (a
    user's file is never overwritten; an earlier output of the same command is, so a re-run
    resumes from its stored calls)."""
    from ioa_synth.belief.items import ItemsError, load_items

    if out.exists() and out.is_dir():
        fail(f"--out {out} is a folder; name the items file to write")
    if out.exists() and source.exists() and out.resolve() == source.resolve():
        fail(f"--out {out} is the input file; name another file to write")
    if out.is_file():
        try:
            load_items(out)
        except ItemsError:
            fail(f"--out {out} exists and is not an items file; name a new file to write (nothing was written)")
    writable_out(out.parent)


class ScreenInputs(NamedTuple):
    """What :func:`screen_inputs` read and checked."""

    config: ToolkitConfig
    items: list[Item]
    thresholds: Thresholds
    #: the calls' folder, ``<out stem>.calls``
    work: Path
    batch: BatchMode | None


def screen_inputs(items: Path, out: Path, thresholds: Thresholds, config: Path | None, batch: bool,
                  batch_dir: Path | None) -> ScreenInputs:
    """Every check of ``belief screen``'s arguments, in order, with nothing written
    (``belief screen`` and ``estimate belief screen``): ``--out`` (:func:`check_items_out`),
    the config, the items file and the batch options."""
    check_items_out(out, items)
    cfg = config_or_fail(config)
    all_items = load_items_or_fail(items)
    return ScreenInputs(cfg, all_items, thresholds, out.parent / f"{out.stem}.calls",
                        batch_mode(SCREEN_COMPONENTS, batch, batch_dir, cfg))


class ReaskInputs(NamedTuple):
    """What :func:`reask_inputs` read and checked."""

    config: ToolkitConfig
    steps: list[int]
    batch: BatchMode | None


def reask_inputs(results: Path, variant: str, steps: str | None, config: Path | None, batch: bool,
                 batch_dir: Path | None) -> ReaskInputs:
    """Every check of ``belief reask``'s arguments, in order, with nothing written
    (``belief reask`` and ``estimate belief reask``): the variant, the steps (those past a
    shorter run dropped from the default ones, with a note on stderr), RESULTS (a belief
    results folder), the config and the batch options. The plan's own refusals (a
    ``--sample`` too large, a log that differs from the stored probes) come from
    :func:`ioa_synth.belief.reask.reask_plan`, under :func:`reask_refusals`."""
    import typer

    from ioa_synth.belief.reask import reask_steps

    check_choice("--variant", variant, ("own", "anonymized", "group"))
    step_list = int_list("--steps", steps if steps is not None else DEFAULT_REASK_STEPS)
    existing_results_folder(results)
    refuse_other_kind(results, "belief", "RESULTS", hint="give the --out folder of an 'ioa-synth belief run'")
    with reask_refusals():
        step_list, note = reask_steps(results, step_list, given=steps is not None)
    if note:
        typer.echo(note, err=True)
    cfg = config_or_fail(config)
    return ReaskInputs(cfg, step_list, batch_mode(REASK_COMPONENTS, batch, batch_dir, cfg))


@contextmanager
def reask_refusals() -> Iterator[None]:
    """Exit 2 with the one line of a re-ask that cannot be made (not a finished run, steps
    outside it, a ``--sample`` too large, a log that differs from the stored probes)."""
    from ioa_synth.belief.reask import ProbeMismatch, StepsError
    from ioa_synth.belief.report import ReportError
    from ioa_synth.protocol.sample import SampleError

    try:
        yield
    except (ReportError, StepsError, ProbeMismatch, SampleError) as exc:
        fail(str(exc))
