"""Smoke test of scripts/bench_belief.py: a tiny run through the real `belief run` path."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_belief.py"


def test_tiny_benchmark_runs(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_belief", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    out = tmp_path / "bench.json"
    assert bench.main(["--conversations", "2", "--workers", "2", "--agents", "3", "--rounds", "1", "--latency",
                       "0.01", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["calls"] == data["server_requests"] == 2 * (3 + 2 * 2 * 2 + 2)
    assert 0 < data["in_flight_efficiency"] <= 1.01 and data["cpu_ratio"] > 0
