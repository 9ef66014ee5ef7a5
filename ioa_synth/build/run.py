"""``ioa-synth build``: run seed tuples of one split through the loop, ``--workers`` at once.

Cases already accepted or discarded are skipped (no LLM call); pending and failed
ones run, replaying stored calls. With a reserve pool (from ``seeds assign``), a
discarded case makes the cell draw its next reserve tuple until the cell reaches
its target or the reserve runs out.

A setup error (:class:`~ioa_synth.llm.errors.SetupError`) stops the run at
once — no new request, the cases it touched stay ``pending`` — and is raised to the
command; Ctrl-C stops starting calls, gives the calls in flight a few seconds and
raises :class:`~ioa_synth.runs.interrupt.RunInterrupted`
(:mod:`ioa_synth.runs.interrupt`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Callable

from rich.console import Console

from ioa_synth.build.cases import case_status, register_cases
from ioa_synth.build.deferred_estimate import DeferredEstimate, EstimateOf
from ioa_synth.build.tables import BUILD_TABLES
from ioa_synth.runs.catalog import Catalog
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.build.fingerprint import build_setup_description, check_build_setup
from ioa_synth.build.pipeline import Case, Outcome, Pipeline
from ioa_synth.build.planted import plant_split, split_plans
from ioa_synth.build.run_settings import language_setting
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.protocol.rubric import load_rubric
from ioa_synth.runs.context import RunContext, open_run
from ioa_synth.runs.batch_mode import BatchMode, map_in_waves, start_batch
from ioa_synth.seeds.tuples import SeedTuple
from ioa_synth.text.plural import plural

Cell = tuple[str, str]


@dataclass
class CellPlan:
    """Seed tuples of one cell: what to build first, what to draw on discards, the target."""

    primary: list[SeedTuple]
    reserve: deque[SeedTuple] = field(default_factory=deque)
    target: int = 0


def plan_from_seeds(seeds: list[SeedTuple]) -> dict[Cell, CellPlan]:
    """One plan per cell from a flat seed list (no reserve; target = number of tuples)."""
    plans: dict[Cell, CellPlan] = {}
    for s in seeds:
        plans.setdefault((s.domain, s.task_type), CellPlan(primary=[])).primary.append(s)
    for p in plans.values():
        p.target = len(p.primary)
    return plans


def run_build(plans: dict[Cell, CellPlan], split: str, out_dir: Path, config: ToolkitConfig, workers: int = 4,
              local_model: str | None = None, console: Console | None = None, args: dict | None = None,
              type_mix: str | None = None, dedup: float | None = None,
              on_start: Callable[[], None] = lambda: None, batch: BatchMode | None = None,
              estimate: EstimateOf | None = None,
              split_seeds: list[SeedTuple] | None = None, participants: int = 2,
              language: str | None = None, meetings: int = 1) -> dict:
    """Build the cases of ``plans`` in ``out_dir`` and return the run summary
    ``{"accepted": n, "discarded": n, "failed": n, "skipped": n, "reserve_drawn": n, "tokens": n}``.
    New cases get planted types under ``type_mix``, planned over ``split_seeds``, the split's
    whole seed list before ``--limit`` (default: the tuples of ``plans``), so that a build cut
    into runs plans what one full build plans (:mod:`ioa_synth.build.planted`); with
    ``dedup`` (a Jaccard threshold) a near-copy of an earlier case is discarded.
    ``on_start()`` is called once the catalog is open (not in use by another run), before
    any endpoint is opened. With ``batch`` the calls go out in waves of batches
    (:mod:`ioa_synth.runs.waves`); the records are those a live run makes. ``estimate``,
    ``(plan, make)``: ``make(catalog)`` reads the folder and gives ``finish()``, the estimate
    of this run, recorded for ``status`` unless the estimate recorded last is of the same
    ``plan``; ``finish()`` runs once the first request is on the wire
    (:mod:`ioa_synth.build.deferred_estimate`). ``participants``: people per meeting (2, the
    paper's dyad, or 3-6: :mod:`ioa_synth.build.stages_multi`); recorded in the manifest's
    settings and the fingerprint only when it is not 2. ``language`` (BCP-47, ``None``:
    English) is the language the cases are written in (``build --language``): stored in the
    manifest's settings and each record, in the setup description, its prompts and its gates.
    ``meetings``: dialogues per case (1, the paper's, or a series of 2-5:
    :mod:`ioa_synth.build.stages_series`); in the manifest's settings and the fingerprint only
    when it is not 1.

    Raises:
        FingerprintMismatch: ``out_dir`` was built with another setup.
        EndpointError / LocalModelError: an endpoint cannot be used.
        SetupError: an endpoint refused the setup or could not be reached (run stopped).
        RunInterrupted: Ctrl-C.
    """
    console = console or Console(stderr=True)
    catalog = Catalog(out_dir, tables=[BUILD_TABLES])
    try:
        on_start()
        settings = {"split": split, "type_mix": type_mix, "dedup": dedup}
        if participants != 2:  # a two-person build's manifest and fingerprint stay as they were
            settings["participants"] = participants
        if meetings != 1:  # a one-meeting build's manifest and fingerprint stay as they were
            settings["meetings"] = meetings
        with open_run(catalog, "build", ["generator", "judge"], config, local_model, args, kind="build",
                      settings=settings | language_setting(language),
                      describe=partial(build_setup_description, participants=participants, language=language,
                                       meetings=meetings),
                      check=check_build_setup) as run:
            deferred, finished = DeferredEstimate(catalog, run.run_id, estimate), False
            if batch is not None:  # its calls go out in files: no request to wait for
                deferred.start()
            try:
                run.summary |= _Scheduler(catalog, out_dir, split, plans, workers, run, console, type_mix=type_mix,
                                          dedup=dedup, batch=batch, split_seeds=split_seeds,
                                          estimate=deferred, participants=participants, language=language,
                                          meetings=meetings).run()
                finished = True
            finally:
                deferred.close(finished)
        return run.summary
    finally:
        catalog.close()


class _Scheduler:
    def __init__(self, catalog: Catalog, out_dir: Path, split: str, plans: dict[Cell, CellPlan], workers: int,
                 run: RunContext, console: Console, type_mix: str | None = None, dedup: float | None = None,
                 batch: BatchMode | None = None, split_seeds: list[SeedTuple] | None = None,
                 estimate: DeferredEstimate | None = None, participants: int = 2,
                 language: str | None = None, meetings: int = 1) -> None:
        self.catalog, self.out_dir, self.split, self.plans = catalog, out_dir, split, plans
        self.workers = max(1, workers)
        self.console, self.run_ctx = console, run
        self.summary = {"accepted": 0, "discarded": 0, "failed": 0, "skipped": 0, "reserve_drawn": 0, "tokens": 0}
        self.pipeline = Pipeline(catalog, run.clients["generator"], run.clients["judge"], load_rubric(), run.run_id,
                                 participants=participants, language=language, meetings=meetings)
        self.type_mix, self.batch, self.estimate = type_mix, batch, estimate
        # every tuple this run may build is in the planted list (after split_seeds when missing from it);
        # planted when a case is new (a finished split's resume plants nothing)
        in_plans = [s for p in plans.values() for s in (*p.primary, *p.reserve)]
        self.planned = cache(lambda: split_plans([*(split_seeds or []), *in_plans], type_mix))
        self._started: set[str] = set()  # cases counted in _in_flight (a parked case stays counted)
        if dedup is not None:  # datasketch (and scipy) load only for --dedup
            from ioa_synth.build.dedup import NearDuplicateIndex

            self.pipeline.dedup = NearDuplicateIndex.of_build(catalog, dedup, language=language)

    def _cases_of(self, seeds: list[SeedTuple]) -> list[Case]:
        cases = register_cases(self.catalog, self.out_dir, self.split, seeds)
        plant_split(self.catalog, self.split, cases, self.type_mix, self.planned)
        return cases

    def run(self) -> dict:
        # reserve tuples drawn in an earlier run are part of their cell again
        drawn = {r[0] for r in self.catalog.execute("SELECT seed_id FROM cases WHERE split = ?", [self.split])}
        seeds: list[SeedTuple] = []
        for plan in self.plans.values():
            seeds += plan.primary + [s for s in plan.reserve if s.seed_id in drawn]
            plan.reserve = deque(s for s in plan.reserve if s.seed_id not in drawn)
        cases = self._cases_of(seeds)
        states = case_status(self.catalog, [c.case_id for c in cases])
        accepted: dict[Cell, int] = {cell: 0 for cell in self.plans}
        todo: list[Case] = []
        for c in cases:
            state = states[c.case_id]
            accepted[(c.seed.domain, c.seed.task_type)] += state == "accepted"
            if state in ("pending", "failed"):
                todo.append(c)
            else:
                self.summary["skipped"] += 1
        waves = None
        if self.batch is not None:
            self.pipeline.calls, waves = start_batch(self.run_ctx, self.batch, [c.case_id for c in todo],
                                                     note=lambda text: self.progress.note(text))
        else:
            self.pipeline.calls = self.run_ctx.recorder(replay_of=[c.case_id for c in todo])
        if self.pipeline.calls.replay:  # a resumed run: say why its first cases finish without requests
            resumed = {key[0] for key in self.pipeline.calls.replay}
            self.console.print(f"resuming: {plural(len(self.pipeline.calls.replay), 'stored reply', 'stored replies')} "
                               f"of {plural(len(resumed), 'unfinished case')} will be reused, not asked for again", soft_wrap=True)
        self.progress = BuildProgress(self.console, total=len(todo))
        self.run_ctx.attach(self.progress)
        self._accepted, self._in_flight, self._queue = accepted, {}, deque(todo)
        self._last_submitted: Case | None = None
        self.pipeline.upcoming = lambda: self._last_submitted
        with self.progress:
            map_in_waves(self.run_ctx, waves, self._queue, self._run_case, self._done, workers=self.workers,
                         unit="case", on_submit=self._submitted)
        self.summary["tokens"] = self.run_ctx.tokens.total
        self.summary["reused_calls"] = self.pipeline.calls.reused_calls
        self.summary["reserve_left"] = {f"{d}/{k}": len(p.reserve) for (d, k), p in self.plans.items() if p.reserve}
        return self.summary

    def _run_case(self, case: Case, *args, **kwargs) -> Outcome:
        if self.estimate is not None:  # made once the first request is on the wire
            self.estimate.arm()
        return self.pipeline.run_case(case, *args, **kwargs)

    def _submitted(self, case: Case) -> None:
        cell = (case.seed.domain, case.seed.task_type)
        if case.case_id not in self._started:  # a case driven again after a batch wave is counted once
            self._started.add(case.case_id)
            self._in_flight[cell] = self._in_flight.get(cell, 0) + 1
        self._last_submitted = case  # queued behind the running ones: the case a worker starts next

    def _done(self, case: Case, outcome: Outcome) -> None:
        """Count a finished case; a discard draws the cell's next reserve tuple (into the queue)."""
        cell = (case.seed.domain, case.seed.task_type)
        self._in_flight[cell] -= 1
        self.summary[outcome.status] += 1
        self.progress.advance(outcome.status, case.case_id, self.pipeline.calls.tokens_by_case.pop(case.case_id, 0))
        if outcome.status == "accepted":
            self._accepted[cell] += 1
        elif outcome.status == "discarded" and self._should_draw(cell, self._accepted[cell] + self._in_flight[cell]):
            self._queue.extend(self._cases_of([self.plans[cell].reserve.popleft()]))
            self.summary["reserve_drawn"] += 1
            self.progress.grow(1)

    def _should_draw(self, cell: Cell, accepted_or_running: int) -> bool:
        plan = self.plans[cell]
        return bool(plan.reserve) and accepted_or_running < plan.target
