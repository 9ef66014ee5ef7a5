#!/usr/bin/env python
"""Benchmark of ``ioa-synth build --batch``: the toolkit's CPU per call in batch mode against
the same build made live.

What runs
    N real seed papers (``bench_build.select_seeds``) are built twice per round into fresh
    folders, each time as a child process ``python -m ioa_synth build --seeds S --split test
    --workers 8``: live against a scripted endpoint, then with ``--batch`` against the same
    endpoint's scripted Batch API (``ScriptedBatches``: every batch is answered at its
    second poll, polls every 0.05 s). Every reply is valid and passing, so a case is 4
    calls and a batch build 4 waves.

Figure
    The child's process CPU (user + system, ``RUSAGE_CHILDREN``) per stored call, batch over
    live. Batch mode drives every unfinished case again after each wave (the stored
    answers are read, parsed and gated again, the way a resumed live run replays them), so
    it spends more per call; the target bounds that: batch / live <= 1.5. Both include the
    command's start (imports, endpoint setup, the estimate recorded at the start), which
    weighs less as N grows. Each round runs the pair back to back; the figure is the
    median round's (a shared 2-core VM's CPU speed drifts between minutes).

Usage: ``python scripts/bench_batch.py --cases 60 --rounds 3 --check``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import select_seeds  # noqa: E402

RATIO_TARGET = 1.5


def child_cpu(cmd: list[str], env: dict[str, str]) -> float:
    """Process CPU seconds of ``cmd`` run to its end (exit 0 required)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def stored_calls(out: Path) -> int:
    import duckdb

    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    try:
        return con.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
    finally:
        con.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--check", action="store_true", help=f"exit 1 unless batch/live CPU per call <= {RATIO_TARGET}")
    args = ap.parse_args()
    from ioa_synth.testing.scripted_batches import ScriptedBatches
    from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer

    work = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    seeds = work / "seeds.jsonl"
    seeds.write_text("".join(json.dumps(s) + "\n" for s in select_seeds(args.cases)), encoding="utf-8")
    ratios, rows = [], []
    with ScriptedServer(ProtocolResponder(), batches=ScriptedBatches()) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench-batch",
               "IOA_SYNTH_BATCH_POLL_SECONDS": "0.05"}
        for r in range(args.rounds):
            per_call = {}
            for mode in ("live", "batch"):
                out = work / f"{mode}-{r}"
                cmd = [sys.executable, "-m", "ioa_synth", "build", "--seeds", str(seeds), "--split", "test",
                       "--out", str(out), "--workers", str(args.workers)] + (["--batch"] if mode == "batch" else [])
                cpu = child_cpu(cmd, env)
                per_call[mode] = cpu / stored_calls(out) * 1000
            ratios.append(per_call["batch"] / per_call["live"])
            rows.append(per_call)
            print(f"round {r + 1}: live {per_call['live']:.2f} ms, batch {per_call['batch']:.2f} ms CPU per call, "
                  f"ratio {ratios[-1]:.2f}", flush=True)
    ratio = statistics.median(ratios)
    print(f"batch / live CPU per call ({args.cases} cases, {args.cases * 4} calls each): median {ratio:.2f} "
          f"(rounds: {', '.join(f'{x:.2f}' for x in ratios)}); target <= {RATIO_TARGET}")
    if args.check and ratio > RATIO_TARGET:
        print("FAIL: batch mode's CPU per call is above the target")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
