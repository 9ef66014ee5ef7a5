"""``curves.png``: private infection per step, one line per condition of ``summary.json``
(:mod:`.report`), with its 95% bootstrap band (``ci.curve``), the number of items behind
each line, a title, and a caption saying what FPI is. A partial run (a condition with
fewer finished conversations than expected) says so in the title and the legend."""

from __future__ import annotations

import io
from typing import Any

#: Room below 0 and above 1 on the share axis, so a curve at 0 (no infection, e.g. k = 0) or
#: at 1 is drawn above the axis line instead of hidden on it.
Y_MARGIN = 0.04

#: The caption under the plot: what the curves, the bands and FPI mean (§4).
CAPTION = ("Private infection: share of benign agents whose private answer endorses the manipulated claim\n"
           "(label 'manipulated'), at step 0 (before the discussion) and after each round.\n"
           "FPI (final private infection) is the value at the last step. "
           "Bands: 95% bootstrap intervals over items (none below 2 items).")


def _nan(values: list[Any]) -> list[float]:
    return [float("nan") if v is None else float(v) for v in values]


def condition_label(key: str, entry: dict[str, Any]) -> str:
    """A legend label: the condition without the model (the title names it) and its items,
    ``"counterfact k=1 (n=3 items)"``, or ``"(1 of 3 items)"`` when some are missing."""
    name = key.split("|", 1)[1].replace("|", " ") if key.count("|") >= 2 else key
    n = entry.get("n_items", entry.get("finished"))
    expected = entry.get("expected")
    if n is None:
        return name
    if expected is not None and expected > n:
        return f"{name} ({'missing: ' if n == 0 else ''}{n} of {expected} items)"
    return f"{name} (n={n} item{'' if n == 1 else 's'})"


def title(summary: dict[str, Any]) -> str:
    """The plot's title: the agents' model, and how much of the run is finished when it is not."""
    head = "Hidden belief collapse: private infection per step"
    model = summary.get("model")
    text = f"{head}\n(agent model: {model})" if model else head
    done = summary.get("conversations") or {}
    if summary.get("complete") is False:
        text += (f"\nPARTIAL: {done.get('finished', '?')} of {done.get('expected', '?')} conversations finished")
    return text


#: Line styles and markers cycled over the conditions (see :func:`curves_figure`).
LINE_STYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P")


def curves_figure(summary: dict[str, Any]):
    """The matplotlib ``Figure`` of the infection curves (headless): steps are whole rounds,
    so the step axis has integer ticks only; the share axis runs from just below 0 to just
    above 1 (:data:`Y_MARGIN`), so a curve that stays at 0 stays visible. A condition with no
    finished conversation gets a legend entry but no line."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(7.5, 5.2))
    ax = fig.add_subplot()
    conditions = list(summary["conditions"].items())
    for i, (key, entry) in enumerate(conditions):
        ys = _nan(entry.get("curve") or [])
        steps = list(range(len(ys)))
        # identical curves (common at 0 or 1) would hide each other: each condition gets its own
        # line style and marker, and earlier ones bigger open markers, so every one stays visible
        (line,) = ax.plot(steps, ys, linestyle=LINE_STYLES[i % len(LINE_STYLES)], marker=MARKERS[i % len(MARKERS)],
                          markersize=min(14, 4 + 2 * (len(conditions) - 1 - i)), markerfacecolor="none",
                          label=condition_label(key, entry))
        bands = (entry.get("ci") or {}).get("curve") or []
        if any(b is not None for b in bands):
            lo = _nan([b[0] if b else None for b in bands])
            hi = _nan([b[1] if b else None for b in bands])
            ax.fill_between(steps, lo, hi, color=line.get_color(), alpha=0.18, linewidth=0)
    ax.set_title(title(summary), fontsize=9)
    ax.set_xlabel("step (0 = before the discussion, t = after round t)")
    ax.set_ylabel("share of benign agents privately infected")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(-Y_MARGIN, 1 + Y_MARGIN)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # beside the data
    fig.text(0.01, 0.005, CAPTION, fontsize=7, ha="left", va="bottom")
    fig.subplots_adjust(bottom=0.22)
    return fig


def plot_curves(summary: dict[str, Any]) -> bytes:
    """PNG of :func:`curves_figure`."""
    buf = io.BytesIO()
    curves_figure(summary).savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()
