"""Catalogs of the release before catalog versions (no ``llm_calls.tags``, no ``catalog_meta``;
fixtures in tests/fixtures/catalogs_v1, made by its make.py) are migrated in place when a
command opens them, and a re-run of build, evaluate and belief replays every stored call:
no request reaches the server, and every stored call went out with the seed today's key
gives. A catalog of a newer version is refused with one line; tables belong to the
capability that registers them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from ioa_helpers import one_line_error
from ioa_synth.build.tables import BUILD_TABLES
from ioa_synth.runs.catalog import Catalog, CatalogUnusable
from ioa_synth.runs.recorder import CallKey, call_seed
from ioa_synth.runs.schema import RUNS_TABLES
from ioa_synth.testing.belief_scripted import BeliefScript
from ioa_synth.testing.scripted_server import ProtocolResponder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "catalogs_v1"
BELIEF_ARGS = ("--agents", "4", "--attackers", "0,1", "--rounds", "2", "--memory", "5", "--workers", "2")


def legacy(name: str, tmp_path: Path) -> Path:
    """A copy of the fixture folder ``name`` with its version-1 catalog rebuilt from the export."""
    folder = tmp_path / name
    shutil.copytree(FIXTURES / name, folder, ignore=shutil.ignore_patterns("catalog"))
    con = duckdb.connect(str(folder / "catalog.duckdb"))
    con.execute(f"IMPORT DATABASE '{FIXTURES / name / 'catalog'}'")
    tables = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    columns = {c for (c,) in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'llm_calls'")
               .fetchall()}
    # what is tested is the catalog's format, not that today's templates equal the release's: the
    # stored setups are forgotten, so no component's changed fingerprint refuses the re-run
    con.execute("UPDATE runs SET fingerprint_json = NULL")
    con.close()
    assert "catalog_meta" not in tables and "tags" not in columns  # a version-1 catalog
    return folder


def q(folder: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(folder / "catalog.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def stored_calls(folder: Path) -> list[tuple]:
    return q(folder, "SELECT call_id, case_id, stage, role, attempt, try_index, request_json FROM llm_calls "
                     "WHERE error IS NULL ORDER BY call_id")


def assert_same_seeds(calls: list[tuple]) -> None:
    """Each stored call went out with the seed its key gives today (base 0, its try index)."""
    assert calls
    for _, unit, step, role, attempt, try_index, request in calls:
        assert json.loads(request)["seed"] == call_seed(0, CallKey(unit, step, role, attempt)) + try_index


def test_build_directory_is_migrated_and_replayed(cli, endpoint, tmp_path):
    folder = legacy("build", tmp_path)
    before = stored_calls(folder)
    assert_same_seeds(before)
    res = cli("status", "--out", folder)  # read-only: works on the old catalog, changes nothing
    assert res.exit_code == 0, res.output
    assert "catalog_meta" not in {t for (t,) in q(folder, "SELECT table_name FROM duckdb_tables()")}
    con = duckdb.connect(str(folder / "catalog.duckdb"))
    con.execute("UPDATE cases SET status = 'pending'")  # every case to do again: its calls are stored
    con.close()
    server = endpoint(responder=ProtocolResponder())
    res = cli("build", "--seeds", folder / "seeds.jsonl", "--split", "test", "--out", folder, "--workers", "1")
    assert res.exit_code == 0, res.output
    assert server.requests == []
    assert "8 stored replies reused" in res.stderr
    assert q(folder, "SELECT status, count(*) FROM cases GROUP BY 1") == [("accepted", 2)]
    assert stored_calls(folder) == before
    assert q(folder, "SELECT part, version FROM catalog_meta ORDER BY 1") == [("build", 1), ("runs", RUNS_TABLES.version)]
    assert q(folder, "SELECT count(*) FROM llm_calls WHERE tags IS NOT NULL") == [(0,)]  # build calls need none
    assert q(folder, "SELECT DISTINCT via FROM llm_calls") == [("live",)]  # the release's calls were live ones


def test_evaluate_results_folder_is_migrated_and_replayed(cli, endpoint, tmp_path):
    folder = legacy("evaluate", tmp_path)
    before = stored_calls(folder)
    assert_same_seeds(before)
    server = endpoint(responder=ProtocolResponder())  # every component: no request may reach it
    res = cli("evaluate", "--data", folder / "data", "--out", folder, "--workers", "1")
    assert res.exit_code == 0, res.output
    assert server.requests == []
    record = json.loads((folder / "records" / "law" / "planning_000.json").read_text())
    assert record["status"] == "scored" and record["calls"] and all(c.get("replayed") for c in record["calls"])
    assert stored_calls(folder) == before
    assert q(folder, "SELECT part, version FROM catalog_meta ORDER BY 1") == [("evaluate", 2), ("runs", RUNS_TABLES.version)]
    assert q(folder, "SELECT role, component, participant, rollout FROM evaluate_calls ORDER BY stage, role") == [
        ("prober", "prober", None, None), ("simulator:M1", "simulator", "M1", 1), ("simulator:M2", "simulator", "M2", 1),
        ("validity_filter", "validity_filter", None, None)]


def test_belief_results_folder_is_migrated_and_replayed(cli, endpoint, tmp_path):
    folder = legacy("belief", tmp_path)
    view = "SELECT call_id, component, kind, item, k, round, agent FROM belief_calls ORDER BY call_id"
    old_view = q(folder, view)  # the release's view, which parsed the role
    before = stored_calls(folder)
    assert_same_seeds(before)
    res = cli("sql", folder, "SELECT kind, count(*) FROM belief_calls GROUP BY 1 ORDER BY 1", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)  # read-only on the old catalog
    server = endpoint(responder=BeliefScript(agents=4))
    # the release labelled private answers with the string pre-match: the judge-every-answer
    # default would mix labels of two rules, so it is refused and --prematch resumes it
    res = cli("belief", "run", "--items", folder / "items.jsonl", "--out", folder, *BELIEF_ARGS)
    assert res.exit_code == 2 and "add --prematch to resume them" in res.stderr
    res = cli("belief", "run", "--items", folder / "items.jsonl", "--out", folder, *BELIEF_ARGS, "--prematch")
    assert res.exit_code == 0, res.output
    res = cli("belief", "reask", folder, "--variant", "own", "--steps", "1")
    assert res.exit_code == 0, res.output
    assert server.requests == []
    assert sorted(p.name for p in (folder / "conversations").iterdir()) == ["counterfact-0_k0.json",
                                                                            "counterfact-0_k1.json"]
    assert stored_calls(folder) == before
    assert q(folder, view) == old_view  # the view now reads the tags: the same columns, row for row
    assert q(folder, "SELECT count(*) FROM llm_calls WHERE tags IS NULL") == [(0,)]
    assert {k for (k,) in q(folder, "SELECT DISTINCT kind FROM belief_calls")} == {"say", "probe", "stance",
                                                                                   "reask-own"}
    assert q(folder, "SELECT part, version FROM catalog_meta ORDER BY 1") == [("belief", 2), ("runs", RUNS_TABLES.version)]


def test_a_newer_catalog_is_refused_with_one_line(cli, tmp_path):
    folder = tmp_path / "build"
    Catalog(folder, tables=[BUILD_TABLES]).close()
    with Catalog(folder, tables=[BUILD_TABLES]) as cat:
        cat.execute("INSERT INTO cases (case_id, status) VALUES ('c1', 'pending')")  # kept: not empty
        cat.execute("UPDATE catalog_meta SET version = 99 WHERE part = 'runs'")
    with pytest.raises(CatalogUnusable, match=r"newer ioa-synth .*runs tables are at catalog version 99"):
        Catalog(folder)
    seeds = tmp_path / "seeds.jsonl"
    shutil.copy2(FIXTURES / "build" / "seeds.jsonl", seeds)
    one_line_error(cli("build", "--seeds", seeds, "--split", "test", "--out", folder), "catalog version 99",
                   "upgrade ioa-synth")
    assert q(folder, "SELECT version FROM catalog_meta WHERE part = 'runs'") == [(99,)]  # untouched


def test_tables_belong_to_the_capability_that_registers_them(tmp_path):
    with Catalog(tmp_path / "plain") as cat:  # the runs layer alone: its own tables only
        cat.execute("INSERT INTO runs (run_id, command) VALUES ('r1', 'x')")
        tables = {t for (t,) in cat.execute("SELECT table_name FROM duckdb_tables()")}
    assert tables == {*RUNS_TABLES.tables, "catalog_meta"}  # llm_calls, runs, batch mode's, estimates
    with Catalog(tmp_path / "plain", read_only=True, tables=[BUILD_TABLES]) as cat:  # seen empty, not created
        assert cat.execute("SELECT count(*) FROM cases") == [(0,)]
    assert "cases" not in {t for (t,) in q(tmp_path / "plain", "SELECT table_name FROM duckdb_tables()")}
    Catalog(tmp_path / "empty", tables=[BUILD_TABLES]).close()  # nothing stored: removed again
    assert not (tmp_path / "empty").exists()


def test_rows_a_killed_release_left_in_the_journal_are_migrated_too(tmp_path):
    from ioa_synth.belief.tables import BELIEF_TABLES

    folder = legacy("belief", tmp_path)
    row = {"call_id": "journaled", "case_id": "counterfact-0", "stage": 2, "role": "agent:say:k1:3", "attempt": 0}
    (folder / "catalog.journal").write_text(json.dumps({"t": "llm_calls", "r": row}) + "\n")
    Catalog(folder, tables=[BELIEF_TABLES]).close()
    assert q(folder, "SELECT component, kind, k, round, agent FROM belief_calls WHERE call_id = 'journaled'") == [
        ("agent", "say", 1, 2, 3)]
