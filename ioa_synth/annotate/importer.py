"""``annotate import``: read one annotator's scores from a Label Studio JSON export or a
filled CSV, check every score against the export manifest and the rubric, and store
them in the catalog's ``annotations`` table in one transaction (all or nothing).

Label Studio export: a JSON list of tasks, each ``{"data": {"case_id", ...},
"annotations": [{"completed_by", "was_cancelled", "result": [{"from_name", "to_name",
"type": "rating", "value": {"rating": N}}, ...]}]}``. Rejected (nothing stored): an
unknown case, item, control or dimension; a score that is not an integer in the
dimension's range; the same item and dimension twice in the file, or already imported
for this annotator; more than one non-cancelled annotation on a task.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import polars as pl

from ioa_synth.runs.catalog import Catalog
from ioa_synth.protocol.rubric import load_rubric
from ioa_synth.runs.run_rows import finish_run, start_run
from ioa_synth.text.utf8 import decode_utf8
from ioa_synth.annotate.forms import rating_names
from ioa_synth.annotate.sample import DIALOGUE_ITEM, AnnotationError, Manifest, load_manifest
from ioa_synth.core.jsonl import json_problem, read_problem

TABLE = "annotations"
COLUMNS = """
    annotator VARCHAR, split VARCHAR, item_set VARCHAR, case_id VARCHAR, stage INTEGER, attempt INTEGER,
    item VARCHAR, dimension VARCHAR, score INTEGER, source_file VARCHAR, import_id VARCHAR, imported_at TIMESTAMP
"""


@dataclass
class RawScore:
    """A score as read from a file, before checks; ``where`` locates it for error messages."""

    case_id: str
    item: str
    dimension: str
    value: Any
    where: str


def read_scores(path: Path) -> list[RawScore]:
    """Read a Label Studio export (``.json``) or a filled CSV (``.csv``).
    Raises :class:`AnnotationError` for an unreadable or ill-formed file."""
    suffix = path.suffix.lower()
    if suffix not in (".json", ".csv"):
        raise AnnotationError(f"{path}: expected a Label Studio JSON export (.json) or a filled CSV (.csv)")
    if not path.is_file():  # polars' own message repeats the path
        raise AnnotationError(f"{path}: {'is a directory' if path.is_dir() else 'no such file'}")
    try:
        if suffix == ".csv":
            text = decode_utf8(path.read_bytes(), path, AnnotationError)  # polars guesses otherwise
            return _from_csv(pl.read_csv(text.encode("utf-8"), infer_schema=False), path)
        data = json.loads(decode_utf8(path.read_bytes(), path, AnnotationError))
    except OSError as exc:
        raise AnnotationError(read_problem(path, exc)) from exc
    except json.JSONDecodeError as exc:
        raise AnnotationError(json_problem(path, exc)) from exc
    except pl.exceptions.PolarsError as exc:
        raise AnnotationError(f"{path}: unreadable CSV ({' '.join(str(exc).split())[:200]})") from exc
    return _from_label_studio(data, path)


def _from_label_studio(data: Any, path: Path) -> list[RawScore]:
    if not isinstance(data, list):
        raise AnnotationError(f"{path}: not a Label Studio JSON export (expected a list of tasks)")
    out: list[RawScore] = []
    for n, task in enumerate(data, start=1):
        case_id = task.get("data", {}).get("case_id") if isinstance(task, dict) else None
        if not isinstance(case_id, str):
            raise AnnotationError(f"{path}: task {n} has no data.case_id (not a task from 'annotate export')")
        active = [a for a in task.get("annotations") or [] if isinstance(a, dict) and not a.get("was_cancelled")]
        if len(active) > 1:
            who = ", ".join(str(_annotator_of(a)) for a in active)
            raise AnnotationError(f"{path}: task {n} ({case_id}) has {len(active)} annotations (by {who}); "
                                  "import one annotator's export at a time")
        for r in (active[0].get("result") or []) if active else []:
            where = f"task {n} ({case_id}), control {r.get('from_name') if isinstance(r, dict) else None!r}"
            if not isinstance(r, dict) or r.get("type") != "rating" or not isinstance(r.get("value"), dict):
                raise AnnotationError(f"{path}: {where}: expected a result of type 'rating' with a value")
            item, dim = _control(r.get("from_name"), case_id, path, where)
            out.append(RawScore(case_id, item, dim, r["value"].get("rating"), where))
    return out


def _annotator_of(annotation: dict[str, Any]) -> Any:
    who = annotation.get("completed_by")
    return who.get("email") or who.get("id") if isinstance(who, dict) else who


def _control(name: Any, case_id: str, path: Path, where: str) -> tuple[str, str]:
    """(item, dimension) of a rating control name such as ``MA1_subtlety``."""
    if isinstance(name, str):
        item = name.split("_", 1)[0]
        known = rating_names([item] if item.startswith("MA") else [])
        if name in known:
            return known[name][1], known[name][2]
    raise AnnotationError(f"{path}: {where}: unknown rating control (not in the labeling config)")


def _from_csv(frame: pl.DataFrame, path: Path) -> list[RawScore]:
    if "item_id" not in frame.columns:
        raise AnnotationError(f"{path}: no item_id column (not a CSV from 'annotate export --format csv')")
    dims = [d.name for _, d in load_rubric().all_dimensions() if d.name in frame.columns]
    if not dims:
        raise AnnotationError(f"{path}: no score column (expected one per rubric dimension)")
    out: list[RawScore] = []
    for n, row in enumerate(frame.select(["item_id", *dims]).iter_rows(named=True), start=2):
        item_id = (row["item_id"] or "").strip()
        case_id, sep, item = item_id.rpartition("#")
        if not sep or not case_id or not item:
            raise AnnotationError(f"{path}: line {n}: bad item_id {item_id!r} (expected <case_id>#<item>)")
        for dim in dims:
            text = (row[dim] or "").strip()
            if text:
                out.append(RawScore(case_id, item, dim, text, f"line {n}, column {dim}"))
    return out


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, (int, float)) and float(value).is_integer():
        return int(value)
    return None


def check_scores(out_dir: Path, raw: list[RawScore], path: Path) -> list[dict[str, Any]]:
    """Turn raw scores into ``annotations`` rows (without annotator/import fields);
    raises :class:`AnnotationError` on the first bad score."""
    rubric = load_rubric()
    manifests: dict[str, Manifest] = {}
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in raw:
        split = r.case_id.split("/", 1)[0]
        if split not in manifests:
            manifests[split] = load_manifest(out_dir, split)
        case = manifests[split].case(r.case_id)
        label = f"{r.case_id}#{r.item}"
        if case is None or (r.item != DIALOGUE_ITEM and r.item not in case.ma_ids):
            raise AnnotationError(f"{path}: {r.where}: unknown item {label} (not in the exported {split} sample)")
        stage = 2 if r.item == DIALOGUE_ITEM else 1
        try:
            dim = rubric.stage(stage).dimension(r.dimension)
        except KeyError:
            raise AnnotationError(f"{path}: {r.where}: {r.dimension} does not apply to {label} "
                                  f"(stage {stage} item)") from None
        score = _as_int(r.value)
        if score is None or not dim.min <= score <= dim.max:
            raise AnnotationError(f"{path}: {r.where}: {label} {dim.name} = {r.value!r} is not an integer "
                                  f"in {dim.min}-{dim.max}")
        key = (r.case_id, r.item, dim.name)
        if key in rows:
            raise AnnotationError(f"{path}: {r.where}: duplicate score for {label} {dim.name} in this file")
        rows[key] = {"split": split, "item_set": case.item_set, "case_id": r.case_id, "stage": stage,
                     "attempt": case.attempt(stage), "item": r.item, "dimension": dim.name, "score": score}
    return list(rows.values())


def import_file(catalog: Catalog, out_dir: Path, path: Path, annotator: str) -> dict[str, Any]:
    """Check and store the scores of ``path`` for ``annotator``, all in one transaction.

    Returns ``{"annotator", "scores", "items", "cases", "sets": {set: n_scores}}``.
    Raises :class:`AnnotationError` (nothing stored) for any bad or duplicate score.
    """
    annotator = annotator.strip()
    if not annotator:
        raise AnnotationError("--annotator must not be empty")
    rows = check_scores(out_dir, read_scores(path), path)
    if not rows:
        raise AnnotationError(f"{path}: no scores found (nothing was rated)")
    catalog.ensure_table(TABLE, COLUMNS)
    with catalog.transaction() as cat:
        keys = [f"{r['case_id']}#{r['item']}#{r['dimension']}" for r in rows]
        dup = cat.execute(f"SELECT case_id, item, dimension FROM {TABLE} WHERE annotator = ? AND "
                          "list_contains(?, case_id || '#' || item || '#' || dimension) LIMIT 1", [annotator, keys])
        if dup:
            raise AnnotationError(f"{path}: {dup[0][0]}#{dup[0][1]} {dup[0][2]} was already imported for annotator "
                                  f"{annotator!r}; nothing imported")
        import_id = start_run(cat, "annotate import", {"file": str(path), "annotator": annotator}, None)
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        cat.insert_many(TABLE, [{"annotator": annotator, **r, "source_file": str(path), "import_id": import_id,
                                 "imported_at": now} for r in rows])
        summary = {"annotator": annotator, "scores": len(rows), "items": len({(r["case_id"], r["item"]) for r in rows}),
                   "cases": len({r["case_id"] for r in rows}),
                   "sets": {s: sum(r["item_set"] == s for r in rows) for s in sorted({r["item_set"] for r in rows})}}
        finish_run(cat, import_id, summary)
    return summary
