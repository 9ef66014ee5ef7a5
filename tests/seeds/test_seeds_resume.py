"""An interrupted fetch resumes without fetching again what it holds and without duplicates."""

from __future__ import annotations

import json

import pytest

from ioa_synth.seeds.fetch import run_fetch

from .conftest import read_jsonl
from .replay import fixture_bytes

SE_PRIMARY = 15
NEXT = json.loads(fixture_bytes("openalex/results_page_1.json"))["meta"]["next_cursor"]


class Stop(Exception):
    pass


def _interrupt_after(n_batches: int):
    calls = []

    def on_batch(result):
        calls.append(1)
        if len(calls) >= n_batches:
            raise Stop

    return on_batch


def test_arxiv_resumes_from_the_oldest_submission_kept(tmp_path, settings, replay):
    settings.arxiv_page_size = 5
    with pytest.raises(Stop):
        run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings, on_batch=_interrupt_after(2))
    log = tmp_path / "seeds" / "fetched" / "arxiv_software_engineering.jsonl"
    kept_before = read_jsonl(log)
    with log.open("a", encoding="utf-8") as fh:
        fh.write('{"source": "arxiv", "source_id": "half a li')  # a crash mid-write
    served_before = replay.count("arxiv")
    result = run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings)
    records = read_jsonl(log)
    ids = [r["source_id"] for r in records]
    assert len(ids) == len(set(ids)) == SE_PRIMARY and records[: len(kept_before)] == kept_before
    resumed = [p["search_query"] for _, p in replay.requests[served_before:]]
    assert all("submittedDate:[199101010000 TO " in q for q in resumed)  # a narrowed window
    assert result.stopped == "exhausted"


def test_completed_query_is_not_fetched_again(tmp_path, settings, replay):
    run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings)
    served = replay.count("arxiv")
    again = run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings)
    assert replay.count("arxiv") == served and "nothing new" in again.message


def test_raising_max_continues_where_it_stopped(tmp_path, settings, replay):
    settings.arxiv_page_size = 5
    first = run_fetch(tmp_path, "arxiv", "software_engineering", max_records=4, settings=settings)
    assert first.stopped == "max" and first.total_kept == 4
    same = run_fetch(tmp_path, "arxiv", "software_engineering", max_records=4, settings=settings)
    assert same.tally.kept == 0 and "already holds 4" in same.message
    more = run_fetch(tmp_path, "arxiv", "software_engineering", max_records=10, settings=settings)
    ids = [r["source_id"] for r in read_jsonl(more.log.records_path)]
    assert more.total_kept == 10 and len(ids) == len(set(ids)) == 10


def test_openalex_interrupted_resumes_from_saved_cursor(tmp_path, settings, replay):
    with pytest.raises(Stop):
        run_fetch(tmp_path, "openalex", "law", settings=settings, on_batch=_interrupt_after(1))
    run_fetch(tmp_path, "openalex", "law", settings=settings)
    assert [p["cursor"] for _, p in replay.requests] == ["*", NEXT]  # page 1 is not asked again
    records = read_jsonl(tmp_path / "seeds" / "fetched" / "openalex_law.jsonl")
    assert [r["source_id"] for r in records] == ["W2741809807"]
    dropped = read_jsonl(tmp_path / "seeds" / "fetched" / "openalex_law.dropped.jsonl")
    assert [d["source_id"] for d in dropped] == ["W2755950973"]  # counted once
