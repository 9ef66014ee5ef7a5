"""A run of keyed UPDATEs merged into one statement changes the table exactly as running
them one by one does."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import duckdb
import pytest

from ioa_synth.runs.keyed_updates import distinct_key_runs, keyed_table, merged_update

STATUS = ("UPDATE cases SET status = ?, stage1_attempts = GREATEST(stage1_attempts, ?), "
          "path = ?, error = ?, updated_at = ? WHERE case_id = ?")


def _table() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TABLE cases (case_id VARCHAR PRIMARY KEY, status VARCHAR, "
                "stage1_attempts INTEGER DEFAULT 0, path VARCHAR, error VARCHAR, updated_at TIMESTAMP)")
    con.execute("INSERT INTO cases (case_id, status) SELECT 'c' || i, 'pending' FROM range(20) t(i)")
    return con


def _rows(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("SELECT * FROM cases ORDER BY case_id").fetchall()


def test_merged_updates_match_one_by_one_including_repeated_keys_and_nulls():
    rnd = random.Random(7)
    t0 = datetime(2026, 12, 2, 1, 0, 0)
    params = [[rnd.choice(["accepted", "discarded", "failed"]), rnd.randint(0, 3),
               rnd.choice([None, f"/out/c{i}.json"]), rnd.choice([None, "boom"]), t0 + timedelta(seconds=i),
               f"c{rnd.randint(0, 19)}"] for i in range(60)]  # keys repeat: order must hold
    one, merged = _table(), _table()
    for p in params:
        one.execute(STATUS, p)
    runs = list(distinct_key_runs(params))
    assert len(runs) > 1 and sum(map(len, runs)) == len(params)
    for run in runs:
        assert len({p[-1] for p in run}) == len(run)
        merged.execute(*merged_update(STATUS, run))
    assert _rows(merged) == _rows(one)


def test_what_cannot_be_merged_is_left_alone():
    assert keyed_table(STATUS) == "cases"
    assert merged_update("UPDATE papers SET split = NULL WHERE split IS NOT NULL", [[]]) is None
    assert merged_update("UPDATE t SET a = 'x?' WHERE k = ?", [["k1"]]) is None  # a literal
    assert merged_update("UPDATE papers SET split = ? WHERE paper_id IN (SELECT UNNEST(?::VARCHAR[]))",
                         [["train", ["p1"]]]) is None
    assert merged_update(STATUS, [["accepted", 1, None, None, None]]) is None  # one parameter short
    assert merged_update(STATUS, [["accepted", [1], None, None, None, "c1"]]) is None  # not a scalar
    assert keyed_table("DELETE FROM cases WHERE case_id = ?") is None


@pytest.mark.parametrize("values", [[None, None], ["2026-12-02 01:00:00", "2026-12-02 01:00:01"]])
def test_all_null_or_text_timestamps_bind(values):
    """A column of NULLs, and timestamps as text (a journal re-applied after a kill), bind."""
    con = _table()
    run = [["accepted", 1, None, None, values[i], f"c{i}"] for i in range(2)]
    con.execute(*merged_update(STATUS, run))
    got = con.execute("SELECT status, updated_at IS NULL FROM cases WHERE case_id IN ('c0', 'c1')").fetchall()
    assert got == [("accepted", values[0] is None)] * 2


def test_a_batch_with_status_updates_between_inserts_applies_as_in_order():
    """apply_batch merges the held updates only where no row of their table comes between."""
    from ioa_synth.runs.apply import apply_batch

    def fresh() -> duckdb.DuckDBPyConnection:
        con = _table()
        con.execute("CREATE TABLE calls (call_id VARCHAR, case_id VARCHAR)")
        return con

    t0 = datetime(2026, 12, 2, 1, 0, 0)
    entries = [("cases", {"case_id": "n1", "status": "pending"})]
    for i in range(30):
        entries.append(("calls", {"call_id": f"k{i}", "case_id": f"c{i % 7}"}))
        entries.append((None, (STATUS, ["accepted" if i % 3 else "failed", i % 4, None, None, t0, f"c{i % 7}"])))
        if i == 12:  # a new case row, then its status: the update must see the row
            entries.append(("cases", {"case_id": "n2", "status": "pending"}))
            entries.append((None, (STATUS, ["discarded", 2, None, "why", t0, "n2"])))
    entries.append((None, (STATUS, ["accepted", 1, "/x", None, t0, "n1"])))
    merged, one = fresh(), fresh()
    apply_batch(merged, entries)
    for table, payload in entries:
        if table is None:
            one.execute(*payload)
        else:
            one.execute(f"INSERT INTO {table} ({', '.join(payload)}) VALUES ({', '.join('?' * len(payload))})",
                        list(payload.values()))
    assert _rows(merged) == _rows(one)
    assert ("n2", "discarded", 2, None, "why", t0) in _rows(merged)
    assert merged.execute("SELECT count(*) FROM calls").fetchone() == (30,)
