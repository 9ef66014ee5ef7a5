"""Terminal output of ``ioa-synth evaluate``: the progress bar (the shared
:class:`ioa_synth.reports.progress.BuildProgress`, counting scored/failed cases) and the
closing table of percentages."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ioa_synth.reports.output import fmt
from ioa_synth.reports.progress import BuildProgress


class EvalProgress(BuildProgress):
    """One bar over the cases of a run, with scored and failed counts and tokens."""

    def _stats(self) -> str:
        c = self.counts
        return f"[green]{c.get('scored', 0)} scored[/] [red]{c.get('failed', 0)} failed[/] {self._tokens:,} tokens"


def summary_table(summary: dict[str, Any], title: str) -> Table:
    """Rows: all scored cases, then per domain and per task type (P/R/F1 in %), then
    per-type recall; the caption gives mean K, mean |B| and the category-C breakdown."""
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
    c = summary["c_breakdown"]
    t.caption = (f"mean K {summary['mean_k']:.2f}, mean |B| {summary['mean_b']:.2f}; category C: "
                 + ", ".join(f"{k} {v}" for k, v in c.items()))
    return t
