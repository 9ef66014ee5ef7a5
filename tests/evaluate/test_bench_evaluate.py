"""Smoke test of scripts/bench_evaluate.py: a tiny run goes through the real evaluate
path, every case is scored with exactly 4 calls, and the numbers are sane."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_evaluate.py"


def _load():
    spec = importlib.util.spec_from_file_location("bench_evaluate", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_scripted_replies_score_the_sample_as_designed():
    bench = _load()
    text = "You are M2.\nQuestion 1: x\n  A. a\nQuestion 2: y\nQuestion 4: z"
    schema = {"type": "json_schema", "json_schema": {"schema": {"properties": {"answers": {}}}}}
    body = {"messages": [{"role": "user", "content": text}], "response_format": schema}
    assert bench.respond(body) == {"answers": [{"question": 1, "option": "B"}, {"question": 2, "option": "B"},
                                               {"question": 4, "option": "A"}]}


def test_tiny_benchmark_runs(tmp_path, capsys):
    bench = _load()
    out = tmp_path / "bench.json"
    code = bench.main(["--cases", "4", "--latency", "0.02", "--workers", "1,2", "--rounds", "2", "--json", str(out),
                       "--tmp-root", str(tmp_path), "--max-seconds", "120"])
    assert code == 0
    data = json.loads(out.read_text())
    for w in ("1", "2"):
        run = data["runs"][w]
        assert run["valid"] and run["calls"] == 16
        assert 0 < run["ratio_in_flight"] <= 1.05
        assert len(run["rounds"]) == 2 and run["cpu_ratio"] in [r["cpu_ratio"] for r in run["rounds"]]
    assert 0 < data["runs"]["1"]["gap_median_ms"] < 1000
    shown = capsys.readouterr().out
    # a verdict beside each target (which one a 4-case run on a loaded machine earns is not the test's business)
    for target in (r"\(a\) toolkit overhead per call", r"\(c\) workers=1: process CPU per call"):
        assert re.search(target + r".*(PASS|FAIL)", shown), shown
    assert "every round's ratio" in shown
    assert "not checked (b): no run at 32+ workers" in shown  # targets met says what it did not check
    assert [p.name for p in tmp_path.iterdir()] == ["bench.json"]
