#!/usr/bin/env python
"""Benchmark of ``ioa-synth evaluate`` against a scripted endpoint with a fixed latency.

What runs
    N copies of the shipped sample case (``samples/evaluate/test/...``, released IoA-Suite
    shape, 3 MAs), spread over the 30 (domain, task type) folders, are evaluated by
    ``ioa_synth.evaluate.run.run_evaluate`` (the CLI's code path: real ``openai`` client,
    the CallRecorder and DuckDB catalog on disk, records and summary written atomically,
    the progress bar rendered to a null terminal) into a fresh results folder, once per
    ``--workers`` value. All three components reach one scripted OpenAI-compatible server
    through ``OPENAI_BASE_URL``; it tells the components apart by the reply schema and
    plays a fixed script: 5 questions, M1 answers A everywhere, M2 answers B on the first
    three, the filter attributes each divergent question n to MA n. So a case is exactly
    4 sequential calls (prober, simulator M1, simulator M2, filter) and scores P .60 R 1.

    As for ``scripts/bench_build.py``, the server runs in a child process and logs ``t_in``
    (request line arrived) and ``t_out`` (reply written) per chat request on the shared
    monotonic clock (``scripts/bench_server.py``; the run record and the bare-client replay
    are ``scripts/bench_common.py``'s).

(a) Toolkit overhead per call (workers=1): median of ``t_in[i+1] - t_out[i]``, everything
    the toolkit does between two sequential calls (reply parsing and validation, catalog
    journal, prompt rendering, the record write that falls in one gap out of four).
    Target: <= 2 ms.
(b) Throughput: measured cases/s over the in-flight window divided by the ideal
    ``W / (4 * latency)``. Target: >= 0.9 at 32 workers.
(c) Process CPU per call (first request to the end of the run) against a bare ``openai``
    client sending the same stored requests on W threads (bench_build's (c)). Target:
    <= 1.5 at every worker count.
Rounds: each worker count runs ``--rounds`` times (default 3), an evaluate run then its
    bare-client replay; each figure is that of the round where it is the median, every
    round's value printed beside it (bench_build's "Rounds").

Usage::

    .venv/bin/python scripts/bench_evaluate.py                 # 64 cases, 200 ms, workers 1,32
    .venv/bin/python scripts/bench_evaluate.py --cases 32 --latency 0.1 --workers 1,8,32 --check
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (CALLS_PER_CASE, CPU_RATIO_TARGET, OVERHEAD_TARGET_MS, SCALING_TARGET,  # noqa: E402
                          SCALING_TARGET_WORKERS, RunResult, bench_arguments, checked_workers,
                          measured, raw_once, start_watchdog)
from bench_rounds import median_figures, run_rounds, spread  # noqa: E402
from bench_server import REPO, ServerProcess, endpoint_env, serve_instrumented  # noqa: E402

SAMPLE = REPO / "samples" / "evaluate" / "test" / "software_engineering" / "troubleshooting_001.json"


# -- the scripted endpoint (child process) ----------------------------------------------
def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The script's reply JSON for one chat request (component told by its schema)."""
    fmt = body.get("response_format") or {}
    props = ((fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}).get("properties", {})
    text = "\n".join(m["content"] for m in body["messages"])
    shown = [int(n) for n in re.findall(r"^Question (\d+):", text, flags=re.M)]
    if "questions" in props:
        return {"questions": [{"question": f"Which reading of point {i} is right?",
                               "options": {"A": "the first", "B": "the second", "C": "neither"}} for i in range(1, 6)]}
    if "answers" in props:
        me = re.search(r"You are (M[12])\.", text).group(1)
        return {"answers": [{"question": n, "option": "B" if me == "M2" and n <= 3 else "A"} for n in shown]}
    return {"judgements": [{"question": n, "is_meaningful": True, "is_implicit": True, "redundant_with": None,
                            "hits_ground_truth": f"MA{n}"} for n in shown]}


def serve(latency: float, backlog: int | None) -> None:
    """Child process (``--serve``): the scripted replies of :func:`respond` after ``latency``
    seconds, on an instrumented ``ScriptedServer`` (:func:`bench_server.serve_instrumented`)."""
    from ioa_synth.testing.scripted_server import ScriptedServer, chat_reply

    def responder(body: dict[str, Any], headers: dict[str, str]):
        reply = chat_reply(json.dumps(respond(body)))
        reply.delay = latency
        return reply

    serve_instrumented(ScriptedServer(responder), backlog)


def server_process(latency: float, backlog: int | None = None) -> ServerProcess:
    """This script's scripted server in a child process (also used by ``bench_reward.py``)."""
    return ServerProcess(__file__, latency, backlog)


class EvalRun(RunResult):
    def valid(self) -> bool:
        return super().valid() and self.summary.get("cases", {}).get("scored") == self.cases


# -- one evaluation -----------------------------------------------------------------------
def write_cases(root: Path, n: int) -> None:
    """``n`` copies of the sample case, cycled over the 30 cells."""
    from ioa_synth.protocol.cells import cells

    text = SAMPLE.read_text(encoding="utf-8")
    all_cells = cells()
    for i in range(n):
        domain, task = all_cells[i % len(all_cells)]
        path = root / domain / f"{task}_{i:03d}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def run_once(data: Path, n: int, workers: int, server: ServerProcess, tmp_root: Path, timeout: float,
             keep: bool) -> EvalRun:
    from rich.console import Console

    from ioa_synth.evaluate.case import EvalSettings
    from ioa_synth.evaluate.inputs import load_cases
    from ioa_synth.evaluate.run import EvalJob, run_evaluate
    from ioa_synth.llm.config import ToolkitConfig

    out_dir = Path(tempfile.mkdtemp(prefix=f"bench-eval-w{workers}-", dir=tmp_root))
    cfg = ToolkitConfig.model_validate({c: {"timeout": timeout, "max_retries": 1}
                                        for c in ("prober", "simulator", "validity_filter")})
    cases = load_cases(data)
    job = EvalJob(cases=cases, all_cases=cases, settings=EvalSettings())
    console = Console(file=open(os.devnull, "w"), force_terminal=True, width=120)  # noqa: SIM115
    try:
        return measured(EvalRun, workers, n, server, lambda: run_evaluate(
            job, out_dir / "results", cfg, workers=workers, console=console,
            args={"bench": True, "workers": workers}), out_dir / "results")
    finally:
        console.file.close()
        if not keep:
            shutil.rmtree(out_dir, ignore_errors=True)


# -- report --------------------------------------------------------------------------------
def measure(args: argparse.Namespace, runs: dict[int, list[EvalRun]]) -> dict[str, Any]:
    """The benchmark's numbers as plain data (``targets_met`` says whether the targets hold):
    per worker count, each figure from its median round (:func:`bench_rounds.median_round`),
    every round's figures under ``rounds``, and ``spread`` lines for the table."""
    chain = CALLS_PER_CASE * args.latency
    out: dict[str, Any] = {"cases": args.cases, "latency_s": args.latency, "rounds": args.rounds, "runs": {}}
    ok = True
    for w, rounds in runs.items():
        row = median_figures(w, rounds, chain, "cpu_ms_per_call")
        ok &= row["valid"]
        ratio = row["ratio_in_flight"]
        ok &= row["cpu_ratio"] is not None and row["cpu_ratio"] <= CPU_RATIO_TARGET
        if "gap_median_ms" in row:
            ok &= row["gap_median_ms"] <= OVERHEAD_TARGET_MS
        if w >= SCALING_TARGET_WORKERS:
            ok &= ratio is not None and ratio >= SCALING_TARGET
        ones = [r for r in rounds if r.calls > 1]
        row["spread"] = {"gap": spread(ones, RunResult.gap_median_ms),
                         "ratio": spread(rounds, lambda r: r.in_flight_ratio(chain), "{:.3f}"),
                         "cpu": spread(rounds, RunResult.cpu_ratio)}
        out["runs"][str(w)] = row
    out["targets_met"] = ok
    return out


def report(data: dict[str, Any]) -> None:
    """The numbers of :func:`measure` as a table, a PASS/FAIL verdict beside each target."""
    from rich.console import Console
    from rich.table import Table

    def verdict(passed: bool) -> str:
        return "[green]PASS[/]" if passed else "[red]FAIL[/]"

    t = Table(title=f"ioa-synth evaluate: {data['cases']} cases x {CALLS_PER_CASE} calls, endpoint latency "
                    f"{data['latency_s'] * 1000:.0f} ms/call")
    for col in ("measure", "value", "target", ""):
        t.add_column(col, justify="left" if col == "measure" else "center" if not col else "right")
    for w, r in data["runs"].items():
        if not r["valid"]:
            t.add_row(f"workers={w}: run INVALID", f"{r['calls']} calls", f"{CALLS_PER_CASE * data['cases']}",
                      verdict(False))
        if "gap_median_ms" in r:
            t.add_row("(a) toolkit overhead per call: median gap, workers=1", f"{r['gap_median_ms']:.2f} ms",
                      f"<= {OVERHEAD_TARGET_MS:g} ms", verdict(r["gap_median_ms"] <= OVERHEAD_TARGET_MS))
            if "gap_median_ms_raw_openai" in r:
                t.add_row("    bare openai client, same calls: median gap", f"{r['gap_median_ms_raw_openai']:.2f} ms")
            t.add_row("    p90 / mean gap", f"{r['gap_p90_ms']:.2f} / {r['gap_mean_ms']:.2f} ms")
            if r["spread"]["gap"]:
                t.add_row("    every round's median gap", r["spread"]["gap"] + " ms")
        ratio, targeted = r["ratio_in_flight"], int(w) >= SCALING_TARGET_WORKERS
        t.add_row(f"(b) workers={w}: throughput / ideal, in flight", f"{ratio:.3f}" if ratio is not None else "-",
                  f">= {SCALING_TARGET}" if targeted else "",
                  verdict(ratio is not None and ratio >= SCALING_TARGET) if targeted else "")
        if r["spread"]["ratio"]:
            t.add_row("    every round's ratio", r["spread"]["ratio"])
        t.add_row(f"    end to end ({r['wall_s']:.2f} s)", f"{r['ratio_end_to_end']:.3f}")
        if r.get("cpu_ratio") is not None:
            t.add_row(f"(c) workers={w}: process CPU per call, toolkit / bare openai client (same calls)",
                      f"{r['cpu_ms_per_call']:.2f} / {r['cpu_ms_per_call_raw_openai']:.2f} ms, ratio {r['cpu_ratio']:.2f}",
                      f"<= {CPU_RATIO_TARGET:g}", verdict(r["cpu_ratio"] <= CPU_RATIO_TARGET))
            if r["spread"]["cpu"]:
                t.add_row("    every round's ratio", r["spread"]["cpu"])
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 130)
    console.print(t)
    unchecked = [name for name, present in (
        ("(a): no run at 1 worker", any("gap_median_ms" in r for r in data["runs"].values())),
        (f"(b): no run at {SCALING_TARGET_WORKERS}+ workers",
         any(int(w) >= SCALING_TARGET_WORKERS for w in data["runs"]))) if not present]
    console.print(f"targets met: {data['targets_met']}"
                  + (f" (not checked {'; '.join(unchecked)})" if unchecked else "")
                  + f"; 1-min load average {os.getloadavg()[0]:.2f} "
                  "(other processes' load inflates every wall-clock figure)")


def main(argv: list[str] | None = None) -> int:
    ap = bench_arguments(__doc__.split("\n\n")[0], "1,32", "results folders")
    args = ap.parse_args(argv)
    if args.serve:
        serve(args.latency, args.server_backlog)
        return 0
    workers = checked_workers(ap, args)
    watchdog = start_watchdog("bench_evaluate", args.max_seconds)
    tmp_root = Path(tempfile.mkdtemp(prefix="ioa-bench-eval-", dir=args.tmp_root))
    try:
        data = tmp_root / "data"
        write_cases(data, args.cases)
        with server_process(args.latency, args.server_backlog) as server, \
                endpoint_env(("PROBER", "SIMULATOR", "VALIDITY_FILTER"), lambda: server.base_url):
            timeout = max(10.0, 20 * args.latency)
            runs = {w: run_rounds(w, args.rounds, lambda: run_once(data, args.cases, w, server, tmp_root, timeout, args.keep),
                                  lambda run: raw_once(run.requests, w, server, timeout),
                                  f"evaluating {args.cases} cases") for w in workers}
        numbers = measure(args, runs)
        report(numbers)
        if args.json:
            args.json.write_text(json.dumps(numbers, indent=2) + "\n")
    finally:
        if not args.keep:
            shutil.rmtree(tmp_root, ignore_errors=True)
        watchdog.cancel()
    return 0 if numbers["targets_met"] or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
