"""``ioa-synth evaluate``: run the protocol over the cases of ``--data`` into ``RESULTS``,
``--workers`` cases at once, resumable (issue 7 §6-7), with the shared run behaviour of
issue 10 (:mod:`ioa_synth.reports.interrupt`).

A re-run skips scored cases (no call), replays the stored calls of a case killed midway
and retries failed cases. A changed setup is refused (:class:`SetupChanged`) only as far
as it must be (issue 10 §3): a component (model, sampling, request options) whose settings
changed is refused once it has successful calls stored here; the protocol settings
(templates, access, rollouts, permutation, mode, input files, ``--questions-from``) are
refused once any result is stored. A setup error (HTTP 400/401/...) stops the run: the
cases it touched get no record and stay to do; Ctrl-C stops starting calls, gives the
calls in flight a few seconds and raises :class:`~ioa_synth.reports.interrupt.RunInterrupted`.
Writes ``run.json``, ``records/``, ``summary.json`` (atomically) and ``catalog.duckdb``
(``llm_calls``, ``runs``).
"""

from __future__ import annotations

import json
import sys
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic_core import to_json
from rich.console import Console

from ioa_synth import __version__
from ioa_synth.evaluate.case import EvalSettings, evaluate_case
from ioa_synth.evaluate.inputs import EvalCase
from ioa_synth.evaluate.probers import PROBERS, StoredQuestions, questions_digest
from ioa_synth.evaluate.replies import Question
from ioa_synth.evaluate.records import CaseCalls, RunJsonError, read_record, read_run_json, record_path
from ioa_synth.evaluate.report import eval_progress
from ioa_synth.evaluate.scoring import summarize
from ioa_synth.llm.client import Endpoint, LLMClient
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.endpoints import open_endpoints
from ioa_synth.llm.prompts import all_template_hashes
from ioa_synth.reports.interrupt import InterruptGuard, RunInterrupted, run_interruptible, worker_pool
from ioa_synth.store.atomic import write_bytes_atomic, write_json_atomic
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.store.calls import CallKey, CallRecorder, load_replay, load_replay_tries
from ioa_synth.store.catalog import Catalog
from ioa_synth.store.fingerprint import describe_difference, fingerprint
from ioa_synth.store.runs import FingerprintMismatch, check_fingerprint, finish_run, start_run

COMPONENTS = ("prober", "simulator", "validity_filter")
#: Version of evaluate's setup description (``fingerprint_parts``, stored as ``fingerprint_version``);
#: 2: components compared one by one against their stored successful calls (issue 10 §3). Not
#: the build's :data:`ioa_synth.store.fingerprint.FINGERPRINT_VERSION`.
EVAL_SETUP_VERSION = 2


class SetupChanged(FingerprintMismatch):
    """``RESULTS`` holds results of another protocol setup; the message names what changed
    (a changed component raises the shared :class:`FingerprintMismatch`)."""


@dataclass
class EvalJob:
    """What to evaluate: ``cases`` (after ``--limit``) out of ``all_cases`` (every input
    file under ``--data``, all fingerprinted), with ``settings``; ``questions_from`` names
    an earlier results folder whose questions ``stored_questions`` (``{case_id:
    [Question]}``, :func:`ioa_synth.evaluate.probers.load_stored_questions`) are asked
    instead of calling the prober."""

    cases: list[EvalCase]
    all_cases: list[EvalCase]
    settings: EvalSettings
    questions_from: Path | None = None
    stored_questions: dict[str, list[Question]] | None = None


def component_settings(ep: Endpoint) -> dict[str, Any]:
    """``run.json`` view of one component: model, temperature, structured output, request
    options and ``base_url_kind`` (``embedded`` | ``remote``); no key, no URL."""
    return {"model": ep.model, "temperature": ep.temperature, "structured_output": ep.structured_output,
            "request_options": ep.request_options, "base_url_kind": "embedded" if ep.embedded else "remote"}


def fingerprint_parts(eps: dict[str, Endpoint], job: EvalJob) -> dict[str, Any]:
    """The fingerprinted setup: toolkit version, each component's identity (model and
    request settings; not the base URL nor the key, so the same model on another host
    resumes), evaluate templates' sha256, every input file's sha256, the protocol
    settings, and for ``--questions-from`` the sha256 of each reused case's questions
    (so the same folder named by another path resumes)."""
    comps = {name: ep.identity() for name, ep in sorted(eps.items())}
    return {"fingerprint_version": EVAL_SETUP_VERSION, "toolkit_version": __version__, "components": comps,
            "templates": all_template_hashes("evaluate"),
            "inputs": {c.source_file: c.sha256 for c in job.all_cases}, **job.settings.as_dict(),
            "questions_from": questions_digest(job.stored_questions) if job.stored_questions is not None else None}


def component_of(role: str) -> str:
    """The component of an ``llm_calls.role`` (``simulator:M1`` -> ``simulator``)."""
    return role.split(":", 1)[0]


def check_setup(catalog: Catalog, parts: dict[str, Any]) -> None:
    """Refuse a setup whose stored results it would mix with (issue 10 §3).

    A component may be reconfigured until it has successful calls stored here
    (:func:`ioa_synth.store.runs.check_fingerprint`); everything else in ``parts``
    (templates, inputs, protocol settings) may change only while nothing is stored: no
    successful call and no record.

    Raises:
        FingerprintMismatch: a component with stored successful calls changed.
        SetupChanged: the protocol setup changed on a folder that holds results, or
            ``run.json`` is unreadable while records exist.
    """
    check_fingerprint(catalog, parts, commands=("evaluate",), component_of=component_of)
    rows = catalog.execute(
        "SELECT DISTINCT r.fingerprint_json FROM llm_calls c JOIN runs r ON c.run_id = r.run_id "
        "WHERE c.error IS NULL AND r.command = 'evaluate' AND r.fingerprint_json IS NOT NULL")
    stored = [json.loads(fp) for (fp,) in rows]
    out_dir = catalog.out_dir
    if any((out_dir / "records").rglob("*.json")):
        try:
            run_parts = read_run_json(out_dir).get("fingerprint_parts")
        except RunJsonError:
            run_parts = None
        if not isinstance(run_parts, dict):
            raise SetupChanged(f"{out_dir / 'run.json'} is unreadable; use a new --out")
        stored.append(run_parts)
    new = {k: v for k, v in parts.items() if k not in ("components", "questions_from")}
    for old_parts in stored:
        old = {k: v for k, v in old_parts.items() if k not in ("components", "questions_from")}
        diffs = describe_difference(old, new) if old != new else []
        diffs += _questions_changed(old_parts.get("questions_from"), parts.get("questions_from"))
        if diffs:
            raise SetupChanged(f"{out_dir} holds results of another setup ({'; '.join(diffs[:3])}); "
                               "use a new --out for a changed setup")


def _questions_changed(old: Any, new: Any) -> list[str]:
    """What changed in the reused questions: nothing when neither run reused questions or
    every case both runs cover has the same questions (``--limit`` may grow)."""
    if old is None and new is None:
        return []
    if not isinstance(old, dict) or not isinstance(new, dict):
        return [f"questions_from: {'none' if old is None else 'reused questions'} -> "
                f"{'none' if new is None else 'reused questions'}"]
    changed = sorted(cid for cid in old.keys() & new.keys() if old[cid] != new[cid])
    return [f"questions_from: other questions for {', '.join(changed[:3])}"] if changed else []


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def run_evaluate(job: EvalJob, out_dir: Path, config: ToolkitConfig, workers: int = 4, local_model: str | None = None,
                 console: Console | None = None, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """Evaluate ``job`` into ``out_dir``; return ``summary.json`` plus ``run`` =
    ``{"scored", "failed", "skipped", "tokens"}`` of this invocation.

    When the run stops early (setup error, Ctrl-C) ``summary.json`` still describes the
    records written so far (``complete: false``) and the ``runs`` row says why it stopped.

    Raises:
        FingerprintMismatch / SetupChanged: ``out_dir`` holds results of another setup.
        EndpointError / LocalModelError: an endpoint cannot be used.
        SetupError: an endpoint refused the setup or could not be reached (run stopped).
        RunInterrupted: Ctrl-C (``ioa_synth.reports.interrupt``).
    """
    console = console or Console(stderr=True)
    needed = [c for c in COMPONENTS if not (c == "prober" and job.stored_questions is not None)
              and not (c == "simulator" and job.settings.mode == "direct")]  # direct: no simulator step
    with open_endpoints(needed, config, local_model, log_dir=out_dir / "logs") as eps:
        parts = fingerprint_parts(eps, job)
        components = {c: component_settings(ep) for c, ep in eps.items()}
        if job.stored_questions is not None:
            components["prober"] = {"questions_from": str(job.questions_from)}
        run_json = {"command": "evaluate", "argv": sys.argv[1:], "args": args or {}, "components": components,
                    "fingerprint": fingerprint(parts), "fingerprint_parts": parts,
                    "started_at": _now(), "finished_at": None}
        catalog = Catalog(out_dir)
        clients = {c: LLMClient(ep) for c, ep in eps.items()}
        try:
            check_setup(catalog, parts)
            write_json_atomic(out_dir / "run.json", run_json)
            run_id = start_run(catalog, "evaluate", args or {}, parts)
            scheduler = _Scheduler(catalog, out_dir, job, clients, run_id, workers, console)
            try:
                with InterruptGuard() as guard:
                    run = scheduler.run(guard)
            except BaseException as exc:
                if isinstance(exc, RunInterrupted):  # say what is kept: finished cases and calls
                    exc.unit, exc.stored_calls = "case", scheduler.fresh_calls
                write_json_atomic(out_dir / "summary.json", _summary(out_dir, job))
                finish_run(catalog, run_id, scheduler.run_stats | {"stopped": f"{type(exc).__name__}: {exc}"[:500]})
                raise
            summary = _summary(out_dir, job)
            write_json_atomic(out_dir / "summary.json", summary)
            finish_run(catalog, run_id, run)
            write_json_atomic(out_dir / "run.json", run_json | {"finished_at": _now()})
        finally:
            for client in clients.values():
                client.close()
            catalog.close()
    return summary | {"run": run}


def _summary(out_dir: Path, job: EvalJob) -> dict[str, Any]:
    records = [r for r in (read_record(out_dir, c.case_id) for c in job.cases) if r is not None]
    return summarize(records, len(job.cases), job.settings.as_dict())


class _Scheduler:
    """Keeps ``workers`` cases in flight (:func:`run_interruptible`); each worker writes its
    case's record."""

    def __init__(self, catalog: Catalog, out_dir: Path, job: EvalJob, clients: dict[str, LLMClient], run_id: str,
                 workers: int, console: Console) -> None:
        self.catalog, self.out_dir, self.job, self.clients = catalog, out_dir, job, clients
        self.workers, self.console = max(1, workers), console
        self.run_stats = {"scored": 0, "failed": 0, "skipped": 0, "tokens": 0}
        self.fresh_calls = 0  # successful model calls made and stored in this run
        self._lock = threading.Lock()
        self.recorder = CallRecorder(catalog, run_id, on_tokens=self._add_tokens)
        self.prober = (StoredQuestions(job.stored_questions) if job.stored_questions is not None
                       else PROBERS[job.settings.mode])
        # Set by run(), once it knows the cases to do: the bar's total and the stored calls.
        self.progress: BuildProgress | None = None
        self.replay_tries: dict[CallKey, int] = {}

    def _add_tokens(self, n: int) -> None:
        with self._lock:  # called once per fresh successful call
            self.fresh_calls += 1
            self.run_stats["tokens"] += n
            total = self.run_stats["tokens"]
        if self.progress is not None:
            self.progress.tokens(total)

    def _one(self, case: EvalCase) -> str:
        """Evaluate one case and write its record; a :class:`StopRun` (setup error, Ctrl-C)
        propagates and leaves no record (the case stays to do)."""
        calls = CaseCalls(self.recorder, case.case_id, self.replay_tries)
        record = evaluate_case(case, self.job.settings, self.prober, self.clients, calls)
        # pydantic-core's encoder: json.dumps(indent=2)'s output without its pure-Python indenter
        write_bytes_atomic(record_path(self.out_dir, case.case_id),
                           to_json(record, indent=2, inf_nan_mode="constants") + b"\n")
        return record["status"]

    def _done(self, case: EvalCase, status: str) -> None:
        self.run_stats[status] += 1
        assert self.progress is not None  # cases finish only inside run()
        self.progress.advance(status, case.case_id, self.recorder.tokens_by_case.pop(case.case_id, 0))

    def run(self, guard: InterruptGuard) -> dict[str, Any]:
        """Evaluate every case not yet scored; return this run's counts.

        Raises:
            SetupError: from the first case that met one (the others stop within the grace).
            RunInterrupted: Ctrl-C.
        """
        todo = []
        for case in self.job.cases:
            rec = read_record(self.out_dir, case.case_id)
            if rec is not None and rec.get("status") == "scored":
                self.run_stats["skipped"] += 1
            else:
                todo.append(case)
        ids = [c.case_id for c in todo]
        self.recorder.replay = load_replay(self.catalog, ids)
        self.replay_tries = load_replay_tries(self.catalog, ids)
        self.progress = progress = eval_progress(self.console, len(todo))
        for client in self.clients.values():
            client.stop, client.on_wait = guard.stop, progress.note
        with progress, worker_pool(self.workers, "eval") as pool:
            run_interruptible(self._submit(pool), deque(todo), self._done, self.workers, guard)
        return self.run_stats

    def _submit(self, pool: ThreadPoolExecutor):
        return lambda case: pool.submit(self._one, case)
