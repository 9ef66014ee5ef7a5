"""Smoke test of scripts/bench_collab.py: a tiny run through the real `collab run` path and
its bare-client replay."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_collab.py"


def test_tiny_benchmark_runs(tmp_path):
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "--cases", "2", "--workers", "2", "--rounds", "1",
                           "--latency", "0.01", "--json", str(out), "--tmp-root", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    row = json.loads(out.read_text())["workers"]["2"]
    # scenarios 1 (4 agents) and 2 (3 agents): 3 configs of 8 rounds + finals, the interventions' calls on top;
    # MCQ fires on both: one re-discussion round each, ended by every agent's stop-vote
    assert row["valid"] and row["calls"] == (3 * (36 + 27) + (4 + 3) + (1 + 2 * 4 + 4) + (1 + 2 * 3 + 3)
                                             + (4 + 3))
    assert 0 < row["in_flight_efficiency"] <= 1.01 and row["cpu_ratio"] > 0
