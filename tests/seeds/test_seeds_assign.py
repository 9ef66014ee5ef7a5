"""Import the real snapshot, assign disjoint seed pools, check for leakage, load a pool."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ioa_synth.runs.catalog import Catalog
from ioa_synth.protocol.cells import DOMAINS, TASK_TYPES, cells
from ioa_synth.seeds.tuples import load_seed_file
from ioa_synth.seeds.assign import parse_per_cell, plan_assignment, run_assign
from ioa_synth.seeds.check import find_leaks, run_check
from ioa_synth.seeds.importer import run_import
from ioa_synth.seeds.pool import load_pool
from ioa_synth.seeds.store import add_papers, load_papers

from .conftest import SNAPSHOT, read_jsonl, snapshot_records

SMALL = {"train": 3, "val": 1, "test": 1}


@pytest.fixture
def imported(tmp_path):
    run_import(SNAPSHOT, tmp_path)
    return tmp_path


def test_import_keeps_licences_and_origins(imported):
    stats = run_import(SNAPSHOT, imported)  # a second import merges everything
    assert sum(stats["new"].values()) == 0 and sum(stats["merged"].values()) == 197
    with Catalog(imported) as catalog:
        papers = load_papers(catalog)
    assert len(papers) == 197
    by_id = {p["record"]["source_id"]: p for p in papers}
    bert = by_id["1810.04805v2"]
    assert bert["paper_id"] == "arxiv:1810.04805" and bert["license"].startswith("CC0-1.0")
    assert bert["record"]["origin"]["repo"] == "arXiv/arxiv-browse"
    assert json.loads(bert["origin_json"]) == bert["record"]["origin"]


def test_merges_versions_doi_spellings_and_titles(imported):
    real = {r["source_id"]: r for r in snapshot_records()}
    bert, plos = real["1810.04805v2"], real["10.1371/journal.pmed.0020171"]
    variants = [
        {**bert, "source_id": "1810.04805v1", "ids": {"arxiv": "1810.04805v1"}},  # another version
        {**plos, "source_id": "https://doi.org/10.1371/JOURNAL.PMED.0020171", "ids": {}},  # DOI spelling
        {**bert, "source": "openalex", "source_id": "W0", "ids": {}, "title": bert["title"].upper() + "."},
    ]
    with Catalog(imported) as catalog:
        assert add_papers(catalog, variants) == (0, 3)
        assert len(load_papers(catalog)) == 197


def test_assign_small_pools(imported):
    plan, written = run_assign(imported, SMALL, reserve=1, rng_seed=7)
    assert not plan.short
    for split, n in SMALL.items():
        seeds = load_seed_file(imported / "seeds" / f"{split}.jsonl")
        assert Counter((s.domain, s.task_type) for s in seeds) == {cell: n for cell in cells()}
        assert all(s.license and s.origin and s.paper_id for s in seeds)
    used = [r["paper_id"] for path in written for r in read_jsonl(path)]
    assert len(used) == len(set(used))  # every paper once across splits and roles
    law = [r for r in plan.rows if r["domain"] == "law"]
    assert len(law) == 25 and plan.reserve_short  # law has exactly 25 papers: no reserves
    with Catalog(imported) as catalog:
        rows = catalog.query_dicts("SELECT split, role, COUNT(*) AS n FROM seed_pool GROUP BY ALL")
        marked = catalog.query_dicts("SELECT split, COUNT(*) AS n FROM papers WHERE split IS NOT NULL GROUP BY ALL")
    assert sum(r["n"] for r in rows) == len(used) == sum(r["n"] for r in marked)


def test_same_inputs_same_assignment(imported, tmp_path_factory):
    run_assign(imported, SMALL, reserve=1, rng_seed=3)
    first = (imported / "seeds" / "test.jsonl").read_bytes()
    other = tmp_path_factory.mktemp("other")
    run_import(SNAPSHOT, other)
    run_assign(other, SMALL, reserve=1, rng_seed=3)
    assert (other / "seeds" / "test.jsonl").read_bytes() == first
    run_assign(other, SMALL, reserve=1, rng_seed=4)
    assert (other / "seeds" / "test.jsonl").read_bytes() != first


def test_task_types_uniform_when_short(imported):
    plan, written = run_assign(imported, {"train": 40, "val": 4, "test": 10}, allow_short=True)
    law = Counter(r["task_type"] for r in plan.rows if r["domain"] == "law")
    assert sum(law.values()) == 25 and set(law.values()) == {5}
    test_ml = Counter(r["task_type"] for r in plan.rows if r["domain"] == "ml_research" and r["split"] == "test")
    assert max(test_ml.values()) - min(test_ml.values()) <= 1  # test is served first


def test_short_cells_are_named_and_nothing_written(imported):
    plan, written = run_assign(imported, {"train": 40, "val": 4, "test": 10})
    assert written == [] and not (imported / "seeds" / "train.jsonl").exists()
    assert plan.short[("train", "law", "planning")] == 40  # law's 25 papers go to test and val
    assert set(d for _, d, _ in plan.short) == set(DOMAINS)


def test_identity_groups_use_one_paper(imported):
    with Catalog(imported) as catalog:
        papers = load_papers(catalog)
    a, b = papers[0], papers[1]
    b = {**b, "identities": [*b["identities"], a["identities"][0]]}  # linked through a shared id
    plan = plan_assignment([a, b], {"train": 1, "val": 0, "test": 0}, 0, 0)
    assert len(plan.rows) == 1


def test_check_passes_then_finds_leaks(imported):
    run_assign(imported, SMALL, reserve=1)
    findings, counts = run_check(imported)
    assert findings == [] and counts["train"] >= 90 and counts["val"] >= 30 and counts["test"] >= 30
    train = read_jsonl(imported / "seeds" / "train.jsonl")
    leaked = dict(train[0], seed_id="test-extra-1", doi=None, ids={}, paper_id=None,
                  source_id="other", title=train[0]["title"].upper())  # same paper by title only
    with (imported / "seeds" / "test.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(leaked) + "\n")
    findings, _ = run_check(imported)
    (leak,) = findings
    assert leak.kind == "leak" and leak.splits == ["train", "test"]
    assert f"train:{train[0]['seed_id']}" in leak.seed_ids and "test:test-extra-1" in leak.seed_ids


def test_reuse_within_a_split_is_reported():
    rec = snapshot_records()[0]
    entries = [dict(rec, seed_id="a", split="val"), dict(rec, seed_id="b", split="val", source_id="x",
                                                        doi=f"HTTPS://DOI.ORG/{rec.get('doi') or '10.1/x'}")]
    (finding,) = find_leaks(entries)
    assert finding.kind == "reuse" and finding.splits == ["val"]


def test_load_pool(imported):
    run_assign(imported, SMALL, reserve=1)
    pool = load_pool(imported, "train")
    assert set(pool) == set(cells())
    primaries, reserves = pool[("business", "planning")]
    assert [s.rank for s in primaries] == [1, 2, 3] and [s.rank for s in reserves] == [1]
    assert pool[("law", "planning")][1] == []
    with pytest.raises(ValueError, match="unknown split"):
        load_pool(imported, "dev")


def test_load_pool_without_assignment(tmp_path):
    with pytest.raises(ValueError, match="no seed assignment for split 'val'"):
        load_pool(tmp_path, "val")


@pytest.mark.parametrize("text, message", [
    ("train=4,dev=1", "expected split=count"), ("train=-1", "whole number"),
    ("train=1,train=2", "given twice"), ("train=0", "nothing to assign")])
def test_parse_per_cell_errors(text, message):
    with pytest.raises(ValueError, match=message):
        parse_per_cell(text)


def test_parse_per_cell():
    assert parse_per_cell("train=40,val=4,test=10") == {"train": 40, "val": 4, "test": 10}
    assert parse_per_cell("test=2") == {"train": 0, "val": 0, "test": 2}
    assert len(TASK_TYPES) == 5
