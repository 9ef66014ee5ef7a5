"""Summaries of a build directory (``status``, and the table printed at the end of ``build``).

:func:`status_report` gives, machine-readable: per split and cell, counts by status;
θ pass rates per stage and rubric dimension, first attempt and after regeneration
(:mod:`ioa_synth.build.passrates`); discard reasons and failure kinds; tokens per component;
the distribution of accepted misalignment types next to the paper's
(``cells.PAPER_MA_TYPE_DISTRIBUTION``, paper App. B.5); judge health per judge, stage and
dimension (share of verdicts at the maximum, inconsistent verdicts).
:func:`status_tables` renders it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from rich import box
from rich.table import Table

from ioa_synth.runs.catalog import Catalog
from ioa_synth.protocol.cells import MA_TYPES, PAPER_MA_TYPE_DISTRIBUTION
from ioa_synth.build.importer import imported_counts
from ioa_synth.build.passrates import judge_health, pass_rates
from ioa_synth.build.planted import type_mix_report
from ioa_synth.build.record_files import record_file
from ioa_synth.reports.mixtable import type_mix_table
from ioa_synth.reports.output import fmt
from ioa_synth.reports.spend_table import spend_table
from ioa_synth.reports.status_tables import token_table
from ioa_synth.runs.folder_status import token_use
from ioa_synth.runs.spend import spend_report
from ioa_synth.text.plural import plural

STATUSES = ("accepted", "discarded", "failed", "pending")
#: Counter key of the accepted points that have no type (not a taxonomy name).
UNTYPED_KEY = "\0untyped"


def cell_counts(catalog: Catalog, split: str | None = None) -> list[dict[str, Any]]:
    """Rows ``{split, domain, task_type, accepted, discarded, failed, pending, total}``
    ordered by split, domain, task type."""
    where, params = ("WHERE split = ?", [split]) if split else ("", [])
    rows = catalog.query_dicts(
        "SELECT split, domain, task_type, "
        + ", ".join(f"count(*) FILTER (WHERE status = '{s}') AS {s}" for s in STATUSES)
        + f", count(*) AS total FROM cases {where} GROUP BY ALL ORDER BY split, domain, task_type", params)
    return rows


def cell_table(rows: list[dict[str, Any]], title: str = "Cases per cell") -> Table:
    """A rich table of :func:`cell_counts` rows with a total line, legible at 80 columns:
    no vertical rules, the cell as ``domain / task_type`` (wrapped at the slash when
    narrow), and no column narrower than its longest word, so no word is split."""
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    cells = [f"{r['domain']} / {r['task_type']}" for r in rows]
    longest = max((len(w) for c in cells for w in c.split()), default=4)
    table.add_column("split", no_wrap=True)
    table.add_column("domain / task type", min_width=longest)
    for col in (*STATUSES, "total"):
        table.add_column(col, justify="right", no_wrap=True, min_width=len(col))
    for r, cell in zip(rows, cells):
        table.add_row(r["split"], cell, *(str(r[c]) for c in (*STATUSES, "total")))
    if rows:
        table.add_section()
        table.add_row("all", "", *(str(sum(r[c] for r in rows)) for c in (*STATUSES, "total")))
    return table


_STAGE = re.compile(r"stage (\d) failed twice")


def reason_kind(reason: str | None) -> str:
    """Category of a discard reason, from its last attempt: ``stage N: below theta_N``,
    ``stage N: invalid output``, ``stage N: content gates`` or ``other``."""
    m = _STAGE.search(reason or "")
    if not m:
        return "near-duplicate" if (reason or "").startswith("near-duplicate of") else "other"
    last = (reason or "").rsplit("|", 1)[-1]
    if "invalid output" in last:
        return f"stage {m.group(1)}: invalid output"
    if "gate failures" in last:
        return f"stage {m.group(1)}: content gates"
    if "judged type differs" in last and "below" not in last:
        return f"stage {m.group(1)}: judged type differs from plan"
    if "near-duplicate of" in last:
        return "near-duplicate"
    theta = re.search(r"below (\S+)", last)
    return f"stage {m.group(1)}: below {theta.group(1)}" if theta else f"stage {m.group(1)}: other"


def discards(catalog: Catalog) -> dict[str, dict[str, dict[str, int]]]:
    """``{split: {"discarded": {kind: n}, "failed": {error kind: n}}}``; a failure's kind
    is the text before its first colon (e.g. ``APIConnectionError``)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for split, status, reason, error in catalog.execute(
            "SELECT split, status, discard_reason, error FROM cases WHERE status IN ('discarded', 'failed')"):
        kind = reason_kind(reason) if status == "discarded" else (error or "unknown").split(":", 1)[0][:80]
        bucket = out.setdefault(split, {"discarded": {}, "failed": {}})[status]
        bucket[kind] = bucket.get(kind, 0) + 1
    return out


def ma_types(catalog: Catalog) -> dict[str, dict[str, Any]]:
    """Per split, the types of the accepted misalignment points (read from the record
    files) next to the paper's test-split shares: ``{split: {"points": n, "untyped": n,
    "unreadable_records": n, "types": [{type, count, share, paper_share}]}}``. ``points``
    counts the typed points the shares are of; ``untyped`` those without a type (records
    brought in by ``build import`` from the released data, which labels no type)."""
    out: dict[str, dict[str, Any]] = {}
    per_split: dict[str, Counter] = {}
    unreadable: Counter = Counter()
    accepted = catalog.execute("SELECT split, case_id FROM cases WHERE status = 'accepted' ORDER BY case_id")
    for split, case_id in accepted:
        counts = per_split.setdefault(split, Counter())
        try:
            record = json.loads(record_file(catalog, case_id).read_text(encoding="utf-8"))
            points = record["profiles"]["misalignment_points"]
            counts.update(str(p.get("type") or UNTYPED_KEY) for p in points)
        except (OSError, TypeError, ValueError, KeyError, AttributeError):
            unreadable[split] += 1
    for split, counts in sorted(per_split.items()):
        untyped = counts.pop(UNTYPED_KEY, 0)
        total = sum(counts.values())
        out[split] = {"points": total, "untyped": untyped, "unreadable_records": unreadable[split], "types": [
            {"type": t, "count": counts[t], "share": counts[t] / total if total else None,
             "paper_share": PAPER_MA_TYPE_DISTRIBUTION.get(t)} for t in MA_TYPES]}
    return out


def status_report(catalog: Catalog) -> dict[str, Any]:
    """Machine-readable status: ``{"run", "cells", "totals", "tokens", "pass_rates", "discards",
    "ma_types", "judge_health", "type_mix", "imported", "spend"}`` (see the module docstring;
    ``imported``: ``{split: cases}`` brought in by ``build import``, counted as accepted in
    ``cells``; ``spend``: the estimate the build started from beside what was spent since,
    or ``None``; ``run``: :func:`build_runs`)."""
    cells = cell_counts(catalog)
    totals = {s: sum(r[s] for r in cells) for s in (*STATUSES, "total")}
    return {"run": build_runs(catalog), "cells": cells, "totals": totals, "tokens": token_use(catalog),
            "pass_rates": pass_rates(catalog), "discards": discards(catalog), "ma_types": ma_types(catalog),
            "judge_health": judge_health(catalog), "type_mix": type_mix_report(catalog),
            "imported": imported_counts(catalog),
            "spend": spend_report(catalog, lambda role: role.split(":", 1)[0])}


def build_runs(catalog: Catalog) -> dict[str, Any] | None:
    """The build's runs from the catalog's ``runs`` table: ``{"runs": N, "first_started_at",
    "last_started_at", "last_finished_at" (``None`` while it runs or when it was killed),
    "last_stopped" (what stopped the last run - ``"KeyboardInterrupt: ..."`` for a Ctrl-C - or
    ``None`` when it ran to the end), "components": {name: model}}`` (the models of the last
    run), or ``None`` before any run (a folder of imported records only). A run stopped by
    Ctrl-C or an error also gets its ``finished_at`` (the time it stopped)."""
    rows = catalog.query_dicts("SELECT started_at, finished_at, fingerprint_json, summary_json FROM runs "
                               "WHERE command = 'build' ORDER BY started_at")
    if not rows:
        return None
    try:
        parts = json.loads(rows[-1]["fingerprint_json"] or "{}").get("components", {})
    except (ValueError, AttributeError):
        parts = {}
    try:
        stopped = json.loads(rows[-1]["summary_json"] or "{}").get("stopped")
    except (ValueError, AttributeError):
        stopped = None
    return {"runs": len(rows), "first_started_at": str(rows[0]["started_at"]),
            "last_started_at": str(rows[-1]["started_at"]),
            "last_finished_at": None if rows[-1]["finished_at"] is None else str(rows[-1]["finished_at"]),
            "last_stopped": stopped if isinstance(stopped, str) else None,
            "components": {name: (c or {}).get("model") for name, c in parts.items() if isinstance(c, dict)}}


def run_line(run: dict[str, Any] | None) -> str | None:
    """One line for the top of ``status``: who made the build and when."""
    if run is None:
        return None
    models = ", ".join(f"{name} {model or '?'}" for name, model in run["components"].items())
    if not run["last_finished_at"]:
        ended = "running or killed"
    elif run.get("last_stopped"):
        why = "interrupted" if run["last_stopped"].startswith(("KeyboardInterrupt", "RunInterrupted")) else "stopped by an error"
        ended = f"{why} {run['last_finished_at'][:19]} (the same command resumes)"
    else:
        ended = f"finished {run['last_finished_at'][:19]}"
    runs = f"{plural(run['runs'], 'run')}, the first started {run['first_started_at'][:19]}, " if run["runs"] > 1 else ""
    return f"build: {runs}last started {run['last_started_at'][:19]}, {ended} (UTC); {models}"


def _pct(value: float | None) -> str:
    return fmt(value, percent=True)


def status_tables(report: dict[str, Any]) -> list[Table | str]:
    """A line on who made the build and when (:func:`run_line`), then rich tables of a
    :func:`status_report`: cells, pass rates, discards, tokens, MA types."""
    line = run_line(report.get("run"))
    tables: list[Any] = ([line] if line else []) + [cell_table(report["cells"])]
    if report.get("imported"):
        imp = Table(title="Imported cases (ioa-synth build import)")
        for col in ("split", "cases", "what they are"):
            imp.add_column(col, justify="right" if col == "cases" else "left")
        for split, n in report["imported"].items():
            imp.add_row(split, str(n), "IoA-Suite records accepted as given: not generated or judged here, so "
                                       "left out of the pass rates and judge health")
        tables.append(imp)
    rates = Table(title="θ pass rates (build judge)",
                  caption="(all: θ) counts every case that reached the stage (a case still running: once the stage "
                          "passed); an attempt stopped by the content gates was never judged and counts as not "
                          "meeting θ. Dimensions count judged items: at the first attempt every case's, a running one's "
                          "too; at the final attempt settled stages only. Meeting θ is not passing the stage: "
                          "an output whose judged disagreement types differ from the plan still fails (see the "
                          "discard reasons), so fewer cases may pass a stage than meet θ.")
    for col in ("split", "stage", "dimension", "cases reached, or items judged 1st/final", "first attempt",
                "after regeneration"):
        rates.add_column(col, justify="left" if col in ("split", "dimension") else "right")
    for split, stages in report["pass_rates"].items():
        for key, st in stages.items():
            rates.add_row(split, key[-1], "(all: θ)", str(st["cases"]), _pct(st["first_attempt"]),
                          _pct(st["after_regeneration"]))
            for dim, d in st["dimensions"].items():
                rates.add_row("", "", dim, f"{d['items_first']}/{d['items_final']}", _pct(d["first_attempt"]),
                              _pct(d["after_regeneration"]))
        rates.add_section()
    if not report["pass_rates"]:
        rates.add_row("(no case judged yet)", *[""] * 5)
    tables.append(rates)
    disc = Table(title="Discard reasons and failures")
    for col in ("split", "status", "kind", "cases"):
        disc.add_column(col, justify="right" if col == "cases" else "left")
    for split, kinds in report["discards"].items():
        for status, counts in kinds.items():
            for kind, n in sorted(counts.items(), key=lambda kv: -kv[1]):
                disc.add_row(split, status, kind, str(n))
    if not report["discards"]:
        disc.add_row("(none)", "", "", "0")
    tables.append(disc)
    tables.append(_health_table(report["judge_health"]))
    tables.append(token_table(report["tokens"]))
    for split, dist in report["ma_types"].items():
        untyped = f"; {dist['untyped']} imported without a type, left out" if dist.get("untyped") else ""
        t = Table(title=f"Accepted misalignment types, {split} ({plural(dist['points'], 'point')}{untyped}) vs the "
                        "paper's test split")
        for col in ("type", "count", "share", "paper"):
            t.add_column(col, justify="left" if col == "type" else "right")
        for r in dist["types"]:
            t.add_row(r["type"], str(r["count"]), _pct(r["share"]), _pct(r["paper_share"]))
        tables.append(t)
    tables += [type_mix_table(split, mix) for split, mix in report.get("type_mix", {}).items()]
    spend = report.get("spend")
    if spend:
        tables.append(spend_table(spend["estimate"], spend["spent"],
                                  f"Estimated (when the build started, {spend['estimated_at'][:19]}) and spent since"))
    totals = report.get("totals") or {}
    if totals.get("total") and not totals.get("accepted") and not totals.get("pending"):
        tables.append(NOTHING_ACCEPTED)
    return tables


#: The last line of ``status`` of a finished build that accepted nothing: what to do next.
NOTHING_ACCEPTED = ("No case was accepted: the discard reasons above say why, and 'ioa-synth show --out DIR' prints "
                    "the case that got furthest. A small model meets the gates and θ on some cases, not all "
                    "(docs/build.md, the demo build); run more seeds or a capable endpoint (docs/models.md), or "
                    "bring in released records with 'ioa-synth build import' to try check, export and evaluate.")


def _health_table(health: dict[str, list[dict[str, Any]]]) -> Table:
    table = Table(title="Judge health: verdicts at the maximum (a judge that always gives it is not judging) "
                        "and inconsistent verdicts")
    for col in ("judge", "stage", "dimension", "verdicts", "at maximum", "share"):
        table.add_column(col, justify="left" if col in ("judge", "dimension") else "right")
    flags = {(f["judge_role"], f["stage"]): f for f in health["inconsistency"]}
    keys = sorted({(r["judge_role"], r["stage"]) for r in health["dimensions"]} | set(flags))
    for role, stage in keys:
        for r in health["dimensions"]:
            if (r["judge_role"], r["stage"]) == (role, stage):
                always = r["verdicts"] >= 5 and r["at_max"] == r["verdicts"]
                table.add_row(role, str(stage), r["dimension"], str(r["verdicts"]), str(r["at_max"]),
                              _pct(r["share_at_max"]) + (" (always)" if always else ""))
        f = flags.get((role, stage))
        if f:
            table.add_row(role, str(stage), "inconsistent verdicts", str(f["verdicts"]), "",
                          f"{f['inconsistent']} flagged", style="red" if f["inconsistent"] else None)
        table.add_section()
    if not keys:
        table.add_row("(no verdicts)", "", "", "0", "", "-")
    return table
