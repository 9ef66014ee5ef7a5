"""The worker process of one harness check: ``python -m ioa_synth.collab.check_worker JOB
RESULT``. Reads the job (JSON: code, test, entry_point, limits), calls
``bigcodebench.eval.untrusted_check`` and writes ``{"status", "details"}`` to RESULT.
Started by :func:`ioa_synth.collab.harness.check_solution`, which owns its time limit and
kills its process group; imports nothing of the toolkit beyond this file.
"""

from __future__ import annotations

import json
import sys


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
    sys.exit(main(sys.argv[1], sys.argv[2]))
