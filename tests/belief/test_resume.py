"""A belief run killed with SIGKILL resumes: finished conversations stay, stored calls are
replayed, only the calls in flight at the kill are asked again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import duckdb

from ioa_synth.testing.belief_scripted import BeliefScript
from ioa_synth.testing.scripted_server import ScriptedServer
from tests.belief.helpers import LABELS, STANCES, sample_items

WORKERS = 3
CALLS_PER_CONVERSATION = 45  # 4 agents, k=1, 3 rounds (see test_chatroom)


def test_kill_9_then_resume(tmp_path):
    items, out = sample_items(tmp_path, 3), tmp_path / "res"
    script = BeliefScript(agents=4, labels=LABELS, stances=STANCES, latency=0.03)
    with ScriptedServer(script) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-kill-test-0000"}
        cmd = [sys.executable, "-m", "ioa_synth", "belief", "run", "--items", str(items), "--out", str(out),
               "--agents", "4", "--attackers", "1", "--rounds", "3", "--workers", str(WORKERS)]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while len(server.requests) < 60 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the run finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        first = len(server.requests)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        second = len(server.requests) - first
    total = 3 * CALLS_PER_CONVERSATION
    assert first + second <= total + WORKERS  # only the calls in flight at the kill were asked twice
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    keys, rows = con.execute("SELECT count(DISTINCT (case_id, stage, role, attempt)), count(*) FROM llm_calls "
                             "WHERE error IS NULL").fetchone()
    con.close()
    assert keys == total and rows - keys <= WORKERS
    for item in ("counterfact-0", "counterfact-1", "counterfact-2"):
        conv = json.loads((out / "conversations" / f"{item}_k1.json").read_text())
        assert len(conv["turns"]) == 12 and len(conv["probes"]) == 12
    summary = json.loads((out / "summary.json").read_text())
    assert summary["conditions"]["scripted|counterfact|k=1"]["fpi"] == 2 / 3
