"""verl 0.9.1 scores in ``reward.num_workers`` processes with one environment: each process
takes a catalog folder of its own under ``IOA_REWARD_OUT`` (a DuckDB catalog has one writer),
replays the calls the others stored, and ``ioa-synth sql`` reads them all as one. Real
processes score at once here (the simulator and filter are scripted servers)."""

from __future__ import annotations

import json
import subprocess
import sys

from .test_reward import CASES, completion_of

#: One verl reward worker: score its cases, wait until every worker has scored (so all hold
#: their catalogs at once), print the scores and its catalog folder.
WORKER = """
import json, os, sys, time
from pathlib import Path
from ioa_synth.train.verl_reward import compute_score, scorer
jobs, barrier, n = json.loads(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
scores = [compute_score("ioa-suite", text, case, {"case_id": case, "split": "train", "index": 0}) for case, text in jobs]
(barrier / str(os.getpid())).touch()
deadline = time.time() + 120
while len(list(barrier.iterdir())) < n and time.time() < deadline:
    time.sleep(0.05)
print(json.dumps({"scores": scores, "folder": scorer().catalog.out_dir.name}))
"""


def start(jobs, barrier, n, env):
    return subprocess.Popen([sys.executable, "-c", WORKER, json.dumps(jobs), str(barrier), str(n)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc) -> dict:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def test_worker_processes_score_at_once_and_share_their_calls(teacher, tmp_path, cli, monkeypatch):
    import os

    out = tmp_path / "reward-catalogs"
    env = dict(os.environ, IOA_REWARD_DATA=str(teacher.data), IOA_REWARD_OUT=str(out), IOA_REWARD_WORKERS="2")
    texts = {c: completion_of(teacher.record(c)) for c in CASES}
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs = [start([[c, texts[c]]], barrier, 3, env) for c in CASES[:3]]
    results = [finish(p) for p in procs]
    scores = [r["scores"][0]["score"] for r in results]
    assert scores[0] == 2 * 0.8 * 1.0 / 1.8 and scores[1:] == [0.5, 0.0]
    folders = sorted(r["folder"] for r in results)
    assert folders == ["worker0", "worker1", "worker2"]  # one catalog per live process

    # reports see every process's calls and rewards
    rows = cli("sql", out, "SELECT catalog, count(*) AS n FROM train_rewards GROUP BY 1 ORDER BY 1", "--json")
    assert rows.exit_code == 0, rows.stderr
    assert json.loads(rows.stdout) == [{"catalog": f, "n": 1} for f in folders]
    calls = cli("sql", out, "SELECT count(DISTINCT case_id) AS n FROM llm_calls", "--json")
    assert json.loads(calls.stdout) == [{"n": 3}]

    # a new process (it takes the free worker0) replays a completion another folder stored
    scored_elsewhere = next(c for c, r in zip(CASES, results) if r["folder"] != "worker0")
    before = teacher.trio.counts()
    (barrier2 := tmp_path / "barrier2").mkdir()
    again = finish(start([[scored_elsewhere, texts[scored_elsewhere]]], barrier2, 1, env))
    assert again["folder"] == "worker0"
    assert again["scores"][0]["score"] == scores[CASES.index(scored_elsewhere)]
    assert teacher.trio.counts() == before  # no simulator or filter request: replayed


def test_sql_names_a_member_still_in_use(teacher, tmp_path, cli):
    from ioa_synth.train.reward import RewardScorer

    out = tmp_path / "reward-catalogs"
    with RewardScorer(teacher.data, out=out / "worker0") as first:
        first.score(CASES[1], completion_of(teacher.record(CASES[1])))
    (out / "worker1").mkdir()  # a worker process still running holds its catalog
    env_proc = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); "
                                 "print('held', flush=True); time.sleep(60)", str(out / "worker1" / "catalog.duckdb")],
                                stdout=subprocess.PIPE, text=True)
    try:
        assert env_proc.stdout.readline().strip() == "held"
        res = cli("sql", out, "SELECT count(*) AS n FROM train_rewards", "--json")
        assert res.exit_code == 0, res.stderr
        assert json.loads(res.stdout) == [{"n": 1}]
        assert "note: left out worker1 (open in a running process)" in res.stderr
    finally:
        env_proc.kill()
        env_proc.wait()
