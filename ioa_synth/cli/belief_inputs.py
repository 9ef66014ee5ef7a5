"""The checks of ``belief run``'s arguments, shared by ``belief run`` and ``estimate belief
run`` (:func:`run_inputs`), and the readers of the study's list and items options."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ioa_synth.cli.batch_options import batch_mode
from ioa_synth.cli.common import check_out_folder, config_or_fail, fail, refuse_other_kind, writable_out

if TYPE_CHECKING:
    from ioa_synth.belief.run import RunJob
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
