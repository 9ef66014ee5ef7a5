"""A collaboration run killed with SIGKILL (or stopped with Ctrl-C) resumes: finished task
runs stay, stored calls are replayed, only the calls in flight are asked again; a changed
setup is refused, a new configuration is not."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import duckdb

from ioa_synth.testing.collab_scripted import CollabScript
from ioa_synth.testing.scripted_server import ScriptedServer

from .helpers import HP, detector_config, hp_tasks

WORKERS = 3


def _cmd(out, *extra):
    return [sys.executable, "-m", "ioa_synth", "collab", "run", "--bench", "hidden-profile", "--tasks", str(HP),
            "--out", str(out), "--configs", "discussion", "--workers", str(WORKERS), *extra]


def _calls(tasks) -> int:
    return sum(8 * t.agents + t.agents for t in tasks)  # 8 rounds, then every agent's final answer


def _stop_after(proc, server, n: int, sig: int) -> None:
    deadline = time.monotonic() + 120
    while len(server.requests) < n and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the run finished before it could be stopped"
    os.kill(proc.pid, sig)


def test_kill_9_then_resume(tmp_path):
    tasks, out = hp_tasks(), tmp_path / "res"
    with ScriptedServer(CollabScript(tasks=tasks, latency=0.03)) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-kill-test-0000"}
        proc = subprocess.Popen(_cmd(out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _stop_after(proc, server, 60, signal.SIGKILL)
        proc.wait()
        first = len(server.requests)
        done = subprocess.run(_cmd(out), env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        second = len(server.requests) - first
    total = _calls(tasks)
    assert first + second <= total + WORKERS  # only the calls in flight at the kill were asked twice
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    keys, rows = con.execute("SELECT count(DISTINCT (case_id, stage, role, attempt)), count(*) FROM llm_calls "
                             "WHERE error IS NULL").fetchone()
    by_kind = dict(con.execute("SELECT kind, count(*) FROM collab_calls WHERE error IS NULL GROUP BY kind").fetchall())
    con.close()
    assert keys == total and rows - keys <= WORKERS
    assert sum(by_kind.values()) == rows and set(by_kind) == {"say", "final"}
    assert len(list((out / "tasks").glob("*__discussion.json"))) == len(tasks)


def test_ctrl_c_exits_130_then_resumes(tmp_path):
    out = tmp_path / "res"
    with ScriptedServer(CollabScript(tasks=hp_tasks(), latency=0.05)) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-int-test-0000"}
        proc = subprocess.Popen(_cmd(out, "--limit", "2"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        _stop_after(proc, server, 10, signal.SIGINT)
        start = time.monotonic()
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130 and time.monotonic() - start < 15
        assert "run the same command again to resume" in err.splitlines()[-1]
        done = subprocess.run(_cmd(out, "--limit", "2"), env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
    assert len(list((out / "tasks").glob("*.json"))) == 2


def test_changed_setup_is_refused_a_new_configuration_is_not(cli, endpoint, tmp_path):
    tasks, out = hp_tasks(1), tmp_path / "res"
    endpoint(responder=CollabScript(tasks=hp_tasks()))
    base = ["collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--limit", "1"]
    assert cli(*base, "--configs", "discussion").exit_code == 0
    changed = cli(*base, "--configs", "discussion", "--seed", "3")
    # the discusser's model is listed only once its endpoint is asked: the check made before
    # anything starts finds the seed in the protocol settings
    assert changed.exit_code == 2 and "another setup (study.seed: 0 -> 3)" in changed.stderr
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"discusser": {"temperature": 0.3}}), encoding="utf-8")
    hotter = cli(*base, "--configs", "discussion", "--config", cfg)
    assert hotter.exit_code == 2 and "discusser.temperature: 0.7 -> 0.3" in hotter.stderr
    det = detector_config(tmp_path)
    more = cli(*base, "--configs", "discussion,mcq:d", "--detector", f"d={det}")
    assert more.exit_code == 0, more.output
    assert "1 task run(s) done" in more.stderr and "1 already done" in more.stderr
    assert (out / "tasks" / f"{tasks[0].task_id}__mcq:d.json").is_file()


def _folder_state(out):
    """Bytes and modification time of every file in ``out`` (the catalog among them)."""
    return {p.relative_to(out): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(out.rglob("*")) if p.is_file()}


def test_a_refused_resume_leaves_the_folder_as_it_was(cli, endpoint, tmp_path):
    server = endpoint(responder=CollabScript(tasks=hp_tasks()))
    out = tmp_path / "res"
    base = ["collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--limit", "1",
            "--configs", "discussion"]
    assert cli(*base).exit_code == 0
    before, asked = _folder_state(out), len(server.requests)
    time.sleep(0.05)  # a rewrite would show in the modification times
    refused = cli(*base, "--seed", "3")
    assert refused.exit_code == 2 and "seed: 0 -> 3" in refused.stderr
    assert _folder_state(out) == before  # catalog.duckdb and run.json untouched, nothing added
    assert len(server.requests) == asked


class CountingEmbedded:
    """Stands in for :class:`ioa_synth.llm.local_model.EmbeddedServer`: the scripted team
    served as the embedded model; counts how often a server was started."""

    started = 0

    def __init__(self, name: str, log_path=None, **kw) -> None:
        self.name = self.model = name
        self.parallel = 2
        self.server = "scripted-llama-server"
        self.scripted = ScriptedServer(CollabScript(tasks=hp_tasks()), models=[name])
        self.base_url = self.scripted.base_url

    def __enter__(self) -> "CountingEmbedded":
        CountingEmbedded.started += 1
        self.scripted.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.scripted.__exit__(*exc)


def test_a_refused_resume_starts_no_embedded_server(cli, tmp_path, monkeypatch):
    from ioa_synth.llm import local_model, local_weights

    for var in ("OPENAI_BASE_URL", "DISCUSSER_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(local_model, "EmbeddedServer", CountingEmbedded)
    monkeypatch.setattr(local_weights, "default_local_model", lambda: "smollm2-135m")
    monkeypatch.setattr(CountingEmbedded, "started", 0)
    capped = tmp_path / "demo.json"
    capped.write_text(json.dumps({"discusser": {"request_options": {"max_tokens": 200}}}), encoding="utf-8")
    out = tmp_path / "res"
    base = ["collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--limit", "1",
            "--configs", "discussion"]
    first = cli(*base, "--config", capped)
    assert first.exit_code == 0, first.output
    assert CountingEmbedded.started == 1
    before = _folder_state(out)
    time.sleep(0.05)
    for again in ([], ["--config", capped, "--seed", "3"]):  # without the config, or another seed
        refused = cli(*base, *again)
        assert refused.exit_code == 2, refused.output
        assert "discusser.request_options.max_tokens: 200 -> 1024" in refused.stderr or "seed: 0 -> 3" in refused.stderr
        assert CountingEmbedded.started == 1  # no server started for a run that is refused
        assert _folder_state(out) == before


def test_a_resumed_run_numbers_task_runs_out_of_the_whole_job(cli, endpoint, tmp_path):
    """A resumed run counts the task runs an earlier run finished: ``[2/2]``, not ``[1/1]``."""
    out = tmp_path / "res"
    endpoint(responder=CollabScript(tasks=hp_tasks()))
    args = ("collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--limit", "2",
            "--configs", "discussion", "--workers", "1")
    assert cli(*args).exit_code == 0
    records = sorted((out / "tasks").glob("*.json"))
    assert len(records) == 2
    records[-1].unlink()  # as if the first run had stopped before its last task run
    result = cli(*args)
    assert result.exit_code == 0, result.stderr
    assert "[2/2]" in result.stderr and "[1/1]" not in result.stderr, result.stderr
    assert "1 done by an earlier run" in result.stderr, result.stderr
