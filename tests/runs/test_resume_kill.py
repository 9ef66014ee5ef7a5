"""A build killed with SIGKILL mid-run resumes: no case lost or duplicated, no stored
successful call paid again."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import duckdb

from ioa_helpers import settled
from ioa_synth.runs.catalog import Catalog
from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer


def test_kill_9_then_resume(seeds_file, tmp_path):
    seeds, out = seeds_file(6), tmp_path / "out"
    with ScriptedServer(ProtocolResponder(script={"stage1_judge": ["low"]}, latency=0.05)) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-kill-test-0000"}
        cmd = [sys.executable, "-m", "ioa_synth", "build", "--seeds", str(seeds), "--split", "train",
               "--out", str(out), "--workers", "3"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while len(server.requests) < 9 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "build finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        first_run = settled(lambda: len(server.requests))

        # calls finished before the kill may still sit in the journal: opening the catalog applies them
        assert (out / "catalog.journal").exists()
        Catalog(out).close()
        assert not (out / "catalog.journal").exists()
        con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
        stored_before = con.execute("SELECT count(*) FROM llm_calls WHERE error IS NULL").fetchone()[0]
        statuses = [s for (s,) in con.execute("SELECT status FROM cases").fetchall()]
        con.close()
        assert stored_before >= 3 and "pending" in statuses

        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        second_run = len(server.requests) - first_run
    # the re-run says it resumes, and how many stored replies it used instead of asking again,
    # on one line (a log is read line by line: the console must not wrap it at 80 columns)
    announced = re.search(r"resuming: (\d+) stored repl(?:y|ies) of \d+ unfinished cases? will be reused, "
                          r"not asked for again\n",
                          done.stderr)
    reused = re.search(r"(\d+) stored repl(?:y|ies) reused", done.stderr)
    assert announced and reused, done.stderr
    assert 1 <= int(reused.group(1)) <= int(announced.group(1))

    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    cases = con.execute("SELECT case_id, status, path FROM cases ORDER BY case_id").fetchall()
    dup = con.execute("SELECT case_id, stage, role, attempt, count(*) FROM llm_calls WHERE error IS NULL "
                      "GROUP BY ALL HAVING count(*) > 1").fetchall()
    total_ok = con.execute("SELECT count(*) FROM llm_calls WHERE error IS NULL").fetchone()[0]
    con.close()
    assert len(cases) == 6 and len({c for c, _, _ in cases}) == 6
    assert all(status == "accepted" for _, status, _ in cases)
    assert dup == []  # no successful step stored (paid) twice
    # 6 cases x 4 calls, + 2 when the scripted "low" verdict was stored and regenerated; a kill
    # after the server sent it and before the build stored it leaves no regeneration (the script
    # is spent, the re-asked judge call passes)
    assert total_ok in (24, 26)
    # what the second run asked for is exactly what the first run had not stored
    assert second_run == total_ok - stored_before
    files = sorted(out.glob("train/*/*.json"))
    assert len(files) == 6
    assert all(json.loads(f.read_text())["dialogue"]["num_turns"] == 4 for f in files)
