"""Terminal output of ``ioa-synth evaluate``: the progress report (the shared
:class:`ioa_synth.reports.progress.BuildProgress` counting ``scored``/``failed`` cases: a
bar on a terminal, plain lines otherwise) and the closing table of percentages."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from ioa_synth.reports.output import fmt
from ioa_synth.reports.progress import BuildProgress


#: The outcomes of an evaluated case, in display order.
EVAL_STATUSES = ("scored", "failed")


def eval_progress(console: Console, total: int) -> BuildProgress:
    """Progress over ``total`` cases counting ``scored`` and ``failed`` (plain lines
    when ``console`` is not a terminal: one per finished case and a periodic summary)."""
    return BuildProgress(console, total=total, label="evaluate", statuses=EVAL_STATUSES)


def summary_table(summary: dict[str, Any], title: str) -> Table:
    """Rows: all scored cases, then per domain and per task type (P/R/F1 in %), then
    per-type recall, then for a series of meetings (``build --meetings K``) P/R/F1 after each
    meeting (recall pooled: points hit / points live then) and recall by MA age; the caption
    gives mean K, mean |B| and the category-C breakdown."""
    t = Table(title=title)
    for col in ("group", "cases", "precision", "recall", "F1"):
        t.add_column(col, justify="left" if col == "group" else "right")
    t.add_row("all", str(summary["cases"]["scored"]), *(fmt(summary[m], percent=True) for m in ("precision", "recall", "f1")))
    for key, label in (("by_domain", "domain"), ("by_task_type", "task type")):
        t.add_section()
        for name, g in summary[key].items():
            t.add_row(f"{label} {name}", str(g["cases"]), *(fmt(g[m], percent=True) for m in ("precision", "recall", "f1")))
    if summary["type_recall"]:
        t.add_section()
        for name, g in summary["type_recall"].items():
            t.add_row(f"MA type {name}", f"{g['hit']}/{g['total']} MAs", "", fmt(g["recall"], percent=True), "")
    if summary.get("by_meeting"):  # build --meetings K: recall of the points live after each meeting, by age
        t.add_section()
        for k, g in summary["by_meeting"].items():
            t.add_row(f"after meeting {k}", f"{g['probes']} probes", fmt(g["precision"], percent=True),
                      f"{fmt(g['recall'], percent=True)} ({g['hit']}/{g['live']})", fmt(g["f1"], percent=True))
        t.add_section()
        for a, g in summary["by_age"].items():
            t.add_row(f"MA age {a}", f"{g['live']} live", "", f"{fmt(g['recall'], percent=True)} ({g['hit']}/{g['live']})", "")
    c = summary["c_breakdown"]
    t.caption = (f"mean K {fmt(summary['mean_k'])}, mean |B| {fmt(summary['mean_b'])}; category C: "
                 + ", ".join(f"{k} {v}" for k, v in c.items()))
    return t
