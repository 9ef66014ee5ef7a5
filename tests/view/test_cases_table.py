"""The build's cases table in SQL, on a synthetic build of 300 cases (scripts/bench_view.py
makes it as a build writes its catalog): filters, sorts and pages agree with counts made by
hand, and the benchmark runs (its targets are checked by hand: tests never assert time)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ioa_synth.view.read import build as build_read
from ioa_synth.view.read.folders import open_library

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_view.py"
N = 300


def _bench():
    spec = importlib.util.spec_from_file_location("bench_view", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "build"
    out.mkdir()
    _bench().make_build(out, N)
    lib = open_library([out])
    yield lib
    lib.close()


def test_filters_sorts_and_pages(library):
    cat = library.catalog(library.folders[0])
    page = build_read.cases_page(cat, {}, "case", 1)
    assert page["total"] == N and page["pages"] == 6 and len(page["rows"]) == 50
    last = build_read.cases_page(cat, {}, "case", 99)  # past the end: the last page
    assert last["page"] == 6 and len(last["rows"]) == N - 250
    # by hand: every 7th case (i = 0, 7, ...) discarded at stage 2 below θ2; every 5th regenerated at stage 1
    discarded = build_read.cases_page(cat, {"status": "discarded"}, "case", 1)
    assert discarded["total"] == len(range(0, N, 7)) == 43
    assert {r["gate"] for r in discarded["rows"]} == {"stage 2: θ2"}
    assert all(r["theta2"] == {"got": 9, "top": 11, "pass": False} for r in discarded["rows"])
    regen = build_read.cases_page(cat, {"status": "regenerated"}, "case", 1)
    assert regen["total"] == sum(1 for i in range(N) if i % 5 == 0 or i % 7 == 0) == 94
    gate = build_read.cases_page(cat, {"gate": "stage 2: θ2", "status": "discarded"}, "case", 1)
    assert gate["total"] == 43
    by_theta = build_read.cases_page(cat, {}, "theta2", 1)["rows"]
    assert [r["theta2"]["pass"] for r in by_theta[:43]] == [False] * 43 and by_theta[43]["theta2"]["pass"]
    cell = page["choices"]["cell"][0]
    domain, task = cell.split("/")
    in_cell = build_read.cases_page(cat, {"cell": cell}, "case", 1)
    assert in_cell["total"] > 0 and all((r["domain"], r["task_type"]) == (domain, task) for r in in_cell["rows"])
    # the types of each case's latest stage-1 reply (MA1 definitional, MA2 procedural), not the planned ones
    assert build_read.cases_page(cat, {"type": "definitional"}, "case", 1)["total"] == N
    assert build_read.cases_page(cat, {"type": "scopal"}, "case", 1)["total"] == 0
    assert page["choices"]["type"] == ["definitional", "procedural"]


def test_a_case_page_of_the_synthetic_build(library):
    cat = library.catalog(library.folders[0])
    snap = library.snapshots.snapshot_dir(library.folders[0].path)
    case_id = cat.execute("SELECT case_id FROM cases WHERE stage1_attempts = 2 AND status = 'accepted' LIMIT 1")[0][0]
    data = build_read.case_page(cat, snap, case_id)
    assert [a["attempt"] for a in data["stages"][1]] == [1, 2] and 1 in data["diffs"]
    assert build_read.case_page(cat, snap, "test/no/such_case") is None


def test_the_benchmark_runs(tmp_path, capsys):
    figures = tmp_path / "bench.json"
    assert _bench().main(["--cases", "200", "--requests", "5", "--json", str(figures)]) == 0
    data = json.loads(figures.read_text())
    assert data["cases"] == 200 and data["case_page_ms"]["p95"] > 0 and data["rss_mb"]["peak"] > 0
    assert "cases page (filtered, sorted, paged): p50" in capsys.readouterr().out
