"""An evaluate results folder for the viewer: ``summary.json``, one record per case
(:class:`~ioa_synth.evaluate.record_model.EvalRecord`, read as the run wrote it; a record
being written is skipped until it reads), and two folders compared case by case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ioa_synth.evaluate.record_model import EvalRecord
from ioa_synth.view.read.folders import read_json_file

#: Cases per page of the cases table.
PAGE = 50


def records(folder: Path, cache: dict[str, Any]) -> dict[str, EvalRecord]:
    """Case id -> record without its ``calls`` (the bulk of a record: every request's
    messages), for every readable ``records/**/*.json``; each file is parsed once per
    version (``cache`` keeps them by path, size and mtime). :func:`full_record` reads one
    with its calls."""
    out: dict[str, EvalRecord] = {}
    seen = cache.setdefault("records", {})
    paths = cache.setdefault("paths", {})
    for path in sorted((folder / "records").glob("**/*.json")):
        st = path.stat()
        key = (str(path), st.st_size, st.st_mtime_ns)
        if key not in seen:
            record = _read(path)
            seen[key] = record.model_copy(update={"calls": []}) if record is not None else None
        if seen[key] is not None:
            out[seen[key].case_id] = seen[key]
            paths[seen[key].case_id] = path
    return out


def full_record(folder: Path, cache: dict[str, Any], case_id: str) -> EvalRecord | None:
    """The record of ``case_id`` with its calls, or ``None``."""
    if case_id not in cache.get("paths", {}):
        records(folder, cache)
    path = cache.get("paths", {}).get(case_id)
    return _read(path) if path is not None else None


def _read(path: Path) -> EvalRecord | None:
    data = read_json_file(path)
    try:
        return EvalRecord.model_validate(data) if data is not None else None
    except ValidationError:
        return None


def summary(folder: Path) -> dict[str, Any] | None:
    return read_json_file(folder / "summary.json")


def case_rows(recs: dict[str, EvalRecord], filters: dict[str, str]) -> list[dict[str, Any]]:
    """The cases table: per record its metrics, the MAs missed and their types; filtered by
    ``missed`` (``yes``: some MA not found), ``type`` (an MA of that type) and ``domain``."""
    rows = []
    for cid, r in sorted(recs.items()):
        hit = set(r.metrics.mas_hit) if r.metrics else set()
        missed = [m for m in r.misalignment_points if m.id not in hit]
        types = sorted({m.type or "untyped" for m in r.misalignment_points})
        if filters.get("missed") == "yes" and not missed:
            continue
        if filters.get("missed") == "no" and missed:
            continue
        if filters.get("type") and filters["type"] not in types:
            continue
        if filters.get("domain") and r.domain != filters["domain"]:
            continue
        rows.append({"case_id": cid, "record": r, "missed": missed, "types": types})
    return rows


def choices(recs: dict[str, EvalRecord]) -> dict[str, list[str]]:
    return {"domain": sorted({r.domain for r in recs.values()}),
            "type": sorted({m.type or "untyped" for r in recs.values() for m in r.misalignment_points}),
            "missed": ["yes", "no"]}


def compare(a: dict[str, EvalRecord], b: dict[str, EvalRecord]) -> list[dict[str, Any]]:
    """Case by case over the cases both scored: ``{case_id, a, b, only_a, only_b, both}``
    (the MA ids one prober found and the other missed)."""
    out = []
    for cid in sorted(set(a) | set(b)):
        ra, rb = a.get(cid), b.get(cid)
        ha = set(ra.metrics.mas_hit) if ra is not None and ra.metrics else set()
        hb = set(rb.metrics.mas_hit) if rb is not None and rb.metrics else set()
        out.append({"case_id": cid, "a": ra, "b": rb, "only_a": sorted(ha - hb), "only_b": sorted(hb - ha),
                    "both": sorted(ha & hb)})
    return out
