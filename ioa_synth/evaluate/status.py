"""Where an ``evaluate`` results folder stands (``ioa-synth status --out RESULTS``).

:func:`results_status` gives, machine-readable: what ran (command, settings, each
component's model, start and finish times, from the manifest ``run.json``,
:mod:`ioa_synth.runs.manifest`); the cases of the run (the input files fingerprinted in the
manifest, the first ``--limit`` of them by path, as ``evaluate`` takes them) by the status
of their record: scored, failed (with the record's error), to do; the calls and tokens per
component (:func:`ioa_synth.runs.folder_status.token_use` over ``llm_calls``, the simulator's
participants together); and the estimate the run started from beside what the calls
stored since cost (:func:`ioa_synth.runs.spend.spend_report`). The records and the
manifest are read while a run holds the catalog, and the calls and the spending from a copy
of it (``catalog`` is then ``"snapshot"``, :mod:`ioa_synth.runs.snapshot`). :func:`results_status_tables` renders it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich import box
from rich.table import Table

from ioa_synth.runs.folder_status import token_use
from ioa_synth.evaluate.records import read_record
from ioa_synth.evaluate.run import component_of
from ioa_synth.evaluate.tables import EVALUATE_TABLES
from ioa_synth.reports.status_tables import calls_and_spend, when
from ioa_synth.runs.manifest import read_manifest
from ioa_synth.runs.snapshot import reading
from ioa_synth.runs.spend import spend_report
from ioa_synth.text.plural import plural

#: A failed case's error is cut to this many characters in the table (``--json`` keeps it whole).
ERROR_SHOWN = 160
#: Failed cases listed in the table at most (``--json`` lists every one).
FAILED_SHOWN = 20
#: ``llm_calls.role`` -> component in SQL (``simulator:M1`` -> ``simulator``), as :func:`component_of`.
COMPONENT_SQL = "split_part(role, ':', 1)"


def run_cases(manifest_args: dict[str, Any], inputs: dict[str, Any]) -> list[str]:
    """The case ids of the run: the input files (``{source_file: sha256}``, relative paths)
    sorted by path, the first ``--limit`` of them, without ``.json``; with ``--sample``, the
    drawn case ids ``run.json`` records (``args.sample_cases``)."""
    if manifest_args.get("sample_cases"):
        return sorted(manifest_args["sample_cases"])
    files = sorted(inputs)
    limit = manifest_args.get("limit")
    return [f.removesuffix(".json") for f in (files[:limit] if limit else files)]


def results_status(out_dir: Path) -> dict[str, Any]:
    """``{"kind": "evaluate", "folder", "command", "settings", "components": {name: model},
    "started_at", "finished_at", "resumed_at", "cases": {"total", "scored", "failed", "to_do"},
    "failed_cases": [{"case_id", "error"}], "catalog": "read" | "missing" | "snapshot",
    "tokens": [{"component", "calls", "failed_calls", "retried_calls", "timed_out_calls",
    "prompt_tokens", "completion_tokens", "failed_tokens"}] | None, "spend": {...} | None}``
    (``spend``: ``{"estimated_at", "command", "plan", "estimate", "spent"}``, the estimate
    and what was spent in the shape of ``estimate --json``; ``None`` without a recorded
    estimate). Times are UTC ISO strings; tokens as the endpoints billed them.

    Raises:
        ioa_synth.runs.manifest.ManifestError: no readable ``run.json`` of an evaluate run.
    """
    manifest = read_manifest(out_dir, "evaluate")
    ids = run_cases(manifest.args, manifest.fingerprint_parts.get("inputs") or {})
    scored, failed = 0, []
    for case_id in ids:
        record = read_record(out_dir, case_id)
        if record is None:
            continue
        if record.status == "scored":
            scored += 1
        else:
            failed.append({"case_id": case_id, "error": record.error})
    report: dict[str, Any] = {
        "kind": "evaluate", "folder": str(out_dir), "command": manifest.command,
        "settings": manifest.settings.as_json(),
        "components": {name: (c or {}).get("model") or (f"questions from {c['questions_from']}" if
                                                         (c or {}).get("questions_from") else None)
                       for name, c in manifest.components.items()},
        "started_at": manifest.started_at, "finished_at": manifest.finished_at,
        "resumed_at": (manifest.model_extra or {}).get("resumed_at"),
        "cases": {"total": len(ids), "scored": scored, "failed": len(failed),
                  "to_do": len(ids) - scored - len(failed)},
        "failed_cases": failed, "catalog": "read", "tokens": None, "spend": None}
    try:
        with reading(out_dir, [EVALUATE_TABLES]) as (cat, snapshot):
            report["catalog"] = "snapshot" if snapshot else "read"
            report["tokens"] = [{"component": r.pop("role"), **r} for r in token_use(cat, by=COMPONENT_SQL)]
            report["spend"] = spend_report(cat, component_of)
    except FileNotFoundError:
        report["catalog"] = "missing"
    return report


def results_status_tables(report: dict[str, Any]) -> list[Table | str]:
    """Rich tables (and note lines) of a :func:`results_status`: cases, failed cases,
    tokens per component, the estimate beside what was spent."""
    c, s = report["cases"], report["settings"]
    out: list[Table | str] = [
        f"{report['folder']}: evaluate --mode {s.get('mode', '?')}, access {s.get('access', '?')}, "
        f"{plural(s.get('rollouts', 1), 'rollout')}; {when(report)}",
        "components: " + ", ".join(f"{n}: {m}" for n, m in report["components"].items())]
    cases = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("cases", "scored", "failed", "to do", "total"):
        cases.add_column(col, justify="left" if col == "cases" else "right", no_wrap=True)
    cases.add_row(f"{c['scored'] + c['failed']}/{c['total']} done", str(c["scored"]), str(c["failed"]),
                  str(c["to_do"]), str(c["total"]))
    out.append(cases)
    if report["failed_cases"]:
        failed = Table(title="Failed cases (run the same evaluate again to retry them)", box=box.SIMPLE_HEAD,
                       pad_edge=False)
        failed.add_column("case", no_wrap=True)
        failed.add_column("error", overflow="fold")
        for f in report["failed_cases"][:FAILED_SHOWN]:
            error = " ".join((f["error"] or "").split())
            failed.add_row(f["case_id"], error[:ERROR_SHOWN] + ("..." if len(error) > ERROR_SHOWN else ""))
        more = len(report["failed_cases"]) - FAILED_SHOWN
        if more > 0:
            failed.add_row(f"(and {more} more: status --json)", "")
        out.append(failed)
    return out + calls_and_spend(report)
