"""``ioa-synth build``: run seed tuples of one split through the loop, ``--workers`` at once.

Cases already accepted or discarded are skipped (no LLM call); pending and failed
ones run, replaying stored calls. With a reserve pool (from ``seeds assign``), a
discarded case makes the cell draw its next reserve tuple until the cell reaches
its target or the reserve runs out.

Issue 10: a setup error (:class:`~ioa_synth.llm.errors.SetupError`) stops the run at
once — no new request, the cases it touched stay ``pending`` — and is raised to the
command; Ctrl-C stops starting calls, gives the calls in flight a few seconds and
raises :class:`~ioa_synth.reports.interrupt.RunInterrupted`
(:mod:`ioa_synth.reports.interrupt`).
"""

from __future__ import annotations

import threading
from collections import deque
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from rich.console import Console

from ioa_synth.build.cases import case_status, register_cases
from ioa_synth.store.catalog import Catalog
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.endpoints import open_endpoints
from ioa_synth.store.fingerprint import setup_description
from ioa_synth.llm.client import LLMClient
from ioa_synth.build.dedup import NearDuplicateIndex
from ioa_synth.build.pipeline import Case, Outcome, Pipeline
from ioa_synth.build.planted import plant_split
from ioa_synth.reports.interrupt import InterruptGuard, run_interruptible, worker_pool
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.protocol.rubric import load_rubric
from ioa_synth.store.runs import check_fingerprint, finish_run, start_run
from ioa_synth.seeds.tuples import SeedTuple
from ioa_synth.store.calls import load_replay

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
              type_mix: str | None = None, dedup: float | None = None) -> dict:
    """Build the cases of ``plans`` in ``out_dir`` and return the run summary
    ``{"accepted": n, "discarded": n, "failed": n, "skipped": n, "reserve_drawn": n, "tokens": n}``.
    New cases get planted types under ``type_mix`` (:mod:`ioa_synth.build.planted`); with
    ``dedup`` (a Jaccard threshold) a near-copy of an earlier case is discarded.

    Raises:
        FingerprintMismatch: ``out_dir`` was built with another setup.
        EndpointError / LocalModelError: an endpoint cannot be used.
        SetupError: an endpoint refused the setup or could not be reached (run stopped).
        RunInterrupted: Ctrl-C.
    """
    console = console or Console(stderr=True)
    catalog = Catalog(out_dir)
    try:
        with generation_run(catalog, "build", config, local_model, args) as (run_id, gen, judge, summary), \
                InterruptGuard() as guard:
            gen.stop = judge.stop = guard.stop
            summary |= _Scheduler(catalog, out_dir, split, plans, workers, run_id, gen, judge, console, guard,
                                  type_mix=type_mix, dedup=dedup).run()
        return summary
    finally:
        catalog.close()


@contextmanager
def generation_run(catalog: Catalog, command: str, config: ToolkitConfig, local_model: str | None,
                   args: dict | None) -> Iterator[tuple[str, LLMClient, LLMClient, dict]]:
    """Open the generator and judge endpoints, refuse a changed setup, record a ``runs``
    row; yield ``(run_id, generator, judge, summary)`` and store ``summary`` at the end
    (with ``"stopped"`` naming the exception when the run ended early).

    Raises:
        FingerprintMismatch: a component with stored successful calls has another setup.
        EndpointError / LocalModelError: an endpoint cannot be used.
    """
    with open_endpoints(["generator", "judge"], config, local_model, log_dir=catalog.out_dir / "logs") as eps:
        description = setup_description(eps)
        check_fingerprint(catalog, description)
        run_id = start_run(catalog, command, args or {}, description)
        gen, judge = LLMClient(eps["generator"]), LLMClient(eps["judge"])
        summary: dict = {}
        try:
            yield run_id, gen, judge, summary
        except BaseException as exc:
            summary["stopped"] = f"{type(exc).__name__}: {exc}"[:500]
            raise
        finally:
            gen.close()
            judge.close()
            finish_run(catalog, run_id, summary)


class _Scheduler:
    def __init__(self, catalog: Catalog, out_dir: Path, split: str, plans: dict[Cell, CellPlan], workers: int,
                 run_id: str, gen: LLMClient, judge: LLMClient, console: Console, guard: InterruptGuard,
                 type_mix: str | None = None, dedup: float | None = None) -> None:
        self.catalog, self.out_dir, self.split, self.plans = catalog, out_dir, split, plans
        self.workers = max(1, workers)
        self.console, self.guard, self.clients = console, guard, (gen, judge)
        self.summary = {"accepted": 0, "discarded": 0, "failed": 0, "skipped": 0, "reserve_drawn": 0, "tokens": 0}
        self._tok_lock = threading.Lock()
        self.pipeline = Pipeline(catalog, gen, judge, load_rubric(), run_id, on_tokens=self._add_tokens)
        self.type_mix = type_mix
        if dedup is not None:
            self.pipeline.dedup = NearDuplicateIndex.of_build(catalog, dedup)

    def _add_tokens(self, n: int) -> None:
        with self._tok_lock:
            self.summary["tokens"] += n
        self.progress.tokens(self.summary["tokens"])

    def _cases_of(self, seeds: list[SeedTuple]) -> list[Case]:
        cases = register_cases(self.catalog, self.out_dir, self.split, seeds)
        plant_split(self.catalog, self.split, cases, self.type_mix)
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
        self.pipeline.calls.replay = load_replay(self.catalog, [c.case_id for c in todo])
        self.progress = BuildProgress(self.console, total=len(todo))
        for client in self.clients:
            client.on_wait = self.progress.note
        self._accepted, self._in_flight, self._queue = accepted, {}, deque(todo)
        with self.progress, worker_pool(self.workers, "case") as pool:
            run_interruptible(self._submit(pool), self._queue, self._done, self.workers, self.guard)
        self.summary["reserve_left"] = {f"{d}/{k}": len(p.reserve) for (d, k), p in self.plans.items() if p.reserve}
        return self.summary

    def _submit(self, pool: ThreadPoolExecutor):
        def submit(case: Case):
            cell = (case.seed.domain, case.seed.task_type)
            self._in_flight[cell] = self._in_flight.get(cell, 0) + 1
            return pool.submit(self.pipeline.run_case, case)
        return submit

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
