"""``seeds check``: is any paper used in two splits (or twice in one)?

Looks at every seed tuple the build may use: the files ``DIR/seeds/<split>.jsonl`` and
``DIR/seeds/<split>_reserve.jsonl`` (hand edits included) and the catalog's ``seed_pool``.
Each tuple's identities are those of its provenance (DOI, arXiv id without version,
normalised title, PMC/PubMed/OpenAlex ids, ``paper_id``) plus every identity the catalog
knows for its paper. Tuples sharing an identity are the same paper; a paper in more than one
split is *leakage*, one appearing under two seed ids of one split is *reuse*.
"""

from __future__ import annotations

import json
import warnings
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ioa_synth.runs.catalog import CATALOG_FILE, Catalog
from ioa_synth.protocol.cells import SPLITS
from ioa_synth.core.jsonl import iter_jsonl
from ioa_synth.seeds.assign import seed_file
from ioa_synth.seeds.ids import IdentityGroups, identities


@dataclass
class Finding:
    """Tuples that are one paper: ``kind`` is ``leak`` (several splits) or ``reuse``."""

    kind: str
    splits: list[str]
    seed_ids: list[str]
    titles: list[str]
    shared: list[str]


def _from_files(out_dir: Path) -> list[dict[str, Any]]:
    entries = []
    for split in SPLITS:
        for reserve in (False, True):
            path = seed_file(out_dir, split, reserve)
            if not path.exists():
                continue
            for n, obj in iter_jsonl(path):
                if not isinstance(obj, dict) or "seed_id" not in obj:
                    raise ValueError(f"{path}:{n}: not a seed tuple")
                entries.append({**obj, "split": split})
    return entries


def _from_catalog(out_dir: Path) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    if not (out_dir / CATALOG_FILE).exists():
        return [], {}
    catalog = Catalog(out_dir, read_only=True)
    try:
        tables = {r[0] for r in catalog.execute("SELECT table_name FROM information_schema.tables")}
        pool = catalog.query_dicts("SELECT split, seed_json FROM seed_pool") if "seed_pool" in tables else []
        known = {}
        if "papers" in tables:
            for row in catalog.query_dicts("SELECT paper_id, identities_json FROM papers"):
                known[row["paper_id"]] = json.loads(row["identities_json"])
    finally:
        catalog.close()
    return [{**json.loads(r["seed_json"]), "split": r["split"]} for r in pool], known


def tuple_identities(entry: dict[str, Any], known: dict[str, list[str]]) -> list[str]:
    """Identities of one seed tuple (its own fields plus the catalog's for its paper)."""
    ids = set(identities(entry))
    if entry.get("paper_id"):
        ids.add(f"paper:{entry['paper_id']}")
        ids.update(known.get(entry["paper_id"], []))
    return sorted(ids)


def find_leaks(entries: list[dict[str, Any]], known: dict[str, list[str]] | None = None) -> list[Finding]:
    """Group tuples by shared identity; report groups in several splits or reused in one."""
    known = known or {}
    unique = {(e["split"], e["seed_id"]): e for e in entries}
    groups = IdentityGroups()
    keyed = []
    for key, entry in sorted(unique.items()):
        ids = tuple_identities(entry, known) or [f"seed:{key}"]
        groups.add(ids)
        keyed.append((ids, entry))
    by_group: dict[str, list[tuple[list[str], dict]]] = defaultdict(list)
    for ids, entry in keyed:
        by_group[groups.group(ids[0])].append((ids, entry))
    findings = []
    for members in by_group.values():
        if len(members) < 2:
            continue
        splits = sorted({e["split"] for _, e in members}, key=SPLITS.index)
        shared = set.intersection(*(set(ids) for ids, _ in members)) or set(members[0][0])
        findings.append(Finding("leak" if len(splits) > 1 else "reuse", splits,
                                [f"{e['split']}:{e['seed_id']}" for _, e in members],
                                sorted({str(e.get("title", "")) for _, e in members}), sorted(shared)))
    return sorted(findings, key=lambda f: (f.kind, f.seed_ids))


def run_check(out_dir: str | Path) -> tuple[list[Finding], dict[str, int]]:
    """Check ``out_dir``; returns ``(findings, tuples per split)``.

    Raises ``ValueError`` when there is no assignment to check or a seed file is unreadable.
    """
    out_dir = Path(out_dir)
    file_entries = _from_files(out_dir)
    try:
        pool_entries, known = _from_catalog(out_dir)
    except duckdb.IOException:  # a build holds the catalog: the seed files still tell
        pool_entries, known = [], {}
        warnings.warn(f"catalog {out_dir} is in use; checked the seed files only", stacklevel=2)
    entries = file_entries + pool_entries
    if not entries:
        raise ValueError(f"no seed assignment in {out_dir}: run `ioa-synth seeds assign --out {out_dir}` first")
    counts = {s: len({e["seed_id"] for e in entries if e["split"] == s}) for s in SPLITS}
    return find_leaks(entries, known), counts
