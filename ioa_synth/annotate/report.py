"""``annotate report``: human scores against an LLM judge, per rubric dimension
(as the paper reports its human study, App. B.3 and Table 9: n, human mean with the annotators averaged,
LLM mean, share of items within ±0.5 and ±1 point), plus inter-annotator agreement: Krippendorff's alpha
(ordinal, all annotators) and quadratic-weighted Cohen's kappa (exactly two
annotators, items both rated). Calibration items are left out.

The judge (:data:`JUDGES`) is the audit judge of ``ioa-synth audit`` (``scores.judge_role =
'audit_judge'``) or the build judge (``'judge'``); by default the audit judge when the split has
audit scores, else the build judge. Cases brought in by ``build import`` have no build judge
score, so on imported data only the audit judge fills the paired columns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from ioa_synth.build.audit import ROLE as AUDIT_ROLE
from ioa_synth.runs.catalog import Catalog
from ioa_synth.reports.output import write_report
from ioa_synth.protocol.rubric import load_rubric
from ioa_synth.stats.agreement import compare_scores, ordinal_alpha, quadratic_kappa
from ioa_synth.annotate.importer import TABLE
from ioa_synth.annotate.sample import AnnotationError

KEY = ["case_id", "stage", "attempt", "item", "dimension"]
#: ``--judge`` choices: name -> ``scores.judge_role``.
JUDGES = {"audit": AUDIT_ROLE, "build": "judge"}


def annotated_splits(catalog: Catalog) -> list[str]:
    """Splits with imported sample scores, in name order."""
    if not _has_table(catalog):
        return []
    return [s for s, in catalog.execute(f"SELECT DISTINCT split FROM {TABLE} WHERE item_set = 'sample' ORDER BY 1")]


def _has_table(catalog: Catalog) -> bool:
    return bool(catalog.execute("SELECT 1 FROM information_schema.tables WHERE table_name = ?", [TABLE]))


def human_scores(catalog: Catalog, split: str) -> pl.DataFrame:
    """Sample scores of ``split``: columns annotator + :data:`KEY` + score."""
    rows = catalog.query_dicts(f"SELECT annotator, {', '.join(KEY)}, score FROM {TABLE} "
                               "WHERE split = ? AND item_set = 'sample'", [split]) if _has_table(catalog) else []
    schema = {"annotator": pl.String, "case_id": pl.String, "stage": pl.Int64, "attempt": pl.Int64, "item": pl.String,
              "dimension": pl.String, "score": pl.Int64}
    return pl.DataFrame(rows, schema=schema)


def judge_models(catalog: Catalog, split: str, judge: str) -> list[str]:
    """The models that scored cases of ``split`` as ``judge`` (a :data:`JUDGES` name), in name order."""
    return [m for m, in catalog.execute(
        "SELECT DISTINCT s.judge_model FROM scores s JOIN cases c USING (case_id) WHERE c.split = ? "
        "AND s.judge_role = ? AND s.score IS NOT NULL ORDER BY 1", [split, JUDGES[judge]])]


def choose_judge(catalog: Catalog, split: str, judge: str | None) -> tuple[str, list[str]]:
    """``(judge name, its models)``: ``judge`` when given, else ``audit`` when ``split`` has audit
    scores, else ``build``.

    Raises:
        AnnotationError: ``judge`` is not a :data:`JUDGES` name, or ``audit`` was asked for and
            the split has no audit score.
    """
    if judge is not None and judge not in JUDGES:
        raise AnnotationError(f"--judge must be one of {', '.join(JUDGES)} (got {judge!r})")
    if judge is None:
        judge = "audit" if judge_models(catalog, split, "audit") else "build"
    models = judge_models(catalog, split, judge)
    if judge == "audit" and not models:
        raise AnnotationError(f"no audit judge scores for split {split!r} (run 'ioa-synth audit' first, or give "
                              "--judge build)")
    return judge, models


def judge_scores(catalog: Catalog, split: str, judge: str = "build") -> pl.DataFrame:
    """The scores of ``split`` by ``judge`` (a :data:`JUDGES` name; latest per key, whichever
    of its models): :data:`KEY` + ``llm``."""
    rows = catalog.query_dicts(
        f"SELECT {', '.join('s.' + k for k in KEY)}, arg_max(s.score, s.created_at) AS llm FROM scores s "
        "JOIN cases c USING (case_id) WHERE c.split = ? AND s.judge_role = ? AND s.score IS NOT NULL GROUP BY ALL",
        [split, JUDGES[judge]])
    schema = {"case_id": pl.String, "stage": pl.Int64, "attempt": pl.Int64, "item": pl.String, "dimension": pl.String,
              "llm": pl.Int64}
    return pl.DataFrame(rows, schema=schema)


def annotation_report(catalog: Catalog, split: str, judge: str | None = None) -> dict[str, Any]:
    """The report of ``split`` against ``judge`` (:func:`choose_judge`): ``{split, judge: {name,
    role, models, default}, annotators, items, dimensions: [{stage, dimension, n, human_mean,
    llm_mean, mean_diff, within_0_5, within_1, alpha, kappa, kappa_pairs, human_items,
    human_mean_all}]}``: the means and shares over the items the judge scored too;
    ``human_items``/``human_mean_all`` over every rated item.
    Raises :class:`AnnotationError` when no sample score of ``split`` was imported, or from
    :func:`choose_judge`."""
    human = human_scores(catalog, split)
    if human.is_empty():
        raise AnnotationError(f"no annotations imported for split {split!r} (run 'ioa-synth annotate import')")
    name, models = choose_judge(catalog, split, judge)
    annotators = sorted(human["annotator"].unique().to_list())
    per_item = human.group_by(KEY).agg(pl.col("score").cast(pl.Float64).mean().alias("human"))
    merged = per_item.join(judge_scores(catalog, split, name), on=KEY, how="left")
    rubric = load_rubric()
    rows = compare_scores(merged, "llm", "human", [(s, d.name) for s, d in rubric.all_dimensions()])
    alone = {(r["stage"], r["dimension"]): r for r in per_item.group_by("stage", "dimension").agg(
        pl.len().alias("n"), pl.col("human").mean().alias("mean")).to_dicts()}
    out = []
    for r, (_, dim) in zip(rows, rubric.all_dimensions(), strict=True):
        sub = human.filter(pl.col("dimension") == dim.name)
        alpha, kappa, pairs = _agreement(sub, annotators, list(range(dim.min, dim.max + 1)))
        out.append({"stage": r["stage"], "dimension": r["dimension"], "n": r["n"], "human_mean": r["mean_human"],
                    "llm_mean": r["mean_llm"], "mean_diff": r["mean_diff"], "within_0_5": r["within_0_5"],
                    "within_1": r["within_1"], "alpha": alpha, "kappa": kappa, "kappa_pairs": pairs,
                    "human_items": alone.get((r["stage"], r["dimension"]), {}).get("n", 0),
                    "human_mean_all": alone.get((r["stage"], r["dimension"]), {}).get("mean")})
    items = per_item.select("case_id", "item").unique()
    return {"split": split, "judge": {"name": name, "role": JUDGES[name], "models": models, "default": judge is None},
            "annotators": annotators,
            "items": {"points": items.filter(pl.col("item") != "dialogue").height,
                      "dialogues": items.filter(pl.col("item") == "dialogue").height},
            "dimensions": out}


def _agreement(sub: pl.DataFrame, annotators: list[str], domain: list[int]) -> tuple[float | None, float | None, int]:
    """Alpha over the annotators x items table of one dimension; kappa over the items
    both annotators rated (only with exactly two annotators)."""
    if sub.is_empty():
        return None, None, 0
    wide = sub.with_columns(pl.concat_str(["case_id", "item", "attempt"], separator="#").alias("_item")) \
        .pivot(on="annotator", index="_item", values="score").sort("_item")
    present = [a for a in annotators if a in wide.columns]
    alpha = ordinal_alpha([wide[a].to_list() for a in present], domain)
    if len(annotators) != 2 or len(present) != 2:
        return alpha, None, 0
    both = wide.drop_nulls(present)
    return alpha, quadratic_kappa(both[present[0]].to_list(), both[present[1]].to_list(), domain), both.height


def write_annotation_report(out_dir: Path, report: dict[str, Any]) -> list[Path]:
    """``DIR/reports/annotation_<split>.json``."""
    return write_report(out_dir, f"annotation_{report['split']}", report)
