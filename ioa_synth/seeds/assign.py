"""``seeds assign``: draw disjoint seed pools for the splits from the catalog's papers.

Rules:

- A paper is used at most once across all splits. Papers that share any identity (DOI,
  arXiv id without version, normalised title, ...; see :mod:`ioa_synth.seeds.ids`) count as
  one paper, represented by the smallest ``paper_id``.
- Per domain, papers are sorted by ``paper_id`` and shuffled with
  ``random.Random(f"{rng_seed}:{domain}")``: the same catalog and seed give the same
  assignment, and adding papers to one domain leaves the others unchanged.
- Primaries first, splits in the order test, val, train (a short domain starves train, not
  test); within a split, ranks are dealt round-robin over the task types, so task types
  stay uniform (they differ by at most one when short). Then ``reserve`` tuples per cell,
  in the same split order, from what is left.
- A cell missing primaries is *short* (an error unless allowed); missing reserves are only
  reported.

Outputs: ``DIR/seeds/<split>.jsonl`` (primaries) and ``DIR/seeds/<split>_reserve.jsonl``
(reserves; a split file this run does not write is deleted only with ``replace``), both in the ``build --seeds`` format (:mod:`ioa_synth.seeds.tuples`), cells in
:func:`ioa_synth.protocol.cells.cells` order and ranks ascending; table ``seed_pool``; and
``papers.split`` for every paper of a used group.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ioa_synth.core.atomic import write_text_atomic
from ioa_synth.runs.catalog import Catalog, dumps
from ioa_synth.runs.folder_kinds import claim_folder
from ioa_synth.protocol.cells import DOMAINS, SPLITS, TASK_TYPES, cells
from ioa_synth.seeds.ids import IdentityGroups
from ioa_synth.seeds.store import ensure_tables, load_papers

SEED_POOL_SQL = """
    seed_id VARCHAR, split VARCHAR, domain VARCHAR, task_type VARCHAR, paper_id VARCHAR,
    role VARCHAR, rank INTEGER, rng_seed BIGINT, seed_json VARCHAR, created_at TIMESTAMP,
    PRIMARY KEY (seed_id, split)
"""
#: Order in which splits are served when papers run short.
PRIORITY = ("test", "val", "train")
PROVENANCE = ("paper_id", "source_id", "doi", "license", "origin", "year", "url", "categories", "ids")


def parse_per_cell(text: str) -> dict[str, int]:
    """``"train=40,val=4,test=10"`` → ``{"train": 40, "val": 4, "test": 10}``; omitted splits get 0.

    Raises ``ValueError`` for an unknown split, a repeated split or a count that is not a
    non-negative integer.
    """
    counts = {s: 0 for s in SPLITS}
    seen = set()
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or name not in SPLITS:
            raise ValueError(f"--per-cell: expected split=count with split in {', '.join(SPLITS)}, got {part!r}")
        if name in seen:
            raise ValueError(f"--per-cell: {name} given twice")
        if not value.strip().isdigit():
            raise ValueError(f"--per-cell: {name} needs a whole number >= 0, got {value.strip()!r}")
        seen.add(name)
        counts[name] = int(value)
    if not any(counts.values()):
        raise ValueError("--per-cell: nothing to assign (all counts are 0)")
    return counts


@dataclass
class Plan:
    """An assignment: ``rows`` for ``seed_pool`` (``tuple`` holds the seed tuple), shortfalls."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    short: dict[tuple[str, str, str], int] = field(default_factory=dict)
    reserve_short: dict[tuple[str, str, str], int] = field(default_factory=dict)
    available: dict[str, int] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)


def _representatives(papers: list[dict[str, Any]]) -> tuple[dict[str, list[dict]], dict[str, list[str]]]:
    """Per domain, one paper per identity group; and group root → member paper ids."""
    groups = IdentityGroups()
    for p in papers:
        groups.add([f"paper:{p['paper_id']}", *p["identities"]])
    members: dict[str, list[dict]] = defaultdict(list)
    for p in papers:
        members[groups.group(f"paper:{p['paper_id']}")].append(p)
    by_domain: dict[str, list[dict]] = defaultdict(list)
    for group in members.values():
        rep = min(group, key=lambda p: p["paper_id"])
        by_domain[rep["domain"]].append(rep)
    ids = {min(p["paper_id"] for p in g): [p["paper_id"] for p in g] for g in members.values()}
    return by_domain, ids


def seed_tuple(paper: dict[str, Any], split: str, task_type: str, role: str, rank: int) -> dict[str, Any]:
    """The build-format seed tuple for ``paper`` in a cell (provenance fields included)."""
    rec = paper["record"]
    suffix = f"{rank:03d}" if role == "primary" else f"r{rank:03d}"
    out = {"seed_id": f"{split}-{paper['domain']}-{task_type}-{suffix}", "source": paper["source"],
           "domain": paper["domain"], "task_type": task_type, "title": paper["title"],
           "abstract": paper["abstract"]}
    values = {**rec, "paper_id": paper["paper_id"], "doi": paper["doi"] or rec.get("doi"),
              "license": paper["license"], "year": paper["year"]}
    out.update({k: values.get(k) for k in PROVENANCE if values.get(k) is not None})
    out.update({"split": split, "role": role, "rank": rank})
    return out


def plan_assignment(papers: list[dict[str, Any]], per_cell: dict[str, int], reserve: int,
                    rng_seed: int) -> Plan:
    """Compute the assignment (pure; see module docstring). ``papers`` as from ``load_papers``."""
    by_domain, plan_groups = _representatives(papers)
    plan = Plan(groups=plan_groups)
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    order = [s for s in PRIORITY if per_cell.get(s)]
    for domain in DOMAINS:
        pool = sorted(by_domain.get(domain, []), key=lambda p: p["paper_id"])
        random.Random(f"{rng_seed}:{domain}").shuffle(pool)
        plan.available[domain] = len(pool)
        queue = iter(pool)
        stages = [(s, "primary", per_cell[s]) for s in order] + [(s, "reserve", reserve) for s in order]
        for split, role, count in stages:
            for rank in range(1, count + 1):
                for task in TASK_TYPES:
                    paper = next(queue, None)
                    if paper is None:
                        missing = plan.short if role == "primary" else plan.reserve_short
                        key = (split, domain, task)
                        missing[key] = missing.get(key, 0) + 1
                        continue
                    tup = seed_tuple(paper, split, task, role, rank)
                    plan.rows.append({"seed_id": tup["seed_id"], "split": split, "domain": domain,
                                      "task_type": task, "paper_id": paper["paper_id"], "role": role,
                                      "rank": rank, "rng_seed": rng_seed, "seed_json": dumps(tup),
                                      "created_at": now, "tuple": tup})
    return plan


def seed_file(out_dir: str | Path, split: str, reserve: bool = False) -> Path:
    """``DIR/seeds/<split>.jsonl`` or ``DIR/seeds/<split>_reserve.jsonl``."""
    return Path(out_dir) / "seeds" / (f"{split}_reserve.jsonl" if reserve else f"{split}.jsonl")


class StaleSplitFiles(ValueError):
    """Seed files this assignment would not rewrite exist and ``replace`` was not given."""


def stale_files(out_dir: str | Path, plan: Plan) -> list[Path]:
    """Existing ``DIR/seeds/<split>[_reserve].jsonl`` files that ``plan`` would not write."""
    kept = {(r["split"], r["role"] == "reserve") for r in plan.rows}
    return [seed_file(out_dir, split, reserve) for split in SPLITS for reserve in (False, True)
            if (split, reserve) not in kept and seed_file(out_dir, split, reserve).exists()]


def write_assignment(catalog: Catalog, out_dir: str | Path, plan: Plan) -> list[Path]:
    """Replace ``seed_pool`` and ``papers.split`` with ``plan`` and write the seed files.

    Files of splits without tuples are removed (callers check :func:`stale_files`
    first). Returns the files written.
    """
    catalog.ensure_table("seed_pool", SEED_POOL_SQL)
    split_of = {}
    for row in plan.rows:
        for pid in plan.groups.get(row["paper_id"], [row["paper_id"]]):
            split_of[pid] = row["split"]
    with catalog.transaction():
        catalog.execute("DELETE FROM seed_pool")
        catalog.execute("UPDATE papers SET split = NULL WHERE split IS NOT NULL")
        catalog.insert_many("seed_pool", [{k: v for k, v in r.items() if k != "tuple"} for r in plan.rows])
        for split in SPLITS:
            ids = [pid for pid, s in split_of.items() if s == split]
            if ids:
                catalog.execute("UPDATE papers SET split = ? WHERE paper_id IN (SELECT UNNEST(?::VARCHAR[]))",
                                [split, ids])
    written = []
    position = {cell: i for i, cell in enumerate(cells())}
    for split in SPLITS:
        for reserve in (False, True):
            role = "reserve" if reserve else "primary"
            rows = sorted((r for r in plan.rows if r["split"] == split and r["role"] == role),
                          key=lambda r: (position[(r["domain"], r["task_type"])], r["rank"]))
            path = seed_file(out_dir, split, reserve)
            if rows:
                write_text_atomic(path, "".join(r["seed_json"] + "\n" for r in rows))
                written.append(path)
            else:
                path.unlink(missing_ok=True)
    return written


def run_assign(out_dir: str | Path, per_cell: dict[str, int], reserve: int = 0, rng_seed: int = 0,
               allow_short: bool = False, replace: bool = False) -> tuple[Plan, list[Path]]:
    """Plan and (unless short and not allowed) write the assignment.

    Returns ``(plan, files written)``; nothing is written when ``plan.short`` is non-empty and
    ``allow_short`` is false. Raises ``ValueError`` when the catalog holds no paper, and
    :class:`StaleSplitFiles` (nothing written) when seed files of an earlier assignment
    would be deleted without ``replace``.
    """
    claim_folder(out_dir, "build", "seeds assign")  # a build directory's manifest, before anything is written
    catalog = Catalog(out_dir)
    try:
        ensure_tables(catalog)
        papers = load_papers(catalog)
        if not papers:
            raise ValueError(f"no papers in the catalog at {out_dir}: run `ioa-synth seeds import` or `seeds fetch` first")
        plan = plan_assignment(papers, per_cell, reserve, rng_seed)
        if plan.short and not allow_short:
            return plan, []
        stale = stale_files(out_dir, plan)
        if stale and not replace:
            names = ", ".join(str(p) for p in stale)
            raise StaleSplitFiles(f"this assignment does not write {names} (from an earlier assign); pass --replace "
                                  "to delete it, or give those splits (and --reserve) in --per-cell again")
        return plan, write_assignment(catalog, out_dir, plan)
    finally:
        catalog.close()
