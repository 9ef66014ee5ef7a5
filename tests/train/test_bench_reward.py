"""Smoke test of scripts/bench_reward.py: a tiny batch goes through the real reward path, every
completion costs exactly 3 calls and scores as scripted, and re-scoring pays nothing."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_reward.py"


def test_tiny_benchmark_runs(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_reward", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    out = tmp_path / "bench.json"
    code = bench.main(["--prompts", "2", "--generations", "2", "--latency", "0.02", "--workers", "4",
                       "--repeats", "1", "--json", str(out), "--tmp-root", str(tmp_path), "--max-seconds", "120"])
    assert code == 0
    data = json.loads(out.read_text())
    assert data["valid"] and data["calls"] == 12 and data["replay_paid_calls"] == 0
    assert data["cpu_ms_per_call"]["reward"] > 0 and data["cpu_ms_per_call"]["raw_openai"] > 0
