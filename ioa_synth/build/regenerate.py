"""``ioa-synth regenerate``: run chosen cases through the loop again.

History is kept: earlier calls and scores stay in the catalog and the new attempts
are numbered after every attempt the case already has (stage 1 re-runs number both
stages after the case's highest attempt; ``--stage 2`` after its highest stage-2
attempt), so no stored reply is replayed into a new attempt. ``--stage 2`` keeps the
accepted profiles: the stage-1 attempt whose judge scores passed θ1, read back from
``llm_calls``. A record file is replaced atomically only by an accepted outcome; an
accepted case whose new attempts fail keeps its record and its ``accepted`` status.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable

from rich.console import Console

from ioa_synth.build.builddir import build_participants, open_catalog
from ioa_synth.build.fingerprint import build_setup_description, check_build_setup
from ioa_synth.build.run_settings import build_language
from ioa_synth.runs.recorder import load_replay
from ioa_synth.runs.catalog import Catalog
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.protocol.judgement import parse_judgement
from ioa_synth.build.pipeline import Case, Outcome, Pipeline
from ioa_synth.build.stages import PROFILES, stage_spec, stages_from
from ioa_synth.llm.replies import reply_json
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.protocol.rubric import Rubric, load_rubric
from ioa_synth.protocol.multiparty import stage1_model
from ioa_synth.protocol.schemas import Stage1Output
from ioa_synth.seeds.tuples import SeedTuple
from ioa_synth.runs.context import RunContext, open_run

REGENERABLE = ("discarded", "failed")


class RegenerateError(ValueError):
    """A selection that cannot be regenerated (unknown case, no accepted profiles...)."""


@dataclass
class Target:
    """One case to re-run: where it starts and, for ``--stage 2``, the profiles it keeps."""

    case: Case
    before: str
    first_attempt: int
    path_before: str | None = None
    profiles: Stage1Output | None = None
    stage1: dict[str, Any] | None = None


def select_rows(catalog: Catalog, case_ids: list[str], status: str | None, split: str | None) -> list[dict]:
    """``cases`` rows to re-run: the named ones (all must exist), filtered by ``status`` and
    ``split`` when given; with no case named, every case with ``status`` (default: the
    discarded and failed ones). Raises :class:`RegenerateError` for an unknown case id."""
    cols = "case_id, split, domain, task_type, seed_id, status, path"
    if case_ids:
        rows = catalog.query_dicts(f"SELECT {cols} FROM cases WHERE list_contains(?, case_id)", [case_ids])
        unknown = sorted(set(case_ids) - {r["case_id"] for r in rows})
        if unknown:
            raise RegenerateError(f"unknown case id(s): {', '.join(unknown)} (ids look like test/business/planning_000)")
    else:
        rows = catalog.query_dicts(f"SELECT {cols} FROM cases WHERE list_contains(?, status)",
                                   [[status] if status else list(REGENERABLE)])
    rows = [r for r in rows if (status is None or r["status"] == status) and (split is None or r["split"] == split)]
    return sorted(rows, key=lambda r: r["case_id"])


def next_attempt(catalog: Catalog, case_id: str, stages: list[int]) -> int:
    """1 + the highest attempt of ``case_id`` in ``llm_calls`` over ``stages`` (1 if none)."""
    rows = catalog.execute("SELECT max(attempt) FROM llm_calls WHERE case_id = ? AND list_contains(?, stage)",
                           [case_id, stages])
    return (rows[0][0] or 0) + 1


def case_of(catalog: Catalog, out_dir: Path, row: dict) -> Case:
    """Rebuild the :class:`Case` of a ``cases`` row from the seed stored with it."""
    seed = catalog.execute("SELECT seed_json FROM seeds WHERE seed_id = ? AND split = ?", [row["seed_id"], row["split"]])
    if not seed:
        raise RegenerateError(f"{row['case_id']}: its seed tuple {row['seed_id']} is not in the catalog")
    return Case(row["case_id"], row["split"], SeedTuple.model_validate(json.loads(seed[0][0])),
                out_dir / f"{row['case_id']}.json")


def accepted_profiles(catalog: Catalog, rubric: Rubric, case_id: str) -> tuple[Stage1Output, dict[str, Any]] | None:
    """The latest stage-1 attempt of ``case_id`` that passed θ1 with the build judge:
    ``(profiles, {"attempt": n, "ma_scores": ..., "overall_feedback": ...})``; ``None`` if none passed."""
    rows = catalog.execute(
        "SELECT attempt, item, dimension, score FROM scores WHERE case_id = ? AND stage = ? AND judge_role = 'judge' "
        "AND score IS NOT NULL", [case_id, PROFILES.stage])
    per_attempt: dict[int, dict[str, dict[str, int]]] = {}
    for attempt, item, dim, score in rows:
        per_attempt.setdefault(attempt, {}).setdefault(item, {})[dim] = score
    passed = [a for a, items in per_attempt.items() if all(rubric.passes(PROFILES.stage, s) for s in items.values())]
    if not passed:
        return None
    attempt = max(passed)
    stored = load_replay(catalog, [case_id])
    texts = {role: stored.get((case_id, PROFILES.stage, role, attempt)) for role in ("generator", "judge")}
    if None in texts.values():
        return None
    generated = reply_json(texts["generator"])
    profiles = stage1_model(generated).model_validate(generated)  # a multi-party case keeps its sides
    ma_ids = [p.id for p in profiles.misalignment_points]
    judgement = parse_judgement(rubric, PROFILES.stage, reply_json(texts["judge"]), ma_ids)
    return profiles, {"attempt": attempt, **judgement.as_quality()}


def plan_targets(catalog: Catalog, out_dir: Path, rows: list[dict], stage: int,
                 named: bool) -> tuple[list[Target], list[dict[str, str]]]:
    """Targets for ``rows`` and the rows skipped (``{case_id, reason}``). With ``stage`` 2 a
    case without accepted profiles is skipped, or refused (:class:`RegenerateError`) if named."""
    rubric = load_rubric()
    targets: list[Target] = []
    skipped: list[dict[str, str]] = []
    for row in rows:
        case = case_of(catalog, out_dir, row)
        target = Target(case, row["status"], next_attempt(catalog, row["case_id"], stages_from(stage)),
                        path_before=row["path"])
        if stage_spec(stage).after == PROFILES.stage:  # it starts from the accepted profiles
            found = accepted_profiles(catalog, rubric, row["case_id"])
            if found is None:
                reason = "no stage-1 attempt passed θ1, so there are no profiles to keep (use --stage 1)"
                if named:
                    raise RegenerateError(f"{row['case_id']}: {reason}")
                skipped.append({"case_id": row["case_id"], "reason": reason})
                continue
            target.profiles, target.stage1 = found
        targets.append(target)
    return targets, skipped


def run_regenerate(out_dir: Path, config: ToolkitConfig, case_ids: list[str], status: str | None, split: str | None,
                   stage: int, workers: int = 4, local_model: str | None = None, console: Console | None = None,
                   args: dict | None = None, on_start: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """Re-run the selected cases; return ``{"cases": [row...], "skipped": [...], "tokens": n}``
    where a row is ``{case_id, before, after, stage, attempts, reason, kept_previous}``.
    ``on_start()`` is called once the selection is known to be good and not empty, before
    any endpoint is opened.

    Raises:
        BuildDirError / RegenerateError: no build here, a bad selection.
        FingerprintMismatch: the setup differs from the one the directory was built with.
        EndpointError / LocalModelError: an endpoint cannot be used.
        SetupError: an endpoint refused the setup or could not be reached (run stopped;
            the cases it touched keep their status).
        RunInterrupted: Ctrl-C (see :mod:`ioa_synth.runs.interrupt`).
    """
    console = console or Console(stderr=True)
    catalog = open_catalog(out_dir)
    try:
        rows = select_rows(catalog, case_ids, status, split)
        targets, skipped = plan_targets(catalog, out_dir, rows, stage, named=bool(case_ids))
        if not targets:
            return {"cases": [], "skipped": skipped, "tokens": 0}
        on_start()
        participants = build_participants(out_dir)  # the directory's meeting size (2 unless built with more)
        language = build_language(out_dir)  # the build's own: its prompts, gates and setup
        with open_run(catalog, "regenerate", ["generator", "judge"], config, local_model, args,
                      describe=partial(build_setup_description, participants=participants, language=language),
                      check=check_build_setup, in_kind="build") as run:
            run.summary |= {"cases": [], "skipped": skipped, "tokens": 0}
            pipeline = Pipeline(catalog, run.clients["generator"], run.clients["judge"], load_rubric(), run.run_id,
                                on_tokens=run.tokens.add, participants=participants, language=language)
            run.recorders.append(pipeline.calls)  # its calls are counted when Ctrl-C stops the run
            run.summary["cases"] = _run(catalog, pipeline, targets, stage, workers, console, run)
        return run.summary
    finally:
        catalog.close()


def _run(catalog: Catalog, pipeline: Pipeline, targets: list[Target], stage: int, workers: int,
         console: Console, run: RunContext) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    progress = BuildProgress(console, total=len(targets), label="regenerate")
    run.attach(progress)

    def done(target: Target, outcome: Outcome) -> None:
        kept = target.before == "accepted" and outcome.status != "accepted"
        if kept:
            _keep_accepted(catalog, target)
        progress.advance(outcome.status, target.case.case_id, pipeline.calls.tokens_by_case.pop(target.case.case_id, 0))
        results.append(_row(target, outcome, stage, kept))

    with progress:
        run.map(targets, lambda t: pipeline.run_case(t.case, t.first_attempt, t.profiles, t.stage1), done,
                workers=workers, unit="case", name="regen")
    return sorted(results, key=lambda r: r["case_id"])


def _keep_accepted(catalog: Catalog, target: Target) -> None:
    """An accepted case whose new attempts failed keeps its record and its status."""
    catalog.execute("UPDATE cases SET status = 'accepted', path = ?, discard_reason = NULL, error = NULL "
                    "WHERE case_id = ?", [target.path_before, target.case.case_id])


def _row(target: Target, outcome: Outcome, stage: int, kept: bool) -> dict[str, Any]:
    def span(n: int) -> str:
        first = target.first_attempt
        return "-" if n == 0 else (str(first) if n == 1 else f"{first}-{first + n - 1}")

    return {"case_id": target.case.case_id, "before": target.before, "after": "accepted" if kept else outcome.status,
            "stage": stage, "attempts": {"stage1": span(outcome.stage1_attempts), "stage2": span(outcome.stage2_attempts)},
            "reason": outcome.reason, "kept_previous": kept}

