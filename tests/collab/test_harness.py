"""BCB scoring with the official harness (bigcodebench 0.2.5) in a worker process per check:
the samples' canonical solutions pass; a solution that loops forever, one that forks in a
loop and one that allocates 10 GB each end as a failed task within the time limit, leave no
process behind, and the run goes on."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ioa_synth.collab.harness import WORKER_MARGIN, check_solution
from ioa_synth.testing.collab_scripted import CollabScript
from ioa_synth.testing.scripted_server import ScriptedServer
from .helpers import BCB, bcb_tasks, record

pytestmark = pytest.mark.skipif(not __import__("ioa_synth.collab.harness", fromlist=["x"]).harness_available(),
                                reason="bigcodebench is not installed (scripts/setup.sh installs it)")

LIMIT = 3.0
LOOP = "def task_func(*args, **kwargs):\n    while True:\n        pass\n"
FORKS = ("import os, time\ndef task_func(*args, **kwargs):\n    while True:\n        if os.fork() == 0:\n"
         "            time.sleep(600)\n        time.sleep(0.02)\n")
ALLOC = "def task_func(*args, **kwargs):\n    block = bytearray(10 * 1024 ** 3)\n    return len(block)\n"


def _leftovers(marker: str, parent: int | None = None) -> list[str]:
    """Processes whose command line holds ``marker``; with ``parent``, only the check
    workers of that process (a worker's last argument is its parent's pid): another test run
    on the same machine has check workers of its own."""
    ps = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    lines = [line for line in ps.splitlines() if marker in line and "ps -ww -eo" not in line]
    return [line for line in lines if parent is None or line.split()[-1] == str(parent)]


def test_canonical_solutions_pass_and_wrong_ones_fail():
    for task in bcb_tasks():
        assert check_solution(task, task.code_prompt + "\n" + task.canonical_solution, LIMIT).status == "pass"
    task = bcb_tasks(1)[0]
    wrong = check_solution(task, task.code_prompt + "\n    return {}\n", LIMIT)
    assert wrong.status == "fail" and "test_basic" in wrong.details


@pytest.mark.parametrize("code,status", [(LOOP, "timeout"), (FORKS, "timeout"), (ALLOC, "fail")],
                         ids=["while-true", "fork-loop", "10GB"])
def test_runaway_solutions_fail_within_the_limit(code, status):
    task = bcb_tasks(1)[0]
    start = time.monotonic()
    result = check_solution(task, code, LIMIT, memory_limit_mb=8192)
    assert result.status == status and not result.passed
    assert time.monotonic() - start < LIMIT + 1 + WORKER_MARGIN
    if code is ALLOC:
        assert "MemoryError" in str(result.details)
    time.sleep(0.5)
    assert _leftovers("ioa_synth.collab.check_worker", os.getpid()) == []  # the forked sleepers were killed too


def test_the_run_goes_on_past_runaway_solutions(tmp_path, monkeypatch):
    tasks = bcb_tasks(4)
    bad = {tasks[0].task_id: LOOP, tasks[1].task_id: FORKS, tasks[2].task_id: ALLOC}
    script = CollabScript(tasks=tasks, solutions=bad)
    out = tmp_path / "res"
    with ScriptedServer(script) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-harness-0000",
               "BIGCODEBENCH_TIMEOUT_PER_TASK": str(LIMIT)}
        start = time.monotonic()
        run = subprocess.Popen([sys.executable, "-m", "ioa_synth", "collab", "run", "--bench", "bcb", "--tasks",
                                str(BCB), "--out", str(out), "--configs", "single", "--limit", "4", "--workers", "4"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, err = run.communicate(timeout=300)
    assert run.returncode == 0, err[-2000:]
    assert time.monotonic() - start < 4 * (LIMIT + 1 + WORKER_MARGIN)
    statuses = [record(out, t.task_id, "single")["check"]["status"] for t in tasks]
    assert statuses == ["timeout", "timeout", "fail", "fail"]  # the fourth: the scripted wrong solution
    assert all(record(out, t.task_id, "single")["passed"] is False for t in tasks)
    assert _leftovers("ioa_synth.collab.check_worker", run.pid) == []


def test_ctrl_c_during_a_hanging_check_stops_at_once(tmp_path):
    import signal

    tasks = bcb_tasks(1)
    script = CollabScript(tasks=tasks, solutions={tasks[0].task_id: LOOP})
    out = tmp_path / "res"
    with ScriptedServer(script) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-harness-0000",
               "BIGCODEBENCH_TIMEOUT_PER_TASK": "120"}
        proc = subprocess.Popen([sys.executable, "-m", "ioa_synth", "collab", "run", "--bench", "bcb", "--tasks",
                                 str(BCB), "--out", str(out), "--configs", "single", "--limit", "1"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not _leftovers("ioa_synth.collab.check_worker", proc.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _leftovers("ioa_synth.collab.check_worker", proc.pid), "the check never started"
            time.sleep(1)
            proc.send_signal(signal.SIGINT)
            start = time.monotonic()
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:  # a failed assertion above: the run and its looping check go
                proc.kill()
                proc.wait()
    assert proc.returncode == 130 and time.monotonic() - start < 15, err
    assert not (out / "tasks" / f"{tasks[0].task_id}__single.json").exists()  # the task runs again next time
    time.sleep(0.5)
    assert _leftovers("ioa_synth.collab.check_worker", proc.pid) == []


SLEEPS = "import time\ndef task_func(*args, **kwargs):\n    time.sleep(600)\n"


def _scratch(tmp: "os.PathLike") -> list[str]:
    return sorted(p.name for p in __import__("pathlib").Path(tmp).glob("ioa-check-*"))


def test_a_run_killed_during_checks_leaves_nothing_after_its_resume(tmp_path):
    """kill -9 of ``collab run`` while its checks run: the checks' processes die with it, and
    the resumed run removes the scratch folders the killed run left in TMPDIR."""
    tasks = bcb_tasks(2)
    script = CollabScript(tasks=tasks, solutions={t.task_id: SLEEPS for t in tasks})
    out, tmp = tmp_path / "res", tmp_path / "tmp"
    tmp.mkdir()
    cmd = [sys.executable, "-m", "ioa_synth", "collab", "run", "--bench", "bcb", "--tasks", str(BCB), "--out", str(out),
           "--configs", "single", "--limit", "2", "--workers", "2"]
    with ScriptedServer(script) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-harness-0000",
               "BIGCODEBENCH_TIMEOUT_PER_TASK": str(LIMIT), "TMPDIR": str(tmp)}
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while len(_scratch(tmp)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(_scratch(tmp)) == 2, "the checks never started"
        proc.kill()  # SIGKILL: no clean-up of its own
        proc.wait()
        left = _scratch(tmp)
        assert len(left) == 2  # what the killed run could not remove
        deadline = time.monotonic() + 10
        while _leftovers(str(tmp)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _leftovers(str(tmp)) == []  # the checks' workers died with the run
        # another results folder's scratch (a live run elsewhere) is not this run's to remove
        other = tmp / "ioa-check-0123456789ab-1-0-keep"
        other.mkdir()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _scratch(tmp) == [other.name]
    assert [record(out, t.task_id, "single")["check"]["status"] for t in tasks] == ["timeout", "timeout"]


def test_only_the_scratch_of_gone_processes_of_this_folder_is_removed(tmp_path):
    from ioa_synth.collab.harness import remove_stale_checks, results_owner, scratch_prefix

    owner = results_owner(tmp_path / "res")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = tmp_path / f"ioa-check-{owner}-{dead.pid}-0-abc"
    (gone / "sub").mkdir(parents=True)
    (gone / "sub" / "job.json").write_text("{}", encoding="utf-8")
    mine = tmp_path / (scratch_prefix(owner) + "live")  # this process's: a check in flight
    reused = tmp_path / f"ioa-check-{owner}-{os.getpid()}-1-old"  # this pid, started earlier: a dead run's
    elsewhere = tmp_path / f"ioa-check-{results_owner(tmp_path / 'other')}-{dead.pid}-0-abc"
    for path in (mine, reused, elsewhere):
        path.mkdir()
    assert remove_stale_checks(owner, tmp_path) == 2
    assert sorted(p.name for p in tmp_path.glob("ioa-check-*")) == sorted([mine.name, elsewhere.name])
