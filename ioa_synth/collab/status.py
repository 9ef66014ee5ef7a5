"""Where a ``collab run`` results folder stands (``ioa-synth status --out RESULTS``): per
configuration, the task runs finished (their records, written as each ends) out of the
tasks of the run (the ``--tasks`` file named in ``run.json``, after ``--limit``), passed or
not."""

from __future__ import annotations

from pathlib import Path

from ioa_synth.collab.records import RecordError, read_records
from ioa_synth.collab.report import ReportError, config_order
from ioa_synth.runs.folder_status import Group, Progress
from ioa_synth.runs.manifest import Manifest


def _task_count(manifest: Manifest) -> int | None:
    """Tasks of the run, from the ``--tasks`` file its run.json names; ``None`` when it
    cannot be read any more (moved, changed to another format)."""
    from ioa_synth.collab.tasks import load_tasks

    args = manifest.args
    try:
        tasks = load_tasks(Path(args["tasks"]), args.get("bench") or manifest.settings.bench)
    except Exception:  # noqa: BLE001 - any reason the file no longer reads: the total is unknown
        return None
    limit = args.get("limit")
    return len(tasks[:limit] if limit else tasks)


def collab_progress(out: Path, manifest: Manifest) -> Progress:
    """One group per configuration: task runs ``done`` of ``total``, statuses ``passed``
    and ``failed-check`` (the run's own words).

    Raises:
        ReportError: an unreadable task record.
    """
    try:
        records = read_records(out)
    except RecordError as exc:
        raise ReportError(str(exc)) from None
    configs = list((manifest.model_extra or {}).get("configs") or [])
    configs = config_order(set(configs) | {r.config for r in records})
    total = _task_count(manifest)
    groups = []
    for config in configs:
        mine = [r for r in records if r.config == config]
        passed = sum(1 for r in mine if r.passed)
        groups.append(Group(name=config, done=len(mine), total=max(total, len(mine)) if total is not None else None,
                            statuses={"passed": passed, "failed-check": len(mine) - passed}))
    notes = [] if total is not None else [f"the total is unknown: the tasks file {manifest.args.get('tasks')} no "
                                          "longer reads"]
    return Progress(unit="task run", groups=groups, notes=notes + ["Pass@1 and trigger rates: ioa-synth collab report"])
