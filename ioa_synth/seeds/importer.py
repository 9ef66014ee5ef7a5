"""``seeds import``: load a JSONL snapshot of paper records into the catalog.

Each line is one paper record with at least ``domain``, ``source``, ``source_id``,
``title`` and ``abstract`` (the format of ``seeds/snapshot.jsonl`` and of ``seeds fetch``
output); every other field (``license``, ``origin``, ``ids``, ``notes`` ...) is kept in the
paper's ``record_json``. The whole file is validated before anything is written.
Importing the same file twice adds nothing: records merge into the papers they match.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.folder_kinds import claim_folder
from ioa_synth.core.jsonl import iter_jsonl
from ioa_synth.seeds.store import add_papers, ensure_tables, validate


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Parse and validate a JSONL file of paper records (blank lines skipped).

    Raises ``ValueError`` naming ``path:line`` for unreadable files, invalid JSON, missing
    fields or unknown domains, and for a file without records.
    """
    path = Path(path)
    records = []
    for n, obj in iter_jsonl(path):
        problem = validate(obj)
        if problem:
            raise ValueError(f"{path}:{n}: {problem}")
        records.append(obj)
    if not records:
        raise ValueError(f"{path}: no records")
    return records


def run_import(path: str | Path, out_dir: str | Path) -> dict[str, Counter]:
    """Import ``path`` into ``out_dir``'s catalog.

    Returns ``{"records": per-domain counts, "new": new papers per domain, "merged": merged
    records per domain}``. Raises ``ValueError`` (see :func:`read_records`).
    """
    records = read_records(path)
    stats = {"records": Counter(), "new": Counter(), "merged": Counter()}
    claim_folder(out_dir, "build", "seeds import")  # a build directory's manifest, before anything is written
    catalog = Catalog(out_dir)
    try:
        ensure_tables(catalog)
        for domain in dict.fromkeys(r["domain"] for r in records):
            batch = [r for r in records if r["domain"] == domain]
            new, merged = add_papers(catalog, batch)
            stats["records"][domain] += len(batch)
            stats["new"][domain] += new
            stats["merged"][domain] += merged
    finally:
        catalog.close()
    return stats
