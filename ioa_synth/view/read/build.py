"""A build directory for the viewer: the cases table (filtered, sorted and paged in SQL over
the catalog copy) and one case with every attempt of each stage (:func:`ioa_synth.build.show.case_view`,
which re-runs the structural rules and content gates on the stored replies), the regeneration
feedback each retry was sent, and the calls behind it."""

from __future__ import annotations

import difflib
import json
import weakref
from pathlib import Path
from typing import Any

from ioa_synth.protocol.rubric import load_rubric
from ioa_synth.runs.catalog import Catalog

PAGE = 50
STATUSES = ("accepted", "discarded", "failed", "pending", "regenerated")
#: What stopped a discarded case, read from its discard reason (its last attempt's failure).
GATE = """CASE WHEN c.status <> 'discarded' THEN NULL
  WHEN c.discard_reason NOT LIKE 'stage % failed twice%' THEN 'near duplicate or other'
  WHEN split_part(c.discard_reason, '| ', -1) LIKE '%invalid output%'
    THEN 'stage ' || substr(c.discard_reason, 7, 1) || ': rules'
  WHEN split_part(c.discard_reason, '| ', -1) LIKE '%gate failures%'
    THEN 'stage ' || substr(c.discard_reason, 7, 1) || ': content gates'
  WHEN split_part(c.discard_reason, '| ', -1) LIKE '%below theta%'
    THEN 'stage ' || substr(c.discard_reason, 7, 1) || ': θ' || substr(c.discard_reason, 7, 1)
  ELSE 'stage ' || substr(c.discard_reason, 7, 1) || ': type check' END"""
SORTS = {"case": "case_id", "cell": "cell, case_id", "status": "status, case_id",
         "theta1": "t1_pass NULLS FIRST, t1_got NULLS FIRST, case_id",
         "theta2": "t2_pass NULLS FIRST, t2_got NULLS FIRST, case_id", "updated": "updated_at DESC NULLS LAST, case_id"}


def _need_sql() -> str:
    rubric = load_rubric()
    rows = [f"({s.stage}, '{d.name}', {rubric.threshold(s.stage)[d.name]}, {d.max})"
            for s in rubric.stages for d in s.dimensions]
    return "need(stage, dimension, need, top) AS (VALUES " + ", ".join(rows) + ")"


def _tables(cat: Catalog) -> set[str]:
    return {t for (t,) in cat.execute("SELECT table_name FROM information_schema.tables")}


#: The summary table :func:`prepare` adds to a catalog copy: one row per case.
SUMMARY = "view_cases"


def prepare(cat: Catalog) -> None:
    """Add :data:`SUMMARY` to a (writable) catalog copy: per case its columns of ``cases``,
    what stopped it (``gate``), whether it was regenerated, the build judge's latest verdict
    per stage (``tN_got``/``tN_top``/``tN_pass``: score sum, the maxima's sum, θN met) and its
    MA types (those of its latest stage-1 reply, else the planned ones), so that the cases page is one indexed query however many cases there are."""
    tables = _tables(cat)
    if "cases" not in tables or "scores" not in tables:
        return
    planted = "planned_types" in tables
    cat.execute(f"""CREATE OR REPLACE TABLE {SUMMARY} AS WITH {_need_sql()},
      judged AS (SELECT s.case_id, s.stage, s.attempt, sum(s.score) AS got, sum(n.top) AS top,
                        bool_and(s.score >= n.need) AS pass
                 FROM scores s JOIN need n ON n.stage = s.stage AND n.dimension = s.dimension
                 WHERE s.judge_role = 'judge' AND s.score IS NOT NULL GROUP BY ALL),
      last AS (SELECT case_id, stage, arg_max(got, attempt) AS got, arg_max(top, attempt) AS top,
                      arg_max(pass, attempt) AS pass FROM judged GROUP BY ALL),
      reply AS (SELECT case_id, arg_max(response_text, attempt) AS text FROM llm_calls
                WHERE role = 'generator' AND stage = 1 AND error IS NULL GROUP BY ALL),
      gen AS (SELECT case_id, TRY(json_extract_string(text, '$.misalignment_points[*].type')) AS types FROM reply)
      SELECT c.case_id, c.split, c.domain, c.task_type, c.domain || '/' || c.task_type AS cell, c.status,
             c.stage1_attempts, c.stage2_attempts, c.discard_reason, c.error, c.updated_at, {GATE} AS gate,
             coalesce(c.stage1_attempts, 0) > 1 OR coalesce(c.stage2_attempts, 0) > 1 AS regenerated,
             CASE WHEN len(g.types) > 0 THEN list_filter(g.types, lambda t: t IS NOT NULL)
                  ELSE {"CAST(p.types_json AS VARCHAR[])" if planted else "CAST([] AS VARCHAR[])"} END AS types,
             t1.got AS t1_got, t1.top AS t1_top, t1.pass AS t1_pass, t2.got AS t2_got, t2.top AS t2_top, t2.pass AS t2_pass
      FROM cases c {"LEFT JOIN planned_types p ON p.case_id = c.case_id" if planted else ""}
      LEFT JOIN gen g ON g.case_id = c.case_id
      LEFT JOIN last t1 ON t1.case_id = c.case_id AND t1.stage = 1
      LEFT JOIN last t2 ON t2.case_id = c.case_id AND t2.stage = 2""")
    cat.execute(f"CREATE INDEX IF NOT EXISTS view_cases_id ON {SUMMARY} (case_id)")


def cases_page(cat: Catalog, filters: dict[str, str], sort: str = "case", page: int = 1) -> dict[str, Any]:
    """One page of the cases table: ``{rows, total, page, pages, choices}``; each row has
    ``case_id, split, domain, task_type, status, stage1_attempts, stage2_attempts,
    discard_reason, gate, regenerated, theta1, theta2, types`` (``thetaN`` =
    ``{got, top, pass}`` of the build judge's latest verdict of stage N, or ``None``).
    Reads :data:`SUMMARY` (:func:`prepare`)."""
    where, params = [], []
    status = filters.get("status")
    if status == "regenerated":
        where.append("regenerated")
    elif status in STATUSES:
        where.append("status = ?")
        params.append(status)
    for name in ("cell", "split", "gate"):
        if filters.get(name):
            where.append(f"{name} = ?")
            params.append(filters[name])
    if filters.get("type"):
        where.append("list_contains(types, ?)")
        params.append(filters["type"])
    cond = (" WHERE " + " AND ".join(where)) if where else ""
    order = SORTS.get(sort, SORTS["case"])
    (total,), = cat.execute(f"SELECT count(*) FROM {SUMMARY}{cond}", params)
    pages = max(1, -(-total // PAGE))
    page = min(max(1, page), pages)
    rows = cat.query_dicts(f"SELECT * FROM {SUMMARY}{cond} ORDER BY {order} LIMIT {PAGE} OFFSET {(page - 1) * PAGE}",
                           params)
    for r in rows:
        for n in (1, 2):
            got, top, passed = r.pop(f"t{n}_got"), r.pop(f"t{n}_top"), r.pop(f"t{n}_pass")
            r[f"theta{n}"] = None if got is None else {"got": int(got), "top": int(top), "pass": bool(passed)}
    return {"rows": rows, "total": total, "page": page, "pages": pages, "choices": _choices(cat)}


_CHOICES: "weakref.WeakKeyDictionary[Catalog, dict[str, list[str]]]" = weakref.WeakKeyDictionary()


def _choices(cat: Catalog) -> dict[str, list[str]]:
    """The values each filter offers (once per catalog copy)."""
    known = _CHOICES.get(cat)
    if known is None:
        def col(sql: str) -> list[str]:
            return [v for (v,) in cat.execute(sql) if v is not None]

        known = _CHOICES[cat] = {
            "status": list(STATUSES), "cell": col(f"SELECT DISTINCT cell FROM {SUMMARY} ORDER BY 1"),
            "gate": col(f"SELECT DISTINCT gate FROM {SUMMARY} ORDER BY 1"),
            "type": col(f"SELECT DISTINCT unnest(types) FROM {SUMMARY} ORDER BY 1"),
            "split": col(f"SELECT DISTINCT split FROM {SUMMARY} ORDER BY 1")}
    return known


# -- one case ----------------------------------------------------------------------------

def rubric_rows(stage: int, verdict: dict[str, Any]) -> list[dict[str, Any]]:
    """The rubric's rows of ``stage`` (Table 7's criteria) with the verdict's score, the
    threshold (θ1/θ2) and whether it is met."""
    rubric = load_rubric()
    need = rubric.threshold(stage)
    return [{"dimension": d.name, "question": d.question, "score": verdict["scores"].get(d.name), "need": need[d.name],
             "max": d.max, "level": d.levels.get(str(verdict["scores"].get(d.name)), ""),
             "met": (verdict["scores"].get(d.name) or -1) >= need[d.name]}
            for d in rubric.stage(stage).dimensions]


def _feedback(cat: Catalog, case_id: str, stage: int, attempt: int) -> str | None:
    """What the regeneration request of ``attempt`` said had failed: its prompt's lead,
    up to the original instructions."""
    rows = cat.execute("SELECT request_json FROM llm_calls WHERE case_id = ? AND stage = ? AND role = 'generator' "
                       "AND attempt = ? ORDER BY error IS NULL DESC, created_at LIMIT 1", [case_id, stage, attempt])
    if not rows:
        return None
    try:
        text = json.loads(rows[0][0])["messages"][-1]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    if not text.startswith("Your previous"):
        return None
    lead, sep, _ = text.partition("\n\nWrite a new")
    return lead + (sep + _.split("\n\n", 1)[0] if sep else "")


def output_lines(stage: int, output: dict[str, Any] | None) -> list[str]:
    """An attempt's output as lines to diff: a dialogue turn by turn, profiles as JSON."""
    if output is None:
        return ["(unreadable reply)"]
    if stage == 2:
        return [line for t in output.get("turns", [])
                for line in (f"{t.get('turn_idx')}. {t.get('speaker_id')} {t.get('speaker_name', '')}: {t.get('utterance', '')}",
                             f"   (thinks) {t.get('inner_thought', '')}")]
    return json.dumps(output, indent=1, ensure_ascii=False).splitlines()


def diff_table(stage: int, first: dict[str, Any] | None, second: dict[str, Any] | None, a: int, b: int) -> str:
    """Side-by-side HTML diff of two attempts, changed lines with two lines around them
    (:class:`difflib.HtmlDiff`, which escapes the text; its ``&nbsp;`` become spaces, the
    stylesheet keeps them and wraps long lines)."""
    table = difflib.HtmlDiff().make_table(output_lines(stage, first), output_lines(stage, second),
                                          f"attempt {a}", f"attempt {b}", context=True, numlines=2)
    return table.replace("&nbsp;", " ")


def case_page(cat: Catalog, snapshot: Path, case_id: str) -> dict[str, Any] | None:
    """Everything the case page shows, or ``None`` for an unknown case: ``view`` (the latest
    attempts, :func:`~ioa_synth.build.show.case_view`), ``stages`` (per stage every attempt
    with its output, rule problems, gate failures, judge verdicts with rubric rows, and the
    feedback that asked for it), ``diffs`` (stage -> HTML of consecutive attempts), ``cues``
    (turn -> the MAs planted there)."""
    from ioa_synth.build.show import ShowError, case_view

    try:
        view = case_view(snapshot, case_id, home=cat.home)
    except ShowError:
        rows = cat.query_dicts("SELECT * FROM cases WHERE case_id = ?", [case_id])
        if not rows:
            return None
        return {"view": {**rows[0], "stage1": None, "stage2": None}, "stages": {}, "diffs": {}, "cues": {}}
    stages: dict[int, list[dict[str, Any]]] = {}
    views: dict[int, dict[str, Any]] = {}  # attempt -> case_view(attempt=...): one per attempt number
    for n in (1, 2):
        latest = view[f"stage{n}"]
        if latest is None:
            continue
        attempts = latest["attempts"] or [latest["attempt"]]
        stages[n] = []
        for a in attempts:
            if a != latest["attempt"] and a not in views:
                views[a] = case_view(snapshot, case_id, attempt=a, home=cat.home)
            shown = latest if a == latest["attempt"] else views[a][f"stage{n}"]
            for v in shown["verdicts"]:
                v["rows"] = rubric_rows(n, v) if v["scores"] else []
            stages[n].append({**shown, "feedback": _feedback(cat, case_id, n, a) if a > 1 else None})
    diffs = {n: [(x["attempt"], y["attempt"], diff_table(n, x["output"], y["output"], x["attempt"], y["attempt"]))
                 for x, y in zip(runs, runs[1:])] for n, runs in stages.items() if len(runs) > 1}
    return {"view": view, "stages": stages, "diffs": diffs, "cues": cues(view)}


def cues(view: dict[str, Any]) -> dict[int, list[dict[str, Any]]]:
    """Turn number -> the MAs the outline plants at that turn (``id, type, topic,
    surface_form, member_a_understanding, member_b_understanding``)."""
    stage1 = view.get("stage1") or {}
    profiles = stage1.get("output") or {}
    points = {p["id"]: p for p in profiles.get("misalignment_points", [])}
    out: dict[int, list[dict[str, Any]]] = {}
    for row in profiles.get("conversation_outline", []):
        for ma in row.get("ma_ids", []):
            if ma in points:
                out.setdefault(row.get("turn"), []).append(points[ma])
    return out
