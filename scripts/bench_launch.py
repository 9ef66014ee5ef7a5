#!/usr/bin/env python
"""Benchmark of launch latency: a real ``ioa-synth build`` process, from its start to the
first request the endpoint receives.

What runs
    ``--cases`` real seed papers from ``seeds/snapshot.jsonl`` (``bench_build.select_seeds``)
    are written to a temporary seed JSONL, and a ``--config`` naming the model of the
    generator and the judge (``scripted``; a config without a model would first list the
    endpoint's models, which is then the first request). Each round starts
    ``python -m ioa_synth build --seeds S --split test --out DIR --config C --limit 1`` as a
    new process (the toolkit of this checkout: ``PYTHONPATH`` is the repository) with a fresh
    ``--out``, against ``ScriptedServer(ProtocolResponder())`` in a child process on
    127.0.0.1 (``scripts/bench_server.py``), and waits for it to finish its one case.

Measure
    ``t_in`` of the first request the server logs (its request line has arrived; both
    processes read CLOCK_MONOTONIC) minus the moment just before the build process was
    spawned: interpreter start-up, imports, the command line, the catalog, the run's
    estimate, the endpoints and everything else before the first chat request. The headline
    is the median over ``--rounds`` (default 5), after ``--warmup`` rounds that are not
    counted (the first start after a checkout reads every module from disk and compiles
    it). Target: <= 1.5 s on a quiet machine; the load averages are printed with it, since
    every wall-clock figure grows with the other processes' load. Beside it, the build
    process's CPU seconds (all threads, ``/proc/PID/stat`` sampled every 10 ms) by the first
    request: what the launch costs, which a busy machine stretches less. Exit status is 0
    regardless of the target unless ``--check``.

Usage::

    .venv/bin/python scripts/bench_launch.py                 # 5 rounds after 1 warm-up
    .venv/bin/python scripts/bench_launch.py --rounds 9 --check
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import select_seeds  # noqa: E402
from bench_common import start_watchdog  # noqa: E402
from bench_server import REPO, ServerProcess, endpoint_env  # noqa: E402

#: Most seconds from the build process's start to the endpoint's first request (median).
LAUNCH_TARGET_S = 1.5


def serve(latency: float) -> None:
    """Child process (``--serve``): ``ProtocolResponder(latency)`` on an instrumented ``ScriptedServer``."""
    from bench_server import serve_instrumented

    from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer

    serve_instrumented(ScriptedServer(ProtocolResponder(latency=latency)), None)


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``; ``None`` elsewhere or once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_launch(seeds: Path, config: Path, out: Path, server: ServerProcess, timeout: float
               ) -> tuple[float, float | None, float]:
    """Start one build process; returns ``(seconds to the first request, the process's CPU
    seconds by then (sampled every 10 ms; ``None`` without ``/proc``), seconds to exit)``.

    Raises:
        RuntimeError: the build failed or the server saw no request.
    """
    server.take_log()  # drop anything earlier
    env = dict(os.environ, PYTHONPATH=str(REPO))
    argv = [sys.executable, "-m", "ioa_synth", "build", "--seeds", str(seeds), "--split", "test", "--out", str(out),
            "--config", str(config), "--limit", "1", "--workers", "1"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=str(REPO), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples: list[tuple[float, float]] = []  # (seconds since t0, CPU seconds)
    while proc.poll() is None and time.perf_counter() - t0 < timeout:
        cpu = _cpu_seconds(proc.pid)
        if cpu is not None:
            samples.append((time.perf_counter() - t0, cpu))
        time.sleep(0.01)
    if proc.poll() is None:
        proc.kill()
    stderr = proc.communicate()[1]
    t_end = time.perf_counter() - t0
    log = sorted(server.take_log())
    if proc.returncode != 0 or not log:
        raise RuntimeError(f"build exited {proc.returncode} after {len(log)} requests: {stderr[-1500:]}")
    first = log[0][0] - t0
    before = [cpu for t, cpu in samples if t <= first]
    return first, (before[-1] if before else None), t_end


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5, help="measured launches (default 5); the median is the figure")
    ap.add_argument("--warmup", type=int, default=1, help="launches before the measured ones, not counted (default 1)")
    ap.add_argument("--cases", type=int, default=4, help="seed tuples in the seed file (default 4; one is built)")
    ap.add_argument("--check", action="store_true", help=f"exit 1 when the median is above {LAUNCH_TARGET_S} s")
    ap.add_argument("--tmp-root", type=Path, default=None, help="where the temporary build dirs go (default: $TMPDIR)")
    ap.add_argument("--json", type=Path, default=None, help="also write the measured numbers to this JSON file")
    ap.add_argument("--max-seconds", type=float, default=600, help="abort the whole benchmark after this (default 600)")
    ap.add_argument("--latency", type=float, default=0.0, help=argparse.SUPPRESS)  # of the child server
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # child process mode
    args = ap.parse_args(argv)
    if args.serve:
        serve(args.latency)
        return 0
    if args.rounds < 1 or args.warmup < 0 or args.cases < 1:
        ap.error("--rounds and --cases must be at least 1, --warmup at least 0")
    watchdog = start_watchdog("bench_launch", args.max_seconds)
    tmp_root = Path(tempfile.mkdtemp(prefix="ioa-bench-launch-", dir=args.tmp_root))
    try:
        seeds, config = tmp_root / "seeds.jsonl", tmp_root / "config.json"
        seeds.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in select_seeds(args.cases)),
                         encoding="utf-8")
        config.write_text(json.dumps({c: {"model": "scripted"} for c in ("generator", "judge")}))
        firsts: list[float] = []
        cpus: list[float] = []
        with ServerProcess(__file__, args.latency) as server, \
                endpoint_env(("GENERATOR", "JUDGE"), lambda: server.base_url):
            for i in range(args.warmup + args.rounds):
                first, cpu, total = one_launch(seeds, config, tmp_root / f"out{i}", server, timeout=args.max_seconds)
                counted = i >= args.warmup
                if counted:
                    firsts.append(first)
                    cpus += [cpu] if cpu is not None else []
                print(f"{'round' if counted else 'warm-up'} {i + 1 - args.warmup if counted else i + 1}: first request "
                      f"after {first:.3f} s, {'?' if cpu is None else f'{cpu:.2f}'} s of CPU by then (process exited "
                      f"after {total:.2f} s)", file=sys.stderr, flush=True)
        median = statistics.median(firsts)
        cpu_median = statistics.median(cpus) if cpus else None
        load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
        ok = median <= LAUNCH_TARGET_S
        print(f"ioa-synth build, process start -> first request: median {median:.3f} s over {len(firsts)} rounds "
              f"(min {min(firsts):.3f}, max {max(firsts):.3f}); target <= {LAUNCH_TARGET_S} s: "
              f"{'PASS' if ok else 'FAIL'}")
        if cpu_median is not None:
            print(f"the build process's CPU (all threads) by its first request: median {cpu_median:.2f} s "
                  "(grows less with load than the wall time; sampled every 10 ms)")
        print(f"host: {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} after the runs "
              "(other processes' load inflates the figure)")
        if args.json:
            args.json.write_text(json.dumps({"median_s": median, "rounds_s": firsts, "cpu_median_s": cpu_median,
                                             "cpu_rounds_s": cpus, "target_s": LAUNCH_TARGET_S,
                                             "target_met": ok, "load_average": load}, indent=2) + "\n")
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
        watchdog.cancel()
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
