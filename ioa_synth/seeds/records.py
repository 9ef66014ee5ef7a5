"""Fetch output on disk: an append-only JSONL of kept records, one of dropped ids, a state file.

Layout under ``DIR/seeds/fetched/``, one set per (source, domain):

- ``<source>_<domain>.jsonl`` — kept records, one JSON object per line (fields in
  :data:`RECORD_FIELDS`, plus ``domain`` and ``ids``).
- ``<source>_<domain>.dropped.jsonl`` — ``{source_id, reason, query}`` per dropped item.
- ``<source>_<domain>.state.json`` — per-query progress (cursor, date window, counts),
  written atomically after each batch.

Each batch is appended, flushed and fsynced before the state is saved, so an interrupted
run loses at most one batch and resumes from the last saved state; a trailing partial line
left by a crash is cut off when the log is opened. Kept records are never written twice:
the log knows every identity it holds (see :mod:`ioa_synth.seeds.ids`).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ioa_synth.core.atomic import write_json_atomic
from ioa_synth.seeds.ids import identities

#: The fields of a fetched record, in output order.
RECORD_FIELDS = ("source", "source_id", "doi", "title", "abstract", "categories", "year",
                 "license", "url", "fetched_at", "query")


def _repair_and_read(path: Path) -> list[dict[str, Any]]:
    """Read a JSONL log, cutting off a trailing partial line (left by a crash)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with path.open("r+b") as fh:
            fh.truncate(end)
            fh.flush()
            os.fsync(fh.fileno())
    out = []
    for line in data[:end].decode("utf-8").splitlines():
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a damaged line: skip it, the item will be fetched again
    return out


def _append(path: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    with path.open("ab") as fh:
        fh.write(blob)
        fh.flush()
        os.fsync(fh.fileno())


@dataclass
class FetchLog:
    """The on-disk log of one (source, domain) fetch; see the module docstring.

    Attributes:
        records: kept records already in the log (loaded by :meth:`open`).
        done: source ids already kept or dropped.
        state: per-query progress, ``state[query_key]`` is a dict owned by the fetcher.
    """

    out_dir: Path
    source: str
    domain: str
    records: list[dict[str, Any]] = field(default_factory=list)
    done: set[str] = field(default_factory=set)
    state: dict[str, Any] = field(default_factory=dict)
    _known: set[str] = field(default_factory=set)

    @property
    def base(self) -> Path:
        """Common stem of the three files."""
        return Path(self.out_dir) / "seeds" / "fetched" / f"{self.source}_{self.domain}"

    @property
    def records_path(self) -> Path:
        """The kept-records JSONL."""
        return self.base.with_name(self.base.name + ".jsonl")

    @property
    def dropped_path(self) -> Path:
        """The dropped-ids JSONL."""
        return self.base.with_name(self.base.name + ".dropped.jsonl")

    @property
    def state_path(self) -> Path:
        """The state JSON."""
        return self.base.with_name(self.base.name + ".state.json")

    def open(self) -> "FetchLog":
        """Load (and repair) the existing log; returns self."""
        self.records = _repair_and_read(self.records_path)
        for rec in self.records:
            self._remember(rec)
        self.done |= {str(d.get("source_id")) for d in _repair_and_read(self.dropped_path)}
        if self.state_path.exists():
            try:
                self.state = json.loads(self.state_path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                self.state = {}
        return self

    def _remember(self, record: dict[str, Any]) -> None:
        self._known.update(identities(record))
        self.done.add(str(record.get("source_id")))

    def holds(self, record: dict[str, Any]) -> bool:
        """True if a record with any identity of ``record`` is already kept."""
        return any(i in self._known for i in identities(record))

    def append(self, kept: list[dict[str, Any]], dropped: list[dict[str, Any]]) -> None:
        """Append one batch durably (kept records and dropped ids)."""
        _append(self.records_path, kept)
        _append(self.dropped_path, dropped)
        for rec in kept:
            self.records.append(rec)
            self._remember(rec)
        self.done |= {str(d["source_id"]) for d in dropped}

    def save_state(self) -> None:
        """Write the state file atomically."""
        write_json_atomic(self.state_path, self.state)


@dataclass
class Tally:
    """Counts for the fetch summary: kept, merged duplicates, dropped by reason."""

    kept: int = 0
    merged: int = 0
    dropped: Counter = field(default_factory=Counter)
