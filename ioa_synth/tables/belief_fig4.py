"""belief-fig4: knowledge vs robustness (belief paper, Fig. 4), from ``belief run`` results
folders, as this toolkit reads the figure (its axes are not defined in the project's belief
notes, BELIEF.md):

- knowledge (x), per model and source: the share of benign agents whose private answer at
  step 0 (before any discussion, so no attacker has spoken) is labelled ``true``
  (``initial_knowledge`` of :mod:`ioa_synth.belief.metrics`), pooled over every conversation
  of that model and source in the folders given, whatever its k;
- robustness (y), per condition (model, source, k) with attackers (k > 0): 1 − FPI, the share
  of benign agents not infected at the final step (``belief report``'s FPI).

One point per condition with k > 0; the figure draws one series per k. The rows of the table
are the points; the PNG comes from :func:`figure_png` (matplotlib, headless).
"""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path
from typing import Any

from ioa_synth.belief.metrics import conversation_counts
from ioa_synth.stats.bootstrap import ratio_with_ci
from ioa_synth.belief.report import ReportError, agent_model, read_conversations
from ioa_synth.tables.belief_tables import BELIEF_RUN, conditions, read_summaries
from ioa_synth.tables.model import PaperTable, percent
from ioa_synth.tables.registry import Needs, TableError, TableSpec, register

#: Markers cycled over the series (one per k).
MARKERS = ("o", "s", "^", "D", "v", "P")

CAPTION = ("x, knowledge: benign agents whose private answer before any discussion (step 0) is labelled true, "
           "pooled per model and source over every k.\n"
           "y, robustness: 1 − FPI, benign agents not privately infected at the final step, per condition with "
           "attackers (k > 0).\nAxes as this toolkit reads the belief paper's Fig. 4 (docs/tables.md).")


def knowledge(folders: list[Path]) -> dict[tuple[str, str], tuple[float | None, int]]:
    """``{(model, source): (share, benign agents)}``: the step-0 ``initial_knowledge`` counts
    of every conversation of that model and source, pooled (``sum(knowing) / sum(agents)``,
    :func:`ioa_synth.stats.bootstrap.ratio_with_ci`)."""
    counts: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for folder in folders:
        try:
            model, convs = agent_model(folder), read_conversations(folder)
        except ReportError as exc:
            raise TableError(str(exc)) from None
        for conv in convs:
            counts[(model, conv["item"]["source"])].append(conversation_counts(conv).get("initial_knowledge", (0, 0)))
    out = {}
    for key, pairs in counts.items():
        value, _ = ratio_with_ci([n for n, _ in pairs], [d for _, d in pairs])
        out[key] = (value, sum(d for _, d in pairs))
    return out


def points(folders: list[Path]) -> list[dict[str, Any]]:
    """One point per condition with k > 0: ``model``, ``source``, ``k``, ``items``,
    ``agents`` (knowledge's denominator), ``knowledge``, ``fpi``, ``robustness`` (0-1 or ``None``).

    Raises:
        TableError: a folder the belief report refuses, a condition in two folders, or no
            condition with attackers.
    """
    summaries = read_summaries(folders)
    known = knowledge(folders)
    out = []
    for (model, source, k), e in conditions(summaries):
        if int(k) == 0:
            continue
        share, agents = known.get((model, source), (None, 0))
        fpi = e["fpi"]
        out.append({"model": model, "source": source, "k": int(k), "items": e["n_items"], "agents": agents,
                    "knowledge": share, "fpi": fpi, "robustness": None if fpi is None else 1 - fpi})
    if not out:
        raise TableError(f"no condition with attackers (k > 0) in {', '.join(map(str, folders))}: robustness is "
                         "1 − FPI under attack; run: ioa-synth belief run ... --attackers 0,1,3")
    return out


def figure_png(pts: list[dict[str, Any]]) -> bytes:
    """The scatter as PNG: knowledge (x, %) against robustness (y, %), one marker per k, each
    point named ``model / source``; points with an undefined value are left out."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 5.6))
    ax = fig.add_subplot()
    for i, k in enumerate(sorted({p["k"] for p in pts})):
        mine = [p for p in pts if p["k"] == k and p["knowledge"] is not None and p["robustness"] is not None]
        ax.scatter([100 * p["knowledge"] for p in mine], [100 * p["robustness"] for p in mine],
                   marker=MARKERS[i % len(MARKERS)], s=50, label=f"k = {k} attacker{'s' if k > 1 else ''}")
        for p in mine:
            ax.annotate(f"{p['model']} / {p['source']}", (100 * p["knowledge"], 100 * p["robustness"]),
                        textcoords="offset points", xytext=(5, 4), fontsize=7)
    ax.set_xlim(-4, 104)
    ax.set_ylim(-4, 104)
    ax.set_xlabel("knowledge: benign agents answering true before the discussion (%)")
    ax.set_ylabel("robustness: 1 − FPI (%)")
    ax.set_title("Knowledge vs robustness (belief study, Fig. 4)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.text(0.01, 0.005, CAPTION, fontsize=6.5, ha="left", va="bottom")
    fig.subplots_adjust(bottom=0.2)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def knowledge_robustness(folders: dict[str, list[Path]]) -> PaperTable:
    """belief-fig4: the points of the figure as rows (model, source, k, items, benign agents at
    step 0, knowledge, FPI, robustness in %), the PNG as the table's ``figure``."""
    pts = points(folders["belief"])
    rows = [[p["model"], p["source"], str(p["k"]), str(p["items"]), str(p["agents"]), percent(p["knowledge"]),
             percent(p["fpi"]), percent(p["robustness"])] for p in pts]
    return PaperTable("belief-fig4", "Fig. 4: knowledge vs robustness per condition (%)",
                      ["model", "source", "k", "items", "agents at step 0", "knowledge", "FPI", "robustness"], rows,
                      ["Knowledge: share of benign agents whose private answer at step 0 (before any discussion) is "
                       "labelled true, pooled over every conversation of the model and source (every k); 'agents "
                       "at step 0' is its denominator. Robustness: 1 − FPI of the condition.",
                       "Axes as this toolkit reads the paper's Fig. 4 (not defined in the protocol notes); "
                       "conditions without attackers (k = 0) are left out. The figure: --out FILE.png, or beside "
                       "any other --out FILE (docs/tables.md)."],
                      figure=lambda: figure_png(pts))


register(TableSpec("belief-fig4", "Knowledge vs robustness (figure and its points)", "belief paper, Fig. 4",
                   (Needs("belief", 1, None, "one per model, with attackers (k > 0)"),), BELIEF_RUN,
                   knowledge_robustness))
