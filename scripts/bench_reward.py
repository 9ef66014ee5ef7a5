#!/usr/bin/env python
"""Benchmark of the training reward (``ioa_synth.train.reward``) against a scripted endpoint
with a fixed latency: one GRPO step's batch at the paper's size (App. D.1: 24 dialogues x
G = 5 question sets = 120 completions, each 2 simulator calls + 1 filter call).

What runs
    ``--prompts`` copies of the shipped sample case (3 MAs) form a train split; each gets
    ``--generations`` distinct question sets of 5 questions (what a policy's group writes).
    One :class:`~ioa_synth.train.reward.RewardScorer` (real ``openai`` client, CallRecorder,
    DuckDB catalog on disk) scores the whole batch with ``score_many`` at ``--workers``;
    a one-completion warm-up first (the reward is long-lived in training). The server is
    ``scripts/bench_evaluate.py``'s scripted child process: M2 diverges on questions 1-3 and
    the filter attributes question n to MA n, so every completion is exactly 3 calls and
    scores P .60, R 1.00.

(a) Efficiency: the ideal wall time ``calls x latency / workers`` divided by the measured
    one. Target: >= 0.9 at 32 workers. (A completion's 3 calls are sequential, as in
    ``evaluate``, so 120 completions over 32 workers cap it at 0.9375.)
(b) CPU per call (this process, all threads: parsing, prompts, catalog) of the reward
    divided by that of the raw ``openai`` client sending the same stored requests from as
    many threads and decoding each reply's JSON. Target: <= 1.5.
    Re-scoring the same batch is also timed: it replays every call from the catalog (0 paid).

Usage::

    .venv/bin/python scripts/bench_reward.py                      # 24 x 5 completions, 1 s, 32 workers
    .venv/bin/python scripts/bench_reward.py --latency 0.2 --check --json bench.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_common  # noqa: E402 - shared helpers (CPU clock, watchdog)
import bench_evaluate  # noqa: E402 - the scripted server process and the sample case
import bench_server  # noqa: E402 - the endpoint environment

COMPONENTS = ("simulator", "validity_filter")
CALLS_PER_COMPLETION = 3
EFFICIENCY_TARGET = 0.9
CPU_RATIO_TARGET = 1.5
EXPECTED_F1 = 2 * 0.6 * 1.0 / 1.6


def question_set(draft: int) -> str:
    """A completion: 5 questions (worded per ``draft``) in the prober reply shape."""
    return json.dumps({"questions": [{"question": f"Which reading of point {i} is right? (draft {draft})",
                                      "options": {"A": "the first", "B": "the second", "C": "neither"}}
                                     for i in range(1, 6)]})


def batch(n_prompts: int, generations: int, rep: int = 0) -> tuple[list[str], list[str]]:
    """Case ids and completions of one GRPO batch (each case's group: distinct drafts; each
    repeat ``rep`` other drafts, so nothing is replayed)."""
    from ioa_synth.protocol.cells import cells

    all_cells = cells()
    ids = [f"{d}/{t}_{i:03d}" for i, (d, t) in ((i, all_cells[i % len(all_cells)]) for i in range(n_prompts))]
    drafts = range(rep * generations, (rep + 1) * generations)
    return [c for c in ids for _ in drafts], [question_set(g) for _ in ids for g in drafts]


def score_batches(data: Path, out: Path, batches: list[tuple[list[str], list[str]]], workers: int,
                  timeout: float) -> list[dict[str, Any]]:
    """Score each batch once with one long-lived scorer (then re-score the last: all replayed)."""
    from ioa_synth.llm.config import ToolkitConfig
    from ioa_synth.train.reward import RewardScorer

    cfg = ToolkitConfig.model_validate({c: {"timeout": timeout, "max_retries": 1} for c in COMPONENTS})
    runs = []
    with RewardScorer(data, cfg, out=out, workers=workers) as reward:
        reward.score(batches[0][0][0], question_set(999))  # warm-up: imports, connections, catalog
        for ids, texts in batches:
            before = reward.run.tokens.calls
            reward.catalog.flush()  # the previous batch's commits are not this one's CPU
            cpu0, t0 = bench_common.cpu(), time.perf_counter()
            results = reward.score_many(ids, texts)
            t1 = time.perf_counter()
            reward.catalog.flush()  # this batch's commits are
            cpu1 = bench_common.cpu()
            calls = reward.run.tokens.calls - before
            valid = calls == CALLS_PER_COMPLETION * len(texts) and all(
                r.f1 is not None and abs(r.f1 - EXPECTED_F1) < 1e-9 for r in results)
            runs.append({"valid": valid, "calls": calls, "wall_s": t1 - t0, "cpu_s": cpu1 - cpu0})
        before = reward.run.tokens.calls
        t0 = time.perf_counter()
        again = reward.score_many(*batches[-1])
        runs[-1] |= {"replay_wall_s": time.perf_counter() - t0, "replay_paid_calls": reward.run.tokens.calls - before,
                     "replay_valid": all(r.f1 is not None and abs(r.f1 - EXPECTED_F1) < 1e-9 for r in again)}
    return runs


def raw_client(base_url: str, bodies: list[dict[str, Any]], workers: int, timeout: float) -> dict[str, Any]:
    """The same requests through the bare ``openai`` client, ``workers`` threads."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="bench", max_retries=1, timeout=timeout)

    def one(body: dict[str, Any]) -> Any:
        return json.loads(client.chat.completions.create(**body).choices[0].message.content)

    one(bodies[0])  # warm-up
    with ThreadPoolExecutor(workers) as pool:
        cpu0, t0 = bench_common.cpu(), time.perf_counter()
        list(pool.map(one, bodies))
        t1, cpu1 = time.perf_counter(), bench_common.cpu()
    client.close()
    return {"calls": len(bodies), "wall_s": t1 - t0, "cpu_s": cpu1 - cpu0}


def stored_requests(out: Path, n: int) -> list[dict[str, Any]]:
    from ioa_synth.runs.catalog import Catalog

    with Catalog(out, read_only=True) as cat:
        rows = cat.execute("SELECT request_json FROM llm_calls WHERE error IS NULL ORDER BY created_at")
    return [json.loads(r) for (r,) in rows[-n:]]


def measure(args: argparse.Namespace, reward: list[dict[str, Any]], raw: list[dict[str, Any]]) -> dict[str, Any]:
    """The best of the repeats (least wall time, least CPU per call: the other engineers'
    load on a shared machine only ever adds), as plain data."""
    calls = reward[0]["calls"]
    ideal = calls * args.latency / args.workers
    wall = min(r["wall_s"] for r in reward)
    cpu_reward = min(r["cpu_s"] / r["calls"] for r in reward)
    cpu_raw = min(r["cpu_s"] / r["calls"] for r in raw)
    efficiency, ratio = ideal / wall, cpu_reward / cpu_raw
    valid = all(r["valid"] for r in reward) and reward[-1]["replay_valid"] and reward[-1]["replay_paid_calls"] == 0
    ok = valid and ratio <= CPU_RATIO_TARGET and (args.workers < 32 or efficiency >= EFFICIENCY_TARGET)
    return {"completions": args.prompts * args.generations, "latency_s": args.latency, "workers": args.workers,
            "repeats": args.repeats, "valid": valid, "calls": calls, "wall_s": wall, "ideal_s": ideal,
            "efficiency": efficiency, "cpu_ms_per_call": {"reward": 1000 * cpu_reward, "raw_openai": 1000 * cpu_raw},
            "cpu_ratio": ratio, "replay_wall_s": reward[-1]["replay_wall_s"],
            "replay_paid_calls": reward[-1]["replay_paid_calls"], "runs": {"reward": reward, "raw_openai": raw},
            "targets_met": ok}


def report(m: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"training reward: {m['completions']} completions x {CALLS_PER_COMPLETION} calls, "
                    f"latency {m['latency_s'] * 1000:.0f} ms/call, {m['workers']} workers, best of {m['repeats']}")
    for col in ("measure", "value", "target"):
        t.add_column(col, justify="left" if col == "measure" else "right")
    if not m["valid"]:
        t.add_row("run INVALID (calls or F1 not as scripted)", f"{m['calls']} calls", "")
    t.add_row("(a) efficiency: ideal / measured wall", f"{m['efficiency']:.3f}",
              f">= {EFFICIENCY_TARGET}" if m["workers"] >= 32 else "")
    t.add_row("    measured / ideal wall", f"{m['wall_s']:.2f} / {m['ideal_s']:.2f} s", "")
    t.add_row("(b) CPU per call: reward / raw openai", f"{m['cpu_ratio']:.2f}", f"<= {CPU_RATIO_TARGET}")
    t.add_row("    CPU ms per call: reward, raw openai",
              f"{m['cpu_ms_per_call']['reward']:.2f}, {m['cpu_ms_per_call']['raw_openai']:.2f}", "")
    t.add_row("re-scoring the batch: wall, calls paid", f"{m['replay_wall_s']:.2f} s, {m['replay_paid_calls']}", "0")
    console = Console()
    console.print(t)
    console.print(f"targets met: {m['targets_met']}; 1-min load average {os.getloadavg()[0]:.2f} "
                  "(other processes' load inflates every wall-clock figure)")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prompts", type=int, default=24, help="dialogues per batch (default 24)")
    ap.add_argument("--generations", type=int, default=5, help="question sets per dialogue, G (default 5)")
    ap.add_argument("--latency", type=float, default=1.0, help="endpoint seconds per call (default 1.0)")
    ap.add_argument("--workers", type=int, default=32, help="completions scored at once (default 32)")
    ap.add_argument("--repeats", type=int, default=3, help="batches measured; the best counts (default 3)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers to this JSON file")
    ap.add_argument("--tmp-root", type=Path, default=None, help="where the temporary folders go")
    ap.add_argument("--max-seconds", type=float, default=600, help="abort after this (default 600)")
    ap.add_argument("--server-backlog", type=int, default=128, help="listen backlog of the scripted server")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if not (1 <= args.prompts <= 1000 and 1 <= args.generations <= 16 and 1 <= args.workers <= 256
            and 0 < args.latency <= 5 and 1 <= args.repeats <= 10):
        ap.error("--prompts 1-1000, --generations 1-16, --workers 1-256, --latency in (0, 5], --repeats 1-10")
    watchdog = bench_common.start_watchdog("bench_reward", args.max_seconds)
    tmp_root = Path(tempfile.mkdtemp(prefix="ioa-bench-reward-", dir=args.tmp_root))
    try:
        data = tmp_root / "data" / "train"
        bench_evaluate.write_cases(data, args.prompts)
        batches = [batch(args.prompts, args.generations, rep) for rep in range(args.repeats)]
        timeout = max(10.0, 20 * args.latency)
        with bench_evaluate.server_process(args.latency, args.server_backlog) as server, \
                bench_server.endpoint_env(tuple(c.upper() for c in COMPONENTS), lambda: server.base_url):
            print(f"scoring {args.repeats} x {len(batches[0][1])} completions at {args.workers} workers ...",
                  file=sys.stderr, flush=True)
            reward = score_batches(data, tmp_root / "reward", batches, args.workers, timeout)
            print("the same requests through the raw openai client ...", file=sys.stderr, flush=True)
            bodies = stored_requests(tmp_root / "reward", sum(r["calls"] for r in reward))
            n = reward[0]["calls"]
            raw = [raw_client(server.base_url, bodies[i * n:(i + 1) * n], args.workers, timeout)
                   for i in range(args.repeats)]
        numbers = measure(args, reward, raw)
        report(numbers)
        if args.json:
            args.json.write_text(json.dumps(numbers, indent=2) + "\n")
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
        watchdog.cancel()
    return 0 if numbers["targets_met"] or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
