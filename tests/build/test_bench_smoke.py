"""Smoke test of scripts/bench_build.py: a tiny run goes through the real build path,
every case is accepted with exactly 4 calls, and the report's numbers are sane."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_build.py"


def _load():
    spec = importlib.util.spec_from_file_location("bench_build", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_select_seeds_spreads_over_cells():
    bench = _load()
    seeds = bench.select_seeds(30)
    assert len({s["seed_id"] for s in seeds}) == 30
    assert len({s["domain"] for s in seeds}) == 6
    assert len({(s["domain"], s["task_type"]) for s in seeds}) == 30
    assert all(s["title"] and s["abstract"] for s in seeds)


def test_tiny_benchmark_runs(tmp_path, capsys):
    bench = _load()
    out = tmp_path / "bench.json"
    code = bench.main(["--cases", "4", "--latency", "0.02", "--workers", "1,2", "--rounds", "2", "--json", str(out),
                       "--tmp-root", str(tmp_path), "--max-seconds", "120"])
    assert code == 0  # a benchmark: targets missed still exit 0 without --check
    data = json.loads(out.read_text())
    for w in ("1", "2"):
        run = data["runs"][w]
        assert run["valid"] and run["calls"] == 16
        assert 0 < run["ratio_in_flight"] <= 1.05
        assert run["raw_calls"] == 16 and run["cpu_ratio"] > 0  # the bare openai client made the same calls
        assert len(run["rounds"]) == 2 and run["cpu_ratio"] in [r["cpu_ratio"] for r in run["rounds"]]
    one = data["runs"]["1"]
    assert 0 < one["gap_median_ms"] < 1000
    shown = capsys.readouterr().out
    assert "toolkit overhead per call" in shown and "every round's median gap" in shown
    assert [p.name for p in tmp_path.iterdir()] == ["bench.json"]  # temp build dirs removed


def test_each_figure_is_read_off_its_median_round():
    sys.path.insert(0, str(SCRIPT.parent))
    from bench_rounds import median_round, spread

    class Run:
        def __init__(self, x):
            self.x = x

    runs = [Run(1.4), Run(float("nan")), Run(1.1), Run(1.6), Run(1.2)]
    assert median_round(runs, lambda r: r.x).x == 1.4  # NaN ranks last: 1.1 1.2 [1.4] 1.6 nan
    assert median_round(runs[2:4], lambda r: r.x).x == 1.1  # the lower median of an even count
    assert median_round(runs[:1], lambda r: r.x).x == 1.4
    assert spread(runs[2:4], lambda r: r.x) == "rounds 1.10, 1.60" and spread(runs[:1], lambda r: r.x) == ""
