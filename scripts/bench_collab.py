#!/usr/bin/env python
"""Benchmark of ``ioa-synth collab run`` against a scripted endpoint with a fixed latency.

What runs
    ``--cases`` hidden-profile tasks (the shipped scenarios, cycled under new ids) under
    three configurations (``discussion``, ``self-reflection``, ``mcq:bench``) through
    ``ioa_synth.collab.run.run_collab`` (the CLI's code path: real ``openai`` client,
    CallRecorder, DuckDB catalog on disk, records written atomically) into a fresh results
    folder. The scripted team (:class:`ioa_synth.testing.collab_scripted.CollabScript`) is
    served from a child process that logs when each request arrived and when its reply was
    written (``bench_server``). Hidden-profile tasks keep the BigCodeBench harness (a worker
    process per check, seconds of CPU each on its own) out of the per-call figures.

(a) In-flight efficiency: the time-averaged number of requests in flight at the server,
    from the first request to the last reply, divided by ``--workers``. Target: >= 0.95
    at 32 workers with 48 tasks x 3 configurations.
(b) CPU per call: the toolkit process's CPU from its first request to the end of the run,
    per call, next to a bare ``openai`` client sending the same request bodies on
    ``--workers`` threads to the same server (``bench_common.raw_once``). Target: ratio <= 1.5.

Each figure is the median of ``--rounds`` rounds (``bench_rounds``).

Usage::

    .venv/bin/python scripts/bench_collab.py --check                 # 48 tasks x 3 configs, 32 workers
    .venv/bin/python scripts/bench_collab.py --cases 6 --workers 4 --rounds 1 --check
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (CPU_RATIO_TARGET, RunResult, bench_arguments, checked_workers, measured,  # noqa: E402
                          raw_once, start_watchdog)
from bench_rounds import median_round, run_rounds, spread  # noqa: E402
from bench_server import REPO, ServerProcess, endpoint_env, serve_instrumented  # noqa: E402

sys.path.insert(0, str(REPO))
EFFICIENCY_TARGET = 0.95
CONFIGS = ["discussion", "self-reflection", "mcq:bench"]
#: Scenarios whose discussers diverge on the detector's questions (the others do not).
DIVERGE = {"hp-sample-1", "hp-sample-2"}
FLAG = {"hp-sample-3"}


def sample_scenarios() -> list[Any]:
    from ioa_synth.collab.tasks import load_tasks

    return load_tasks(REPO / "samples" / "collab" / "hidden_profile_sample.json", "hidden-profile")


def serve(latency: float, backlog: int | None) -> None:
    """Child process (``--serve``): the scripted team on an instrumented ``ScriptedServer``."""
    from ioa_synth.testing.collab_scripted import CollabScript
    from ioa_synth.testing.scripted_server import ScriptedServer

    serve_instrumented(ScriptedServer(CollabScript(tasks=sample_scenarios(), diverge=DIVERGE, flag=FLAG,
                                                   latency=latency)), backlog)


class CollabRun(RunResult):
    def valid(self) -> bool:
        return self.summary.get("done") == self.cases and not self.summary.get("failed")

    def efficiency(self) -> float:
        """Time-averaged requests in flight at the server over the window, per worker."""
        return self.endpoint_s / self.window_s / self.workers if self.log else float("nan")


def write_tasks(path: Path, n: int) -> list[Any]:
    base = sample_scenarios()
    rows = [base[i % len(base)].model_dump() | {"task_id": f"bench-{i:03d}"} for i in range(n)]
    path.write_text(json.dumps({"format": "ioa-synth/hidden-profile", "version": 1, "scenarios": rows}),
                    encoding="utf-8")
    from ioa_synth.collab.tasks import load_tasks

    return load_tasks(path, "hidden-profile")


def run_once(n_tasks: int, workers: int, server: ServerProcess, tmp_root: Path) -> CollabRun:
    from rich.console import Console

    from ioa_synth.collab.detectors import Detector
    from ioa_synth.collab.run import RunJob, run_collab
    from ioa_synth.collab.team import CollabSettings
    from ioa_synth.llm.config import ToolkitConfig

    tmp = Path(tempfile.mkdtemp(prefix="bench-collab-", dir=tmp_root))
    tasks = write_tasks(tmp / "tasks.json", n_tasks)
    job = RunJob(tasks=tasks, all_tasks=tasks, configs=CONFIGS, settings=CollabSettings(bench="hidden-profile"),
                 detectors=[Detector("bench", "bench.json", ToolkitConfig())], workers=workers)
    out = tmp / "res"
    quiet = Console(file=open("/dev/null", "w"))  # noqa: SIM115 - closed with the process
    with endpoint_env(("DISCUSSER", "PROBER"), lambda: server.base_url):
        return measured(CollabRun, workers, n_tasks * len(CONFIGS), server,
                        lambda: run_collab(job, out, ToolkitConfig(), None, quiet, {}), out)


def main(argv: list[str] | None = None) -> int:
    ap = bench_arguments(__doc__.split("\n\n")[0], "32", "results folders")
    ap.set_defaults(cases=48)
    args = ap.parse_args(argv)
    if args.serve:
        serve(args.latency, args.server_backlog or None)
        return 0
    workers_list = checked_workers(ap, args)
    watchdog = start_watchdog("bench_collab", args.max_seconds)
    tmp_root = Path(tempfile.mkdtemp(prefix="bench-collab-", dir=args.tmp_root))
    results: dict[str, Any] = {"tasks": args.cases, "configs": CONFIGS, "latency": args.latency, "workers": {}}
    ok = True
    with ServerProcess(__file__, args.latency, args.server_backlog or None) as server:
        for w in workers_list:
            rounds = run_rounds(w, args.rounds, lambda: run_once(args.cases, w, server, tmp_root),
                                lambda run: raw_once(run.requests, w, server, timeout=60), "collab run")
            a = median_round(rounds, CollabRun.efficiency)
            b = median_round(rounds, RunResult.cpu_ratio)
            row = {"valid": all(r.valid() for r in rounds), "calls": a.calls, "wall_s": round(a.wall_s, 2),
                   "in_flight_efficiency": round(a.efficiency(), 3),
                   "cpu_ms_per_call": round(b.window_cpu_ms_per_call(), 3),
                   "cpu_ms_per_call_raw_openai": round(b.raw.window_cpu_ms_per_call(), 3),
                   "cpu_ratio": round(b.cpu_ratio(), 3),
                   "rounds": {"efficiency": spread(rounds, CollabRun.efficiency, "{:.3f}"),
                              "cpu_ratio": spread(rounds, RunResult.cpu_ratio)}}
            results["workers"][w] = row
            ok &= row["valid"] and row["cpu_ratio"] <= CPU_RATIO_TARGET
            if w >= 32:
                ok &= row["in_flight_efficiency"] >= EFFICIENCY_TARGET
    watchdog.cancel()
    results["targets"] = {"in_flight_efficiency_at_32": f">= {EFFICIENCY_TARGET}", "cpu_ratio": f"<= {CPU_RATIO_TARGET}"}
    results["targets_met"] = ok
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    if not args.keep:
        import shutil

        shutil.rmtree(tmp_root, ignore_errors=True)
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
