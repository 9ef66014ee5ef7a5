"""``ioa-synth evaluate``: run the protocol over the cases of ``--data`` into ``RESULTS``,
``--workers`` cases at once, resumable (issue 7 §6-7).

A re-run of the same setup skips scored cases (no call), replays the stored calls of a
case killed midway and retries failed cases. A different setup (models and sampling,
templates, access, rollouts, permutation, mode, input files) on a ``RESULTS`` that an
earlier run started is refused (:class:`SetupChanged`). Writes ``run.json``, ``records/``,
``summary.json`` (atomically) and ``catalog.duckdb`` (``llm_calls``, ``runs``).
"""

from __future__ import annotations

import json
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console

from ioa_synth import __version__
from ioa_synth.evaluate.case import EvalSettings, evaluate_case
from ioa_synth.evaluate.inputs import EvalCase
from ioa_synth.evaluate.probers import PROBERS, StoredQuestions
from ioa_synth.evaluate.records import CaseCalls, load_replay_tries, read_record, record_path
from ioa_synth.evaluate.report import EvalProgress
from ioa_synth.evaluate.scoring import summarize
from ioa_synth.llm.client import Endpoint, LLMClient
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.endpoints import open_endpoints
from ioa_synth.llm.prompts import all_template_hashes
from ioa_synth.store.atomic import write_json_atomic
from ioa_synth.store.calls import CallRecorder, load_replay
from ioa_synth.store.catalog import Catalog
from ioa_synth.store.fingerprint import describe_difference, fingerprint
from ioa_synth.store.runs import finish_run, start_run

COMPONENTS = ("prober", "simulator", "validity_filter")
FINGERPRINT_VERSION = 1


class SetupChanged(RuntimeError):
    """``RESULTS`` holds results of another setup; the message names what changed."""


@dataclass
class EvalJob:
    """What to evaluate: ``cases`` (after ``--limit``) out of ``all_cases`` (every input
    file under ``--data``, all fingerprinted), with ``settings``; ``questions_from`` reuses
    an earlier results folder's questions instead of calling the prober."""

    cases: list[EvalCase]
    all_cases: list[EvalCase]
    settings: EvalSettings
    questions_from: Path | None = None


def component_settings(ep: Endpoint) -> dict[str, Any]:
    """``run.json`` view of one component: model, temperature, structured output, request
    options and ``base_url_kind`` (``embedded`` | ``remote``); no key, no URL."""
    return {"model": ep.model, "temperature": ep.temperature, "structured_output": ep.structured_output,
            "request_options": ep.request_options, "base_url_kind": "embedded" if ep.embedded else "remote"}


def fingerprint_parts(eps: dict[str, Endpoint], job: EvalJob) -> dict[str, Any]:
    """The fingerprinted setup: toolkit version, each component's identity (model and
    request settings; not the base URL nor the key, so the same model on another host
    resumes), evaluate templates' sha256, every input file's sha256, and the protocol
    settings."""
    comps = {name: ep.identity() for name, ep in sorted(eps.items())}
    return {"fingerprint_version": FINGERPRINT_VERSION, "toolkit_version": __version__, "components": comps,
            "templates": all_template_hashes("evaluate"),
            "inputs": {c.source_file: c.sha256 for c in job.all_cases}, **job.settings.as_dict(),
            "questions_from": str(job.questions_from) if job.questions_from else None}


def check_setup(out_dir: Path, parts: dict[str, Any]) -> None:
    """Refuse a setup different from the one ``out_dir`` was started with: its records and
    its stored calls (replayed on resume) belong to that setup.

    Raises:
        SetupChanged: ``run.json`` exists and names another fingerprint (or is unreadable).
    """
    run_file = out_dir / "run.json"
    if not run_file.exists():
        return
    try:
        old = json.loads(run_file.read_text(encoding="utf-8"))
        old_parts = old["fingerprint_parts"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SetupChanged(f"{run_file} is unreadable; use a new --out") from exc
    if fingerprint(old_parts) != fingerprint(parts):
        diffs = describe_difference(old_parts, parts)
        raise SetupChanged(f"{out_dir} holds results of another setup ({'; '.join(diffs[:3])}); "
                           "use a new --out for a changed setup")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def run_evaluate(job: EvalJob, out_dir: Path, config: ToolkitConfig, workers: int = 4, local_model: str | None = None,
                 console: Console | None = None, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """Evaluate ``job`` into ``out_dir``; return ``summary.json`` plus ``run`` =
    ``{"scored", "failed", "skipped", "tokens"}`` of this invocation.

    Raises:
        SetupChanged: ``out_dir`` holds results of another setup.
        EndpointError / LocalModelError: an endpoint cannot be used.
    """
    console = console or Console(stderr=True)
    needed = [c for c in COMPONENTS if not (c == "prober" and job.questions_from)
              and not (c == "simulator" and job.settings.mode == "direct")]  # direct: no simulator step
    with open_endpoints(needed, config, local_model, log_dir=out_dir / "logs") as eps:
        parts = fingerprint_parts(eps, job)
        check_setup(out_dir, parts)
        components = {c: component_settings(ep) for c, ep in eps.items()}
        if job.questions_from:
            components["prober"] = {"questions_from": str(job.questions_from)}
        run_json = {"command": "evaluate", "argv": sys.argv[1:], "args": args or {}, "components": components,
                    "fingerprint": fingerprint(parts), "fingerprint_parts": parts,
                    "started_at": _now(), "finished_at": None}
        catalog = Catalog(out_dir)
        clients = {c: LLMClient(ep) for c, ep in eps.items()}
        try:
            write_json_atomic(out_dir / "run.json", run_json)
            run_id = start_run(catalog, "evaluate", args or {}, parts)
            run = _Scheduler(catalog, out_dir, job, clients, run_id, workers, console).run()
            records = [r for r in (read_record(out_dir, c.case_id) for c in job.cases) if r is not None]
            summary = summarize(records, len(job.cases), job.settings.as_dict())
            write_json_atomic(out_dir / "summary.json", summary)
            finish_run(catalog, run_id, run)
            write_json_atomic(out_dir / "run.json", run_json | {"finished_at": _now()})
        finally:
            for client in clients.values():
                client.close()
            catalog.close()
    return summary | {"run": run}


class _Scheduler:
    """Keeps ``workers`` cases in flight; each worker writes its case's record."""

    def __init__(self, catalog: Catalog, out_dir: Path, job: EvalJob, clients: dict[str, LLMClient], run_id: str,
                 workers: int, console: Console) -> None:
        self.catalog, self.out_dir, self.job, self.clients = catalog, out_dir, job, clients
        self.workers, self.console = max(1, workers), console
        self.run_stats = {"scored": 0, "failed": 0, "skipped": 0, "tokens": 0}
        self._lock = threading.Lock()
        self.recorder = CallRecorder(catalog, run_id, on_tokens=self._add_tokens)
        self.prober = StoredQuestions(job.questions_from) if job.questions_from else PROBERS[job.settings.mode]

    def _add_tokens(self, n: int) -> None:
        with self._lock:
            self.run_stats["tokens"] += n
            total = self.run_stats["tokens"]
        self.progress.tokens(total)

    def _one(self, case: EvalCase) -> str:
        calls = CaseCalls(self.recorder, case.case_id, self.replay_tries)
        record = evaluate_case(case, self.job.settings, self.prober, self.clients, calls)
        write_json_atomic(record_path(self.out_dir, case.case_id), record)
        return record["status"]

    def run(self) -> dict[str, Any]:
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
        self.progress = EvalProgress(self.console, total=len(todo), label="evaluate")
        pool = ThreadPoolExecutor(self.workers, thread_name_prefix="eval")
        try:
            with self.progress:
                queue, running = list(reversed(todo)), set()
                while queue or running:
                    while queue and len(running) < self.workers:
                        running.add(pool.submit(self._one, queue.pop()))
                    done, running = wait(running, return_when=FIRST_COMPLETED)
                    for fut in done:
                        status = fut.result()
                        self.run_stats[status] += 1
                        self.progress.advance(status)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # Ctrl-C: stop now; re-running resumes
            raise
        pool.shutdown(wait=True)
        return self.run_stats
