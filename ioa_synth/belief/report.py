"""``ioa-synth belief report``: ``summary.json`` (one entry per condition
``"<model>|<source>|k=<k>"``, see :mod:`.metrics`) and ``curves.png`` (private infection
per step, one line per condition) from a results folder's conversation records."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from ioa_synth.belief.metrics import condition_metrics
from ioa_synth.core.atomic import write_bytes_atomic, write_json_atomic
from ioa_synth.runs.manifest import Manifest, ManifestError, read_manifest


class ReportError(ValueError):
    """A folder that holds no study results."""


#: What a conversation record holds at least (see docs/belief.md, Records).
RECORD_KEYS = ("item", "k", "agents", "turns", "probes")


def belief_manifest(out: Path) -> Manifest:
    """``out/run.json``, the manifest ``belief run`` wrote (:func:`ioa_synth.runs.manifest.read_manifest`).

    Raises:
        ReportError: no or an unreadable run.json, or one another command wrote (the
            message names the command: an evaluate results folder is not a study's).
    """
    try:
        return read_manifest(out, "belief")
    except ManifestError as exc:
        raise ReportError(str(exc)) from None


def read_conversations(out: Path) -> list[dict[str, Any]]:
    """Every conversation record under ``out/conversations`` (sorted by file name).

    Raises:
        ReportError: not a belief results folder (:func:`belief_manifest`), no
            conversation, or an unreadable record or one that is not a conversation.
    """
    belief_manifest(out)
    convs = []
    for path in sorted((out / "conversations").glob("*.json")):
        try:
            conv = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ReportError(f"{path}: unreadable conversation record ({exc})") from exc
        missing = [k for k in RECORD_KEYS if k not in conv] if isinstance(conv, dict) else list(RECORD_KEYS)
        if missing:
            raise ReportError(f"{path}: not a conversation record (no {', '.join(missing)})")
        convs.append(conv)
    if not convs:
        raise ReportError(f"{out}: no finished conversation yet (conversations/ is empty)")
    return convs


def agent_model(out: Path) -> str:
    """The agents' model named in ``out/run.json`` (``components.agent.model``)."""
    agent = belief_manifest(out).components.get("agent")
    model = agent.get("model") if isinstance(agent, dict) else None
    if model is None:
        raise ReportError(f"{out / 'run.json'} names no agent model (components.agent.model)")
    return str(model)


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
