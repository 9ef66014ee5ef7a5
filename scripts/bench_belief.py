#!/usr/bin/env python
"""Benchmark of ``ioa-synth belief run`` against a scripted endpoint with a fixed latency.

What runs
    ``--conversations`` items (the shipped sample items, cycled under new ids), one
    attacker each, ``--agents`` agents and ``--rounds`` rounds, through
    ``ioa_synth.belief.run.run_study`` (the CLI's code path: real ``openai`` client,
    CallRecorder, DuckDB catalog on disk, records written atomically) into a fresh results
    folder. The scripted study (:class:`ioa_synth.testing.belief_scripted.BeliefScript`) is served
    from a child process, which logs when each request arrived and when its reply was
    written.

(a) In-flight efficiency: the time-averaged number of requests in flight at the server,
    from the first request to the last reply, divided by ``--workers``. Target: >= 0.9
    with 64 conversations at 32 workers.
(b) CPU time per call: the toolkit process's CPU seconds per call, next to the same
    number of calls made by the raw ``openai`` client on ``--workers`` threads against the
    same server. Target: ratio <= 1.5.

Usage::

    .venv/bin/python scripts/bench_belief.py                       # 64 conversations, 32 workers
    .venv/bin/python scripts/bench_belief.py --conversations 8 --workers 4 --rounds 2 --check
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

EFFICIENCY_TARGET = 0.9
CPU_RATIO_TARGET = 1.5


def serve(latency: float, agents: int, conn: Any) -> None:
    """Child process: the scripted study server; sends its base URL, then on any message
    the ``(t_in, t_out)`` pairs of every chat request."""
    from ioa_synth.testing.belief_scripted import BeliefScript
    from ioa_synth.testing.scripted_server import ScriptedServer

    script = BeliefScript(agents=agents)
    log: list[tuple[float, float]] = []
    lock = threading.Lock()

    def responder(body: dict[str, Any], headers: dict[str, str]):
        t_in = time.monotonic()
        reply = script(body, headers)
        time.sleep(latency)
        with lock:
            log.append((t_in, time.monotonic()))
        return reply

    with ScriptedServer(responder) as server:
        conn.send(server.base_url)
        conn.recv()
        conn.send(log)


class Server:
    def __init__(self, latency: float, agents: int) -> None:
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=serve, args=(latency, agents, child), daemon=True)
        self.proc.start()
        self.base_url = self.conn.recv()

    def log(self) -> list[tuple[float, float]]:
        self.conn.send("stop")
        log = self.conn.recv()
        self.proc.join(5)
        return log


def efficiency(log: list[tuple[float, float]], workers: int) -> float:
    """Time-averaged requests in flight over [first arrival, last reply] / workers."""
    start, end = min(t for t, _ in log), max(t for _, t in log)
    busy = sum(b - a for a, b in log)
    return busy / (end - start) / workers


def write_items(path: Path, n: int) -> None:
    rows = [json.loads(x) for x in (REPO / "samples" / "belief" / "items.jsonl").read_text().splitlines()]
    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps(rows[i % len(rows)] | {"item_id": f"bench-{i}"}) + "\n")


def run_toolkit(args: argparse.Namespace, base_url: str, tmp: Path) -> tuple[int, float, float]:
    """Run the study; return (calls, cpu seconds, wall seconds)."""
    from rich.console import Console

    from ioa_synth.belief.conversation import StudySettings
    from ioa_synth.belief.items import load_items
    from ioa_synth.belief.run import RunJob, run_study
    from ioa_synth.llm.config import ToolkitConfig

    os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = base_url, "sk-bench-000000"
    items_path = tmp / "items.jsonl"
    write_items(items_path, args.conversations)
    items = load_items(items_path)
    settings = StudySettings(agents=args.agents, attackers=(1,), rounds=args.rounds, memory=5, seed=0)
    job = RunJob(items=items, all_items=items, settings=settings, workers=args.workers)
    cpu0, wall0 = time.process_time(), time.monotonic()
    stats = run_study(job, tmp / "res", ToolkitConfig(), None, Console(file=open(os.devnull, "w")), {})
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    assert stats["done"] == args.conversations, stats
    benign = args.agents - 1
    calls = args.conversations * (args.agents * args.rounds + 2 * benign * (args.rounds + 1) + benign * args.rounds)
    return calls, cpu, wall


def stored_requests(results: Path) -> list[dict[str, Any]]:
    """The request bodies the toolkit sent (``llm_calls.request_json``)."""
    import duckdb

    con = duckdb.connect(str(results / "catalog.duckdb"), read_only=True)
    rows = con.execute("SELECT request_json FROM llm_calls ORDER BY created_at").fetchall()
    con.close()
    return [json.loads(r[0]) for r in rows]


def run_raw(base_url: str, bodies: list[dict[str, Any]], workers: int) -> float:
    """CPU seconds of sending the same request bodies with the raw ``openai`` client on
    ``workers`` threads (reply JSON decoded, nothing stored)."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="sk-bench-000000")

    def one(body: dict[str, Any]) -> None:
        json.loads(client.chat.completions.create(**body).choices[0].message.content)

    cpu0 = time.process_time()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, bodies))
    return time.process_time() - cpu0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--conversations", type=int, default=64)
    p.add_argument("--workers", type=int, default=32)
    p.add_argument("--agents", type=int, default=10)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--latency", type=float, default=0.2, help="seconds per reply")
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-belief-") as tmp:
        server = Server(args.latency, args.agents)
        calls, cpu, wall = run_toolkit(args, server.base_url, Path(tmp))
        log = server.log()
        bodies = stored_requests(Path(tmp) / "res")
        raw_server = Server(args.latency, args.agents)
        raw_cpu = run_raw(raw_server.base_url, bodies, args.workers)
        raw_server.log()
    eff = efficiency(log, args.workers)
    result = {"conversations": args.conversations, "workers": args.workers, "latency": args.latency,
              "calls": calls, "server_requests": len(log), "wall_s": round(wall, 2),
              "in_flight_efficiency": round(eff, 3), "cpu_ms_per_call": round(1000 * cpu / calls, 3),
              "raw_openai_cpu_ms_per_call": round(1000 * raw_cpu / calls, 3),
              "cpu_ratio": round(cpu / raw_cpu, 2) if raw_cpu else None}
    result["targets_met"] = eff >= EFFICIENCY_TARGET and (result["cpu_ratio"] or 0) <= CPU_RATIO_TARGET
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 1 if args.check and not result["targets_met"] else 0


if __name__ == "__main__":
    sys.exit(main())
