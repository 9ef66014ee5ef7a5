"""The catalog's write-behind journal: rows recorded by a process that dies are applied
when the catalog is next opened, once, and a torn last line is ignored."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import duckdb

from ioa_synth.store.catalog import Catalog


def test_journal_of_a_killed_process_is_applied_once(tmp_path):
    script = textwrap.dedent(f"""
        import os
        from ioa_synth.store.catalog import Catalog
        cat = Catalog({str(tmp_path)!r})
        cat.execute("INSERT INTO cases (case_id, status) VALUES ('c1', 'pending')")
        for i in range(3):
            cat.record([("llm_calls", {{"call_id": f"id{{i}}", "case_id": "c1", "stage": 1}}),
                        ("scores", {{"call_id": f"id{{i}}", "case_id": "c1", "item": "MA1", "score": 3}})])
        cat.flush()  # the first three reach DuckDB
        cat.record([("llm_calls", {{"call_id": "id3", "case_id": "c1", "stage": 2}}),
                    (None, ("UPDATE cases SET status = ? WHERE case_id = ?", ["accepted", "c1"]))])
        os._exit(0)  # dies before the writer thread commits id3 (no close)
    """)
    subprocess.run([sys.executable, "-c", script], check=True)
    journal = tmp_path / "catalog.journal"
    assert journal.exists()
    with journal.open("ab") as fh:
        fh.write(b'{"t": "llm_calls", "r": {"call_id": "torn')  # a write cut short by the kill
    Catalog(tmp_path).close()
    assert not journal.exists()
    con = duckdb.connect(str(tmp_path / "catalog.duckdb"), read_only=True)
    ids = sorted(r[0] for r in con.execute("SELECT call_id FROM llm_calls").fetchall())
    assert ids == ["id0", "id1", "id2", "id3"]
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 3
    assert con.execute("SELECT status FROM cases").fetchone()[0] == "accepted"


def test_read_query_reads_one_statement_on_a_read_only_catalog(tmp_path):
    import pytest

    with Catalog(tmp_path) as cat:
        cat.execute("INSERT INTO cases (case_id, status) VALUES ('c1', 'pending'), ('c2', 'accepted')")
        with pytest.raises(ValueError, match="read_only"):
            cat.read_query("SELECT 1")
    with Catalog(tmp_path, read_only=True) as cat:
        assert cat.read_query("SELECT case_id, status FROM cases ORDER BY 1") == (
            ["case_id", "status"], [("c1", "pending"), ("c2", "accepted")])
        with pytest.raises(ValueError, match=r"exactly one SQL statement \(got 2\)"):
            cat.read_query("SELECT 1; SELECT 2")
        with pytest.raises(ValueError, match="only queries"):
            cat.read_query("DELETE FROM cases")
        assert cat.read_query("SELECT count(*) FROM cases")[1] == [(2,)]
