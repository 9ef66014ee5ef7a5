"""An evaluation killed with SIGKILL mid-run resumes: every case scored once, no stored
successful call paid again (modelled on tests/runs/test_resume_kill.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import duckdb

from .eval_helpers import KEYS, STUDY_1, Study, released_case, write_case
from ioa_helpers import settled
from ioa_synth.testing.scripted_server import ScriptedServer
from ioa_synth.runs.catalog import Catalog

CASES = 6


def slow(responder, delay=0.05):
    def respond(body, headers):
        reply = responder(body, headers)
        reply.delay = delay
        return reply
    return respond


def test_kill_9_then_resume(tmp_path):
    data, out = tmp_path / "data", tmp_path / "results"
    for i in range(CASES):
        write_case(data, f"law/planning_{i:03d}.json", released_case())
    study = Study(STUDY_1)
    with ScriptedServer(slow(study.prober)) as p, ScriptedServer(slow(study.simulator)) as s, \
            ScriptedServer(slow(study.filter)) as f:
        servers = {"prober": p, "simulator": s, "validity_filter": f}
        env = dict(os.environ)
        for comp, server in servers.items():
            env[f"{comp.upper()}_BASE_URL"], env[f"{comp.upper()}_API_KEY"] = server.base_url, KEYS[comp]

        def sent() -> int:
            return sum(len(x.requests) for x in servers.values())

        cmd = [sys.executable, "-m", "ioa_synth", "evaluate", "--data", str(data), "--out", str(out), "--workers", "2"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while sent() < 9 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "evaluate finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        first_run = settled(sent)

        Catalog(out).close()  # applies what the killed run left in the journal
        con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
        stored_before = con.execute("SELECT count(*) FROM llm_calls WHERE error IS NULL").fetchone()[0]
        con.close()
        assert stored_before >= 4
        scored_at_kill = len(list(out.rglob("records/**/*.json")))
        assert scored_at_kill < CASES

        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        second_run = sent() - first_run

    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    dup = con.execute("SELECT case_id, stage, role, attempt, count(*) FROM llm_calls WHERE error IS NULL "
                      "GROUP BY ALL HAVING count(*) > 1").fetchall()
    total_ok = con.execute("SELECT count(*) FROM llm_calls WHERE error IS NULL").fetchone()[0]
    con.close()
    assert dup == []
    assert total_ok == CASES * 4  # prober, simulator M1 and M2, filter
    assert second_run == total_ok - stored_before  # only what the killed run had not stored
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and summary["cases"]["scored"] == CASES and summary["f1"] == 0.8889
    replayed = [c for r in out.rglob("records/**/*.json") for c in json.loads(r.read_text())["calls"] if c.get("replayed")]
    # the stored calls of cases killed midway were replayed into their records, not paid again
    assert len(replayed) == stored_before - 4 * scored_at_kill
