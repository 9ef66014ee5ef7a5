"""Rounds of a benchmark and the figures read off them: each worker count runs ``--rounds``
times, a toolkit run and its bare-client replay back to back, and each figure is taken from
the round where it is the median (the lower one for an even count), the other rounds'
values printed beside it (see ``bench_common`` for why), and the (c) rows of the tables.
"""

from __future__ import annotations

import statistics
import sys
from typing import Any, Callable

from bench_common import CPU_RATIO_TARGET, RunResult, pct


def run_rounds(workers: int, rounds: int, toolkit: Callable[[], RunResult], replay: Callable[[RunResult], RunResult],
               what: str) -> list[RunResult]:
    """``rounds`` rounds at ``workers`` workers, each a ``toolkit()`` run followed by
    ``replay(run)``, its bare-client replay (kept as ``run.raw``); progress on stderr."""
    out = []
    for k in range(1, rounds + 1):
        tag = f"workers={workers}" + (f", round {k}/{rounds}" if rounds > 1 else "")
        print(f"{tag}: {what} ...", file=sys.stderr, flush=True)
        run = toolkit()
        print(f"{tag}: the same calls from a bare openai client ...", file=sys.stderr, flush=True)
        run.raw = replay(run)
        out.append(run)
    return out


def median_round(rounds: list[RunResult], figure: Callable[[RunResult], float]) -> RunResult:
    """The round whose ``figure`` is the median of all rounds' (the lower median for an
    even count; NaN figures rank last)."""
    ranked = sorted(rounds, key=lambda r: (figure(r) != figure(r), figure(r)))  # NaN != NaN
    return ranked[(len(ranked) - 1) // 2]


def spread(rounds: list[RunResult], figure: Callable[[RunResult], float], fmt: str = "{:.2f}") -> str:
    """Every round's ``figure`` in run order, e.g. ``"rounds 1.27, 1.31, 1.22"`` (empty for one round)."""
    return "rounds " + ", ".join(fmt.format(figure(r)) for r in rounds) if len(rounds) > 1 else ""


def cpu_rows(t: Any, by_workers: dict[int, list[RunResult]], verdict: Callable[[bool], str]) -> None:
    """Rows (c) of a report table: per worker count, process CPU per call (first request to
    end of run) of the toolkit and of the bare openai client doing the same calls, and
    their ratio (target <= CPU_RATIO_TARGET), from the round with the median ratio."""
    t.add_section()
    for w, rounds in by_workers.items():
        rounds = [r for r in rounds if r.raw is not None and r.raw.log]
        if not rounds:
            continue
        r = median_round(rounds, RunResult.cpu_ratio)
        ratio = r.cpu_ratio()
        t.add_row(f"(c) workers={w}: process CPU per call, toolkit / bare openai client (same calls)",
                  f"{r.window_cpu_ms_per_call():.2f} / {r.raw.window_cpu_ms_per_call():.2f} ms, ratio {ratio:.2f}",
                  f"<= {CPU_RATIO_TARGET:g}", verdict(ratio <= CPU_RATIO_TARGET))
        t.add_row(f"    bare client: {r.raw.calls} calls, in flight {r.raw.cases / r.raw.window_s:.2f} cases/s",
                  spread(rounds, RunResult.cpu_ratio), "", "")


def cpu_numbers(r: RunResult) -> dict[str, Any]:
    """The (c) figures of one run as plain data."""
    raw = r.raw.window_cpu_ms_per_call() if r.raw is not None and r.raw.log else None
    return {"cpu_ms_per_call_raw_openai": raw, "cpu_ratio": r.cpu_ratio() if raw else None,
            "raw_calls": r.raw.calls if r.raw is not None else None}


def median_figures(workers: int, rounds: list[RunResult], chain_s: float, cpu_key: str) -> dict[str, Any]:
    """One worker count's figures as plain data, each from its median round: validity,
    calls and times and (b) from the in-flight ratio's round, (c) (under ``cpu_key`` and
    :func:`cpu_numbers`) from the CPU ratio's, at 1 worker (a) and the gap figures from the
    median gap's; every round's three figures under ``rounds``."""
    b = median_round(rounds, lambda r: r.in_flight_ratio(chain_s))
    c = median_round(rounds, RunResult.cpu_ratio)
    row: dict[str, Any] = {"valid": all(r.valid() for r in rounds), "calls": b.calls, "wall_s": b.wall_s,
                           "window_s": b.window_s, "ratio_in_flight": b.in_flight_ratio(chain_s) if b.log else None,
                           "ratio_end_to_end": b.cases / b.wall_s / (workers / chain_s),
                           cpu_key: c.window_cpu_ms_per_call(), **cpu_numbers(c)}
    ones = [r for r in rounds if r.calls > 1]
    if workers == 1 and ones:
        a = median_round(ones, RunResult.gap_median_ms)
        gaps = a.gaps_ms()
        row |= {"gap_median_ms": statistics.median(gaps), "gap_p90_ms": pct(gaps, 0.9),
                "gap_mean_ms": statistics.fmean(gaps),
                "overhead_aggregate_ms": (a.wall_s - a.endpoint_s) / a.calls * 1000}
        if a.raw is not None and a.raw.calls > 1:  # the floor: the SDK's own create() on the same calls
            row["gap_median_ms_raw_openai"] = statistics.median(a.raw.gaps_ms())
    row["rounds"] = [{"gap_median_ms": r.gap_median_ms() if workers == 1 else None,
                      "ratio_in_flight": r.in_flight_ratio(chain_s), **cpu_numbers(r)} for r in rounds]
    return row
