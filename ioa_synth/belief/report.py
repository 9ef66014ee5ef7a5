"""``ioa-synth belief report``: ``summary.json`` (one entry per condition
``"<model>|<source>|k=<k>"``, see :mod:`.metrics`) and ``curves.png`` (private infection
per step, one line per condition) from a results folder's conversation records."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from ioa_synth.belief.metrics import condition_metrics
from ioa_synth.store.atomic import write_bytes_atomic, write_json_atomic


class ReportError(ValueError):
    """A folder that holds no study results."""


def read_conversations(out: Path) -> list[dict[str, Any]]:
    """Every conversation record under ``out/conversations`` (sorted by file name).

    Raises:
        ReportError: no run.json / no conversation, or an unreadable record.
    """
    if not (out / "run.json").is_file():
        raise ReportError(f"{out}: no run.json; not a 'belief run' results folder")
    convs = []
    for path in sorted((out / "conversations").glob("*.json")):
        try:
            convs.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as exc:
            raise ReportError(f"{path}: unreadable conversation record ({exc})") from exc
    if not convs:
        raise ReportError(f"{out}: no finished conversation yet (conversations/ is empty)")
    return convs


def agent_model(out: Path) -> str:
    try:
        run = json.loads((out / "run.json").read_text(encoding="utf-8"))
        return str(run["components"]["agent"]["model"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ReportError(f"{out / 'run.json'}: unreadable ({exc})") from exc


def summarize(out: Path) -> dict[str, Any]:
    """The ``summary.json`` content of ``out``."""
    model = agent_model(out)
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for conv in read_conversations(out):
        groups[(conv["item"]["source"], int(conv["k"]))].append(conv)
    conditions = {f"{model}|{source}|k={k}": condition_metrics(convs)
                  for (source, k), convs in sorted(groups.items())}
    return {"model": model, "conditions": conditions}


#: Room below 0 and above 1 on the share axis, so a curve at 0 (no infection, e.g. k = 0) or
#: at 1 is drawn above the axis line instead of hidden on it.
Y_MARGIN = 0.04


def curves_figure(summary: dict[str, Any]):
    """The matplotlib ``Figure`` of the infection curves (headless): steps are whole rounds,
    so the step axis has integer ticks only; the share axis runs from just below 0 to just
    above 1 (:data:`Y_MARGIN`), so a curve that stays at 0 stays visible."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    for key, entry in summary["conditions"].items():
        ys = [float("nan") if v is None else v for v in entry["curve"]]
        ax.plot(range(len(ys)), ys, marker="o", markersize=3, label=key)
    ax.set_xlabel("step (0 = before the discussion, t = after round t)")
    ax.set_ylabel("share of benign agents privately infected")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(-Y_MARGIN, 1 + Y_MARGIN)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return fig


def plot_curves(summary: dict[str, Any]) -> bytes:
    """PNG of :func:`curves_figure`."""
    import io

    buf = io.BytesIO()
    curves_figure(summary).savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def write_report(out: Path) -> dict[str, Any] | None:
    """Write ``summary.json`` and ``curves.png`` into ``out``; ``None`` when no conversation
    is finished yet."""
    try:
        summary = summarize(out)
    except ReportError:
        return None
    write_json_atomic(out / "summary.json", summary)
    write_bytes_atomic(out / "curves.png", plot_curves(summary))
    return summary


def _pct(v: Any) -> str:
    from ioa_synth.reports.output import fmt

    return fmt(v, percent=True)


def summary_table(summary: dict[str, Any]):
    """A rich table of the headline rates per condition."""
    from rich.table import Table

    cols = ("fpi", "initial_infection", "turn_infection", "public_endorsement", "public_correction",
            "truth_knower_correction")
    table = Table(title="belief study")
    table.add_column("condition")
    table.add_column("items", justify="right")
    for c in cols:
        table.add_column(c.replace("_", " "), justify="right")
    table.add_column("hidden infection", justify="right")
    for key, e in summary["conditions"].items():
        table.add_row(key, str(e["n_items"]), *(_pct(e[c]) for c in cols), _pct(e["categories"]["hidden_infection"]))
    return table
