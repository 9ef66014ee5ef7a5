"""``status`` reads a catalog another process holds through the runs layer's one snapshot
reader (:mod:`ioa_synth.runs.snapshot`, which the viewer uses too): the journal's rows not
yet committed are read; a journal that does not re-apply to the copy falls back to the
committed rows instead of failing; the copy is removed afterwards."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ioa_synth.build.tables import BUILD_TABLES
from ioa_synth.runs.snapshot import reading

ROOT = Path(__file__).resolve().parents[2]

#: A writer process: one committed call, one only journaled, then (if asked) a journal line
#: that cannot re-apply (a ``cases`` row whose key the catalog already holds); it holds the
#: catalog until its stdin closes.
WRITER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from ioa_synth.build.tables import BUILD_TABLES
    from ioa_synth.runs.catalog import Catalog

    def call(i):
        return ("llm_calls", {"call_id": f"c{i}", "case_id": "test/law/planning_000", "stage": 1,
                              "role": "generator", "attempt": i, "try_index": 0, "response_text": "{}"})

    out, bad = Path(sys.argv[1]), sys.argv[2] == "bad"
    cat = Catalog(out, tables=[BUILD_TABLES])
    cat.insert("cases", {"case_id": "test/law/planning_000", "split": "test", "status": "pending"})
    cat.record([call(1)])
    cat.flush()
    cat.record([call(2)])
    if bad:
        with open(out / "catalog.journal", "a", encoding="utf-8") as f:
            f.write(json.dumps({"t": "cases", "r": {"case_id": "test/law/planning_000", "split": "test"}}) + "\\n")
    print("ready", flush=True)
    sys.stdin.read()
    cat.close()
""")


@pytest.fixture
def writer(tmp_path, request):
    out = tmp_path / "build"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(out), request.param], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == "ready"
        yield out
    finally:
        proc.communicate(timeout=60)


@pytest.mark.parametrize("writer", ["good"], indirect=True)
def test_status_reads_the_journal_of_a_running_writer(writer, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with reading(writer, [BUILD_TABLES]) as (cat, snapshot):
        assert snapshot and cat.execute("SELECT count(*) FROM llm_calls")[0][0] == 2
    assert not list(tmp_path.glob("ioa-status-*"))


@pytest.mark.parametrize("writer", ["bad"], indirect=True)
def test_status_of_a_journal_that_does_not_reapply_shows_the_committed_rows(writer):
    with reading(writer, [BUILD_TABLES]) as (cat, snapshot):
        assert snapshot
        assert cat.execute("SELECT count(*) FROM llm_calls")[0][0] == 1
        assert cat.execute("SELECT count(*) FROM cases")[0][0] == 1
