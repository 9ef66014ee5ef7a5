"""Benchmark of ``ioa-synth view`` on a large build: makes a synthetic build folder of
``--cases`` cases (default 10,000; catalog rows as a build writes them: cases, judge scores,
generator and judge calls with real stage outputs, planned types), then times, server side
(the ASGI app called in-process, no network), the cases page filtered and paginated at
random pages and sorts, and a case page of random cases; reports p50/p95 and the process's
resident memory (RSS) before and after.

Target (checked with ``--check``, exit 1 when missed): p95 <= 300 ms for both pages; RSS
bounded: at most ``--max-rss-mb`` (default 600) after every request, and no more than 50 MB
growth over the timed requests (nothing is loaded per case into Python; the pages are
queries with LIMIT/OFFSET on a copy of the catalog).

    .venv/bin/python scripts/bench_view.py --check            # 10,000 cases in a temp folder
    .venv/bin/python scripts/bench_view.py --cases 2000 --requests 50 --out /tmp/view-bench
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

TARGET_MS = 300.0


def rss_mb() -> float:
    """Resident memory of this process now (MB), from /proc; the peak where /proc is missing."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_build(out: Path, n: int) -> None:
    """A build folder of ``n`` cases written in bulk: every 7th discarded at stage 2 (two
    dialogues below θ2), every 5th regenerated at stage 1, the rest accepted first time."""
    import duckdb

    from ioa_synth.build.tables import BUILD_TABLES
    from ioa_synth.protocol.cells import DOMAINS, TASK_TYPES, MA_TYPES
    from ioa_synth.runs.migrate import prepare_tables
    from ioa_synth.runs.schema import RUNS_TABLES
    from ioa_synth.testing.scripted_case import valid_stage1, valid_stage2

    con = duckdb.connect(str(out / "catalog.duckdb"))
    prepare_tables(con, [RUNS_TABLES, BUILD_TABLES], False)  # the tables and versions of a real build
    con.execute("CREATE TABLE IF NOT EXISTS planned_types (case_id VARCHAR PRIMARY KEY, split VARCHAR, "
                "types_json VARCHAR, type_mix VARCHAR)")
    doms, tasks, types = list(DOMAINS), list(TASK_TYPES), list(MA_TYPES)
    s1, s2 = json.dumps(valid_stage1()), json.dumps(valid_stage2())
    request = json.dumps({"model": "bench", "messages": [{"role": "user", "content": "x" * 2000}]})
    con.execute("CREATE TEMP TABLE ids AS SELECT i, 'test/' || (?)[1 + i % ?] || '/' || (?)[1 + (i // ?) % ?] || '_' || "
                "lpad(CAST(i AS VARCHAR), 5, '0') AS case_id, (?)[1 + i % ?] AS domain, (?)[1 + (i // ?) % ?] AS task "
                "FROM range(?) t(i)", [doms, len(doms), tasks, len(doms), len(tasks), doms, len(doms), tasks,
                                        len(doms), len(tasks), n])
    con.execute("""INSERT INTO cases SELECT case_id, 'test', domain, task, 'seed:' || i, i,
        CASE WHEN i % 7 = 0 THEN 'discarded' ELSE 'accepted' END, CASE WHEN i % 5 = 0 THEN 2 ELSE 1 END,
        CASE WHEN i % 7 = 0 THEN 2 ELSE 1 END, NULL,
        CASE WHEN i % 7 = 0 THEN 'stage 2 failed twice (attempt 1: below theta_2 on dialogue (naturalness 1/3) | '
             || 'attempt 2: below theta_2 on dialogue (naturalness 1/3))' END, NULL, now() FROM ids""")
    con.execute("INSERT INTO planned_types SELECT case_id, 'test', '[\"' || (?)[1 + i % ?] || '\", \"' || "
                "(?)[1 + (i + 1) % ?] || '\"]', 'paper' FROM ids", [types, len(types), types, len(types)])
    # calls: stage 1 attempt 1 (and 2 when regenerated), stage 2 attempt 1 (and 2 when discarded), generator + judge
    con.execute("""CREATE TEMP TABLE att AS
        SELECT case_id, i, 1 AS stage, a AS attempt FROM ids, range(1, 3) r(a) WHERE a = 1 OR i % 5 = 0
        UNION ALL SELECT case_id, i, 2, a FROM ids, range(1, 3) r(a) WHERE a = 1 OR i % 7 = 0""")
    con.execute("""INSERT INTO llm_calls (call_id, case_id, stage, role, attempt, try_index, model, base_url, temperature,
        template_sha256, request_json, response_text, finish_reason, prompt_tokens, completion_tokens, latency_ms,
        error, run_id, created_at, reply_field, tags, via)
        SELECT md5(case_id || stage || role || attempt), case_id, stage, role, attempt, 0, 'bench', NULL, 0.7, NULL, ?,
               CASE WHEN role = 'judge' THEN '{}' WHEN stage = 1 THEN ? ELSE ? END, 'stop', 1500, 600, 900.0, NULL,
               'run', now() - INTERVAL (100000 - i) SECOND + INTERVAL (stage * 10 + attempt * 3 + (role = 'judge')::INT) SECOND,
               'content', NULL, 'live'
        FROM att, (VALUES ('generator'), ('judge')) r(role)""", [request, s1, s2])
    con.execute("""INSERT INTO scores SELECT a.case_id, a.stage, a.attempt, 'judge', 'bench', item, dim,
            CASE WHEN a.stage = 2 AND a.i % 7 = 0 AND dim = 'naturalness' THEN 1
                 WHEN a.stage = 1 AND a.i % 5 = 0 AND a.attempt = 1 AND dim = 'subtlety' THEN 1
                 WHEN dim IN ('subtlety', 'naturalness', 'implicitness', 'profile_consistency') THEN 3 ELSE 2 END,
            'scored', now(), md5(a.case_id || a.stage || 'judge' || a.attempt)
        FROM att a, (VALUES (1, 'MA1', 'subtlety'), (1, 'MA1', 'specificity'), (1, 'MA1', 'believability'),
                            (1, 'MA2', 'subtlety'), (1, 'MA2', 'specificity'), (1, 'MA2', 'believability'),
                            (2, 'dialogue', 'naturalness'), (2, 'dialogue', 'implicitness'),
                            (2, 'dialogue', 'coverage'), (2, 'dialogue', 'profile_consistency')) d(stage, item, dim)
        WHERE d.stage = a.stage""")
    con.execute("INSERT INTO runs VALUES ('run', 'build', '{}', 'benchfingerprint', '{}', '0', now(), now(), NULL)")
    con.execute("CHECKPOINT")
    con.close()


def timed(client, path: str) -> float:
    t = time.perf_counter()
    res = client.get(path)
    ms = (time.perf_counter() - t) * 1000
    if res.status_code != 200:
        raise SystemExit(f"{path}: HTTP {res.status_code}")
    return ms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=10_000, help="cases in the synthetic build (default 10000)")
    ap.add_argument("--requests", type=int, default=100, help="timed requests per page kind (default 100)")
    ap.add_argument("--out", type=Path, help="make (or reuse) the build here instead of a temporary folder")
    ap.add_argument("--max-rss-mb", type=float, default=600.0, help="RSS bound checked with --check (default 600)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args(argv)

    from starlette.testclient import TestClient

    from ioa_synth.view.app import make_app
    from ioa_synth.view.read.folders import open_library

    tmp = tempfile.TemporaryDirectory(prefix="bench-view-")
    out = args.out or Path(tmp.name) / "build"
    t0 = time.perf_counter()
    if not (out / "catalog.duckdb").exists():
        out.mkdir(parents=True, exist_ok=True)
        make_build(out, args.cases)
    made_s = time.perf_counter() - t0
    rss_start = rss_mb()
    t = time.perf_counter()
    library = open_library([out])  # finds the folder's kind: copies, indexes and summarises the catalog
    open_s = time.perf_counter() - t
    rng = random.Random(0)
    try:
        with TestClient(make_app(library)) as client:
            t = time.perf_counter()
            timed(client, "/f/0/")
            first_ms = (time.perf_counter() - t) * 1000
            (n,), = library.catalog(library.folders[0]).execute("SELECT count(*) FROM cases")
            ids = [r[0] for r in library.catalog(library.folders[0]).execute("SELECT case_id FROM cases ORDER BY random() LIMIT ?", [args.requests])]
            cells = [r[0] for r in library.catalog(library.folders[0]).execute("SELECT DISTINCT domain || '/' || task_type FROM cases")]
            timed(client, f"/f/0/case/{ids[0]}")  # first case page: imports, template compile
            rss_warm = rss_mb()
            lists, cases, peak = [], [], rss_warm
            for i in range(args.requests):
                q = rng.choice([f"?status=accepted&page={rng.randint(1, max(1, n // 60))}",
                                f"?status=discarded&sort=theta2&page={rng.randint(1, 3)}",
                                f"?cell={rng.choice(cells)}&sort=theta1&page={rng.randint(1, 4)}",
                                f"?status=regenerated&type=definitional&page={rng.randint(1, 5)}",
                                f"?sort=updated&page={rng.randint(1, max(1, n // 50))}"])
                lists.append(timed(client, "/f/0/" + q))
                cases.append(timed(client, f"/f/0/case/{ids[i % len(ids)]}"))
                peak = max(peak, rss_mb())
    finally:
        library.close()
        tmp.cleanup()
    p95 = lambda xs: sorted(xs)[min(len(xs) - 1, int(0.95 * len(xs)))]  # noqa: E731
    figures = {"cases": n, "made_s": round(made_s, 1), "open_s": round(open_s, 2), "first_page_ms": round(first_ms, 1),
               "cases_page_ms": {"p50": round(statistics.median(lists), 1), "p95": round(p95(lists), 1)},
               "case_page_ms": {"p50": round(statistics.median(cases), 1), "p95": round(p95(cases), 1)},
               "rss_mb": {"start": round(rss_start), "warm": round(rss_warm), "peak": round(peak)}}
    print(f"{n:,} cases (made in {made_s:.1f} s); opening (copy, index, summary of the catalog) {open_s:.2f} s; "
          f"first page {first_ms:.0f} ms")
    print(f"cases page (filtered, sorted, paged): p50 {figures['cases_page_ms']['p50']} ms, p95 {figures['cases_page_ms']['p95']} ms")
    print(f"case page: p50 {figures['case_page_ms']['p50']} ms, p95 {figures['case_page_ms']['p95']} ms")
    print(f"RSS: {rss_start:.0f} MB before, {rss_warm:.0f} MB warm, {peak:.0f} MB peak over {len(lists) + len(cases)} requests")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    missed = [f"{name} p95 {v['p95']} ms > {TARGET_MS:.0f} ms" for name, v in
              (("cases page", figures["cases_page_ms"]), ("case page", figures["case_page_ms"])) if v["p95"] > TARGET_MS]
    if peak > args.max_rss_mb:
        missed.append(f"RSS peak {peak:.0f} MB > {args.max_rss_mb:.0f} MB")
    if peak - rss_warm > 50:
        missed.append(f"RSS grew {peak - rss_warm:.0f} MB over the timed requests")
    for m in missed:
        print(f"target missed: {m}", file=sys.stderr)
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
