"""One table model rendered three ways: a rich table for the terminal, a Markdown table
(via polars' Markdown formatting) for ``compare.md``/``report_*.md``, and a matplotlib bar
chart (Agg canvas, no pyplot state) for ``report``'s PNG."""

from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import polars as pl
from rich.table import Table as RichTable

from ioa_synth.core.atomic import write_bytes_atomic


#: Font size of a chart title, in points.
TITLE_POINTS = 10


@dataclass
class Table:
    """A titled table of already formatted cells: ``rows`` are lists of strings, one per
    column of ``columns``; ``note`` is an optional line printed under it."""

    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    note: str | None = None


def to_rich(table: Table) -> RichTable:
    """The rich form of ``table`` (first column left-aligned, the others right-aligned)."""
    out = RichTable(title=table.title, caption=table.note)
    for i, col in enumerate(table.columns):
        out.add_column(col, justify="left" if i == 0 else "right")
    for row in table.rows:
        out.add_row(*row)
    return out


def to_markdown(table: Table) -> str:
    """``table`` as a Markdown section: ``### title``, a pipe table (``|`` in cells escaped as
    ``\\|``), the note in italics."""
    def esc(text: str) -> str:
        return text.replace("|", "\\|")

    df = pl.DataFrame([[esc(c) for c in r] for r in table.rows], schema={esc(c): pl.String for c in table.columns},
                      orient="row")
    with pl.Config(tbl_formatting="MARKDOWN", tbl_hide_column_data_types=True, tbl_hide_dataframe_shape=True,
                   tbl_rows=-1, tbl_cols=-1, tbl_width_chars=30_000, fmt_str_lengths=5_000,
                   tbl_cell_alignment="LEFT"):
        body = str(df)
    note = f"\n\n*{table.note}*" if table.note else ""
    return f"### {table.title}\n\n{body}{note}\n"


def markdown_document(title: str, intro: Sequence[str], tables: Sequence[Table]) -> str:
    """A Markdown document: ``# title``, the ``intro`` lines as a list, then each table."""
    head = f"# {title}\n\n" + "".join(f"- {line}\n" for line in intro)
    return head + "".join("\n" + to_markdown(t) for t in tables)


def bar_chart_figure(title: str, labels: Sequence[str], values: Sequence[float | None], ylabel: str,
                     counts: Sequence[int] | None = None):
    """The matplotlib ``Figure`` of :func:`bar_chart` (Agg canvas attached, not yet drawn):
    one bar per label of ``values`` (0-1, ``None`` drawn as an empty slot), each labelled
    with its value (and ``n=`` count when ``counts`` is given); each line of ``title`` is
    wrapped to the figure's width, so it is never cut off."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    width = max(4.5, 0.9 * len(labels) + 2.0)
    fig = Figure(figsize=(width, 4.2), dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    heights = [0.0 if v is None else v for v in values]
    bars = ax.bar(range(len(labels)), heights, color="#4C72B0", width=0.65)
    for i, (bar, v) in enumerate(zip(bars, values)):
        text = "n/a" if v is None else f"{v:.2f}"
        if counts is not None:
            text += f"\nn={counts[i]}"
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), xytext=(0, 3),
                    textcoords="offset points", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(labels)), labels, rotation=30 if len(labels) > 4 else 0,
                  ha="right" if len(labels) > 4 else "center")
    ax.set_ylim(0, 1.15)
    ax.set_ylabel(ylabel)
    chars = int(width * 72 / (TITLE_POINTS * 0.6))  # a 10-pt character is about 6 pt wide
    ax.set_title("\n".join(textwrap.fill(line, chars) for line in title.splitlines()), fontsize=TITLE_POINTS)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def bar_chart(path: Path, title: str, labels: Sequence[str], values: Sequence[float | None],
              ylabel: str, counts: Sequence[int] | None = None) -> Path:
    """Write the PNG bar chart of :func:`bar_chart_figure` to ``path`` atomically; return
    ``path``. Raises ``OSError`` when the file cannot be written."""
    return write_bytes_atomic(path, bar_chart_png(title, labels, values, ylabel, counts))


def bar_chart_png(title: str, labels: Sequence[str], values: Sequence[float | None], ylabel: str,
                  counts: Sequence[int] | None = None) -> bytes:
    """The PNG bytes of :func:`bar_chart_figure`."""
    buf = io.BytesIO()
    bar_chart_figure(title, labels, values, ylabel, counts).savefig(buf, format="png")
    return buf.getvalue()
