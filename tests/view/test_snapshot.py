"""The catalog is read around its writer: while another handle holds ``catalog.duckdb`` open
for writing (a read-only open is refused then), a copy still reads every row, the ones only
in the journal included; a change of the files makes a new copy; the folder is not touched;
a journal that does not re-apply falls back to what was committed."""

from __future__ import annotations

import hashlib
import json

import duckdb
import pytest

from ioa_synth.build.tables import BUILD_TABLES
from ioa_synth.runs.catalog import Catalog
from ioa_synth.view.read.snapshot import Snapshots


def _call(i: int) -> tuple:
    return ("llm_calls", {"call_id": f"c{i}", "case_id": "test/law/planning_000", "stage": 1, "role": "generator",
                          "attempt": i, "try_index": 0, "response_text": "{}"})


def _files(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}


@pytest.fixture
def writer(tmp_path):
    cat = Catalog(tmp_path / "build", tables=[BUILD_TABLES])
    cat.insert("cases", {"case_id": "test/law/planning_000", "split": "test", "status": "pending"})
    yield cat
    cat.close()


def test_rows_in_the_journal_of_a_running_writer_are_read(writer):
    out = writer.out_dir
    snaps = Snapshots()
    try:
        writer.record([_call(1)])
        writer.flush()  # committed
        writer.record([_call(2), (None, ("UPDATE cases SET status = ? WHERE case_id = ?", ["accepted", "test/law/planning_000"]))])
        with pytest.raises(duckdb.Error):  # another process gets "lock" (IOException), this one a config conflict
            duckdb.connect(str(out / "catalog.duckdb"), read_only=True)  # what the viewer never does
        before = _files(out)
        cat = snaps.catalog(out, [BUILD_TABLES])
        assert cat.execute("SELECT count(*) FROM llm_calls")[0][0] == 2  # the journaled one too
        assert cat.execute("SELECT status FROM cases")[0][0] == "accepted"
        assert snaps.catalog(out, [BUILD_TABLES]) is cat  # unchanged files: the same copy
        assert _files(out) == before  # the folder is not touched
        writer.record([_call(3)])
        again = snaps.catalog(out, [BUILD_TABLES])
        assert again is not cat and again.execute("SELECT count(*) FROM llm_calls")[0][0] == 3
    finally:
        snaps.close()
    assert not snaps._root.exists()


def test_a_journal_that_does_not_reapply_falls_back_to_the_committed_rows(writer):
    snaps = Snapshots()
    try:
        writer.record([_call(1)])
        writer.flush()
        with open(writer.out_dir / "catalog.journal", "a", encoding="utf-8") as f:  # a line that cannot re-apply
            f.write(json.dumps({"t": "cases", "r": {"case_id": "test/law/planning_000", "split": "test"}}) + "\n")
        cat = snaps.catalog(writer.out_dir, [BUILD_TABLES])
        assert cat.execute("SELECT count(*) FROM llm_calls")[0][0] == 1
        assert cat.execute("SELECT count(*) FROM cases")[0][0] == 1
    finally:
        snaps.close()
