"""``ioa-synth show``: one attempt of any case, accepted or not.

Everything comes from the catalog, so a discarded case is as visible as an accepted
one: the generator replies in ``llm_calls``, the judge verdicts in ``scores``, the
case's status and discard reason in ``cases``. The structural rules and the content
gates are re-run on the stored replies (they are deterministic), which gives the gate
failures of each attempt.

An *attempt number* numbers the generations of one stage (the loop: attempt 1,
then the regeneration round; ``regenerate`` continues the numbering). Without
``attempt`` the latest generation of each stage is shown; with it, that attempt of
each stage that has one. A dialogue is shown with the profiles it was written from:
the latest stage-1 attempt up to its number whose build-judge scores passed θ1.
A case brought in by ``build import`` is shown as its record gives it (attempt 0).
Rendering with rich: :mod:`ioa_synth.build.show_render`.
"""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Set as AbstractSet
from typing import Any

from pydantic import BaseModel, ValidationError

from ioa_synth.build.builddir import build_meetings, build_participants, open_catalog, record_stages
from ioa_synth.build.importer import imported_source
from ioa_synth.build.record_files import record_file
from ioa_synth.llm.replies import reply_json
from ioa_synth.protocol.rubric import load_rubric
from ioa_synth.build.stages import DIALOGUE, PROFILES, STAGES, StageSpec
from ioa_synth.build.show_series import series_dialogues
from ioa_synth.build.stages_series import build_stages
from ioa_synth.protocol.plan_passes import THOUGHTS_ROLE
from ioa_synth.runs.recorder import load_replay
from ioa_synth.build.run_settings import build_language
from ioa_synth.protocol.gates_text import in_language
from ioa_synth.runs.catalog import Catalog


class ShowError(ValueError):
    """An unknown case, or an attempt the case does not have; the message says which."""


def _generations(cat: Catalog, case_id: str, meetings: int = 1) -> tuple[dict[tuple[int, int], str],
                                                                           set[tuple[int, int]]]:
    """The generator's reply per (stage, attempt), and the (stage, attempt) keys whose inner
    thoughts are not written yet. A stage written in two passes (the scaffold's lines and
    inner thoughts, :mod:`ioa_synth.protocol.plan_passes`) is the joined dialogue, its
    thoughts empty while the second pass has not answered."""
    stored = load_replay(cat, [case_id])
    gens = {(s, a): text for (_, s, role, a), text in stored.items() if role == "generator"}
    if meetings > 1:  # build --meetings K: a stage-2 attempt is one call per meeting, shown as one series
        return gens | series_dialogues(stored), set()
    thoughts = {(s, a): text for (_, s, role, a), text in stored.items() if role == THOUGHTS_ROLE}
    joined: dict[tuple[int, int], str] = {}
    pending: set[tuple[int, int]] = set()
    for key, text in gens.items():
        if key[0] != DIALOGUE.stage:
            joined[key] = text
            continue
        joined[key], two_pass = _joined(text, thoughts.get(key))
        if two_pass and key not in thoughts:
            pending.add(key)
    return joined, pending


def _joined(lines_text: str, thoughts_text: str | None) -> tuple[str, bool]:
    """The stage-2 reply of the two passes as one dialogue's JSON, and whether
    ``lines_text`` is a lines-pass reply (turns without inner thoughts); ``(lines_text,
    False)`` when it is not one, or does not parse."""
    try:
        lines = reply_json(lines_text)
        turns = lines["turns"]
        if not isinstance(turns, list) or any("inner_thought" in t for t in turns):
            return lines_text, False
        thoughts = reply_json(thoughts_text)["turns"] if thoughts_text is not None else []
        by_turn = {t.get("turn_idx"): t.get("inner_thought", "") for t in thoughts if isinstance(t, dict)}
        return json.dumps({"turns": [t | {"inner_thought": by_turn.get(t.get("turn_idx"), "")} for t in turns]}), True
    except (ValueError, KeyError, TypeError, AttributeError):
        return lines_text, False


def _scores(cat: Catalog, case_id: str, stage: int, attempt: int) -> list[dict[str, Any]]:
    return cat.query_dicts(
        "SELECT judge_role, judge_model, item, dimension, score, feedback FROM scores "
        "WHERE case_id = ? AND stage = ? AND attempt = ? ORDER BY judge_role, item, dimension", [case_id, stage, attempt])


def _parse(model: type[BaseModel], text: str) -> tuple[BaseModel | None, str | None]:
    # The stored text is the raw reply: a reasoning model's <think> block or a code
    # fence is still there, exactly as the pipeline decoded it (llm/replies.py).
    try:
        return model.model_validate(reply_json(text)), None
    except (ValueError, ValidationError) as exc:
        return None, f"unreadable reply: {' '.join(str(exc).split())[:200]}"


def _verdicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Score rows grouped per judge role and item: ``{judge_role, judge_model, item,
    scores: {dim: n}, feedback, inconsistency}``."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        v = out.setdefault((r["judge_role"], r["item"]), {
            "judge_role": r["judge_role"], "judge_model": r["judge_model"], "item": r["item"], "scores": {},
            "feedback": "", "inconsistency": None})
        if r["dimension"] == "judge_inconsistency":
            v["inconsistency"] = r["feedback"]
        elif r["dimension"] == "overall_feedback":
            v["feedback"] = r["feedback"]
        else:
            v["scores"][r["dimension"]] = r["score"]
            v["feedback"] = v["feedback"] or r["feedback"] or ""
    return list(out.values())


def _passed_stage1(cat: Catalog, case_id: str) -> set[int]:
    rubric = load_rubric()
    per: dict[int, dict[str, dict[str, int]]] = {}
    for a, item, dim, score in cat.execute(
            "SELECT attempt, item, dimension, score FROM scores WHERE case_id = ? AND stage = 1 "
            "AND judge_role = 'judge' AND score IS NOT NULL", [case_id]):
        per.setdefault(a, {}).setdefault(item, {})[dim] = score
    return {a for a, items in per.items() if items and all(rubric.passes(1, s) for s in items.values())}


def furthest_case(out_dir: Path, home: Path | None = None, running: bool = False) -> str:
    """The case id ``show`` picks when none is named: an accepted case, else the case whose
    dialogue went furthest (most stage-2 attempts the judge scored, then most stage-2
    generations), else the one with most stage-1 generations; ties go to the most recently
    updated, then the smallest id. (A case whose stage 1 needed a regeneration is not further
    than one whose dialogue reached the judge: the new user's demo was shown its worst case.)

    ``out_dir`` is the folder read (a snapshot's temporary copy while a build runs), ``home``
    the user's folder the messages name (default ``out_dir``), ``running`` whether a build
    is writing it (the error then says to wait, not to start a build).

    Raises:
        BuildDirError: ``out_dir`` is not a build directory.
        ShowError: no case has a generated attempt yet.
    """
    cat = open_catalog(out_dir, read_only=True)
    try:
        rows = cat.execute(
            "SELECT c.case_id FROM cases c JOIN llm_calls l ON l.case_id = c.case_id "
            "AND l.role IN ('generator', 'judge') AND l.error IS NULL GROUP BY c.case_id, c.status, c.updated_at "
            "HAVING count(*) FILTER (WHERE l.role = 'generator') > 0 "
            "ORDER BY c.status = 'accepted' DESC, "
            "count(DISTINCT l.attempt) FILTER (WHERE l.stage = 2 AND l.role = 'judge') DESC, "
            "count(DISTINCT l.attempt) FILTER (WHERE l.stage = 2 AND l.role = 'generator') DESC, "
            "count(DISTINCT l.attempt) FILTER (WHERE l.stage = 1 AND l.role = 'generator') DESC, "
            "c.updated_at DESC NULLS LAST, c.case_id LIMIT 1")
        if not rows:  # a directory of imported cases only
            rows = cat.execute("SELECT case_id FROM cases WHERE status = 'accepted' ORDER BY case_id LIMIT 1")
    finally:
        cat.close()
    if not rows:
        advice = ("the running build has not stored one; try again in a minute ('ioa-synth status' shows its "
                  "progress)" if running else "run 'ioa-synth build' first")
        raise ShowError(f"{home or out_dir}: no case has a generated attempt yet; {advice}")
    return rows[0][0]


def case_view(out_dir: Path, case_id: str, attempt: int | None = None, home: Path | None = None) -> dict[str, Any]:
    """The attempt of ``case_id`` to show, as JSON-ready data: ``{case_id, split, domain,
    task_type, status, discard_reason, error, record_path, seed, stage1, stage2}`` where a
    stage is ``None`` or ``{attempt, attempts, output, problems, gate_failures, verdicts,
    thoughts_pending}`` (``thoughts_pending``: the scaffold's lines are written, the inner
    thoughts not yet, so no gate was checked);
    ``stage2`` also has ``profiles_attempt``, the stage-1 attempt the dialogue was written from
    (its gates are re-checked against those profiles; without ``attempt`` that is the stage-1
    attempt shown). ``home``: the build directory when ``out_dir`` is a snapshot copy of its
    catalog (the records are read from ``home``).

    Raises:
        BuildDirError: ``out_dir`` is not a build directory.
        ShowError: unknown case id, or ``attempt`` exists for neither stage.
    """
    cat = open_catalog(out_dir, read_only=True)
    if home is not None:  # a snapshot copy of the build directory ``home``
        cat.home = Path(home)
    try:
        rows = cat.query_dicts("SELECT c.*, s.seed_json FROM cases c LEFT JOIN seeds s "
                               "ON s.seed_id = c.seed_id AND s.split = c.split WHERE c.case_id = ?", [case_id])
        if not rows:
            known = [r["case_id"] for r in cat.query_dicts("SELECT case_id FROM cases ORDER BY case_id")]
            listed = ", ".join(known[:5]) + (f" and {len(known) - 5} more" if len(known) > 5 else "")
            raise ShowError(f"unknown case id {case_id!r} (this build has {listed or 'no cases'})")
        row = rows[0]
        k = build_meetings(Path(home or out_dir))
        gens, pending = _generations(cat, case_id, k)
        source = imported_source(cat, case_id)
        if source is not None and not gens:
            return _imported_view(cat, row, source, attempt)
        if not gens:
            raise ShowError(f"{case_id} has no generated attempt yet (status {row['status']})")
        have = {s: sorted(a for st, a in gens if st == s) for s in STAGES}
        if attempt is not None and attempt not in have[1] + have[2]:
            listed = "; ".join(f"stage {s}: {', '.join(map(str, a)) or 'none'}" for s, a in have.items())
            raise ShowError(f"{case_id} has no attempt {attempt} ({listed})")
        a2 = _pick(have[2], attempt)
        a1 = _pick(have[1], attempt)
        source = _written_from(cat, case_id, a2) if a2 is not None else None
        if source is not None and attempt is None:
            a1 = source
        specs = build_stages(build_participants(Path(home or out_dir)), k)  # N people, K meetings: their rules
        stage1 = _stage_view(cat, case_id, specs[1], a1, have[1], gens, None)
        profiles = _parse(specs[1].output, gens[(PROFILES.stage, source)])[0] if source is not None else None
        stage2 = _stage_view(cat, case_id, specs[2], a2, have[2], gens, profiles, pending)
        if stage2 is not None:
            stage2["profiles_attempt"] = source
        return {"case_id": case_id, "split": row["split"], "domain": row["domain"], "task_type": row["task_type"],
                "status": row["status"], "discard_reason": row["discard_reason"], "error": row["error"],
                "record_path": str(record_file(cat, case_id)) if row["status"] == "accepted" else None,
                "seed": json.loads(row["seed_json"]) if row["seed_json"] else None,
                "stage1": stage1, "stage2": stage2}
    finally:
        cat.close()


def _imported_view(cat: Catalog, row: dict[str, Any], source: dict[str, Any], attempt: int | None) -> dict[str, Any]:
    """:func:`case_view` of a case brought in by ``build import``: its record as given (stage
    attempt 0, no generation), with the scores ``audit`` gave it; ``imported`` names the source."""
    if attempt not in (None, 0):
        raise ShowError(f"{row['case_id']} was imported, not generated: it has no attempt {attempt}")
    path = record_file(cat, row["case_id"])
    record = json.loads(path.read_text(encoding="utf-8"))
    profiles, dialogue = record_stages(record)
    stages = [{"attempt": 0, "attempts": [], "output": out.model_dump(), "problems": [], "gate_failures": [],
               "verdicts": _verdicts(_scores(cat, row["case_id"], stage, 0))}
              for stage, out in ((1, profiles), (2, dialogue))]
    return {"case_id": row["case_id"], "split": row["split"], "domain": row["domain"], "task_type": row["task_type"],
            "status": row["status"], "discard_reason": None, "error": None, "record_path": str(path),
            "seed": record.get("seed") if isinstance(record.get("seed"), dict) else None,
            "imported": {k: str(v) for k, v in source.items()}, "stage1": stages[0], "stage2": stages[1]}


def _written_from(cat: Catalog, case_id: str, stage2_attempt: int) -> int | None:
    """The stage-1 attempt whose profiles stage-2 attempt ``stage2_attempt`` was written from:
    the latest stage-1 attempt that passed θ1 before that dialogue was requested (stage-2
    attempts are numbered on their own, so dialogue 1 may come from profiles 2), else the
    latest stage-1 attempt before it; ``None`` when there is none."""
    times = {(st, a): t for st, a, t in cat.execute(
        "SELECT stage, attempt, min(created_at) FROM llm_calls WHERE case_id = ? AND role = 'generator' "
        "AND error IS NULL GROUP BY ALL", [case_id])}
    t2 = times.get((2, stage2_attempt))
    before = sorted((t, a) for (st, a), t in times.items() if st == 1 and t2 is not None and t < t2)
    passed = _passed_stage1(cat, case_id)
    return max(((t, a) for t, a in before if a in passed), default=before[-1] if before else (None, None))[1]


def _pick(attempts: list[int], attempt: int | None) -> int | None:
    if attempt is None:
        return attempts[-1] if attempts else None
    if attempt in attempts:
        return attempt
    return max((a for a in attempts if a < attempt), default=None)


def _stage_view(cat: Catalog, case_id: str, spec: StageSpec, attempt: int | None, attempts: list[int],
                gens: dict[tuple[int, int], str], profiles: BaseModel | None,
                pending: AbstractSet[tuple[int, int]] = frozenset()) -> dict[str, Any] | None:
    """One stage's attempt as shown, read and checked by ``spec`` (the build's stage: a
    multi-party one for ``--participants`` N > 2); ``thoughts_pending``: its lines are written
    and its inner thoughts not yet (the gates then wait for them: an empty thought is no failure)."""
    if attempt is None:
        return None
    stage = spec.stage
    output, unreadable = _parse(spec.output, gens[(stage, attempt)])
    problems = [unreadable] if unreadable else []
    gates: list[str] = []
    waiting = (stage, attempt) in pending
    if output is not None and waiting:
        problems = []
    elif output is not None:
        problems = spec.problems(output)
        if not problems:
            with in_language(build_language(cat.home)):  # re-checked as the build checked it
                gates = spec.gates(output, profiles, None)
    return {"attempt": attempt, "attempts": attempts, "output": output.model_dump() if output else None,
            "problems": problems, "gate_failures": gates, "verdicts": _verdicts(_scores(cat, case_id, stage, attempt)),
            "thoughts_pending": waiting}
