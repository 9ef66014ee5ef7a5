#!/usr/bin/env python
"""Benchmark of ``ioa-synth build`` against a scripted endpoint with a fixed latency.

What runs
    N real seed papers from ``seeds/snapshot.jsonl`` (round-robin over the six domains,
    task types cycled within each domain, so every (domain, task_type) cell gets cases)
    are written to a temporary seed JSONL in the ``build --seeds`` format and read back
    with ``load_seed_file``; ``ioa_synth.build.run.run_build`` (the code path of the CLI:
    ``plan_from_seeds``, a ``ToolkitConfig`` with no model set - so the model is listed
    from the endpoint, as without ``--config`` - and only ``timeout``/``max_retries``
    bounded, the real ``openai`` client, the DuckDB catalog on disk, the progress bar
    rendered to a null terminal) builds them into a fresh
    temporary ``--out`` directory, once per ``--workers`` value. The endpoint is
    ``ScriptedServer(ProtocolResponder(latency=L))`` on 127.0.0.1, reached through
    ``OPENAI_BASE_URL``/``OPENAI_API_KEY``. Every reply is valid and passing, so a case
    is exactly 4 chat calls (G_participants, J_participants, G_dialogue, J_dialogue).

    The server runs in a child process and logs when each request arrives and its reply
    leaves (``scripts/bench_server.py``).

(a) Toolkit overhead per LLM call (run with workers=1)
    With one worker the calls are strictly sequential, so the time between the reply of
    call i leaving the server and request i+1 arriving is spent entirely on the client
    side: ``gap_i = t_in[i+1] - t_out[i]``. It holds everything the toolkit does per
    call: the openai/httpx response parsing, JSON decoding and pydantic validation,
    the catalog transaction, the progress update, rendering the next prompt, building
    its schema and request, and both loopback transfers. Endpoint time (header parsing
    through the 200 ms sleep to the last byte written) is excluded. The headline number
    is the median gap; p90, the mean (which includes the per-case work - record file,
    status update - that falls in one gap out of four) and the aggregate
    ``(wall - sum(t_out - t_in)) / calls`` (which also spreads the one-off setup:
    catalog creation, fingerprint, case registration) are printed too, and the part
    spent inside the openai call (``llm_calls.latency_ms`` minus endpoint time). Target:
    median <= 2 ms. Wall-clock gaps grow with the host's load, so the process CPU per
    call is printed as well (all threads, ``time.process_time``, from the start of the
    first request to the end of ``run_build``: setup is left out, the last catalog
    commit at close is not).

(b) Throughput scaling
    Ideal throughput with W workers is ``W / chain`` cases/s, ``chain = 4 * latency``
    (a case's calls are sequential). The ratio measured/ideal is printed for the
    in-flight window (first chat request in -> last reply out; this is the scaling
    figure checked against the >= 0.9 target at 32 workers) and for the end-to-end
    ``run_build`` wall time (includes the one-off setup and teardown, shown apart).
    N should be a multiple of every W, or the last wave runs partly empty.

(c) Process CPU per call against a bare ``openai`` client
    After each build, the request bodies it stored in ``llm_calls`` are sent again, case
    by case on W threads, through ``openai.OpenAI().chat.completions.create`` (one shared
    client; each reply's content decoded as JSON; one warm-up call first): the least any
    client must do for the same calls. The ratio of the two runs' process CPU per call (first
    request to the end of the run) does not move with the host's load as wall-clock
    figures do. Target: <= 1.5 at every worker count.

Rounds
    Each worker count runs ``--rounds`` times (default 3): a build, then its bare-client
    replay. Each figure is that of the round where it is the median (``bench_rounds``),
    with every round's value printed beside it: on a shared VM the CPU's speed drifts by
    tens of percent between minutes, which one run of each cannot tell from a change.

Server capacity check
    Before the builds, a burst of max(W) concurrent chat requests on fresh connections
    and a closed loop of max(W) keep-alive clients (4 x N calls, no toolkit) measure
    what the scripted server itself can do; its ratio is the ceiling for (b). The burst
    is also sent to a server as shipped: ``ScriptedServer``'s ThreadingHTTPServer
    listens with socketserver's default backlog of 5, so a burst of new connections
    can overflow the accept queue (a dropped SYN is retried after 1 s). The bench's
    server re-``listen()``s with ``--server-backlog`` (default 128) to rule that out.

Bounds: N <= number of seeds in the snapshot (197); every request goes to 127.0.0.1
(proxies bypassed); per-request timeout and a whole-benchmark watchdog
(``--max-seconds``). Exit status is 0 regardless of the targets unless ``--check``.

Usage::

    .venv/bin/python scripts/bench_build.py                 # 64 cases, 200 ms, workers 1,8,32
    .venv/bin/python scripts/bench_build.py --cases 32 --latency 0.1 --workers 1,32 --check
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (CALLS_PER_CASE, OVERHEAD_TARGET_MS, SCALING_TARGET,  # noqa: E402
                          SCALING_TARGET_WORKERS, RunResult, bench_arguments, checked_workers,
                          measured, pct, raw_once, start_watchdog)
from bench_rounds import cpu_rows, median_figures, median_round, run_rounds, spread  # noqa: E402
from bench_server import REPO, ServerProcess, endpoint_env, serve_instrumented, server_capacity  # noqa: E402

SNAPSHOT = REPO / "seeds" / "snapshot.jsonl"


def serve(latency: float, backlog: int | None) -> None:
    """Child process (``--serve``): ``ProtocolResponder(latency)`` on an instrumented
    ``ScriptedServer`` (:func:`bench_server.serve_instrumented`)."""
    from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer

    serve_instrumented(ScriptedServer(ProtocolResponder(latency=latency)), backlog)


class BuildRun(RunResult):
    def valid(self) -> bool:
        return super().valid() and self.summary.get("accepted") == self.cases


# -- seeds -----------------------------------------------------------------------------
# -- seeds ------------------------------------------------------------------------------
def select_seeds(n: int) -> list[dict[str, Any]]:
    """``n`` seed tuples from the snapshot: domains round-robin, task types cycled per domain."""
    from ioa_synth.protocol.cells import DOMAINS, TASK_TYPES

    by_domain: dict[str, list[dict[str, Any]]] = {d: [] for d in DOMAINS}
    for line in SNAPSHOT.read_text(encoding="utf-8").splitlines():
        if line.strip():
            paper = json.loads(line)
            by_domain.setdefault(paper["domain"], []).append(paper)
    total = sum(len(v) for v in by_domain.values())
    if not 1 <= n <= total:
        raise SystemExit(f"--cases must be between 1 and {total} (papers in {SNAPSHOT.name})")
    task_types = list(TASK_TYPES)
    used = {d: 0 for d in by_domain}
    out: list[dict[str, Any]] = []
    while len(out) < n:
        for d, papers in by_domain.items():
            if len(out) == n or used[d] >= len(papers):
                continue
            p = papers[used[d]]
            out.append({"seed_id": f"{p['source']}:{p['source_id']}", "source": p["source"], "domain": d,
                        "task_type": task_types[used[d] % len(task_types)], "title": p["title"],
                        "abstract": p["abstract"]})
            used[d] += 1
    return out


# -- one build -------------------------------------------------------------------------
def run_once(seeds_path: Path, n_cases: int, workers: int, server: ServerProcess, tmp_root: Path,
             timeout: float, keep: bool) -> BuildRun:
    """Build the seeds at ``workers`` workers into a fresh folder under ``tmp_root``."""
    from rich.console import Console

    from ioa_synth.build.run import plan_from_seeds, run_build
    from ioa_synth.llm.config import ToolkitConfig
    from ioa_synth.seeds.tuples import load_seed_file

    out_dir = Path(tempfile.mkdtemp(prefix=f"bench-w{workers}-", dir=tmp_root))
    cfg = ToolkitConfig.model_validate({c: {"timeout": timeout, "max_retries": 1} for c in ("generator", "judge")})
    plans = plan_from_seeds(load_seed_file(seeds_path))
    console = Console(file=open(os.devnull, "w"), force_terminal=True, width=120)  # noqa: SIM115
    try:
        return measured(BuildRun, workers, n_cases, server, lambda: run_build(
            plans, "train", out_dir / "build", cfg, workers=workers, console=console,
            args={"bench": True, "workers": workers}), out_dir / "build")
    finally:
        console.file.close()
        if not keep:
            shutil.rmtree(out_dir, ignore_errors=True)


# -- report ----------------------------------------------------------------------------
def report(args: argparse.Namespace, cap: dict[str, float], cap_default: dict[str, float] | None,
           runs: dict[int, list[BuildRun]], server: ServerProcess) -> bool:
    """The report table (each figure from its median round, :func:`bench_rounds.median_round`);
    returns whether every target checked was met."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 130)
    chain = CALLS_PER_CASE * args.latency
    ok = True

    def verdict(passed: bool) -> str:
        nonlocal ok
        ok &= passed
        return "[green]PASS[/]" if passed else "[red]FAIL[/]"

    def ms(x: float) -> str:
        return f"{x:.2f} ms"

    t = Table(title=f"ioa-synth build: {args.cases} cases x {CALLS_PER_CASE} calls, endpoint latency "
                    f"{args.latency * 1000:.0f} ms/call (chain {chain * 1000:.0f} ms/case)")
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_column("target", justify="right")
    t.add_column("", justify="center")

    slow = args.latency * 1500
    if cap_default is not None:
        t.add_row(f"server as shipped (backlog {server.request_queue_size}): {args.max_workers} new connections at once",
                  f"slowest {cap_default['burst_max_s'] * 1000:.0f} ms", f"< {slow:.0f} ms",
                  "ok" if cap_default["burst_max_s"] * 1000 < slow else "[yellow]stalls[/]")
    t.add_row(f"bench server (backlog {server.backlog}): {args.max_workers} new connections at once",
              f"slowest {cap['burst_max_s'] * 1000:.0f} ms", f"< {slow:.0f} ms", verdict(cap["burst_max_s"] * 1000 < slow))
    t.add_row(f"bench server: {args.max_workers} keep-alive clients, {cap['loop_calls']} calls (no toolkit)",
              f"ratio {cap['loop_ratio']:.3f}", ">= 0.95", verdict(cap["loop_ratio"] >= 0.95))

    for rounds in runs.values():
        for r in rounds:
            if not r.valid():
                t.add_row(f"workers={r.workers}: run INVALID ({r.calls} calls)", str(r.summary),
                          f"{r.cases} accepted", verdict(False))

    ones = [r for r in runs.get(1, []) if r.calls > 1]
    if ones:
        one = median_round(ones, RunResult.gap_median_ms)
        gaps = one.gaps_ms()
        med = statistics.median(gaps)
        t.add_section()
        t.add_row("(a) toolkit overhead per call: median gap, workers=1", ms(med), f"<= {OVERHEAD_TARGET_MS:g} ms",
                  verdict(med <= OVERHEAD_TARGET_MS))
        if len(ones) > 1:
            t.add_row("    every round's median gap", spread(ones, RunResult.gap_median_ms) + " ms", "", "")
        if one.raw is not None and one.raw.calls > 1:  # the floor: the SDK's own create() on the same calls
            t.add_row("    bare openai client, same calls: median gap", ms(statistics.median(one.raw.gaps_ms())), "", "")
        t.add_row("    p90 gap / mean gap (mean has per-case work)", f"{pct(gaps, 0.9):.2f} / {statistics.fmean(gaps):.2f} ms",
                  "", "")
        t.add_row("    (wall - endpoint time) / calls (has setup)",
                  ms((one.wall_s - one.endpoint_s) / one.calls * 1000), "", "")
        client_http = [c - (b - a) * 1000 for c, (a, b, _) in zip(one.client_latency_ms, one.log)]
        if len(client_http) == one.calls:
            t.add_row("    inside the openai call (latency_ms - endpoint)", ms(statistics.median(client_http)), "", "")
        t.add_row("    process CPU per call, first request to end of run", ms(one.window_cpu_ms_per_call()), "", "")

    t.add_section()
    for w, rounds in runs.items():
        rounds = [r for r in rounds if r.log]
        if not rounds:
            continue
        r = median_round(rounds, lambda x: x.in_flight_ratio(chain))
        ideal = w / chain
        tp = r.cases / r.window_s
        target = w >= SCALING_TARGET_WORKERS
        t.add_row(f"(b) workers={w}: in flight, ideal {ideal:.2f} cases/s",
                  f"{tp:.2f} cases/s, ratio {tp / ideal:.3f}", f">= {SCALING_TARGET}" if target else "",
                  verdict(tp / ideal >= SCALING_TARGET) if target else "")
        if len(rounds) > 1:
            t.add_row("    every round's ratio", spread(rounds, lambda x: x.in_flight_ratio(chain), "{:.3f}"), "", "")
        tp_e2e = r.cases / r.wall_s
        t.add_row(f"    end to end: {r.wall_s:.2f} s, setup {(r.log[0][0] - r.t_start) * 1000:.0f} ms, "
                  f"teardown {(r.t_end - r.log[-1][1]) * 1000:.0f} ms", f"{tp_e2e:.2f} cases/s, ratio {tp_e2e / ideal:.3f}",
                  "", "")
        t.add_row("    process CPU per call, first request to end of run", ms(r.window_cpu_ms_per_call()), "", "")
    cpu_rows(t, runs, verdict)
    console.print(t)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    console.print(f"host: {os.cpu_count()} CPUs, 1-min load average {load:.2f} after the runs "
                  "(other processes' load inflates every wall-clock figure)")
    if cap_default is not None and cap_default["burst_max_s"] * 1000 >= slow:
        console.print(f"note: ScriptedServer listens with backlog {server.request_queue_size} (socketserver's default): "
                      f"{args.max_workers} simultaneous new connections can overflow the accept queue, and a dropped "
                      "SYN is retried after 1 s. The bench server re-listens with --server-backlog.")
    if any(args.cases % w for w in args.workers):
        console.print(f"note: {args.cases} cases is not a multiple of every worker count: the last wave runs partly "
                      "empty, which lowers the ratio by itself.")
    return ok


def summarize(args: argparse.Namespace, cap: dict[str, float], cap_default: dict[str, float] | None,
              runs: dict[int, list[BuildRun]], ok: bool) -> dict[str, Any]:
    """The numbers of the report as plain data: per worker count, each figure from its
    median round (as in the table), and every round's three figures under ``rounds``."""
    chain = CALLS_PER_CASE * args.latency
    out: dict[str, Any] = {"cases": args.cases, "latency_s": args.latency, "rounds": args.rounds,
                           "targets_met": ok, "server": cap, "server_as_shipped": cap_default, "runs": {}}
    for w, rounds in runs.items():
        row = median_figures(w, rounds, chain, "cpu_ms_per_call_in_flight")
        out["runs"][str(w)] = row
    return out


def main(argv: list[str] | None = None) -> int:
    ap = bench_arguments(__doc__.split("\n\n")[0], "1,8,32", "build dirs")
    args = ap.parse_args(argv)
    if args.serve:
        serve(args.latency, args.server_backlog)
        return 0
    args.workers = checked_workers(ap, args)
    args.max_workers = max(args.workers)
    watchdog = start_watchdog("bench_build", args.max_seconds)
    tmp_root = Path(tempfile.mkdtemp(prefix="ioa-bench-", dir=args.tmp_root))
    try:
        seeds_path = tmp_root / "seeds.jsonl"
        seeds = select_seeds(args.cases)
        seeds_path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in seeds), encoding="utf-8")
        cap_default = None
        if args.server_backlog:
            with ServerProcess(__file__, args.latency, backlog=None) as shipped:
                cap_default = server_capacity(shipped, args.max_workers, 0, args.latency, loop=False)
        with ServerProcess(__file__, args.latency, backlog=args.server_backlog) as server, \
                endpoint_env(("GENERATOR", "JUDGE"), lambda: server.base_url):
            print(f"scripted server {server.base_url} (child process); {len(seeds)} seeds over "
                  f"{len({(s['domain'], s['task_type']) for s in seeds})} cells; build dirs under {tmp_root}",
                  file=sys.stderr, flush=True)
            cap = server_capacity(server, args.max_workers, CALLS_PER_CASE * args.cases, args.latency)
            timeout = max(10.0, 20 * args.latency)
            runs = {w: run_rounds(w, args.rounds, lambda: run_once(seeds_path, args.cases, w, server, tmp_root,
                                                                   timeout=timeout, keep=args.keep),
                                  lambda run: raw_once(run.requests, w, server, timeout=timeout),
                                  f"building {args.cases} cases") for w in args.workers}
        ok = report(args, cap, cap_default, runs, server)
        if args.json:
            args.json.write_text(json.dumps(summarize(args, cap, cap_default, runs, ok), indent=2) + "\n")
    finally:
        if not args.keep:
            shutil.rmtree(tmp_root, ignore_errors=True)
        watchdog.cancel()
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
