"""BigCodeBench scoring with the official harness, one check per worker process.

:func:`check_solution` runs ``bigcodebench.eval.untrusted_check`` (bigcodebench 0.2.5,
Apache-2.0) the way ``bigcodebench.evaluate`` does — the solution "calibrated" as
``code_prompt + "\\n    pass\\n" + solution``, the harness's own memory and stack limits,
its own time limit — inside a worker process of its own (``python -m
ioa_synth.collab.check_worker``) that starts a new session. The toolkit adds only the
wrapper around that process: a hard timeout (the harness's limit plus
:data:`WORKER_MARGIN` seconds) and, however the check ends, ``SIGKILL`` to the whole
process group, so a solution that hangs, forks or allocates without bound ends as a failed
task and leaves nothing running (the harness itself terminates only its direct child:
forked grandchildren would outlive it). The result comes back in a file, not on stdout,
which the solution may write to.

Scratch folders: each check works in ``TMPDIR/ioa-check-<owner>-<pid>-<start>-XXXX``, named
by the results folder it scores for (``owner``, :func:`results_owner`) and the process that
runs it (its pid and start time), and removed when the check ends. A run killed with
``kill -9`` cannot remove its folders: the next run of the same results folder removes those
whose process is gone (:func:`remove_stale_checks`), never another live run's. The worker
itself dies with the run (Linux ``PR_SET_PDEATHSIG``, :mod:`ioa_synth.collab.check_worker`),
taking the solution's processes with it.

Time limit: ``untrusted_check`` waits ``max(BIGCODEBENCH_TIMEOUT_PER_TASK (240 s),
min_time_limit, gt_time_limit) + 1`` seconds; the worker sets the harness's module default
to ``time_limit`` and passes ``gt_time_limit = min(20, time_limit)`` (20 s is what
``bigcodebench.evaluate`` passes when it has no ground-truth timing), so a check ends after
about ``time_limit + 1`` seconds, exactly the harness's default wait at 240.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ioa_synth.collab.tasks import BcbTask
from ioa_synth.llm.errors import CallCancelled

#: Seconds the worker process gets beyond the harness's own wait (start-up, imports, clean-up).
WORKER_MARGIN = 15.0
#: The harness's stack limit (MB), as ``bigcodebench.evaluate`` passes it.
MAX_STACK_MB = 10
#: Seconds between two looks at a running check (and at the run's stop event).
POLL_SECONDS = 0.1
#: Seconds :func:`check_solution` waits for a killed process group to be gone.
GROUP_EXIT_WAIT = 10.0
#: Longest traceback kept per failed test in a record (characters).
MAX_DETAIL = 2000
#: The environment variable the harness reads for its per-task time limit (seconds).
TIMEOUT_ENV = "BIGCODEBENCH_TIMEOUT_PER_TASK"
#: Start of every check's scratch folder name in ``TMPDIR``.
SCRATCH_PREFIX = "ioa-check-"
#: Checks running at once (each forks a few processes; more than the cores only queue).
_SLOTS = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))


@dataclass(frozen=True)
class CheckResult:
    """A check's ``status`` (the harness's ``pass`` | ``fail`` | ``timeout``) and ``details``
    (failed test -> traceback; ``ALL`` for a failure before the tests ran)."""

    status: str
    details: dict[str, str]

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "details": self.details}


def default_time_limit() -> float:
    """``BIGCODEBENCH_TIMEOUT_PER_TASK`` when set to a positive number, else the harness's 240 s.

    Raises:
        ValueError: the variable is set but not a positive number."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return 240.0
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{TIMEOUT_ENV}={raw!r} is not a number of seconds") from None
    if value <= 0:
        raise ValueError(f"{TIMEOUT_ENV}={raw!r} must be positive")
    return value


def calibrated(task: BcbTask, code: str) -> str:
    """The solution as ``bigcodebench.evaluate`` checks it by default (``calibrated``):
    the task's ``code_prompt`` (its imports and signature), a ``pass`` body, then the code."""
    return task.code_prompt + "\n    pass\n" + code


def harness_available() -> bool:
    """True when ``bigcodebench`` (the ``collab`` extra) is importable."""
    import importlib.util

    return importlib.util.find_spec("bigcodebench") is not None


def results_owner(results: Path) -> str:
    """The name part that ties a check's scratch folder to the results folder ``results``:
    the first 12 hex digits of the SHA-256 of its resolved path."""
    return hashlib.sha256(str(Path(results).resolve()).encode("utf-8")).hexdigest()[:12]


def _started(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, ``/proc/<pid>/stat``); ``"0"``
    where that is not known. With the pid it names a process: a reused pid starts later."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return "0"


def _alive(pid: int, started: str) -> bool:
    """Whether the process ``pid`` that started at ``started`` still runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: a reused pid, but not ours to judge
        return True
    return started == "0" or _started(pid) in ("0", started)


def scratch_prefix(owner: str) -> str:
    """``ioa-check-<owner>-<pid>-<start>-``: the start of this process's scratch folder names."""
    return f"{SCRATCH_PREFIX}{owner}-{os.getpid()}-{_started(os.getpid())}-"


def remove_stale_checks(owner: str, tmp_dir: str | Path | None = None) -> int:
    """Remove the scratch folders of ``owner``'s checks (in ``tmp_dir``, default ``TMPDIR``)
    whose process is gone (a run killed during a check); return how many. Folders of a
    process that still runs, this one included, and of other results folders are left.
    Call it while holding the results folder's catalog (one writer at a time)."""
    removed = 0
    for path in Path(tmp_dir or tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}{owner}-*"):
        parts = path.name[len(SCRATCH_PREFIX) + len(owner) + 1:].split("-")
        if len(parts) < 3 or not parts[0].isdigit() or not path.is_dir() or path.is_symlink():
            continue
        if _alive(int(parts[0]), parts[1]):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed += not path.exists()
    return removed


def check_solution(task: BcbTask, code: str, time_limit: float = 240.0, memory_limit_mb: int = 8192,
                   stop: threading.Event | None = None, owner: str = "") -> CheckResult:
    """Check ``code`` against ``task``'s tests with the official harness in a worker process.

    ``time_limit``: the harness's per-task limit in seconds; ``memory_limit_mb``: its
    address-space and data limits; ``owner``: the results folder's :func:`results_owner`,
    named in the check's scratch folder. Never raises for what the solution does: a hang, a
    crash, a fork loop or a failed allocation is a ``fail`` or ``timeout`` result.

    Raises:
        OSError: the worker process cannot be started.
        CallCancelled: ``stop`` was set (Ctrl-C): the check's processes are killed and no
            result is given (the task runs again on a re-run).
    """
    job = {"code": calibrated(task, code), "test": task.test, "entry_point": task.entry_point,
           "max_as_limit": memory_limit_mb, "max_data_limit": memory_limit_mb, "max_stack_limit": MAX_STACK_MB,
           "time_limit": time_limit}
    stop = stop or threading.Event()
    while not _SLOTS.acquire(timeout=POLL_SECONDS):
        if stop.is_set():
            raise CallCancelled(f"{task.task_id}: the run is stopping; check not started")
    try:
        return _check(job, time_limit, stop, task.task_id, scratch_prefix(owner or "run"))
    finally:
        _SLOTS.release()


def _check(job: dict[str, Any], time_limit: float, stop: threading.Event, task_id: str, prefix: str) -> CheckResult:
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        job_path, out_path = Path(tmp) / "job.json", Path(tmp) / "result.json"
        job_path.write_text(json.dumps(job), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k != TIMEOUT_ENV}
        proc = subprocess.Popen([sys.executable, "-m", "ioa_synth.collab.check_worker", str(job_path), str(out_path),
                                 str(os.getpid())],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, cwd=tmp, env=env)
        wait = time_limit + 1 + WORKER_MARGIN
        deadline = time.monotonic() + wait
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                if stop.wait(POLL_SECONDS):
                    raise CallCancelled(f"{task_id}: the run is stopping; its check was stopped")
            killed = proc.poll() is None
        finally:
            _kill_group(proc)
        if killed:
            return CheckResult("timeout", {"ALL": f"the check ran past {wait:.0f} s and its processes were killed"})
        try:
            data = json.loads(out_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return CheckResult("fail", {"ALL": f"the check's worker ended without a result (exit status "
                                               f"{proc.returncode})"})
    details = {str(k): str(v)[:MAX_DETAIL] for k, v in (data.get("details") or {}).items()}
    status = data.get("status") if data.get("status") in ("pass", "fail", "timeout") else "fail"
    return CheckResult(status, details)


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL every process of the worker's session (the solution's forks included), reap
    the worker, and wait up to :data:`GROUP_EXIT_WAIT` s for the group to be gone (a hundred
    killed processes take a moment to exit on a busy machine)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - a SIGKILLed process is reaped at once
        pass
    deadline = time.monotonic() + GROUP_EXIT_WAIT
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # also any child forked while the first signal went out
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.05)
