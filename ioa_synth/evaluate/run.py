"""``ioa-synth evaluate``: run the protocol over the cases of ``--data`` into ``RESULTS``,
``--workers`` cases at once, resumable, on the shared run context
(:mod:`ioa_synth.runs.context`: endpoints, ``runs`` row, Ctrl-C).

A re-run skips scored cases (no call), replays the stored calls of a case killed midway
and retries failed cases. A changed setup is refused (:data:`CHECK_SETUP`,
:class:`~ioa_synth.runs.setup_check.SetupChanged`) only as far as it must be: a component
(model, sampling, request options) whose settings changed is refused once it has
successful calls stored here; the protocol settings (templates, access, rollouts,
permutation, mode, input files, ``--questions-from``) are refused once any result is
stored. A setup error (HTTP 400/401/...) stops the run: the cases it touched get no record
and stay to do; Ctrl-C stops starting calls, gives the calls in flight a few seconds and
raises :class:`~ioa_synth.runs.interrupt.RunInterrupted`. Writes ``run.json`` (the
manifest, :mod:`ioa_synth.runs.manifest`), ``records/``, ``summary.json`` (atomically) and
``catalog.duckdb`` (``llm_calls``, ``runs``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from rich.console import Console

from ioa_synth import __version__
from ioa_synth.evaluate.case import EvalSettings, evaluate_case
from ioa_synth.evaluate.stored_questions import StoredQuestions, questions_digest
from ioa_synth.evaluate.records import read_record, record_path
from ioa_synth.evaluate.report import eval_progress
from ioa_synth.evaluate.scoring import summarize
from ioa_synth.evaluate.tables import EVALUATE_TABLES
from ioa_synth.probing.cases import EvalCase
from ioa_synth.probing.probers import PROBERS, forget_first, prepare_first
from ioa_synth.probing.replies import Question
from ioa_synth.probing.calls import CaseCalls
from ioa_synth.llm.client import Endpoint
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.core.templates import all_template_hashes, compile_templates
from ioa_synth.evaluate.multiparty import MULTI_CAPABILITY, is_multi
from ioa_synth.core.atomic import write_bytes_atomic, write_json_atomic
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.runs.recorder import CallKey, CallRecorder, load_replay_tries
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.context import RunContext, open_run
from ioa_synth.runs.manifest import component_settings
from ioa_synth.runs.setup_check import SetupChanged, SetupCheck, stored_results
from ioa_synth.runs.spend import record_run_estimate

from ioa_synth.runs.batch_mode import BatchMode, map_in_waves, start_batch
from ioa_synth.probing.language import CAPABILITY as LANGUAGE_CAPABILITY

__all__ = ["CHECK_SETUP", "COMPONENTS", "EVAL_SETUP_VERSION", "EvalJob", "SetupChanged", "component_of",
           "component_settings", "needed_components", "fingerprint_parts", "run_evaluate"]

COMPONENTS = ("prober", "simulator", "validity_filter")
#: Version of evaluate's setup description (``fingerprint_parts``, stored as ``fingerprint_version``);
#: 2: components compared one by one against their stored successful calls. Not
#: the build's :data:`ioa_synth.runs.fingerprint.FINGERPRINT_VERSION`.
EVAL_SETUP_VERSION = 2


@dataclass
class EvalJob:
    """What to evaluate: ``cases`` (after ``--limit``) out of ``all_cases`` (every input
    file under ``--data``, all fingerprinted), with ``settings``; ``questions_from`` names
    an earlier results folder whose questions ``stored_questions`` (``{case_id:
    [Question]}``, :func:`ioa_synth.evaluate.stored_questions.load_stored_questions`) are asked
    instead of calling the prober."""

    cases: list[EvalCase]
    all_cases: list[EvalCase]
    settings: EvalSettings
    questions_from: Path | None = None
    stored_questions: dict[str, list[Question]] | None = None


def fingerprint_parts(eps: dict[str, Endpoint], job: EvalJob) -> dict[str, Any]:
    """The fingerprinted setup: toolkit version, each component's identity (model and
    request settings; not the base URL nor the key, so the same model on another host
    resumes), evaluate templates' sha256, every input file's sha256, the protocol
    settings, and for ``--questions-from`` the sha256 of each reused case's questions
    (so the same folder named by another path resumes); with a multi-party case among the
    inputs, the ``evaluate_multi`` templates' sha256 too (``multi_templates``)."""
    comps = {name: ep.identity() for name, ep in sorted(eps.items())}
    return {"fingerprint_version": EVAL_SETUP_VERSION, "toolkit_version": __version__, "components": comps,
            "templates": all_template_hashes("evaluate"),
            "inputs": {c.source_file: c.sha256 for c in job.all_cases}, **job.settings.as_dict(),
            "questions_from": questions_digest(job.stored_questions) if job.stored_questions is not None else None,
            **({"multi_templates": all_template_hashes(MULTI_CAPABILITY)} if any(map(is_multi, job.all_cases))
               else {})} | (
        {"language_note": all_template_hashes(LANGUAGE_CAPABILITY)}  # only with a case in another language
        if any(c.language for c in job.all_cases) else {})


def needed_components(mode: str, reuses_questions: bool) -> list[str]:
    """The components an ``evaluate`` in ``mode`` calls: no prober when it reuses the
    questions of another results folder (``--questions-from``), no simulator in the
    ``direct`` mode (it has no simulator step)."""
    return [c for c in COMPONENTS
            if not (c == "prober" and reuses_questions) and not (c == "simulator" and mode == "direct")]


def component_of(role: str) -> str:
    """The component of an ``llm_calls.role`` (``simulator:M1`` -> ``simulator``)."""
    return role.split(":", 1)[0]


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


def _protocol(parts: dict[str, Any]) -> dict[str, Any]:
    """What of the setup is fixed once a result is stored: all but the components (checked
    one by one) and the reused questions (compared case by case, :func:`_questions_changed`)."""
    return {k: v for k, v in parts.items() if k not in ("components", "questions_from")}


#: The setup check of an evaluate run: a component may be reconfigured until it has
#: successful calls stored here; everything else in the setup (templates, inputs, protocol
#: settings, reused questions) may change only while nothing is stored (no successful call
#: and no record).
CHECK_SETUP = SetupCheck(commands=("evaluate",), component_of=component_of, protocol=_protocol,
                         results_stored=stored_results("records", "**/*.json"),
                         also_changed=lambda old, new: _questions_changed(old.get("questions_from"),
                                                                          new.get("questions_from")))


def run_evaluate(job: EvalJob, out_dir: Path, config: ToolkitConfig, workers: int = 4, local_model: str | None = None,
                 console: Console | None = None, args: dict[str, Any] | None = None,
                 on_start: Callable[[], None] = lambda: None, batch: BatchMode | None = None,
                 estimate: tuple[dict[str, Any], Callable[[Catalog], dict[str, Any] | None]] | None = None
                 ) -> dict[str, Any]:
    """Evaluate ``job`` into ``out_dir``; return ``summary.json`` plus ``run`` =
    ``{"scored", "failed", "skipped", "tokens"}`` of this invocation. ``on_start()`` is
    called once the catalog is open (not in use by another run), before any endpoint is.
    With ``batch`` the calls go out in waves of batches (:mod:`ioa_synth.runs.waves`);
    the records are those a live run writes. ``estimate``, ``(plan, make)``:
    ``make(catalog)`` gives the estimate of this run
    (:func:`ioa_synth.evaluate.estimate.estimate_of_run`), recorded before the first call
    for ``status`` unless the estimate recorded last is of the same ``plan``
    (:func:`ioa_synth.runs.spend.record_run_estimate`).

    When the run stops early (setup error, Ctrl-C) ``summary.json`` still describes the
    records written so far (``complete: false``) and the ``runs`` row says why it stopped.

    Raises:
        FingerprintMismatch / SetupChanged: ``out_dir`` holds results of another setup.
        EndpointError / LocalModelError: an endpoint cannot be used.
        SetupError: an endpoint refused the setup or could not be reached (run stopped).
        RunInterrupted: Ctrl-C (``ioa_synth.runs.interrupt``).
    """
    console = console or Console(stderr=True)
    needed = needed_components(job.settings.mode, job.stored_questions is not None)
    catalog = Catalog(out_dir, tables=[EVALUATE_TABLES])
    try:
        on_start()
        reused = {"components": {"prober": {"questions_from": str(job.questions_from)}}}
        with open_run(catalog, "evaluate", needed, config, local_model, args, kind="evaluate",
                      describe=lambda eps: fingerprint_parts(eps, job), check=CHECK_SETUP,
                      settings=job.settings.as_dict(), setup_version=EVAL_SETUP_VERSION,
                      manifest_extra=reused if job.stored_questions is not None else None) as run:
            record_run_estimate(catalog, run.run_id, "evaluate", estimate)
            run.summary |= {"scored": 0, "failed": 0, "skipped": 0, "tokens": 0}
            scheduler = _Scheduler(out_dir, job, run, workers, console, batch)
            try:
                scheduler.run()
            except BaseException:
                write_json_atomic(out_dir / "summary.json", _summary(out_dir, job))
                raise
            summary = _summary(out_dir, job)
            write_json_atomic(out_dir / "summary.json", summary)
    finally:
        catalog.close()
    return summary | {"run": run.summary}


def _summary(out_dir: Path, job: EvalJob) -> dict[str, Any]:
    records = [r for r in (read_record(out_dir, c.case_id) for c in job.cases) if r is not None]
    return summarize(records, len(job.cases), job.settings.as_dict())


class _Scheduler:
    """Keeps ``workers`` cases in flight (:meth:`RunContext.map`); each worker writes its
    case's record; the counts go to the run's summary."""

    def __init__(self, out_dir: Path, job: EvalJob, run: RunContext, workers: int, console: Console,
                 batch: BatchMode | None = None) -> None:
        self.out_dir, self.job, self.run_ctx, self.batch = out_dir, job, run, batch
        self.workers, self.console = max(1, workers), console
        self.prober = (StoredQuestions(job.stored_questions) if job.stored_questions is not None
                       else PROBERS[job.settings.mode])
        compile_templates("evaluate")  # before the workers start, not inside their first calls
        # Set by run(), once it knows the cases to do: the bar's total and the stored calls.
        self.progress: BuildProgress | None = None
        self.recorder: CallRecorder | None = None
        self.replay_tries: dict[CallKey, int] = {}
        self._last_submitted: EvalCase | None = None

    def _one(self, case: EvalCase) -> str:
        """Evaluate one case and write its record; a :class:`StopRun` (setup error, Ctrl-C)
        propagates and leaves no record (the case stays to do)."""
        assert self.recorder is not None  # cases start only inside run()
        ahead: list[EvalCase] = []

        def prepare_next() -> None:  # the case queued behind this one: its first prompt, while our calls run
            nxt = self._last_submitted
            if not ahead and nxt is not None and nxt is not case:
                ahead.append(nxt)
                prepare_first(self.prober, nxt, self.job.settings.access)

        calls = CaseCalls(self.recorder, case.case_id, self.replay_tries, before_call=prepare_next,
                          language=case.language)
        try:
            record = evaluate_case(case, self.job.settings, self.prober, self.run_ctx.clients, calls)
        finally:
            forget_first(case.case_id)
        path = record_path(self.out_dir, case.case_id)

        def write() -> list:
            write_bytes_atomic(path, record.to_json_bytes(), sync=False)
            return []

        # written by the catalog's writer after the case's calls, while this worker starts its next
        # case, and fsynced before the next batch commits; a record a power cut left unreadable is
        # evaluated again (read_record); run() flushes before anything reads the records
        self.run_ctx.catalog.record_later(write, sync=[path])
        return record.status

    def _done(self, case: EvalCase, status: str) -> None:
        self.run_ctx.summary[status] += 1
        assert self.progress is not None and self.recorder is not None  # cases finish only inside run()
        self.progress.advance(status, case.case_id, self.recorder.tokens_by_case.pop(case.case_id, 0))

    def run(self) -> None:
        """Evaluate every case not yet scored, counting them in the run's summary.

        Raises:
            SetupError: from the first case that met one (the others stop within the grace).
            RunInterrupted: Ctrl-C.
        """
        todo = []
        for case in self.job.cases:
            rec = read_record(self.out_dir, case.case_id)
            if rec is not None and rec.status == "scored":
                self.run_ctx.summary["skipped"] += 1
            else:
                todo.append(case)
        ids = [c.case_id for c in todo]
        waves = None
        if self.batch is not None:
            self.recorder, waves = start_batch(self.run_ctx, self.batch, ids, note=lambda text: progress.note(text))
        else:
            self.recorder = self.run_ctx.recorder(replay_of=ids)
        self.replay_tries = load_replay_tries(self.run_ctx.catalog, ids)
        self.progress = progress = eval_progress(self.console, len(todo))
        self.run_ctx.attach(progress)
        try:
            with progress:
                map_in_waves(self.run_ctx, waves, deque(todo), self._one, self._done, workers=self.workers,
                             unit="case", name="eval", on_submit=self._submitted)
        finally:
            self.run_ctx.catalog.flush()  # the records written behind the workers are on disk

    def _submitted(self, case: EvalCase) -> None:
        self._last_submitted = case  # queued behind the running ones: the case a worker starts next
