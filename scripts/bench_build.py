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

    The server runs in a child process, so its request handling does not compete with
    the toolkit for the GIL (a real endpoint is remote). Its handler is instrumented:
    for every chat request it records ``t_in`` (the request line has arrived:
    ``parse_request`` entry) and ``t_out`` (the reply is written: ``do_POST`` exit) on
    ``time.perf_counter`` = CLOCK_MONOTONIC, which both processes share.

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
import contextlib
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Self

REPO = Path(__file__).resolve().parent.parent
SNAPSHOT = REPO / "seeds" / "snapshot.jsonl"
CALLS_PER_CASE = 4
OVERHEAD_TARGET_MS = 2.0
SCALING_TARGET = 0.9
SCALING_TARGET_WORKERS = 32
#: Most process CPU per call (first request to end of run), relative to a bare openai client doing the same calls.
CPU_RATIO_TARGET = 1.5


# -- scripted server in a child process -------------------------------------------------
def serve(latency: float, backlog: int | None) -> None:
    """Child process (``--serve``): run ``ProtocolResponder(latency)`` and answer one-line
    JSON commands on stdin (``log``: send and clear the timing records; ``stop``)."""
    from ioa_synth.llm.scripted_server import ProtocolResponder, ScriptedServer

    server = ScriptedServer(ProtocolResponder(latency=latency))
    httpd = getattr(server, "_httpd", None)
    if httpd is None:  # pragma: no cover - ScriptedServer internals changed
        print(json.dumps({"error": "ScriptedServer has no _httpd; update the bench's instrumentation"}), flush=True)
        return
    log: list[tuple[float, float, str]] = []
    lock = threading.Lock()
    base = httpd.RequestHandlerClass

    class Timed(base):  # type: ignore[misc, valid-type]
        def parse_request(self) -> bool:
            self._t_in = time.perf_counter()
            return super().parse_request()

        def do_POST(self) -> None:
            super().do_POST()
            t_out = time.perf_counter()
            with lock:
                log.append((self._t_in, t_out, self.path))

    httpd.RequestHandlerClass = Timed
    queue = getattr(httpd, "request_queue_size", 5)  # the listen() backlog ScriptedServer was bound with
    if backlog:
        httpd.socket.listen(backlog)  # Linux: re-listen() on a listening socket resizes its accept queue
    with server:
        print(json.dumps({"base_url": server.base_url, "request_queue_size": queue, "backlog": backlog or queue}),
              flush=True)
        for line in sys.stdin:
            cmd = line.strip()
            if cmd == "log":
                with lock:
                    out, log[:] = list(log), []
                    server.requests.clear()
                print(json.dumps(out), flush=True)
            elif cmd == "stop":
                return


class ServerProcess:
    """The scripted server in a child process (``python bench_build.py --serve``);
    ``take_log()`` returns and clears its ``(t_in, t_out, path)`` records."""

    def __init__(self, latency: float, backlog: int | None = None) -> None:
        self._argv = [sys.executable, str(Path(__file__).resolve()), "--serve", "--latency", str(latency)]
        if backlog:
            self._argv += ["--server-backlog", str(backlog)]

    def __enter__(self) -> Self:
        self._proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                      cwd=str(REPO))
        info = json.loads(self._proc.stdout.readline() or '{"error": "scripted server exited at start"}')
        if "error" in info:
            self.__exit__()
            raise RuntimeError(info["error"])
        self.base_url: str = info["base_url"]
        self.request_queue_size: int = info["request_queue_size"]
        self.backlog: int = info["backlog"]
        assert self.base_url.startswith("http://127.0.0.1:"), self.base_url
        return self

    def take_log(self) -> list[tuple[float, float, str]]:
        self._proc.stdin.write("log\n")
        self._proc.stdin.flush()
        return [tuple(r) for r in json.loads(self._proc.stdout.readline())]

    def __exit__(self, *exc: object) -> None:
        try:
            self._proc.stdin.write("stop\n")
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(5)
        except subprocess.TimeoutExpired:
            self._proc.terminate()
            self._proc.wait(5)


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


# -- one build --------------------------------------------------------------------------
@dataclass
class RunResult:
    workers: int
    cases: int
    wall_s: float
    summary: dict[str, Any]
    log: list[tuple[float, float, str]]  # chat requests only, sorted by t_in
    t_start: float
    t_end: float
    client_latency_ms: list[float] = field(default_factory=list)  # llm_calls.latency_ms, call order
    cpu_s: float = 0.0  # user + system CPU of this process (all threads) during run_build
    cpu_samples: list[tuple[float, float]] = field(default_factory=list)  # (perf_counter, CPU s) at each request's start and end
    requests: list[list[dict[str, Any]]] = field(default_factory=list)  # per case, the request bodies sent, in order
    raw: RunResult | None = None  # the same requests from a bare openai client (raw_once)

    def window_cpu_ms_per_call(self) -> float:
        """Process CPU per call from the first request's start to the end of the run (for a
        build: ``run_build`` returned, its final catalog commit included)."""
        xs = self.cpu_samples
        return (xs[-1][1] - xs[0][1]) / max(1, self.calls) * 1000 if self.log and xs else float("nan")

    @property
    def calls(self) -> int:
        return len(self.log)

    @property
    def endpoint_s(self) -> float:
        return sum(b - a for a, b, _ in self.log)

    @property
    def window_s(self) -> float:
        return self.log[-1][1] - self.log[0][0] if self.log else float("nan")

    def gaps_ms(self) -> list[float]:
        return [(self.log[i + 1][0] - self.log[i][1]) * 1000 for i in range(len(self.log) - 1)]

    def valid(self) -> bool:
        return self.summary.get("accepted") == self.cases and self.calls == CALLS_PER_CASE * self.cases

    def cpu_ratio(self) -> float:
        """Process CPU per call in flight over that of the bare openai client doing the same calls."""
        raw = self.raw.window_cpu_ms_per_call() if self.raw is not None else float("nan")
        return self.window_cpu_ms_per_call() / raw if raw > 0 else float("nan")


class CpuMarks:
    """Context manager: ``(perf_counter, process CPU)`` at the start and end of every request
    the toolkit sends (``LLMClient._send``, one HTTP request, wrapped while the block runs), into ``samples``;
    ``mark()`` adds one by hand. Process CPU is ``time.process_time`` (all threads), so the
    CPU of any window between two requests is exact, with no sampling thread adding its own."""

    def __enter__(self) -> Self:
        from ioa_synth.llm.client import LLMClient

        self.samples: list[tuple[float, float]] = []
        self._cls, self._send = LLMClient, LLMClient._send
        send = self._send

        def marked(client: Any, payload: str, *rest: Any) -> Any:
            self.mark()
            try:
                return send(client, payload, *rest)
            finally:
                self.mark()

        LLMClient._send = marked
        return self

    def mark(self) -> None:
        self.samples.append((time.perf_counter(), _cpu()))

    def __exit__(self, *exc: object) -> None:
        self._cls._send = self._send
        self.samples.sort()


def stored_requests(catalog_dir: Path) -> tuple[list[float], list[list[dict[str, Any]]]]:
    """``(latency_ms of each successful call in call order, the request bodies sent per case)``
    from the ``llm_calls`` of a finished run."""
    from ioa_synth.store.catalog import Catalog

    with Catalog(catalog_dir, read_only=True) as cat:
        rows = cat.execute("SELECT latency_ms, case_id, request_json FROM llm_calls WHERE error IS NULL "
                           "ORDER BY created_at")
    by_case: dict[str, list[dict[str, Any]]] = {}
    for _, case_id, request in rows:
        by_case.setdefault(case_id, []).append(json.loads(request))
    return [r[0] for r in rows], list(by_case.values())


def raw_once(requests: list[list[dict[str, Any]]], workers: int, server: ServerProcess, timeout: float) -> RunResult:
    """The toolkit's calls again from a bare ``openai`` client, the floor of any client's work:
    ``workers`` threads, each sending one case's request bodies in order through
    ``chat.completions.create`` on one shared client and decoding each reply's content as JSON
    (no prompt, schema, gate, catalog or progress work). One warm-up call before the window
    builds the SDK's lazily made response models."""
    import openai

    client = openai.OpenAI(base_url=server.base_url, api_key="bench-not-a-key", max_retries=1, timeout=timeout)

    marks: list[tuple[float, float]] = []

    def one_case(bodies: list[dict[str, Any]]) -> None:
        for body in bodies:
            marks.append((time.perf_counter(), _cpu()))
            json.loads(client.chat.completions.create(**body).choices[0].message.content)
            marks.append((time.perf_counter(), _cpu()))

    try:
        one_case(requests[0][:1])
        server.take_log()
        marks.clear()
        with ThreadPoolExecutor(workers, thread_name_prefix="raw") as pool:
            t0 = time.perf_counter()
            list(pool.map(one_case, requests))
            t1 = time.perf_counter()
        marks.append((time.perf_counter(), _cpu()))
    finally:
        client.close()
    log = sorted(r for r in server.take_log() if r[2].rstrip("/").endswith("/chat/completions"))
    return RunResult(workers, len(requests), t1 - t0, {}, log, t0, t1, cpu_samples=sorted(marks))


def run_once(seeds_path: Path, n_cases: int, workers: int, server: ServerProcess, tmp_root: Path,
             timeout: float, keep: bool) -> RunResult:
    from rich.console import Console

    from ioa_synth.build import run as _run
    plan_from_seeds, run_build = _run.plan_from_seeds, _run.run_build
    from ioa_synth.llm.config import ToolkitConfig
    from ioa_synth.seeds.tuples import load_seed_file

    out_dir = Path(tempfile.mkdtemp(prefix=f"bench-w{workers}-", dir=tmp_root))
    cfg = ToolkitConfig.model_validate({c: {"timeout": timeout, "max_retries": 1} for c in ("generator", "judge")})
    plans = plan_from_seeds(load_seed_file(seeds_path))
    console = Console(file=open(os.devnull, "w"), force_terminal=True, width=120)  # noqa: SIM115
    server.take_log()  # drop anything earlier
    try:
        with CpuMarks() as cpu:
            cpu0 = _cpu()
            t0 = time.perf_counter()
            summary = run_build(plans, "train", out_dir / "build", cfg, workers=workers, console=console,
                                args={"bench": True, "workers": workers})
            t1 = time.perf_counter()
            cpu1 = _cpu()
            cpu.mark()  # the run's end: its last catalog commit (at close) is per-call work too
        log = sorted(r for r in server.take_log() if r[2].rstrip("/").endswith("/chat/completions"))
        lat, requests = stored_requests(out_dir / "build")
    finally:
        console.file.close()
        if not keep:
            shutil.rmtree(out_dir, ignore_errors=True)
    return RunResult(workers, n_cases, t1 - t0, summary, log, t0, t1, lat, cpu1 - cpu0, cpu.samples, requests)


def _cpu() -> float:
    return time.process_time()  # user + system CPU of every thread, at the clock's full resolution


# -- server capacity ---------------------------------------------------------------------
_PROBE = json.dumps({"model": "scripted", "messages": [{"role": "user", "content": "Score the dialogue"}]}).encode()


def _post(conn: http.client.HTTPConnection) -> None:
    conn.request("POST", "/v1/chat/completions", body=_PROBE, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    resp.read()
    if resp.status != 200:
        raise RuntimeError(f"scripted server answered {resp.status}")


def server_capacity(server: ServerProcess, concurrency: int, total_calls: int, latency: float,
                    loop: bool = True) -> dict[str, float]:
    """Burst of ``concurrency`` requests on fresh connections, then a closed loop of
    ``concurrency`` keep-alive clients making ``total_calls`` calls; no toolkit involved."""
    host, port = server.base_url.split("//")[1].split("/")[0].split(":")
    barrier = threading.Barrier(concurrency)
    burst: list[float] = []

    def one_burst() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        barrier.wait()
        t = time.perf_counter()
        _post(conn)
        burst.append(time.perf_counter() - t)
        conn.close()

    threads = [threading.Thread(target=one_burst) for _ in range(concurrency)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()

    if not loop:
        server.take_log()
        return {"burst_max_s": max(burst), "burst_median_s": statistics.median(burst)}
    per_client = max(1, total_calls // concurrency)

    def loop() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        for _ in range(per_client):
            _post(conn)
        conn.close()

    threads = [threading.Thread(target=loop) for _ in range(concurrency)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    elapsed = time.perf_counter() - t0
    server.take_log()
    return {"burst_max_s": max(burst), "burst_median_s": statistics.median(burst),
            "loop_ratio": (per_client * latency) / elapsed, "loop_calls": per_client * concurrency}


# -- report --------------------------------------------------------------------------------
def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def report(args: argparse.Namespace, cap: dict[str, float], cap_default: dict[str, float] | None,
           runs: list[RunResult], server: ServerProcess) -> bool:
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

    for r in runs:
        if not r.valid():
            t.add_row(f"workers={r.workers}: run INVALID ({r.calls} calls)", str(r.summary),
                      f"{r.cases} accepted", verdict(False))

    one = next((r for r in runs if r.workers == 1), None)
    if one is not None and one.calls > 1:
        gaps = one.gaps_ms()
        med = statistics.median(gaps)
        t.add_section()
        t.add_row("(a) toolkit overhead per call: median gap, workers=1", ms(med), f"<= {OVERHEAD_TARGET_MS:g} ms",
                  verdict(med <= OVERHEAD_TARGET_MS))
        if one.raw is not None and one.raw.calls > 1:  # the floor: the SDK's own create() on the same calls
            t.add_row("    bare openai client, same calls: median gap", ms(statistics.median(one.raw.gaps_ms())), "", "")
        t.add_row("    p90 gap / mean gap (mean has per-case work)", f"{_pct(gaps, 0.9):.2f} / {statistics.fmean(gaps):.2f} ms",
                  "", "")
        t.add_row("    (wall - endpoint time) / calls (has setup)",
                  ms((one.wall_s - one.endpoint_s) / one.calls * 1000), "", "")
        client_http = [c - (b - a) * 1000 for c, (a, b, _) in zip(one.client_latency_ms, one.log)]
        if len(client_http) == one.calls:
            t.add_row("    inside the openai call (latency_ms - endpoint)", ms(statistics.median(client_http)), "", "")
        t.add_row("    process CPU per call, first request to end of run", ms(one.window_cpu_ms_per_call()), "", "")

    t.add_section()
    for r in runs:
        if not r.log:
            continue
        ideal = r.workers / chain
        tp = r.cases / r.window_s
        target = r.workers >= SCALING_TARGET_WORKERS
        t.add_row(f"(b) workers={r.workers}: in flight, ideal {ideal:.2f} cases/s",
                  f"{tp:.2f} cases/s, ratio {tp / ideal:.3f}", f">= {SCALING_TARGET}" if target else "",
                  verdict(tp / ideal >= SCALING_TARGET) if target else "")
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


def cpu_rows(t: Any, runs: list[RunResult], verdict: Callable[[bool], str]) -> None:
    """Rows (c) of a report table: per worker count, process CPU per call (first request to
    end of run) of the toolkit and of the bare openai client doing the same calls, and
    their ratio (target <= CPU_RATIO_TARGET)."""
    t.add_section()
    for r in runs:
        if r.raw is None or not r.raw.log:
            continue
        ratio = r.cpu_ratio()
        t.add_row(f"(c) workers={r.workers}: process CPU per call, toolkit / bare openai client (same calls)",
                  f"{r.window_cpu_ms_per_call():.2f} / {r.raw.window_cpu_ms_per_call():.2f} ms, ratio {ratio:.2f}",
                  f"<= {CPU_RATIO_TARGET:g}", verdict(ratio <= CPU_RATIO_TARGET))
        t.add_row(f"    bare client: {r.raw.calls} calls, in flight {r.raw.cases / r.raw.window_s:.2f} cases/s", "", "", "")


def cpu_numbers(r: RunResult) -> dict[str, Any]:
    """The (c) figures of one run as plain data."""
    raw = r.raw.window_cpu_ms_per_call() if r.raw is not None and r.raw.log else None
    return {"cpu_ms_per_call_raw_openai": raw, "cpu_ratio": r.cpu_ratio() if raw else None,
            "raw_calls": r.raw.calls if r.raw is not None else None}


def summarize(args: argparse.Namespace, cap: dict[str, float], cap_default: dict[str, float] | None,
              runs: list[RunResult], ok: bool) -> dict[str, Any]:
    """The numbers of the report as plain data."""
    chain = CALLS_PER_CASE * args.latency
    out: dict[str, Any] = {"cases": args.cases, "latency_s": args.latency, "targets_met": ok,
                           "server": cap, "server_as_shipped": cap_default, "runs": {}}
    for r in runs:
        row: dict[str, Any] = {"valid": r.valid(), "calls": r.calls, "wall_s": r.wall_s, "window_s": r.window_s,
                               "ratio_in_flight": r.cases / r.window_s / (r.workers / chain) if r.log else None,
                               "ratio_end_to_end": r.cases / r.wall_s / (r.workers / chain),
                               "cpu_ms_per_call_in_flight": r.window_cpu_ms_per_call(), **cpu_numbers(r)}
        if r.workers == 1 and r.calls > 1:
            gaps = r.gaps_ms()
            row |= {"gap_median_ms": statistics.median(gaps), "gap_p90_ms": _pct(gaps, 0.9),
                    "gap_mean_ms": statistics.fmean(gaps),
                    "overhead_aggregate_ms": (r.wall_s - r.endpoint_s) / r.calls * 1000}
            if r.raw is not None and r.raw.calls > 1:
                row["gap_median_ms_raw_openai"] = statistics.median(r.raw.gaps_ms())
        out["runs"][str(r.workers)] = row
    return out


def bench_arguments(description: str, workers: str, what: str) -> argparse.ArgumentParser:
    """The command line shared by the benchmarks: ``workers`` is the default comma-separated
    worker counts, ``what`` names the temporary folders (e.g. "build dirs")."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=64, help="cases per run (default 64)")
    ap.add_argument("--latency", type=float, default=0.2, help="endpoint seconds per call (default 0.2)")
    ap.add_argument("--workers", default=workers, help=f"comma-separated worker counts (default {workers})")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--tmp-root", type=Path, default=None, help=f"where the temporary {what} go (default: $TMPDIR)")
    ap.add_argument("--keep", action="store_true", help=f"keep the {what} (paths are printed)")
    ap.add_argument("--json", type=Path, default=None, help="also write the measured numbers to this JSON file")
    ap.add_argument("--max-seconds", type=float, default=900, help="abort the whole benchmark after this (default 900)")
    ap.add_argument("--server-backlog", type=int, default=128,
                    help="listen backlog of the bench's scripted server (default 128; 0 keeps ScriptedServer's own)")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # child process mode
    return ap


def checked_workers(ap: argparse.ArgumentParser, args: argparse.Namespace) -> list[int]:
    """Sorted worker counts of ``--workers``; exits through ``ap.error`` on a bad
    ``--workers``, ``--cases`` or ``--latency``."""
    workers = sorted({int(w) for w in args.workers.split(",") if w.strip()})
    if not workers or min(workers) < 1 or max(workers) > 256 or not 1 <= args.cases <= 1000:
        ap.error("--workers: worker counts between 1 and 256; --cases between 1 and 1000")
    if not 0 < args.latency <= 5:
        ap.error("--latency must be in (0, 5] seconds")
    return workers


def start_watchdog(name: str, seconds: float) -> threading.Timer:
    """A daemon timer that ends the process (exit 2) after ``seconds``; cancel it when done."""
    def abort() -> None:
        print(f"{name}: aborted after --max-seconds {seconds:.0f}", file=sys.stderr, flush=True)
        os._exit(2)

    watchdog = threading.Timer(seconds, abort)
    watchdog.daemon = True
    watchdog.start()
    return watchdog


@contextlib.contextmanager
def endpoint_env(components: tuple[str, ...], base_url_of: Callable[[], str]) -> Iterator[None]:
    """Point every component at the bench server through ``OPENAI_*`` (clearing the
    components' own ``<X>_BASE_URL``/``<X>_API_KEY``) and bypass proxies for loopback;
    the caller's environment is restored on exit. ``base_url_of`` is called on entry."""
    keys = [f"{c}_{v}" for c in ("OPENAI", *components) for v in ("BASE_URL", "API_KEY")] + ["NO_PROXY", "no_proxy"]
    saved = {k: os.environ.get(k) for k in keys}
    try:
        for k in keys:
            os.environ.pop(k, None)
        os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = base_url_of(), "bench-not-a-key"
        os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


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
            with ServerProcess(args.latency, backlog=None) as shipped:
                cap_default = server_capacity(shipped, args.max_workers, 0, args.latency, loop=False)
        with ServerProcess(args.latency, backlog=args.server_backlog) as server, \
                endpoint_env(("GENERATOR", "JUDGE"), lambda: server.base_url):
            print(f"scripted server {server.base_url} (child process); {len(seeds)} seeds over "
                  f"{len({(s['domain'], s['task_type']) for s in seeds})} cells; build dirs under {tmp_root}",
                  file=sys.stderr, flush=True)
            cap = server_capacity(server, args.max_workers, CALLS_PER_CASE * args.cases, args.latency)
            runs = []
            for w in args.workers:
                print(f"workers={w}: building {args.cases} cases ...", file=sys.stderr, flush=True)
                runs.append(run_once(seeds_path, args.cases, w, server, tmp_root,
                                     timeout=max(10.0, 20 * args.latency), keep=args.keep))
                print(f"workers={w}: the same calls from a bare openai client ...", file=sys.stderr, flush=True)
                runs[-1].raw = raw_once(runs[-1].requests, w, server, timeout=max(10.0, 20 * args.latency))
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
