"""Tables ``ioa-synth status`` shows of any results folder (the plain dicts of
:func:`ioa_synth.runs.folder_status.results_status`): the run, its progress, calls and
tokens per component, the estimate beside what was spent."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table

from ioa_synth.reports.output import NA
from ioa_synth.reports.spend_table import spend_table

#: The note shown when ``status`` read a copy of a catalog a run is writing.
SNAPSHOT_NOTE = ("a run is writing this folder: read a copy of its catalog and journal taken now (run "
                 "status again for newer figures)")


def _count(value: int | None) -> str:
    return NA if value is None else f"{value:,}"


def token_table(rows: list[dict[str, Any]], name: str = "role") -> Table:
    """"Tokens per component" of ``token_use`` rows (the component under key ``name``)."""
    tok = Table(title="Tokens per component")
    for col in ("component", "calls tried", "failed", "retried", "timed out", "prompt tokens", "completion tokens",
                "of which failed tries"):
        tok.add_column(col, justify="left" if col == "component" else "right")
    for r in rows:
        tok.add_row(r[name], str(r["calls"]), str(r["failed_calls"]), str(r["retried_calls"]),
                    str(r["timed_out_calls"]), _count(r["prompt_tokens"]), _count(r["completion_tokens"]),
                    f"{r['failed_tokens']:,}")
    if not rows:
        tok.add_row("(no calls yet)", *[""] * 7)
    return tok


def progress_table(progress: dict[str, Any]) -> Table:
    """One row per group: done/total, then a column per status met in any group."""
    statuses = list(dict.fromkeys(s for g in progress["groups"] for s in g["statuses"]))
    unit = progress["unit"]
    table = Table(title=f"{unit[:1].upper()}{unit[1:]}s", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("", "done", *statuses):
        table.add_column(col, justify="left" if not col else "right", no_wrap=True)
    for g in progress["groups"]:
        total = "?" if g["total"] is None else str(g["total"])
        table.add_row(g["name"], f"{g['done']}/{total}", *(str(g["statuses"].get(s, 0)) for s in statuses))
    if len(progress["groups"]) > 1:
        table.add_section()
        total = "?" if progress["total"] is None else str(progress["total"])
        table.add_row("all", f"{progress['done']}/{total}",
                      *(str(sum(g["statuses"].get(s, 0) for g in progress["groups"])) for s in statuses))
    if not progress["groups"]:
        table.add_row(f"(no {unit} yet)", "0")
    return table


def when(report: dict[str, Any]) -> str:
    """``started T (last resumed R), finished F`` (or ``not finished (running or stopped)``)
    of a report with ``started_at``, ``resumed_at`` and ``finished_at``."""
    state = f"finished {report['finished_at']}" if report.get("finished_at") else "not finished (running or stopped)"
    resumed = f" (last resumed {report['resumed_at']})" if report.get("resumed_at") else ""
    return f"started {report.get('started_at') or '?'}{resumed}, {state}"


def calls_and_spend(report: dict[str, Any]) -> list[Table | str]:
    """The calls and tokens per component (or why there are none) and the estimate beside
    what was spent, of a report with ``catalog``, ``tokens`` and ``spend``."""
    out: list[Table | str] = [SNAPSHOT_NOTE] if report["catalog"] == "snapshot" else []
    if report["catalog"] == "missing":
        out.append("calls and spending: no catalog.duckdb here (no model call stored)")
    else:
        out.append(token_table(report["tokens"], name="component"))
    spend = report.get("spend")
    if spend:
        out.append(spend_table(spend["estimate"], spend["spent"],
                               f"Estimated (when the run started, {spend['estimated_at'][:19]}) and spent since"))
    return out


def results_status_tables(report: dict[str, Any]) -> list[Table | str]:
    """Note lines and tables of a ``results_status`` report."""
    head = f"{report['folder']}: {report['title']}" + (f"; {when(report)}" if report.get("command") else "")
    out: list[Table | str] = [head]
    if report.get("components"):
        out.append("components: " + ", ".join(f"{n}: {m or '-'}" for n, m in report["components"].items()))
    progress = report.get("progress")
    if progress is not None:
        out.append(progress_table(progress))
        out += progress["notes"]
    return out + calls_and_spend(report)
