"""The worker process of one harness check: ``python -m ioa_synth.collab.check_worker JOB
RESULT PARENT``. Reads the job (JSON: code, test, entry_point, limits), calls
``bigcodebench.eval.untrusted_check`` and writes ``{"status", "details"}`` to RESULT.
Started by :func:`ioa_synth.collab.harness.check_solution`, which owns its time limit and
kills its process group; imports nothing of the toolkit beyond this file.

The worker dies with the run that started it (process ``PARENT``): on Linux it asks for
``SIGTERM`` when its parent dies (``PR_SET_PDEATHSIG``) and then kills its whole process
group, the solution's processes included, so a run killed with ``kill -9`` during a check
leaves no solution running. The harness's own child inherits the handler and ends as
``SIGTERM`` ends any process (the harness terminates it on its time limit).
"""

from __future__ import annotations

import json
import os
import signal
import sys

#: ``prctl`` option: the signal this process gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


#: ``os.kill`` and ``os.killpg`` as imported (the harness replaces them in its child).
_KILL, _KILLPG = os.kill, os.killpg
_WORKER = [0]


def _parent_gone(signum: int, frame: object) -> None:
    if os.getpid() == _WORKER[0]:
        _KILLPG(0, signal.SIGKILL)  # the worker leads its session's group (start_new_session)
    signal.signal(signum, signal.SIG_DFL)  # a forked child of the harness: SIGTERM as usual
    _KILL(os.getpid(), signum)


def die_with(parent: int) -> None:
    """Kill this process group when process ``parent`` dies (Linux; elsewhere nothing)."""
    _WORKER[0] = os.getpid()
    signal.signal(signal.SIGTERM, _parent_gone)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        _KILLPG(0, signal.SIGKILL)


def main(job_path: str, result_path: str) -> int:
    with open(job_path, encoding="utf-8") as fh:
        job = json.load(fh)
    import bigcodebench.eval as harness

    limit = float(job["time_limit"])
    # the harness reads its per-task wait from this module default (its environment variable
    # arrives as a string and max(str, float) fails): set it to the run's limit
    harness.TIMEOUT_LIMIT = limit
    try:
        status, details = harness.untrusted_check(job["code"], job["test"], job["entry_point"], job["max_as_limit"],
                                                  job["max_data_limit"], job["max_stack_limit"],
                                                  min_time_limit=1, gt_time_limit=min(20.0, limit))
        out = {"status": status, "details": {str(k): str(v) for k, v in dict(details).items()}}
    except BaseException as exc:  # noqa: BLE001 - the harness itself failed: a failed check, said so
        out = {"status": "fail", "details": {"ALL": f"harness error: {type(exc).__name__}: {exc}"}}
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(out, fh)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 3:
        die_with(int(sys.argv[3]))
    sys.exit(main(sys.argv[1], sys.argv[2]))
