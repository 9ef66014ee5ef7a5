"""Planted disagreement types of a build (App. B.5 taxonomy; target mix after Table 10):
stored per case in the catalog, checked against the type the stage-1 judge reads, and
summarised for ``status``.

Table ``planned_types``: ``case_id``, ``split``, ``types_json`` (the type of MA1, MA2, ...)
and ``type_mix`` (the ``--type-mix`` it was planted under). The plans are a function of the
split's whole seed list and the mix (:func:`split_plans`), not of how the build was cut:
a ``--limit`` pilot, a build resumed in several runs in any order or a reserve tuple drawn
on a discard plans what one full build plans. A case keeps its planned types once stored
(see :func:`~ioa_synth.protocol.planting.plant_types` for how a split is planted).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ioa_synth.protocol.cells import MA_TYPES
from ioa_synth.protocol.plan import points_for
from ioa_synth.protocol.planting import TYPE_DEFINITIONS, load_type_mix, mix_rows, plant_types, plants
from ioa_synth.runs.catalog import Catalog
from ioa_synth.build.record_files import record_file
from ioa_synth.seeds.tuples import SeedTuple

if TYPE_CHECKING:
    from ioa_synth.build.pipeline import Case

TABLE = "planned_types"
COLUMNS = "case_id VARCHAR PRIMARY KEY, split VARCHAR, types_json VARCHAR, type_mix VARCHAR"

#: ``scores.dimension`` of the row holding the type the stage-1 judge read (score NULL,
#: the type in ``feedback``).
JUDGED_TYPE = "judged_type"


def _has_table(catalog: Catalog) -> bool:
    return bool(catalog.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                                [TABLE])[0][0])


def split_plans(split_seeds: list[SeedTuple], type_mix: str | None) -> dict[str, tuple[str, ...]]:
    """Planned types per ``seed_id`` of a split whose whole seed list is ``split_seeds``
    (every tuple the split may build, before ``--limit``: a seed file in file order, or a
    pool's primaries then reserves per cell in rank order), under ``type_mix``.

    The tuples are planted round-robin over the cells (the first tuple of every cell, then
    the second, ...; cells in name order), the order of case ids in a full build, so every
    prefix of that order stays close to the target. A repeated ``seed_id`` keeps its first place.
    Under ``none`` every tuple gets ``()``: no type planned, and the judge reads none.
    """
    if not plants(type_mix):
        return {seed.seed_id: () for seed in split_seeds}
    index: dict[tuple[str, str], int] = {}
    keyed: dict[str, tuple[int, str, str]] = {}
    for seed in split_seeds:
        if seed.seed_id in keyed:
            continue
        cell = (seed.domain, seed.task_type)
        keyed[seed.seed_id] = (index.get(cell, 0), *cell)
        index[cell] = index.get(cell, 0) + 1
    order = sorted(keyed, key=keyed.__getitem__)
    return plant_types([(seed_id, points_for(seed_id)) for seed_id in order], load_type_mix(type_mix))


def plant_split(catalog: Catalog, split: str, cases: list[Case], type_mix: str | None,
                planned: Callable[[], dict[str, tuple[str, ...]]]) -> None:
    """Give each of ``cases`` its planned types (``case.planned_types``): stored ones are
    kept; a new case stores ``planned()[seed_id]``, planted under the target ``type_mix``
    (``paper``, ``uniform`` or a JSON file). ``planned()`` gives :func:`split_plans` of the
    split, which holds every case's seed; it is called only when a case is new."""
    catalog.ensure_table(TABLE, COLUMNS)
    stored = {cid: tuple(json.loads(t)) for cid, t in catalog.execute(
        f"SELECT case_id, types_json FROM {TABLE} WHERE split = ?", [split])}
    new = {c.case_id: planned()[c.seed.seed_id] for c in cases if c.case_id not in stored}
    if new:
        label = type_mix if type_mix in (None, "paper", "uniform", "none") else str(Path(type_mix))
        with catalog.transaction() as cat:
            for cid, types in new.items():
                cat.insert(TABLE, {"case_id": cid, "split": split, "types_json": json.dumps(types),
                                   "type_mix": label or "paper"})
        stored |= new
    for c in cases:
        c.planned_types = stored.get(c.case_id)


def stored_types(catalog: Catalog, case_id: str) -> tuple[str, ...] | None:
    """The planned types of ``case_id`` (``None`` when it was built without planting)."""
    if not _has_table(catalog):
        return None
    rows = catalog.execute(f"SELECT types_json FROM {TABLE} WHERE case_id = ?", [case_id])
    return tuple(json.loads(rows[0][0])) if rows else None


def judged_types(data: Any, ma_ids: list[str]) -> dict[str, str]:
    """The type the stage-1 judge read per MA (``ma_scores.<id>.type``); ids without a
    known type are left out."""
    block = data.get("ma_scores") if isinstance(data, dict) else None
    out: dict[str, str] = {}
    for ma in ma_ids:
        raw = (block or {}).get(ma)
        kind = str(raw.get("type") or "").strip().lower() if isinstance(raw, dict) else ""
        if kind in MA_TYPES:
            out[ma] = kind
    return out


def type_mismatches(planned: tuple[str, ...] | None, ma_ids: list[str],
                    judged: dict[str, str]) -> list[tuple[str, str, str]]:
    """``(MA id, planned type, judged type)`` for each point whose judged type differs from its plan."""
    if not planned:
        return []
    plan = dict(zip(ma_ids, planned))
    return [(ma, plan[ma], kind) for ma, kind in judged.items() if ma in plan and plan[ma] != kind]


def mismatch_reason(wrong: list[tuple[str, str, str]]) -> str:
    """The discard-reason part of judged-type mismatches."""
    return "judged type differs from plan: " + "; ".join(f"{ma} planned {p}, judged {j}" for ma, p, j in wrong)


def mismatch_feedback(wrong: list[tuple[str, str, str]]) -> str:
    """The regeneration request's lines for judged-type mismatches (with the planned type's reading)."""
    return "".join(f"\n- {ma}: a reviewer reads it as {j}, but it must be {p} ({TYPE_DEFINITIONS[p]}); rewrite it "
                   f"as a {p} disagreement" for ma, p, j in wrong)


def with_type_field(schema: dict[str, Any], ma_ids: list[str]) -> dict[str, Any]:
    """A stage-1 judge schema whose every MA item also asks for the ``type`` the judge reads."""
    block = schema["properties"]["ma_scores"]
    for ma in ma_ids:
        item = dict(block["properties"][ma])
        item["properties"] = {**item["properties"], "type": {"type": "string", "enum": list(MA_TYPES)}}
        item["required"] = [*item.get("required", []), "type"]
        block["properties"][ma] = item
    return schema


def judged_type_rows(base: dict[str, Any], judged: dict[str, str]) -> list[dict[str, Any]]:
    """``scores`` rows (``dimension`` :data:`JUDGED_TYPE`, score NULL) holding the judged types."""
    return [{**base, "item": ma, "dimension": JUDGED_TYPE, "score": None, "feedback": kind}
            for ma, kind in judged.items()]


def type_mix_report(catalog: Catalog) -> dict[str, dict[str, Any]]:
    """Per split with planted types: ``{"type_mix", "cases", "rows" (planned vs accepted vs
    target, :func:`~ioa_synth.protocol.planting.mix_rows`), "judged", "mismatched",
    "mismatch_share"}`` (judged types of the build judge's latest verdict per attempt)."""
    if not _has_table(catalog):
        return {}
    out: dict[str, dict[str, Any]] = {}
    plans = catalog.execute(f"SELECT split, case_id, types_json, type_mix FROM {TABLE} ORDER BY case_id")
    accepted = _accepted_types(catalog)
    by_split: dict[str, list] = {}
    for split, cid, types, mix in plans:
        by_split.setdefault(split, []).append((cid, tuple(json.loads(types)), mix))
    judged = catalog.execute(
        f"SELECT s.case_id, s.item, arg_max(s.feedback, s.created_at), p.types_json FROM scores s "
        f"JOIN {TABLE} p USING (case_id) WHERE s.dimension = ? AND s.judge_role = 'judge' GROUP BY s.case_id, "
        f"s.attempt, s.item, p.types_json", [JUDGED_TYPE])
    split_of = {cid: split for split, rows in by_split.items() for cid, _, _ in rows}
    for split, rows in sorted(by_split.items()):
        mix = rows[-1][2]
        if not plants(mix):  # built under --type-mix none: nothing planned to report
            continue
        planned = Counter(t for _, types, _ in rows for t in types)
        acc = Counter(t for cid, _, _ in rows for t in accepted.get(cid, ()))
        mine = [(item, kind, json.loads(types)) for cid, item, kind, types in judged if split_of.get(cid) == split]
        bad = sum(1 for item, kind, types in mine if _planned_of(item, types) not in (None, kind))
        try:
            target = load_type_mix(mix)
        except ValueError:  # the mix file has gone since: compare with the paper
            target = load_type_mix("paper")
        out[split] = {"type_mix": mix, "cases": len(rows), "rows": mix_rows(planned, acc, target, len(rows)),
                      "judged": len(mine), "mismatched": bad, "mismatch_share": bad / len(mine) if mine else None}
    return out


def _planned_of(item: str, types: list[str]) -> str | None:
    index = int(item[2:]) - 1 if item.startswith("MA") and item[2:].isdigit() else -1
    return types[index] if 0 <= index < len(types) else None


def _accepted_types(catalog: Catalog) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for cid, path in catalog.execute("SELECT case_id, path FROM cases WHERE status = 'accepted'"):
        try:
            record = json.loads(record_file(catalog, cid).read_text(encoding="utf-8"))
            points = record["profiles"]["misalignment_points"]
            out[cid] = [str(p["type"]) for p in points]
        except (OSError, TypeError, ValueError, KeyError):
            continue
    return out
