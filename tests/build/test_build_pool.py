"""``build --split S`` without ``--seeds`` builds the pool made by ``seeds assign`` and
draws a cell's reserve tuples when a case is discarded."""

from __future__ import annotations

import duckdb

from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer

from conftest import SNAPSHOT


def test_build_split_uses_pool_and_draws_reserve_on_discard(cli, tmp_path, monkeypatch):
    out = tmp_path / "bench"
    assert cli("seeds", "import", SNAPSHOT, "--out", out).exit_code == 0
    res = cli("seeds", "assign", "--out", out, "--per-cell", "train=1,val=1,test=1", "--reserve", "1", "--rng-seed", "7")
    assert res.exit_code == 0, res.output
    # first stage-1 verdict fails twice -> that case is discarded -> its cell draws its reserve
    script = {"stage1_judge": ["low", "low"]}
    with ScriptedServer(ProtocolResponder(script=script)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-pool-test-0000")
        res = cli("build", "--split", "test", "--out", out, "--workers", "1", "--limit", "3")
        assert res.exit_code == 0, res.output
        assert "1 reserve tuple drawn" in " ".join(res.output.split())
        n_requests = len(server.requests)
        again = cli("build", "--split", "test", "--out", out, "--workers", "1", "--limit", "3")
        assert again.exit_code == 0 and len(server.requests) == n_requests
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    rows = con.execute("SELECT domain, task_type, seed_id, status FROM cases ORDER BY case_id").fetchall()
    pool = dict(((s, r) for s, r in con.execute("SELECT seed_id, role FROM seed_pool WHERE split = 'test'").fetchall()))
    con.close()
    assert len(rows) == 4
    statuses = sorted(r[3] for r in rows)
    assert statuses == ["accepted", "accepted", "accepted", "discarded"]
    discarded_cell = next((d, k) for d, k, _, st in rows if st == "discarded")
    cell_rows = [r for r in rows if (r[0], r[1]) == discarded_cell]
    assert sorted(pool[r[2]] for r in cell_rows) == ["primary", "reserve"]
    assert all(pool[r[2]] == "primary" for r in rows if (r[0], r[1]) != discarded_cell)


def test_build_split_without_assignment_is_a_clear_error(cli, tmp_path):
    res = cli("build", "--split", "test", "--out", tmp_path / "empty")
    assert res.exit_code == 2
    assert "seeds assign" in res.output
