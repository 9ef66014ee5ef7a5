"""``ioa-synth audit``: re-score accepted cases with a second judge (the paper's
cross-family judge audit, App. B.3).

The ``audit_judge`` component scores each accepted case with the build's own rubric
and judge templates: stage 1 every misalignment point of the accepted profiles,
stage 2 the accepted dialogue. Its calls go to ``llm_calls`` (role ``audit_judge``)
and its scores to ``scores`` (``judge_role = 'audit_judge'``, ``judge_model`` its
model), keyed by the accepted attempt, next to the build judge's. A re-run makes no
call for an item already scored by the same audit model.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable

import polars as pl
from rich.console import Console

from ioa_synth.build.builddir import AcceptedCase, BuildDirError, accepted_cases, open_catalog
from ioa_synth.build.fingerprint import build_setup_description
from ioa_synth.build.run_settings import build_language
from ioa_synth.runs.catalog import Catalog
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.client import LLMCallError, StopRun
from ioa_synth.build.pipeline import Case, Pipeline
from ioa_synth.build.stages import STAGES
from ioa_synth.build.stages_multi import stages_for
from ioa_synth.reports.output import write_report
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.protocol.rubric import load_rubric
from ioa_synth.runs.context import RunContext, open_run
from ioa_synth.stats.agreement import compare_scores

ROLE = "audit_judge"

#: Test-split means of the paper's cross-family audit judge (App. B.3).
PAPER_AUDIT_MEANS: dict[str, float] = {
    "subtlety": 2.65, "specificity": 2.00, "believability": 2.00, "naturalness": 2.63,
    "implicitness": 2.66, "coverage": 2.00, "profile_consistency": 2.99,
}


@dataclass
class AuditJob:
    """One stage of one accepted case to score."""

    case: AcceptedCase
    stage: int

    @property
    def attempt(self) -> int:
        return self.case.attempt(self.stage)


def pending_jobs(catalog: Catalog, cases: list[AcceptedCase], model: str) -> list[AuditJob]:
    """The (case, stage) pairs not yet scored by the audit judge ``model`` at their accepted attempt."""
    done = {(c, s, a) for c, s, a in catalog.execute(
        "SELECT DISTINCT case_id, stage, attempt FROM scores WHERE judge_role = ? AND judge_model = ?", [ROLE, model])}
    return [AuditJob(c, s) for c in cases for s in STAGES if (c.case_id, s, c.attempt(s)) not in done]


def run_audit(out_dir: Path, split: str, config: ToolkitConfig, limit: int | None = None, workers: int = 4,
              local_model: str | None = None, console: Console | None = None, args: dict | None = None,
              on_start: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """Audit the first ``limit`` accepted cases of ``split`` (all by default) and return the
    report of :func:`audit_report` plus ``run`` = ``{model, cases, scored, skipped, failed, tokens}``.
    ``on_start()`` is called once the directory and split are known to be good, before any
    endpoint is opened.

    Raises:
        BuildDirError: no build directory, or an unreadable accepted record.
        EndpointError / LocalModelError: the audit judge endpoint cannot be used.
        SetupError: the audit judge refused the setup or could not be reached (run stopped).
        RunInterrupted: Ctrl-C (see :mod:`ioa_synth.runs.interrupt`).
    """
    console = console or Console(stderr=True)
    catalog = open_catalog(out_dir)
    try:
        cases = accepted_cases(catalog, split)[:limit] if limit else accepted_cases(catalog, split)
        if not cases:
            raise BuildDirError(f"{out_dir}: no accepted case in split {split!r}: nothing to audit")
        on_start()
        errors: list[str] = []
        with open_run(catalog, "audit", [ROLE], config, local_model, args,
                      describe=partial(build_setup_description, language=build_language(out_dir)),
                      check=None, record=False, in_kind="build") as run:
            model = run.endpoints[ROLE].model
            jobs = pending_jobs(catalog, cases, model)
            run.summary |= {"model": model, "cases": len(cases), "scored": 0, "skipped": len(STAGES) * len(cases) - len(jobs),
                            "failed": 0, "tokens": 0}
            if jobs:
                _score_all(catalog, run, jobs, workers, console, errors)
        report = audit_report(catalog, split, model, accepted_cases(catalog, split))
        report["run"] = run.summary | {"errors": errors}
        return report
    finally:
        catalog.close()


def _score_all(catalog: Catalog, run: RunContext, jobs: list[AuditJob], workers: int, console: Console,
               errors: list[str]) -> None:
    progress = BuildProgress(console, total=len(jobs), label="audit", statuses=("scored", "failed"))
    client = run.clients[ROLE]
    pipeline = Pipeline(catalog, client, client, load_rubric(), run.start(), on_tokens=run.tokens.add, judge_role=ROLE,
                        language=build_language(catalog.out_dir))  # the audit judge reads the cases' language
    run.recorders.append(pipeline.calls)  # its calls are counted when Ctrl-C stops the run
    run.attach(progress)

    def done(job: AuditJob, error: str | None) -> None:
        if error is None:
            run.summary["scored"] += 1
        else:
            run.summary["failed"] += 1
            errors.append(f"{job.case.case_id} stage {job.stage}: {error}")
        progress.advance("scored" if error is None else "failed", f"{job.case.case_id} stage {job.stage}",
                         pipeline.calls.tokens_by_case.pop(job.case.case_id, 0))

    with progress:
        run.map(jobs, lambda job: _score_one(pipeline, job), done, workers=workers, unit="item", name="audit")


def _score_one(pipeline: Pipeline, job: AuditJob) -> str | None:
    """Score one job through the pipeline's judge step (same templates, schema and
    storage as the build judge, under role ``audit_judge``); the error text on failure.
    Raises :class:`~ioa_synth.llm.errors.StopRun` (setup error, Ctrl-C): it stops the run."""
    c = job.case
    case = Case(c.case_id, c.split, c.seed_tuple(), c.path)
    spec = stages_for(len(c.profiles.members))[job.stage]  # a multi-party case: its own judge templates
    try:
        pipeline.judge_stage(case, spec, job.attempt, c.profiles, getattr(c, spec.name))
    except StopRun:
        raise
    except (LLMCallError, ValueError) as exc:
        return " ".join(str(exc).split())[:300]
    return None


def audit_scores(catalog: Catalog, cases: list[AcceptedCase], model: str) -> pl.DataFrame:
    """One row per (case, stage, item, dimension) of ``cases`` at their accepted attempts,
    with the build judge's score ``build`` and the audit judge's ``audit`` (null if not scored)."""
    keys = pl.DataFrame({"case_id": [c.case_id for c in cases for _ in STAGES],
                         "stage": [s for _ in cases for s in STAGES],
                         "attempt": [c.attempt(s) for c in cases for s in STAGES]},
                        schema={"case_id": pl.String, "stage": pl.Int64, "attempt": pl.Int64})
    rows = catalog.query_dicts(
        "SELECT case_id, stage, attempt, item, dimension, judge_role, arg_max(score, created_at) AS score "
        "FROM scores WHERE score IS NOT NULL AND (judge_role = 'judge' OR (judge_role = ? AND judge_model = ?)) "
        "GROUP BY ALL", [ROLE, model])
    schema = {"case_id": pl.String, "stage": pl.Int64, "attempt": pl.Int64, "item": pl.String,
              "dimension": pl.String, "judge_role": pl.String, "score": pl.Int64}
    scores = pl.DataFrame(rows, schema=schema).join(keys, on=["case_id", "stage", "attempt"], how="inner")
    wide = scores.pivot(on="judge_role", index=["case_id", "stage", "attempt", "item", "dimension"], values="score")
    for col in ("judge", ROLE):
        if col not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Int64).alias(col))
    return wide.rename({"judge": "build", ROLE: "audit"})


def audit_report(catalog: Catalog, split: str, model: str, cases: list[AcceptedCase]) -> dict[str, Any]:
    """Per dimension: n, build judge mean, audit judge mean, mean difference (audit -
    build), share within ±0.5 and ±1 over the items both judges scored; ``audit_items`` and
    ``mean_audit_all``, the audit judge's mean over every item it scored (imported cases have
    no build judge score), next to the paper's audit means (``paper_audit_mean``)."""
    rubric = load_rubric()
    dims = [(s, d.name) for s, d in rubric.all_dimensions()]
    scores = audit_scores(catalog, cases, model)
    rows = compare_scores(scores, "build", "audit", dims)
    alone = {(r["stage"], r["dimension"]): r for r in scores.drop_nulls("audit").group_by("stage", "dimension").agg(
        pl.len().alias("n"), pl.col("audit").cast(pl.Float64).mean().alias("mean")).to_dicts()}
    for r in rows:
        r["paper_audit_mean"] = PAPER_AUDIT_MEANS.get(r["dimension"])
        own = alone.get((r["stage"], r["dimension"]), {})
        r["audit_items"], r["mean_audit_all"] = own.get("n", 0), own.get("mean")
    audited = {c for c, in catalog.execute(
        "SELECT DISTINCT case_id FROM scores WHERE judge_role = ? AND judge_model = ?", [ROLE, model])}
    return {"split": split, "audit_model": model, "accepted_cases": len(cases),
            "audited_cases": sum(c.case_id in audited for c in cases), "dimensions": rows}


def write_audit_report(out_dir: Path, report: dict[str, Any]) -> list[Path]:
    """``DIR/reports/audit_<split>.json`` and ``.csv`` (one line per dimension)."""
    return write_report(out_dir, f"audit_{report['split']}", report, report["dimensions"])
