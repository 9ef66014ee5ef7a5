"""The catalog's write-behind journal: rows recorded by a process that dies are applied
when the catalog is next opened, once, and a torn last line is ignored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import duckdb

from ioa_synth.build.tables import BUILD_TABLES
from ioa_synth.runs.catalog import Catalog


def test_journal_of_a_killed_process_is_applied_once(tmp_path):
    script = textwrap.dedent(f"""
        import os
        from ioa_synth.build.tables import BUILD_TABLES
        from ioa_synth.runs.catalog import Catalog
        cat = Catalog({str(tmp_path)!r}, tables=[BUILD_TABLES])
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

    with Catalog(tmp_path, tables=[BUILD_TABLES]) as cat:
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


def test_rows_made_later_keep_their_order_and_a_synced_file_precedes_its_commit(tmp_path, monkeypatch):
    """record_later's rows are journaled before any later record() (a case's status never
    precedes its calls) and the files handed as ``sync`` are fsynced before the commit."""
    import ioa_synth.runs.journal as journal_mod

    made, synced = [], []
    real_fsync = journal_mod.os.fsync

    def fsync(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real_fsync(fd)

    monkeypatch.setattr(journal_mod.os, "fsync", fsync)
    record = tmp_path / "case.json"
    record.write_text("{}")
    cat = Catalog(tmp_path, tables=[BUILD_TABLES])
    cat.execute("INSERT INTO cases (case_id, status) VALUES ('c1', 'pending')")
    for i in range(3):
        cat.record_later(lambda i=i: made.append(i) or [("llm_calls", {"call_id": f"id{i}", "case_id": "c1"})])
    cat.record([(None, ("UPDATE cases SET status = ? WHERE case_id = ?", ["accepted", "c1"]))], sync=[record])
    lines = [json.loads(ln) for ln in (tmp_path / "catalog.journal").read_text().splitlines()]
    assert [ln.get("r", {}).get("call_id") if ln.get("t") else "status" for ln in lines] == \
        ["id0", "id1", "id2", "status"]
    assert made == [0, 1, 2] and synced == []  # journaled now; fsync waits for the commit
    assert cat.execute("SELECT status FROM cases")[0][0] == "accepted"  # a read commits what is queued
    assert synced == [str(record)]
    cat.close()


def test_a_failing_row_maker_is_one_error_for_the_next_caller_and_the_catalog_still_closes(tmp_path):
    cat = Catalog(tmp_path)

    def broken():
        raise ValueError("bad row")

    cat.record_later(broken)
    try:
        cat.flush()
    except ValueError as exc:
        assert "bad row" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("flush did not raise")
    try:
        cat.close()
    except (RuntimeError, ValueError):
        pass
    duckdb.connect(str(tmp_path / "catalog.duckdb")).close()  # the connection was released


def test_rows_left_by_a_thread_that_sends_no_request_still_reach_the_journal(tmp_path):
    """The writer is woken when the worker's next request is on the wire; rows left by a
    thread that sends none are journaled anyway, within the writer's idle wake-up."""
    import time

    from ioa_synth.llm.on_wire import requests_sent
    from ioa_synth.runs.journal import JOURNAL_FILE, LATER_WAKE_S

    cat = Catalog(tmp_path / "out")
    try:
        cat.record_later(lambda: [("runs", {"run_id": "r1", "command": "test"})])
        journal = tmp_path / "out" / JOURNAL_FILE
        deadline = time.monotonic() + 10 * LATER_WAKE_S
        while b'"r1"' not in (journal.read_bytes() if journal.exists() else b"") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert b'"r1"' in journal.read_bytes()  # a kill now would not lose it
        cat.record_later(lambda: [("runs", {"run_id": "r2", "command": "test"})])
        requests_sent()  # as the transport does once a request is written: the writer wakes
        assert cat.query_dicts("SELECT run_id FROM runs ORDER BY run_id") == [{"run_id": "r1"}, {"run_id": "r2"}]
    finally:
        cat.close()


def test_record_now_is_journaled_at_once_without_making_rows_left_for_later(tmp_path):
    """A call's rows (record_now) reach the journal before record_now returns, and the
    caller makes none of what other threads left with record_later (their record files),
    even while the writer is still making it; those rows keep their own order and are
    committed too."""
    import threading

    from ioa_synth.llm.on_wire import requests_sent
    from ioa_synth.runs.journal import JOURNAL_FILE

    made_by, gate = [], threading.Event()

    def slow():  # a record file being written on the writer thread
        made_by.append(threading.current_thread().name)
        gate.wait(30)
        return [("runs", {"run_id": "r-later", "command": "test"})]

    cat = Catalog(tmp_path)
    try:
        cat.record_later(slow)
        requests_sent()  # the writer wakes and makes it (or will, once woken again)
        cat.record_now([("llm_calls", {"call_id": "now", "case_id": "c1"})])
        lines = [json.loads(ln) for ln in (tmp_path / JOURNAL_FILE).read_text().splitlines()]
        assert [ln["r"].get("call_id") for ln in lines] == ["now"]  # safe against a kill from here on
        assert threading.current_thread().name not in made_by
        gate.set()
        cat.record([("runs", {"run_id": "r-after", "command": "test"})])  # record() keeps the order
        lines = [json.loads(ln)["r"] for ln in (tmp_path / JOURNAL_FILE).read_text().splitlines()]
        assert [r.get("call_id") or r["run_id"] for r in lines] == ["now", "r-later", "r-after"]
        assert cat.execute("SELECT call_id FROM llm_calls") == [("now",)]
        assert sorted(cat.execute("SELECT run_id FROM runs")) == [("r-after",), ("r-later",)]
    finally:
        gate.set()
        cat.close()
