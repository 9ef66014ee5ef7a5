"""The ``papers`` table of the catalog: one row per merged paper.

Tables (created on first use):

- ``papers``: ``paper_id`` (the first record's own id, e.g. ``arxiv:2104.12255``), the
  record fields (``domain, source, source_id, doi, title, abstract, categories_json, year,
  license, url, fetched_at, query``), ``origin_json``, ``identities_json`` (all identities
  of all merged records), ``sources_json`` (one entry per merged record: source, id, query,
  origin, licence), ``record_json`` (the first full record), ``split`` (set by assign).
- ``paper_ids``: ``identity -> paper_id`` lookup used to merge records that share an
  identity (see :mod:`ioa_synth.seeds.ids`).

Merging keeps the first record's text and fills its missing ``doi``/``year``/``license``
from later ones; it is idempotent (adding the same record twice changes nothing).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Iterable

from ioa_synth.runs.catalog import Catalog, dumps
from ioa_synth.seeds.ids import identities, normalize_doi, primary_identity

PAPERS_SQL = """
    paper_id VARCHAR PRIMARY KEY, domain VARCHAR, source VARCHAR, source_id VARCHAR,
    doi VARCHAR, title VARCHAR, abstract VARCHAR, categories_json VARCHAR, year INTEGER,
    license VARCHAR, url VARCHAR, fetched_at VARCHAR, query VARCHAR, origin_json VARCHAR,
    identities_json VARCHAR, sources_json VARCHAR, record_json VARCHAR, split VARCHAR,
    updated_at TIMESTAMP
"""
PAPER_IDS_SQL = "identity VARCHAR PRIMARY KEY, paper_id VARCHAR"

#: Fields every paper record must carry (non-empty strings).
REQUIRED = ("domain", "source", "source_id", "title", "abstract")


def ensure_tables(catalog: Catalog) -> None:
    """Create ``papers`` and ``paper_ids`` if missing."""
    catalog.ensure_table("papers", PAPERS_SQL)
    catalog.ensure_table("paper_ids", PAPER_IDS_SQL)


def _year(value: Any) -> int | None:
    try:
        return int(str(value)[:4]) if value not in (None, "") else None
    except ValueError:
        return None


def _source_entry(record: dict[str, Any]) -> dict[str, Any]:
    keys = ("source", "source_id", "query", "origin", "license", "fetched_at", "domain")
    return {k: record.get(k) for k in keys if record.get(k) is not None}


def _new_row(paper_id: str, record: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    return {
        "paper_id": paper_id,
        "domain": record["domain"],
        "source": record["source"],
        "source_id": str(record["source_id"]),
        "doi": normalize_doi(record.get("doi") or (record.get("ids") or {}).get("doi")),
        "title": record["title"],
        "abstract": record["abstract"],
        "categories_json": dumps(record.get("categories") or []),
        "year": _year(record.get("year")),
        "license": record.get("license"),
        "url": record.get("url"),
        "fetched_at": record.get("fetched_at"),
        "query": record.get("query"),
        "origin_json": dumps(record.get("origin")),
        "identities_json": dumps(ids),
        "sources_json": dumps([_source_entry(record)]),
        "record_json": dumps(record),
        "split": None,
        "updated_at": datetime.now(timezone.utc).replace(tzinfo=None),
    }


def _merge(row: dict[str, Any], record: dict[str, Any], ids: list[str]) -> bool:
    """Merge ``record`` into the paper ``row`` in place; True if the row changed."""
    known = set(json.loads(row["identities_json"]))
    sources = json.loads(row["sources_json"])
    entry = _source_entry(record)
    before = dict(row)
    if entry not in sources:
        row["sources_json"] = dumps(sources + [entry])
    if not known.issuperset(ids):
        row["identities_json"] = dumps(sorted(known | set(ids)))
    fill = {"doi": normalize_doi(record.get("doi") or (record.get("ids") or {}).get("doi")),
            "year": _year(record.get("year")), "license": record.get("license")}
    row.update({k: v for k, v in fill.items() if v is not None and row[k] is None})
    return row != before


def validate(record: Any) -> str | None:
    """Why ``record`` cannot be a paper (``"missing field 'title'"`` ...), or None if it can."""
    if not isinstance(record, dict):
        return "expected a JSON object"
    for key in REQUIRED:
        value = record.get(key)
        if value is None or not str(value).strip():
            return f"missing field {key!r}"
    from ioa_synth.protocol.cells import DOMAINS

    if record["domain"] not in DOMAINS:
        return f"unknown domain {record['domain']!r}"
    return None


def add_papers(catalog: Catalog, records: Iterable[dict[str, Any]]) -> tuple[int, int]:
    """Add records as papers, merging each into a paper that shares an identity, in one
    transaction. Returns ``(new papers, merged records)``.

    Raises ``ValueError`` for an invalid record (see :func:`validate`); nothing is written then.
    """
    ensure_tables(catalog)
    with catalog.transaction():
        index = dict(catalog.execute("SELECT identity, paper_id FROM paper_ids"))
        fresh: dict[str, dict[str, Any]] = {}
        changed: dict[str, dict[str, Any]] = {}
        new_ids: list[dict[str, str]] = []
        merged = 0
        for record in records:
            problem = validate(record)
            if problem:
                raise ValueError(problem)
            own = primary_identity(record)
            ids = sorted(set(identities(record)) | {own})
            hits = sorted({index[i] for i in ids if i in index})
            if hits:
                paper_id, merged = hits[0], merged + 1
                row = fresh.get(paper_id) or changed.get(paper_id) or catalog.query_dicts(
                    "SELECT * FROM papers WHERE paper_id = ?", [paper_id])[0]
                if _merge(row, record, ids) and paper_id not in fresh:
                    changed[paper_id] = row
            else:
                paper_id = own
                fresh[paper_id] = _new_row(paper_id, record, ids)
            for identity in ids:
                if identity not in index:
                    index[identity] = paper_id
                    new_ids.append({"identity": identity, "paper_id": paper_id})
        catalog.insert_many("papers", fresh.values())
        catalog.insert_many("paper_ids", new_ids)
        for paper_id, row in changed.items():
            cols = ("sources_json", "identities_json", "doi", "year", "license")
            catalog.execute(f"UPDATE papers SET {', '.join(f'{c} = ?' for c in cols)} WHERE paper_id = ?",
                            [*(row[c] for c in cols), paper_id])
    return len(fresh), merged


def load_papers(catalog: Catalog) -> list[dict[str, Any]]:
    """All papers, ``identities`` and ``record`` decoded, ordered by ``paper_id``."""
    ensure_tables(catalog)
    rows = catalog.query_dicts("SELECT * FROM papers ORDER BY paper_id")
    for row in rows:
        row["identities"] = json.loads(row["identities_json"])
        row["record"] = json.loads(row["record_json"])
        row["sources"] = json.loads(row["sources_json"])
    return rows
