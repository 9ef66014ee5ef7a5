"""OpenAlex fetching through ``pyalex`` against the replayed recorded cursor pages and work."""

from __future__ import annotations

import json

import pyalex

from ioa_synth.seeds.fetch import run_fetch
from ioa_synth.seeds.importer import run_import
from ioa_synth.seeds.openalex_source import work_candidate
from ioa_synth.seeds.store import load_papers
from ioa_synth.runs.catalog import Catalog

from .conftest import SNAPSHOT, read_jsonl
from .replay import Reply, fixture_bytes

PAGE1 = json.loads(fixture_bytes("openalex/results_page_1.json"))
NEXT = PAGE1["meta"]["next_cursor"]


def test_law_cursor_paging(tmp_path, settings, replay):
    settings.openalex_email, settings.openalex_api_key = "seeds@example.org", "secret"
    result = run_fetch(tmp_path, "openalex", "law", settings=settings)
    (record,) = read_jsonl(result.log.records_path)
    assert result.stopped == "exhausted" and result.tally.dropped == {"no_abstract": 1}  # W2755950973
    assert record["source_id"] == "W2741809807" and record["doi"] == "10.7717/peerj.4375"
    work = pyalex.Work(PAGE1["results"][1])
    assert record["abstract"] == " ".join(work["abstract"].split())  # rebuilt from the inverted index
    assert record["abstract"].startswith("Despite growing interest in Open Access (OA)")
    assert record["license"] == "CC0-1.0 (OpenAlex data)" and record["oa_license"] == "cc-by"
    cursors = [p["cursor"] for _, p in replay.requests]
    assert cursors == ["*", NEXT]  # the terminal page (no next_cursor) ends the loop
    params = replay.requests[0][1]
    assert "primary_topic.subfield.id:3308" in params["filter"] and "has_abstract:true" in params["filter"]
    assert params["_authorization"] == "Bearer secret" and params["_from"] == "seeds@example.org"
    assert pyalex.config.api_key is None  # restored


def test_cross_disciplinary_is_balanced_over_domains(tmp_path, settings, replay):
    result = run_fetch(tmp_path, "openalex", "cross_disciplinary", max_records=4, settings=settings)
    filters = {p["filter"].rsplit(",", 1)[-1] for _, p in replay.requests}
    assert filters == {f"primary_topic.domain.id:{d}" for d in "1234"}
    assert result.log.state[next(iter(result.log.state))]["buckets"]["1"]["kept"] == 1
    assert len(read_jsonl(result.log.records_path)) == 1  # the same two works come back per domain


def test_doi_file_resolves_single_works(tmp_path, settings, replay):
    dois = tmp_path / "dois.txt"
    dois.write_text("# DOI-indexed records\nhttps://doi.org/10.7717/PEERJ.4375\n10.7717/peerj.4375\n"
                    "doi:10.1016/j.joi.2017.08.007\n", encoding="utf-8")
    result = run_fetch(tmp_path / "out", "openalex", "law", doi_file=dois, settings=settings)
    (record,) = read_jsonl(result.log.records_path)
    assert record["source_id"] == "W2741809807" and record["query"] == "doi-file:dois.txt (2 DOIs)"
    assert result.tally.dropped == {"not_found": 1}
    assert [p["_path"] for r, p in replay.requests] == [
        "/openalex/works/https://doi.org/10.7717/peerj.4375",
        "/openalex/works/https://doi.org/10.1016/j.joi.2017.08.007"]


def test_same_paper_from_two_sources_merges_in_the_catalog(tmp_path, settings, replay):
    run_import(SNAPSHOT, tmp_path)  # holds W2741809807 as a cross_disciplinary record
    result = run_fetch(tmp_path, "openalex", "law", settings=settings)
    assert result.catalog_new == 0 and result.catalog_merged == 1
    with Catalog(tmp_path) as catalog:
        (paper,) = [p for p in load_papers(catalog) if "doi:10.7717/peerj.4375" in p["identities"]]
    assert [s["source"] for s in paper["sources"]] == ["openalex", "openalex"]
    assert paper["domain"] == "cross_disciplinary"  # the first record decides
    assert {"pmid:29456894", "pmcid:PMC5815332"} <= set(paper["identities"])


def test_daily_budget_spent_stops_and_resumes(tmp_path, settings, replay):
    replay.fault("openalex_list", Reply(429, b'{"error": "rate limit"}', {"Retry-After": "43200"}),
                 when=lambda p: p.get("cursor") == NEXT)
    first = run_fetch(tmp_path, "openalex", "law", settings=settings)
    assert first.stopped == "retry_later" and first.total_kept == 1
    assert "resume after" in first.message and "UTC" in first.message
    second = run_fetch(tmp_path, "openalex", "law", settings=settings)
    assert second.stopped == "exhausted" and second.tally.kept == 0
    assert [p["cursor"] for _, p in replay.requests] == ["*", NEXT, NEXT]  # page 1 not fetched again
    assert len(read_jsonl(second.log.records_path)) == 1


def test_empty_page_before_the_end_is_asked_again(tmp_path, settings, replay):
    replay.fault("openalex_list", Reply(200, fixture_bytes("openalex/results_page_2.json")))
    result = run_fetch(tmp_path, "openalex", "law", settings=settings)
    assert result.total_kept == 1
    assert [p["cursor"] for _, p in replay.requests] == ["*", "*", NEXT]


def test_503_and_truncated_json_are_retried(tmp_path, settings, replay, waits):
    replay.fault("openalex_list", Reply(503, b""))
    replay.fault("openalex_list", Reply(200, fixture_bytes("openalex/results_page_1.json"), truncate=True))
    result = run_fetch(tmp_path, "openalex", "law", settings=settings)
    assert result.total_kept == 1 and replay.count("openalex_list") == 4
    assert waits and all(w <= 2.0 for w in waits)  # jittered backoff: at most 1 s, then 2 s


def test_null_abstract_and_title_handling():
    null, full = PAGE1["results"]
    assert work_candidate(null)["abstract"] is None
    assert work_candidate({**full, "title": None, "display_name": None})["title"] is None
