"""A build directory for the viewer: the cases table (filtered, sorted and paged in SQL over
the catalog copy) and one case with every attempt of each stage (:func:`ioa_synth.build.show.case_view`,
which re-runs the structural rules and content gates on the stored replies), the regeneration
feedback each retry was sent, and the calls behind it."""

from __future__ import annotations

import difflib
import json
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
SORTS = {"case": "c.case_id", "cell": "c.domain, c.task_type, c.case_id", "status": "c.status, c.case_id",
         "theta1": "t1.pass NULLS FIRST, t1.got NULLS FIRST, c.case_id",
         "theta2": "t2.pass NULLS FIRST, t2.got NULLS FIRST, c.case_id", "updated": "c.updated_at DESC NULLS LAST, c.case_id"}


def _need_sql() -> str:
    rubric = load_rubric()
    rows = [f"({s.stage}, '{d.name}', {rubric.threshold(s.stage)[d.name]}, {d.max})"
            for s in rubric.stages for d in s.dimensions]
    return "need(stage, dimension, need, top) AS (VALUES " + ", ".join(rows) + ")"


def _tables(cat: Catalog) -> set[str]:
    return {t for (t,) in cat.execute("SELECT table_name FROM information_schema.tables")}


def cases_page(cat: Catalog, filters: dict[str, str], sort: str = "case", page: int = 1) -> dict[str, Any]:
    """One page of the cases table: ``{rows, total, page, pages, choices}``; each row has
    ``case_id, split, domain, task_type, status, stage1_attempts, stage2_attempts,
    discard_reason, gate, regenerated, theta1, theta2, types`` (``thetaN`` =
    ``{got, top, pass}`` of the build judge's latest verdict of stage N, or ``None``)."""
    planted = "planned_types" in _tables(cat)
    where, params = [], []
    status = filters.get("status")
    if status == "regenerated":
        where.append("(c.stage1_attempts > 1 OR c.stage2_attempts > 1)")
    elif status in STATUSES:
        where.append("c.status = ?")
        params.append(status)
    if filters.get("cell"):
        domain, _, task = filters["cell"].partition("/")
        where.append("c.domain = ? AND c.task_type = ?")
        params += [domain, task]
    if filters.get("split"):
        where.append("c.split = ?")
        params.append(filters["split"])
    if filters.get("gate"):
        where.append(f"({GATE}) = ?")
        params.append(filters["gate"])
    if filters.get("type") and planted:
        where.append("list_contains(CAST(p.types_json AS VARCHAR[]), ?)")
        params.append(filters["type"])
    join_types = "LEFT JOIN planned_types p ON p.case_id = c.case_id" if planted else ""
    types_col = "p.types_json" if planted else "NULL"
    cond = (" WHERE " + " AND ".join(where)) if where else ""
    order = SORTS.get(sort, SORTS["case"])
    base = f"""WITH {_need_sql()},
      judged AS (SELECT s.case_id, s.stage, s.attempt, sum(s.score) AS got, sum(n.top) AS top,
                        bool_and(s.score >= n.need) AS pass
                 FROM scores s JOIN need n ON n.stage = s.stage AND n.dimension = s.dimension
                 WHERE s.judge_role = 'judge' AND s.score IS NOT NULL GROUP BY ALL),
      last AS (SELECT case_id, stage, arg_max(got, attempt) AS got, arg_max(top, attempt) AS top,
                      arg_max(pass, attempt) AS pass FROM judged GROUP BY ALL)
      SELECT c.case_id, c.split, c.domain, c.task_type, c.status, c.stage1_attempts, c.stage2_attempts,
             c.discard_reason, c.error, {GATE} AS gate, {types_col} AS types_json,
             t1.got AS t1_got, t1.top AS t1_top, t1.pass AS t1_pass, t2.got AS t2_got, t2.top AS t2_top, t2.pass AS t2_pass
      FROM cases c {join_types}
      LEFT JOIN last t1 ON t1.case_id = c.case_id AND t1.stage = 1
      LEFT JOIN last t2 ON t2.case_id = c.case_id AND t2.stage = 2{cond}"""
    (total,), = cat.execute(f"SELECT count(*) FROM cases c {join_types}{cond}", params)
    pages = max(1, -(-total // PAGE))
    page = min(max(1, page), pages)
    rows = cat.query_dicts(f"{base} ORDER BY {order} LIMIT {PAGE} OFFSET {(page - 1) * PAGE}", params)
    for r in rows:
        r["types"] = json.loads(r.pop("types_json")) if r.get("types_json") else []
        r["regenerated"] = (r["stage1_attempts"] or 0) > 1 or (r["stage2_attempts"] or 0) > 1
        for n in (1, 2):
            got = r.pop(f"t{n}_got")
            top, passed = r.pop(f"t{n}_top"), r.pop(f"t{n}_pass")
            r[f"theta{n}"] = None if got is None else {"got": int(got), "top": int(top), "pass": bool(passed)}
    return {"rows": rows, "total": total, "page": page, "pages": pages, "choices": _choices(cat, planted)}


def _choices(cat: Catalog, planted: bool) -> dict[str, list[str]]:
    cells = [f"{d}/{t}" for d, t in cat.execute("SELECT DISTINCT domain, task_type FROM cases ORDER BY 1, 2")]
    gates = [g for (g,) in cat.execute(f"SELECT DISTINCT {GATE} AS g FROM cases c WHERE c.status = 'discarded' ORDER BY 1")]
    types: list[str] = []
    if planted:
        types = [t for (t,) in cat.execute("SELECT DISTINCT unnest(CAST(types_json AS VARCHAR[])) FROM planned_types ORDER BY 1")]
    splits = [s for (s,) in cat.execute("SELECT DISTINCT split FROM cases ORDER BY 1")]
    return {"status": list(STATUSES), "cell": cells, "gate": gates, "type": types, "split": splits}


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
        view = case_view(snapshot, case_id)
    except ShowError:
        rows = cat.query_dicts("SELECT * FROM cases WHERE case_id = ?", [case_id])
        if not rows:
            return None
        return {"view": {**rows[0], "stage1": None, "stage2": None}, "stages": {}, "diffs": {}, "cues": {}}
    stages: dict[int, list[dict[str, Any]]] = {}
    for n in (1, 2):
        latest = view[f"stage{n}"]
        if latest is None:
            continue
        attempts = latest["attempts"] or [latest["attempt"]]
        stages[n] = []
        for a in attempts:
            shown = latest if a == latest["attempt"] else case_view(snapshot, case_id, attempt=a)[f"stage{n}"]
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
