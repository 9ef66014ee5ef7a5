"""arXiv fetching through ``arxiv.Client`` against the replayed recorded Atom feeds."""

from __future__ import annotations

import arxiv
import pytest

from ioa_synth.seeds.arxiv_source import ArxivSource
from ioa_synth.seeds.fetch import finalize, review, run_fetch
from ioa_synth.seeds.ids import identities
from ioa_synth.seeds.pace import SourceError

from .conftest import read_jsonl
from .replay import Reply, arxiv_recording

SE_PRIMARY = 15  # of the 20 recorded "testing" entries, 15 have primary category cs.SE


def test_software_engineering_keeps_cs_se_primaries(tmp_path, settings, replay):
    result = run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings)
    records = read_jsonl(result.log.records_path)
    assert result.stopped == "exhausted"
    assert len(records) == SE_PRIMARY and result.tally.dropped == {"off_domain": 5}
    assert all(r["categories"][0] == "cs.SE" for r in records)
    first = records[0]
    assert list(first)[:11] == ["source", "source_id", "doi", "title", "abstract", "categories", "year",
                                "license", "url", "fetched_at", "query"]
    assert first["query"] == "cat:cs.SE" and first["domain"] == "software_engineering"
    route, params = replay.requests[0]
    assert params["search_query"] == "cat:cs.SE" and params["sortBy"] == "submittedDate"
    assert replay.count("arxiv") == 1  # totalResults says everything came on the first page


def test_requests_are_three_seconds_apart(tmp_path, settings, replay, waits):
    now = [0.0]  # a clock that only moves when the code sleeps
    settings.clock = lambda: now[0]
    settings.sleep = lambda s: (waits.append(s), now.__setitem__(0, now[0] + s))
    settings.arxiv_page_size = 5
    run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings)
    assert replay.count("arxiv") == 4
    assert waits == [3.0, 3.0, 3.0]
    assert all(p["max_results"] == "5" for _, p in replay.requests)


def test_query_cap_splits_by_submitted_date(tmp_path, settings, replay):
    settings.arxiv_page_size, settings.arxiv_max_per_query = 3, 6
    result = run_fetch(tmp_path, "arxiv", "software_engineering", query="testing", settings=settings)
    ids = [r["source_id"] for r in read_jsonl(result.log.records_path)]
    assert len(ids) == len(set(ids)) == SE_PRIMARY
    queries = [p["search_query"] for _, p in replay.requests]
    assert queries[0] == "cat:cs.SE AND (testing)"
    windows = {q for q in queries if "submittedDate:[199101010000 TO " in q}
    assert len(windows) >= 3  # 20 results, at most 6 per query
    assert all(int(p["start"]) < 6 for _, p in replay.requests)


def test_since_bounds_the_window(tmp_path, settings, replay):
    result = run_fetch(tmp_path, "arxiv", "software_engineering", since="2024-01-01", settings=settings)
    assert "submittedDate:[202401010000 TO " in replay.requests[0][1]["search_query"]
    assert all(r["year"] >= 2024 for r in read_jsonl(result.log.records_path))


def test_empty_page_mid_pagination_is_asked_again(tmp_path, settings, replay):
    replay.arxiv_mode, settings.arxiv_page_size = "recorded", 10
    empty = arxiv_recording("id_0808.05394")["body"]  # the recorded empty feed
    replay.fault("arxiv", Reply(200, empty), when=lambda p: p["start"] == "10")
    result = run_fetch(tmp_path, "arxiv", "software_engineering", max_records=SE_PRIMARY, settings=settings)
    starts = [p["start"] for _, p in replay.requests]
    assert starts == ["0", "10", "10"]
    assert result.total_kept == SE_PRIMARY


def test_persistent_empty_pages_end_the_query_with_a_note(tmp_path, settings, replay):
    replay.arxiv_mode, settings.arxiv_page_size = "recorded", 10
    result = run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings)
    state = result.log.state["cat:cs.SE"]
    assert result.total_kept == SE_PRIMARY and state["exhausted"]
    assert "empty pages from 20 of 214881" in state["note"]


def test_error_entry_with_http_200_is_an_error_not_a_paper(tmp_path, settings, replay):
    replay.fault("arxiv", Reply(200, arxiv_recording("id_abc")["body"]))
    with pytest.raises(SourceError, match="incorrect id format for abc"):
        run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings)
    assert not (tmp_path / "seeds" / "fetched" / "arxiv_software_engineering.jsonl").exists()


def test_recorded_http_400_error_feed(tmp_path, settings, replay):
    rec = arxiv_recording("id_abc")
    replay.fault("arxiv", Reply(rec["status_code"], rec["body"]))
    with pytest.raises(SourceError, match=r"HTTP 400\): incorrect id format for abc"):
        run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings)
    assert replay.count("arxiv") == 1  # a bad query is not retried


def test_falsy_title_is_kept(settings, replay):
    source = ArxivSource("software_engineering", None, None, settings)
    (result,) = source.client.results(arxiv.Search(id_list=["2104.12255v1"]))
    cand = source.candidate(result)
    assert cand["title"] == "0"
    assert review(cand) == "off_domain"  # cs.CR: dropped for its category, not its title
    cand["_flags"]["off_domain"] = False
    assert review(cand) is None
    record = finalize(cand, "software_engineering", source.key, settings.arxiv_url)
    assert record["title"] == "0" and identities(record) == ["arxiv:2104.12255"]


def test_empty_feed_and_old_style_id(settings, replay):
    source = ArxivSource("software_engineering", None, None, settings)
    assert list(source.client.results(arxiv.Search(id_list=["0808.05394"]))) == []
    (old,) = source.client.results(arxiv.Search(id_list=["astro-ph/0601001"]))
    cand = source.candidate(old)
    assert cand["abstract"].startswith("We derive the frequencies")  # leading spaces gone
    assert "V_max<17.5" in cand["abstract"] and "Gould & Morgan" in cand["abstract"]
    assert identities(cand)[0] == "arxiv:astro-ph/0601001"


def test_429_honours_retry_after(tmp_path, settings, replay, waits):
    replay.fault("arxiv", Reply(429, b"", {"Retry-After": "7"}))
    result = run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings)
    assert 7.0 in waits and result.total_kept == SE_PRIMARY


def test_503_backs_off_with_jitter(tmp_path, settings, replay, waits):
    replay.fault("arxiv", Reply(503, b"Service Unavailable"))
    replay.fault("arxiv", Reply(503, b"Service Unavailable"))
    result = run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings)
    assert result.total_kept == SE_PRIMARY and replay.count("arxiv") == 3
    backoffs = [w for w in waits if w not in (7.0,)]
    assert len(backoffs) >= 2 and all(0 <= w <= 6.0 for w in backoffs)


def test_truncated_body_is_fetched_again(tmp_path, settings, replay):
    body = replay.archive.answer({"search_query": "cat:cs.SE", "start": "0", "max_results": "200"})
    replay.fault("arxiv", Reply(200, body, truncate=True))
    result = run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings)
    assert result.total_kept == SE_PRIMARY and replay.count("arxiv") == 2


def test_long_retry_after_stops_cleanly(tmp_path, settings, replay):
    replay.fault("arxiv", Reply(429, b"", {"Retry-After": "86400"}))
    result = run_fetch(tmp_path, "arxiv", "software_engineering", settings=settings)
    assert result.stopped == "retry_later" and "resume after" in result.message


def test_short_pages_advance_by_what_arrived(tmp_path, settings, replay):
    replay.arxiv_mode, settings.arxiv_page_size = "recorded", 20  # the recorded pages hold 10
    result = run_fetch(tmp_path, "arxiv", "software_engineering", max_records=SE_PRIMARY, settings=settings)
    assert [(p["start"], p["max_results"]) for _, p in replay.requests] == [("0", "20"), ("10", "20")]
    assert result.total_kept == SE_PRIMARY
