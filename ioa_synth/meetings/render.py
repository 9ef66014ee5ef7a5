"""The live-meeting report as terminal tables (rich) and as ``report.md``; the same rows
for both, from :func:`ioa_synth.meetings.report.build_report`."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ioa_synth.reports.output import NA, fmt

SESSION_COLUMNS = ("detector", "set", "questions", "divergent", "validated", "validity", "best votes", "discovery",
                   "willingness", "pooled recall")
ACROSS_COLUMNS = ("detector", "sessions", "validated / session", "validity", "best votes", "discovery",
                  "willingness", "pooled recall")
PAIR_COLUMNS = ("a", "b", "measure", "sessions", "mean a", "mean b", "b - a", "95% CI", "p")


def _pct(x: float | None) -> str:
    return fmt(x, percent=True)


def session_rows(result: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per detector of a session."""
    return [(name, d["label"], str(d["questions"]), str(d["divergent"]), str(d["validated"]), _pct(d["validity_rate"]),
             str(d["best_votes"]), fmt(d["discovery"]), fmt(d["willingness"]), _pct(d["pooled_recall"]))
            for name, d in result["detectors"].items()]


def across_rows(across: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per detector over all sessions."""
    return [(name, str(d["sessions"]), fmt(d["validated"]), _pct(d["validity_rate"]), str(d["best_votes"]),
             fmt(d["discovery"]), fmt(d["willingness"]), _pct(d["pooled_recall"]))
            for name, d in across["detectors"].items()]


def pair_rows(across: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per detector pair and compared measure, plus the best-set row (+1/0/−1)."""
    rows = []
    for pair in across["pairs"]:
        for metric, t in pair["tests"].items():
            ci = NA if t["ci_low"] is None else f"[{fmt(t['ci_low'], 3)}, {fmt(t['ci_high'], 3)}]"
            rows.append((pair["a"], pair["b"], metric, str(t["n"]), fmt(t["mean_a"], 3), fmt(t["mean_b"], 3),
                         fmt(t["diff"], 3), ci, fmt(t["p"], 4)))
        best = pair["best_set"]
        rows.append((pair["a"], pair["b"], "best set (+1 a / 0 / -1 b)", str(pair["sessions"]), "", "", "",
                     f"+1: {best['a_better']}, 0: {best['tie']}, -1: {best['b_better']}", ""))
    return rows


def _table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> Table:
    table = Table(title=title, title_justify="left")
    for c in columns:
        table.add_column(c, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def tables(report: dict[str, Any]) -> list[Table]:
    """Terminal tables: one per session, the detectors across sessions, the pairs."""
    out = [_table(f"{r['session']} ({r['participants']} participants, rule {report['rule']})", SESSION_COLUMNS,
                  session_rows(r)) for r in report["sessions"]]
    out.append(_table(f"Across {len(report['sessions'])} session(s)", ACROSS_COLUMNS, across_rows(report["across"])))
    if report["across"]["pairs"]:
        out.append(_table("Detector pairs: paired bootstrap over sessions (10,000 resamples, seed 20260516)",
                          PAIR_COLUMNS, pair_rows(report["across"])))
    return out


def _md(columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(report: dict[str, Any]) -> str:
    """``report.md``: the same tables as the terminal, in Markdown."""
    parts = [f"# Live-meeting report\n\nRule for a validated disagreement: **{report['rule']}**; pooled recall "
             f"{'from the merge judge' if report['merge_judge'] else 'not computed (no merge judge)'}."]
    for r in report["sessions"]:
        parts.append(f"## Session {r['session']} ({r['participants']} participants)\n\n"
                     + _md(SESSION_COLUMNS, session_rows(r)))
    parts.append(f"## Across {len(report['sessions'])} session(s)\n\n" + _md(ACROSS_COLUMNS, across_rows(report["across"])))
    if report["across"]["pairs"]:
        parts.append("## Detector pairs\n\nPaired bootstrap with the session as unit (10,000 resamples, seed "
                     "20260516, two-sided p, 95% percentile CI of the mean difference b - a); best set per session "
                     "+1 when a got more best-set votes, -1 when b did.\n\n" + _md(PAIR_COLUMNS, pair_rows(report["across"])))
    return "\n\n".join(parts) + "\n"
