"""θ pass rates of a build, per split, stage and rubric dimension.

Definitions (build judge only, role ``judge``; audit scores never count):

- a case *reaches* a stage when it has a successful generator call for it; its
  *first attempt* is its lowest generator attempt of that stage; a case still being built
  (``pending``) counts once its stage has passed or the case has ended, not while the
  stage's outcome is open (an unfinished stage is not a failed one);
- ``first_attempt``: share of the cases reaching the stage whose first attempt was
  judged and met θ on every item (an output that broke the content rules fails);
- ``after_regeneration``: share whose stage passed at some attempt (the feedback
  round of the loop and any ``regenerate`` run included);
- per dimension, over judged items (misalignment points or dialogues): the share
  meeting θ on that dimension at the case's first attempt (every case's, a running one's
  too), and at its final attempt (the latest passing one, else the latest judged one; a
  running case's open stage left out), and the mean score at each.

:func:`judge_health` reports, per judge role, stage and dimension, the share
of all verdicts at the dimension's maximum (a judge that always gives the maximum is not
judging) and the number of inconsistent verdicts (feedback claiming no change while a
score is below its maximum; ``scores.dimension = 'judge_inconsistency'``).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ioa_synth.runs.catalog import Catalog
from ioa_synth.protocol.rubric import load_rubric

CASE = ["split", "case_id", "stage"]


def _frames(catalog: Catalog) -> tuple[pl.DataFrame, pl.DataFrame]:
    gens = pl.DataFrame(catalog.query_dicts(
        "SELECT c.split, l.case_id, l.stage, c.status = 'pending' AS running, min(l.attempt) AS first "
        "FROM llm_calls l JOIN cases c USING (case_id) WHERE l.role = 'generator' AND l.error IS NULL GROUP BY ALL"),
        schema={"split": pl.String, "case_id": pl.String, "stage": pl.Int64, "running": pl.Boolean, "first": pl.Int64})
    scores = pl.DataFrame(catalog.query_dicts(
        "SELECT c.split, s.case_id, s.stage, s.attempt, s.item, s.dimension, arg_max(s.score, s.created_at) AS score "
        "FROM scores s JOIN cases c USING (case_id) WHERE s.judge_role = 'judge' AND s.score IS NOT NULL GROUP BY ALL"),
        schema={"split": pl.String, "case_id": pl.String, "stage": pl.Int64, "attempt": pl.Int64, "item": pl.String,
                "dimension": pl.String, "score": pl.Int64})
    rubric = load_rubric()
    need = pl.DataFrame([{"stage": s, "dimension": d, "need": n} for s in (1, 2)
                         for d, n in rubric.threshold(s).items()], schema={"stage": pl.Int64, "dimension": pl.String,
                                                                           "need": pl.Int64})
    scores = scores.join(need, on=["stage", "dimension"], how="inner").with_columns(
        (pl.col("score") >= pl.col("need")).alias("meets"))
    return gens, scores


def pass_rates(catalog: Catalog) -> dict[str, dict[str, Any]]:
    """``{split: {"stage1": {cases, first_attempt, after_regeneration, dimensions:
    {dim: {items_first, first_attempt, items_final, after_regeneration, mean_first, mean_final}}},
    "stage2": ...}}``; rates are fractions, means on the dimension's scale (``None`` with no
    case or item)."""
    gens, scores = _frames(catalog)
    attempts = scores.group_by([*CASE, "attempt"]).agg(pl.col("meets").all().alias("passed"))
    final = attempts.group_by(CASE).agg(
        pl.col("passed").any().alias("ever"),
        pl.when(pl.col("passed").any()).then(pl.col("attempt").filter(pl.col("passed")).max())
        .otherwise(pl.col("attempt").max()).first().alias("final"))
    reached = (gens.join(attempts.rename({"attempt": "first", "passed": "first_passed"}), on=[*CASE, "first"],
                         how="left")
               .join(final, on=CASE, how="left")
               .with_columns(pl.col("first_passed").fill_null(False), pl.col("ever").fill_null(False)))
    cases = reached.filter(~pl.col("running") | pl.col("ever"))  # a running case's open stage is left out
    # a first attempt's verdict is settled once given, a running case's too (a build's status
    # mid-run showed 100% on a dimension the judge had just failed twice)
    first_items = scores.join(reached.select(*CASE, pl.col("first").alias("attempt")), on=[*CASE, "attempt"])
    final_items = scores.join(cases.select(*CASE, pl.col("final").alias("attempt")), on=[*CASE, "attempt"])
    out: dict[str, dict[str, Any]] = {}
    for split in sorted(cases["split"].unique().to_list()):
        out[split] = {f"stage{s}": _stage(cases, first_items, final_items, split, s) for s in (1, 2)}
    return out


def _rate(frame: pl.DataFrame, col: str) -> float | None:
    return None if frame.is_empty() else float(frame[col].cast(pl.Float64).mean())


def _stage(cases: pl.DataFrame, first_items: pl.DataFrame, final_items: pl.DataFrame, split: str,
           stage: int) -> dict[str, Any]:
    def pick(df: pl.DataFrame) -> pl.DataFrame:
        return df.filter((pl.col("split") == split) & (pl.col("stage") == stage))

    c, fi, la = pick(cases), pick(first_items), pick(final_items)
    dims: dict[str, Any] = {}
    for d in load_rubric().stage(stage).dimensions:
        a, b = fi.filter(pl.col("dimension") == d.name), la.filter(pl.col("dimension") == d.name)
        dims[d.name] = {"items_first": a.height, "first_attempt": _rate(a, "meets"),
                        "items_final": b.height, "after_regeneration": _rate(b, "meets"),
                        "mean_first": _rate(a, "score"), "mean_final": _rate(b, "score")}
    return {"cases": c.height, "first_attempt": _rate(c, "first_passed"), "after_regeneration": _rate(c, "ever"),
            "dimensions": dims}


def judge_health(catalog: Catalog) -> dict[str, list[dict[str, Any]]]:
    """``{"dimensions": [{judge_role, stage, dimension, verdicts, at_max, share_at_max}],
    "inconsistency": [{judge_role, stage, verdicts, inconsistent}]}`` over every stored
    verdict (all attempts and splits); a verdict is one judged item (an MA for stage 1, the
    dialogue for stage 2) of one judge call."""
    rubric = load_rubric()
    maxima = [(s, d.name, d.max) for s, d in rubric.all_dimensions()]
    values = ", ".join("(?, ?, ?)" for _ in maxima)
    params = [v for row in maxima for v in row]
    rows = catalog.query_dicts(
        f"WITH m(stage, dimension, max) AS (VALUES {values}) "
        "SELECT s.judge_role, s.stage, s.dimension, count(*) AS verdicts, count(*) FILTER (WHERE s.score = m.max) "
        "AS at_max FROM scores s JOIN m ON m.stage = s.stage AND m.dimension = s.dimension "
        "WHERE s.score IS NOT NULL GROUP BY ALL", params)
    order = {(s, n): i for i, (s, n, _) in enumerate(maxima)}
    rows.sort(key=lambda r: (r["judge_role"], order[(r["stage"], r["dimension"])]))
    for r in rows:
        r["share_at_max"] = r["at_max"] / r["verdicts"] if r["verdicts"] else None
    flags = catalog.query_dicts(
        "SELECT judge_role, stage, count(DISTINCT (call_id, item)) FILTER (WHERE score IS NOT NULL) AS verdicts, "
        "count(DISTINCT (call_id, item)) FILTER (WHERE dimension = 'judge_inconsistency') AS inconsistent "
        "FROM scores WHERE item <> 'overall' GROUP BY ALL ORDER BY ALL")
    return {"dimensions": rows, "inconsistency": flags}
