"""Pass or fail of one task's run: the BigCodeBench harness on the solution
(:mod:`ioa_synth.collab.harness`), or the hidden-profile majority vote against the correct
option. Adds ``passed`` and ``check`` to a record."""

from __future__ import annotations

import threading
from typing import Any, Callable

from ioa_synth.collab.harness import CheckResult, check_solution
from ioa_synth.collab.tasks import BcbTask, HiddenProfileTask, Task
from ioa_synth.collab.team import CollabSettings

#: ``check(task, code, time_limit, memory_limit_mb, stop) -> CheckResult`` (the harness, or a stand-in).
Check = Callable[[BcbTask, str, float, int, "threading.Event | None"], CheckResult]


def score(record: dict[str, Any], task: Task, settings: CollabSettings, check: Check = check_solution,
          stop: threading.Event | None = None) -> dict[str, Any]:
    """``record`` with ``passed`` and ``check`` (``{"status", "details"}``); ``stop`` (the
    run's stop event) ends a running check early.

    Raises:
        CallCancelled: ``stop`` was set during the check.
    """
    if isinstance(task, BcbTask):
        result = check(task, record["final"]["code"], settings.time_limit, settings.memory_limit_mb, stop)
        return record | {"passed": result.passed, "check": result.as_dict()}
    assert isinstance(task, HiddenProfileTask)
    vote = record["final"]["vote"]
    passed = vote == task.answer
    record["final"]["correct"] = task.answer
    details = {"vote": vote, "correct": task.answer,
               "why": "the vote is the correct option" if passed else
               ("the agents' answers tie: no majority" if vote is None else "the vote is not the correct option")}
    return record | {"passed": passed, "check": {"status": "pass" if passed else "fail", "details": details}}
