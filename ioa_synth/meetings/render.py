"""The live-meeting report as terminal tables (rich) and as ``report.md``; the same rows
for both, from :func:`ioa_synth.meetings.report.build_report`."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ioa_synth.reports.output import NA, fmt

SESSION_COLUMNS = ("detector", "set", "questions", "divergent", "validated", "validity", "best votes", "discovery",
                   "willingness", "pooled recall")
#: The paper's aggregation (pooled over sessions; Likert per participant).
ACROSS_COLUMNS = ("detector", "sessions", "participants", "divergent", "validated", "Valid: validated / session",
                  "Validity (pooled)", "PR (pooled)", "best votes", "sessions won", "discovery (per participant)",
                  "willingness (per participant)")
#: The extra view: plain means of the per-session values.
PER_SESSION_COLUMNS = ("detector", "sessions", "validated (mean)", "validity (mean)", "pooled recall (mean)",
                       "discovery (mean)", "willingness (mean)")
PAIR_COLUMNS = ("a", "b", "measure", "sessions", "mean a", "mean b", "b - a", "95% CI", "p")


def _pct(x: float | None) -> str:
    return fmt(x, percent=True)


def session_rows(result: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per detector of a session."""
    return [(name, d["label"], str(d["questions"]), str(d["divergent"]), str(d["validated"]), _pct(d["validity_rate"]),
             str(d["best_votes"]), fmt(d["discovery"]), fmt(d["willingness"]), _pct(d["pooled_recall"]))
            for name, d in result["detectors"].items()]


def _recall(d: dict[str, Any]) -> str:
    return _pct(d["pooled_recall"]) + ("" if d["found"] is None else f" ({d['found']}/{d['distinct']})")


def across_rows(across: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per detector over all sessions, pooled as the paper."""
    return [(name, str(d["sessions"]), str(d["participants"]), str(d["divergent"]), str(d["validated"]),
             fmt(d["validated_per_session"]), _pct(d["validity_rate"]), _recall(d), str(d["best_votes"]),
             str(d["sessions_won"]), fmt(d["discovery"]), fmt(d["willingness"]))
            for name, d in across["detectors"].items()]


def per_session_rows(across: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per detector: plain means of the per-session values (extra view)."""
    return [(name, str(d["sessions"]), fmt(d["validated"]), _pct(d["validity_rate"]), _pct(d["pooled_recall"]),
             fmt(d["discovery"]), fmt(d["willingness"])) for name, d in across["per_session_means"].items()]


def _ci(t: dict[str, Any]) -> str:
    return NA if t["ci_low"] is None else f"[{fmt(t['ci_low'], 3)}, {fmt(t['ci_high'], 3)}]"


def pair_rows(across: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per detector pair and compared measure, plus the best-set row (+1/0/−1)."""
    rows = []
    for pair in across["pairs"]:
        for metric, t in pair["tests"].items():
            rows.append((pair["a"], pair["b"], f"{metric} (per session)", str(t["n"]), fmt(t["mean_a"], 3),
                         fmt(t["mean_b"], 3), fmt(t["diff"], 3), _ci(t), fmt(t["p"], 4)))
        best = pair["best_set"]
        t = best.get("test")
        rows.append((pair["a"], pair["b"], f"best set (+1 a: {best['a_better']}, 0: {best['tie']}, -1 b: "
                     f"{best['b_better']}; share of sessions won)", str(pair["sessions"]),
                     fmt(t and t["mean_a"], 3), fmt(t and t["mean_b"], 3), fmt(t and t["diff"], 3),
                     _ci(t) if t else NA, fmt(t and t["p"], 4)))
    return rows


def _table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> Table:
    table = Table(title=title, title_justify="left")
    for c in columns:
        table.add_column(c, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def _winners(across: dict[str, Any]) -> str:
    won = {name: d["sessions_won"] for name, d in across["detectors"].items()}
    return ("best set: sessions won by majority of votes " + ", ".join(f"{n} {k}" for n, k in won.items())
            + f", {across['best_set']['ties']} tied (no winner)")


def tables(report: dict[str, Any]) -> list[Table]:
    """Terminal tables: one per session, the detectors across sessions, the pairs."""
    out = [_table(f"{r['session']} ({r['participants']} participants, rule {report['rule']})", SESSION_COLUMNS,
                  session_rows(r)) for r in report["sessions"]]
    across = report["across"]
    out.append(_table(f"Across {len(report['sessions'])} session(s), as the paper: Valid, Validity and PR pooled "
                      f"over sessions, Likert per participant; {_winners(across)}", ACROSS_COLUMNS, across_rows(across)))
    out.append(_table("Extra view (not the paper's): plain means of the per-session values", PER_SESSION_COLUMNS,
                      per_session_rows(across)))
    if across["pairs"]:
        out.append(_table("Detector pairs: paired bootstrap over sessions on per-session values (10,000 resamples, "
                          "seed 20260516, two-sided p)", PAIR_COLUMNS, pair_rows(across)))
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
    across = report["across"]
    parts.append(f"## Across {len(report['sessions'])} session(s), as the paper\n\n"
                 "Valid = validated questions summed over sessions / sessions; Validity = validated / divergent and "
                 "PR = distinct disagreements found / all distinct disagreements, each pooled (summed) over sessions; "
                 "discovery and willingness = mean over every participant of every session; best votes summed over "
                 f"participants; a session is won by the set with more votes than every other set (a tie for the most "
                 f"votes: no winner). {_winners(across).capitalize()}.\n\n" + _md(ACROSS_COLUMNS, across_rows(across)))
    parts.append("## Extra view: per-session means\n\nNot the paper's aggregation: the plain mean of each "
                 "detector's per-session values (a session where a value is undefined, such as a validity rate "
                 "without divergent questions, is left out of that mean).\n\n" + _md(PER_SESSION_COLUMNS, per_session_rows(across)))
    if across["pairs"]:
        parts.append("## Detector pairs\n\nPaired bootstrap with the session as unit on the per-session values "
                     "(10,000 resamples, seed 20260516, two-sided p, 95% percentile CI of the mean difference b - a); "
                     "best set per session +1 when a got more best-set votes, -1 when b did, tested as the share of "
                     "sessions b won minus the share a won.\n\n" + _md(PAIR_COLUMNS, pair_rows(across)))
    return "\n\n".join(parts) + "\n"
