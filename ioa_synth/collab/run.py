"""``ioa-synth collab run``: every (task, configuration) pair not yet on disk, on the shared
run layer — every call through the run's recorder into ``catalog.duckdb``, ``--workers``
calls in flight across tasks, Ctrl-C stops within seconds, a re-run resumes.

Layout of ``RESULTS``: ``run.json`` (command, settings, components, fingerprint),
``tasks/<task_id>__<config>.json`` (written atomically when that run ends, scored),
``catalog.duckdb`` (``llm_calls``; the ``collab_calls`` view reads the calls' tags,
:mod:`ioa_synth.collab.tables`).
A call's key is ``(<task_id>__<config>, step, "<component>|<kind>:<agent>", 0)``
(steps: :mod:`ioa_synth.collab.team`), so a killed run repeats only the calls that were
in flight. A changed component (model, temperature, ...) with stored calls, changed
protocol settings or changed tasks are refused once results are stored; adding a
configuration or a detector is not a change. With ``--batch`` / ``--batch-dir`` the calls
go out in waves (:mod:`ioa_synth.runs.waves`): every unit is driven as far as its answers
go, its calls made in its own thread (:class:`~ioa_synth.runs.fanout.InlinePool`; the
calls a step makes together park together), and the records are a live run's.

This module (with :mod:`.call_pool`, its pool of call threads) is the only one of
``collab/`` that knows the run layer.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

from rich.console import Console

from ioa_synth import __version__
from ioa_synth.collab.detectors import Detector, detector_sources
from ioa_synth.collab.harness import check_solution, remove_stale_checks, results_owner
from ioa_synth.collab.phases import Phases
from ioa_synth.collab.call_pool import PriorityPool
from ioa_synth.collab.protocol import expected_steps, run_task
from ioa_synth.collab.records import record_path, write_record
from ioa_synth.collab.scoring import score
from ioa_synth.collab.tables import COLLAB_TABLES
from ioa_synth.collab.tasks import BcbTask, Task, tasks_digest
from ioa_synth.collab.team import Ask, CollabSettings
from ioa_synth.core.templates import all_template_hashes, template_sha256
from ioa_synth.llm.client import Endpoint, LLMCallError, LLMClient
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.errors import StopRun
from ioa_synth.llm.replies import reply_json, reply_text
from ioa_synth.probing.probers import McqProber
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.runs.batch_mode import BatchMode, map_in_waves, start_batch
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.context import RunContext, open_run
from ioa_synth.runs.fanout import InlinePool
from ioa_synth.runs.fingerprint import component_identity, describe_components
from ioa_synth.runs.recorder import CallKey, CallRecorder
from ioa_synth.runs.setup_check import SetupCheck, check_folder_first, stored_results
from ioa_synth.runs.spend import record_run_estimate

COMMAND = "collab run"
SETUP_VERSION = 1

@dataclass
class RunJob:
    """What to run: ``tasks`` (after ``--limit``) of ``all_tasks`` under ``configs``."""

    tasks: list[Task]
    all_tasks: list[Task]
    configs: list[str]
    settings: CollabSettings
    detectors: list[Detector] = field(default_factory=list)
    workers: int = 8


def unit_id(task_id: str, config: str) -> str:
    """The unit of work and first part of its calls' keys: ``<task_id>__<config>``."""
    return f"{task_id}__{config}"


def component_of(role: str) -> str:
    """The component of a team call's ``llm_calls.role`` (``discusser``, ``detector:NAME``)."""
    return role.split("|", 1)[0]


def describe(eps: dict[str, Endpoint], job: RunJob) -> dict[str, Any]:
    """The fingerprinted setup: each component's identity and the templates it renders
    (a detector: the evaluate prober's ``mcq`` prompt; the discusser: the team's), the
    protocol settings and the task file's digest."""
    templates = all_template_hashes("collab")
    mcq = {McqProber.template: template_sha256(McqProber.template)}

    def part(name: str, identity: dict[str, Any]) -> dict[str, Any]:
        return component_identity(identity) | {"templates": mcq if name.startswith("detector:") else templates}

    return describe_components(eps, part) | {"collab_setup_version": SETUP_VERSION, "toolkit_version": __version__,
                                             "study": job.settings.as_dict(), "tasks": tasks_digest(job.all_tasks)}


#: The setup check of a team run: a changed component with stored calls is refused, and so
#: are changed protocol settings or tasks once a call or a task record is stored (a new
#: configuration or detector is neither).
CHECK_SETUP = SetupCheck(commands=(COMMAND,), component_of=component_of,
                         protocol=lambda desc: {k: desc.get(k) for k in ("study", "tasks")},
                         results_stored=stored_results("tasks", "**/*.json", calls=True))


@dataclass
class RecordedCaller:
    """The :class:`~ioa_synth.collab.protocol.Caller` of one unit: each call through the
    run's ``recorder`` on the shared call ``pool``. While units wait to start, the units
    started first go first (``order``: they finish steadily and free their place); once the
    last unit has started (``endgame``), the units with the most ``steps`` left go first (a
    step: one call, or the calls made together), so that the units started last catch up
    and all end together instead of one call at a time on idle threads."""

    recorder: CallRecorder
    clients: dict[str, LLMClient]
    pool: PriorityPool | InlineRanked
    task_id: str
    config: str
    phases: Phases = field(default_factory=Phases)
    steps: int = 1
    endgame: threading.Event = field(default_factory=threading.Event)
    order: int = 0

    def rank(self) -> int:
        """The priority of this unit's next call (lower goes first); read again when the
        endgame starts (:meth:`PriorityPool.reorder`), so a call queued before then is
        ranked by its unit's steps left too."""
        return -max(0, self.steps) if self.endgame.is_set() else self.order

    def _call(self, ask: Ask) -> Any:
        key = CallKey(unit_id(self.task_id, self.config), ask.step, f"{ask.component}|{ask.role}", 0)
        kind, _, agent = ask.role.partition(":")
        tags = {"task_id": self.task_id, "config": self.config, "component": ask.component, "kind": kind,
                "agent": agent.split(":")[0] or None}
        with self.phases.running(kind):
            value, _ = self.recorder.call(self.clients[ask.component], key, ask.prompt, ask.schema, ask.name,
                                          ask.parse, temperature=ask.temperature, tags=tags,
                                          decode=reply_text if ask.schema is None else reply_json)
        return value

    def one(self, ask: Ask) -> Any:
        self.steps -= 1
        return self.pool.submit(self.rank, self._call, ask).result()

    def all(self, asks: list[Ask]) -> list[Any]:
        self.steps -= 1
        futures = [self.pool.submit(self.rank, self._call, a) for a in asks]
        return [f.result() for f in futures]


class InlineRanked(InlinePool):
    """:class:`~ioa_synth.runs.fanout.InlinePool` taking :class:`PriorityPool`'s arguments
    (a batch-mode run's calls run now, in their unit's thread: the priority is moot)."""

    def submit(self, priority: Any, fn: Callable[..., Any], *args: Any) -> Any:  # type: ignore[override]
        return super().submit(fn, *args)


def run_collab(job: RunJob, out: Path, config: ToolkitConfig, local_model: str | None, console: Console,
               args: dict[str, Any], batch: BatchMode | None = None,
               estimate: tuple[dict[str, Any], Callable[[Catalog], dict[str, Any] | None]] | None = None
               ) -> dict[str, Any]:
    """Run every (task, configuration) not yet on disk; return this run's counts. With
    ``batch`` the calls go out in waves of batches; ``estimate``, ``(plan, make)``: the
    estimate this run starts from, recorded for ``status``
    (:func:`ioa_synth.runs.spend.record_run_estimate`).

    Raises:
        FingerprintMismatch / SetupChanged, SetupError, EndpointError, LocalModelError,
        RunInterrupted (see :func:`ioa_synth.runs.context.open_run`), BatchWaiting (a
        ``--batch-dir`` wave waits for its output file).
    """
    def describe_job(eps: dict[str, Endpoint]) -> dict[str, Any]:
        for ep in eps.values():  # --seed: another draw of every sampled reply
            if ep.seed is not None:
                ep.seed += job.settings.seed
        return describe(eps, job)

    sources = detector_sources(job.detectors)
    # a refused resume starts nothing and leaves the folder's catalog as it was
    check_folder_first(out, [COLLAB_TABLES], ["discusser"], config, local_model, describe=describe_job,
                       check=CHECK_SETUP, sources=sources)
    catalog = Catalog(out, tables=[COLLAB_TABLES])  # with the view collab_calls
    try:
        remove_stale_checks(results_owner(out))  # what a run of this folder killed during a check left
        with open_run(catalog, COMMAND, ["discusser"], config, local_model, args, kind="collab",
                      describe=describe_job, check=CHECK_SETUP, settings=job.settings.as_dict(),
                      setup_version=SETUP_VERSION, manifest_extra={"configs": job.configs},
                      sources=sources) as run:
            record_run_estimate(catalog, run.run_id, COMMAND, estimate)
            stats = _run_units(job, out, run, console, batch)
            run.summary.update({k: v for k, v in stats.items() if k != "errors"})
        return stats
    finally:
        catalog.close()


def _run_units(job: RunJob, out: Path, run: RunContext, console: Console,
               batch: BatchMode | None = None) -> dict[str, Any]:
    stats: dict[str, Any] = {"done": 0, "failed": 0, "skipped": 0, "passed": 0}
    units: list[tuple[Task, str]] = []
    for config in job.configs:
        for task in job.tasks:
            if record_path(out, task.task_id, config).is_file():
                stats["skipped"] += 1
            else:
                units.append((task, config))
    # the longest units first: the units that start last then have short chains to finish
    pending = deque(sorted(units, key=lambda u: -expected_steps(u[0], u[1], job.settings)))
    # every unit's calls are replayed by key; the recorder counts what a stopped run kept
    replay_of = sorted(unit_id(t.task_id, c) for t, c in pending)
    waves = None
    if batch is not None:
        recorder, waves = start_batch(run, batch, replay_of, note=lambda text: progress.note(text))
    else:
        recorder = run.recorder(replay_of=replay_of)
    phases = Phases()  # the calls in flight are all "discusser": say which step of the protocol they are
    progress = BuildProgress(console, total=len(pending), label="tasks", statuses=("passed", "failed-check", "failed"),
                             detail=lambda: phases.describe() or "nothing in flight", earlier=stats["skipped"])
    run.attach(progress)
    errors: list[str] = []
    check = partial(check_solution, owner=results_owner(out))

    def one(unit: tuple[Task, str]) -> str:
        task, config = unit
        caller = RecordedCaller(recorder, run.clients, calls, task.task_id, config, phases,
                                steps=expected_steps(task, config, job.settings) + 1, endgame=endgame,
                                order=next(order))
        try:
            record = run_task(caller, task, config, job.settings)
        except StopRun:
            raise
        except LLMCallError as exc:
            errors.append(f"{task.task_id} {config}: {exc}")
            return "failed"
        with phases.running("check") if isinstance(task, BcbTask) else nullcontext():
            record = score(record, task, job.settings, check=check, stop=run.guard.stop)
        return "passed" if write_record(out, record).passed else "failed-check"

    def done(unit: tuple[Task, str], status: str) -> None:
        stats["done" if status != "failed" else "failed"] += 1
        stats["passed"] += status == "passed"
        progress.advance(status, unit_id(unit[0].task_id, unit[1]))

    # units in flight: the oldest ~workers of them advance (RecordedCaller), the others wait
    # started, so that when the last unit starts there is work enough to keep every call
    # thread busy while the units started last catch up (2 x workers left a tail of idle threads)
    slots = max(1, min(len(pending), 3 * job.workers + 2))
    endgame, order = threading.Event(), itertools.count()  # endgame: the last unit has started

    def submitted(unit: tuple[Task, str]) -> None:
        if not pending and not endgame.is_set():
            endgame.set()
            calls.reorder()  # the calls already queued: by their units' steps left too

    with progress, (PriorityPool(job.workers, "collab-call") if waves is None else InlineRanked()) as calls:
        map_in_waves(run, waves, pending, one, done, workers=slots, unit="task", name="collab-task",
                     on_submit=submitted)
    stats["errors"] = errors[:20]
    return stats
