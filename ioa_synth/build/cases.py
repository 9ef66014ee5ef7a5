"""Case registration: seed tuples become cases with stable ids and record paths.

A case id is ``<split>/<domain>/<task_type>_<NNN>``; NNN (3 digits, from 000) is
given once per (split, seed_id) and kept in the catalog, so it is stable across
re-runs. The record file is ``DIR/<case_id>.json``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from ioa_synth.runs.catalog import Catalog, dumps
from ioa_synth.build.pipeline import Case
from ioa_synth.seeds.tuples import SeedTuple


def register_cases(catalog: Catalog, out_dir: Path, split: str, seeds: list[SeedTuple]) -> list[Case]:
    """Return the cases of ``seeds`` in ``split``, creating catalog rows (status
    ``pending``) and seed rows for those seen for the first time."""
    cases: list[Case] = []
    with catalog.transaction() as cat:
        known = {r["seed_id"]: r for r in cat.query_dicts(
            "SELECT seed_id, case_id FROM cases WHERE split = ?", [split])}
        next_index = {(d, k): n + 1 for d, k, n in cat.execute(
            "SELECT domain, task_type, max(case_index) FROM cases WHERE split = ? GROUP BY ALL", [split])}
        for seed in seeds:
            row = known.get(seed.seed_id)
            if row is None:
                cell = (seed.domain, seed.task_type)
                idx = next_index.get(cell, 0)
                next_index[cell] = idx + 1
                case_id = f"{split}/{seed.domain}/{seed.task_type}_{idx:03d}"
                cat.insert("cases", {"case_id": case_id, "split": split, "domain": seed.domain,
                                     "task_type": seed.task_type, "seed_id": seed.seed_id, "case_index": idx,
                                     "status": "pending", "stage1_attempts": 0, "stage2_attempts": 0,
                                     "updated_at": datetime.now(timezone.utc).replace(tzinfo=None)})
                cat.execute("INSERT INTO seeds VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                            [seed.seed_id, split, seed.source, seed.domain, seed.task_type, seed.title,
                             seed.abstract, dumps(seed.as_record())])
                known[seed.seed_id] = {"case_id": case_id}
            case_id = known[seed.seed_id]["case_id"]
            cases.append(Case(case_id=case_id, split=split, seed=seed, path=out_dir / f"{case_id}.json"))
    return cases


def case_status(catalog: Catalog, case_ids: list[str]) -> dict[str, str]:
    """case_id -> status for the given ids."""
    if not case_ids:
        return {}
    rows = catalog.execute("SELECT case_id, status FROM cases WHERE list_contains(?, case_id)", [case_ids])
    return dict(rows)
