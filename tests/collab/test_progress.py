"""``collab run``'s progress says which step of the protocol its calls in flight are (turns,
stop votes, reflections, answers, the solution, harness checks), not only "discusser"."""

from __future__ import annotations

import re
from functools import partial

import pytest

from ioa_synth.collab import run as collab_run
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.testing.collab_scripted import CollabScript

from .helpers import BCB, HP, bcb_tasks, hp_tasks

SLEEPS = "import time\ndef task_func(*args, **kwargs):\n    time.sleep(600)\n"


def _phases_seen(stderr: str) -> set[str]:
    seen = set()
    for line in stderr.splitlines():
        if (m := re.search(r"in flight: ([^;]+)", line)) and line.startswith("tasks:"):
            seen |= {re.sub(r"^\d+ ", "", part).rstrip("s") for part in m.group(1).split(", ")}
    return seen


@pytest.fixture
def often(monkeypatch):
    """Plain summary lines every 0.1 s instead of every 30 s."""
    monkeypatch.setattr(collab_run, "BuildProgress", partial(BuildProgress, summary_every=0.1))


def test_hidden_profile_phases_on_the_progress_line(cli, endpoint, tmp_path, often):
    endpoint(responder=CollabScript(tasks=hp_tasks(), flag={hp_tasks()[0].task_id}, latency=0.15))
    res = cli("collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", tmp_path / "res", "--limit", "1",
              "--configs", "self-reflection", "--workers", "4")
    assert res.exit_code == 0, res.output
    assert {"turn", "reflection", "final answer"} <= _phases_seen(res.stderr), res.stderr
    assert "discusser" not in _phases_seen(res.stderr)


@pytest.mark.skipif(not __import__("ioa_synth.collab.harness", fromlist=["x"]).harness_available(),
                    reason="bigcodebench is not installed (scripts/setup.sh installs it)")
def test_bcb_phases_include_the_check(cli, endpoint, tmp_path, often, monkeypatch):
    monkeypatch.setenv("BIGCODEBENCH_TIMEOUT_PER_TASK", "1")
    task = bcb_tasks(1)[0]
    endpoint(responder=CollabScript(tasks=[task], solutions={task.task_id: SLEEPS}, latency=0.15))
    res = cli("collab", "run", "--bench", "bcb", "--tasks", BCB, "--out", tmp_path / "res", "--limit", "1",
              "--configs", "discussion", "--workers", "2")
    assert res.exit_code == 0, res.output
    assert {"turn", "stop vote", "solution", "check"} <= _phases_seen(res.stderr), res.stderr
