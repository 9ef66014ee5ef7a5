"""The checks of ``collab run``'s arguments, shared by ``collab run`` and ``estimate collab
run`` (:func:`run_inputs`), and the ``--configs`` reader (:func:`parse_configs`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, NamedTuple

from ioa_synth.cli.batch_options import batch_mode
from ioa_synth.cli.common import (check_choice, check_out_folder, config_or_fail, fail, lowered_workers,
                                  refuse_other_kind, writable_out)

if TYPE_CHECKING:
    from ioa_synth.collab.run import RunJob
    from ioa_synth.llm.config import ToolkitConfig
    from ioa_synth.runs.batch_mode import BatchMode


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


class RunInputs(NamedTuple):
    """What :func:`run_inputs` read and checked."""

    config: ToolkitConfig
    #: the tasks (after ``--limit``), configurations, detectors used and ``--workers`` (lowered
    #: to the embedded model's slots when it serves every component)
    job: RunJob
    #: ``None``: live calls
    batch: BatchMode | None
    #: says the lowering of ``--workers`` once (:func:`~ioa_synth.cli.common.lowered_workers`)
    announce: Callable[[], None]


def run_inputs(bench: str, tasks: Path, out: Path, configs: str, detector: list[str], config: Path | None,
               workers: int, limit: int | None, seed: int, memory_limit: int, max_extra_rounds: int | None,
               batch: bool, batch_dir: Path | None) -> RunInputs:
    """Every check of ``collab run``'s arguments and folders, in order, with nothing written:
    ``collab run`` and ``estimate collab run`` both call it, so that they refuse the same
    input with the same line (exit 2). The bench, the detectors and ``--configs``;
    ``--out``: a folder that could be written, not one of another kind; the config, the
    task file, the BigCodeBench harness (``--bench bcb``), and the batch options
    (:func:`~ioa_synth.cli.batch_options.batch_mode`, the detectors' endpoints included)."""
    from ioa_synth.collab.detectors import detector_sources, load_detector
    from ioa_synth.collab.harness import default_time_limit, harness_available
    from ioa_synth.collab.run import RunJob
    from ioa_synth.collab.tasks import BENCHES, TasksError, load_tasks
    from ioa_synth.collab.team import CollabSettings
    from ioa_synth.probing.detectors import MAX_DETECTORS

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
    mode = batch_mode(["discusser"], batch, batch_dir, cfg, sources=detector_sources(detectors))
    workers, announce = lowered_workers(["discusser"] + (["prober"] if detectors else []), workers)
    settings = CollabSettings(bench=bench, seed=seed, time_limit=time_limit, memory_limit_mb=memory_limit,
                              max_extra_rounds=max_extra_rounds)
    job = RunJob(tasks=all_tasks[:limit] if limit else all_tasks, all_tasks=all_tasks, configs=config_list,
                 settings=settings, detectors=detectors, workers=workers)
    return RunInputs(cfg, job, mode, announce)
