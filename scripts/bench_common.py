"""What the benchmarks share: the record of one measured run, process-CPU marks around every
request, the same calls replayed from a bare ``openai`` client (the floor of any client's
work) and the shared command line; the rounds and the figures read off them are in
``bench_rounds``.

Targets (checked with ``--check``): (a) median toolkit gap per call at 1 worker <= 2 ms;
(b) in-flight efficiency at 32 workers >= 0.9; (c) process CPU per call <= 1.5 x that of a
bare ``openai`` client doing the same calls, at every worker count.

Each worker count runs ``--rounds`` times (default 3), a toolkit run and its bare-client
replay back to back in every round, and each figure is read off the round where that
figure is the median (the lower one for an even count), the other rounds' values printed
beside it: the CPU speed of a shared 2-core VM drifts by tens of percent over minutes,
and a toolkit run paired with the replay that follows it sees the same machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Self

from bench_server import ServerProcess

CALLS_PER_CASE = 4
OVERHEAD_TARGET_MS = 2.0
SCALING_TARGET = 0.9
SCALING_TARGET_WORKERS = 32
#: Most process CPU per call (first request to end of run), relative to a bare openai client doing the same calls.
CPU_RATIO_TARGET = 1.5


def cpu() -> float:
    """User + system CPU seconds of every thread of this process, at the clock's full resolution."""
    return time.process_time()


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values`` by rank; NaN when empty."""
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


@dataclass
class RunResult:
    """One measured run at ``workers`` workers: the server's chat ``log`` ``(t_in, t_out,
    path)`` sorted by ``t_in`` (perf_counter seconds), the run's wall time and process-CPU
    marks, and the request bodies it sent (replayed by :func:`raw_once`)."""

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
        """Every case made its calls (a benchmark's subclass also checks its run's summary)."""
        return self.calls == CALLS_PER_CASE * self.cases

    def in_flight_ratio(self, chain_s: float) -> float:
        """Cases/s from the first request in to the last reply out, over the ideal
        ``workers / chain_s`` (``chain_s``: one case's sequential endpoint time)."""
        return self.cases / self.window_s / (self.workers / chain_s) if self.log else float("nan")

    def gap_median_ms(self) -> float:
        """Median of :meth:`gaps_ms` (NaN with fewer than two calls)."""
        gaps = self.gaps_ms()
        return statistics.median(gaps) if gaps else float("nan")

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
        self.samples.append((time.perf_counter(), cpu()))

    def __exit__(self, *exc: object) -> None:
        self._cls._send = self._send
        self.samples.sort()


def measured(result: type[RunResult], workers: int, cases: int, server: ServerProcess,
             run: Callable[[], dict[str, Any]], catalog_dir: Path) -> RunResult:
    """Run ``run()`` (a toolkit run writing its catalog to ``catalog_dir``; returns its
    summary) with CPU marks around every request; the server's chat log, the stored request
    bodies and latencies make the ``result`` record."""
    server.take_log()  # drop anything earlier
    with CpuMarks() as marks:
        cpu0, t0 = cpu(), time.perf_counter()
        summary = run()
        t1, cpu1 = time.perf_counter(), cpu()
        marks.mark()  # the run's end: its last catalog commit (at close) is per-call work too
    log = server.chat_log()
    lat, requests = stored_requests(catalog_dir)
    return result(workers, cases, t1 - t0, summary, log, t0, t1, lat, cpu1 - cpu0, marks.samples, requests)


def stored_requests(catalog_dir: Path) -> tuple[list[float], list[list[dict[str, Any]]]]:
    """``(latency_ms of each successful call in call order, the request bodies sent per case)``
    from the ``llm_calls`` of a finished run."""
    from ioa_synth.runs.catalog import Catalog

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
    ``chat.completions.create`` on one shared client and decoding each JSON reply's content
    (no prompt, schema, gate, catalog or progress work). One warm-up call before the window
    builds the SDK's lazily made response models."""
    import openai

    client = openai.OpenAI(base_url=server.base_url, api_key="bench-not-a-key", max_retries=1, timeout=timeout)

    marks: list[tuple[float, float]] = []

    def one_case(bodies: list[dict[str, Any]]) -> None:
        for body in bodies:
            marks.append((time.perf_counter(), cpu()))
            content = client.chat.completions.create(**body).choices[0].message.content
            if "response_format" in body:  # a free-text reply (a chat turn, a code block) is used as it is
                json.loads(content)
            marks.append((time.perf_counter(), cpu()))

    try:
        one_case(requests[0][:1])
        server.take_log()
        marks.clear()
        with ThreadPoolExecutor(workers, thread_name_prefix="raw") as pool:
            t0 = time.perf_counter()
            list(pool.map(one_case, requests))
            t1 = time.perf_counter()
        marks.append((time.perf_counter(), cpu()))
    finally:
        client.close()
    return RunResult(workers, len(requests), t1 - t0, {}, server.chat_log(), t0, t1, cpu_samples=sorted(marks))


def bench_arguments(description: str, workers: str, what: str) -> argparse.ArgumentParser:
    """The command line shared by the benchmarks: ``workers`` is the default comma-separated
    worker counts, ``what`` names the temporary folders (e.g. "build dirs")."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=64, help="cases per run (default 64)")
    ap.add_argument("--latency", type=float, default=0.2, help="endpoint seconds per call (default 0.2)")
    ap.add_argument("--workers", default=workers, help=f"comma-separated worker counts (default {workers})")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--rounds", type=int, default=3,
                    help="runs per worker count, each followed by its bare-client replay; every figure is the "
                         "median round's (default 3)")
    ap.add_argument("--tmp-root", type=Path, default=None, help=f"where the temporary {what} go (default: $TMPDIR)")
    ap.add_argument("--keep", action="store_true", help=f"keep the {what} (paths are printed)")
    ap.add_argument("--json", type=Path, default=None, help="also write the measured numbers to this JSON file")
    ap.add_argument("--max-seconds", type=float, default=1800,
                    help="abort the whole benchmark after this (default 1800: three rounds of 64 cases at 1, 8 and 32 "
                         "workers take about 7 minutes)")
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
    if not 1 <= args.rounds <= 20:
        ap.error("--rounds must be between 1 and 20")
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

