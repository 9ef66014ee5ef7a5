"""A :class:`~ioa_synth.tables.model.PaperTable` as text: ``term`` (rich), ``md`` (Markdown,
via polars' table formatting), ``csv`` (polars) and ``latex`` (a jinja2 template, a
``booktabs`` tabular with the cells escaped)."""

from __future__ import annotations

import io

import jinja2
import polars as pl

from ioa_synth.tables.model import PaperTable

#: The ``--format`` choices.
FORMATS = ("term", "md", "csv", "latex")

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  # the tables' own symbols, so that pdflatex needs no Unicode set-up
                  "†": r"\textdagger{}", "±": r"$\pm$", "Δ": r"$\Delta$", "–": "--", "−": "$-$", "×": r"$\times$"}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (``%`` → ``\\%``) and the tables'
    symbols (†, ±, Δ, –, −, ×) as LaTeX commands."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


_ENV = jinja2.Environment(autoescape=False, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
_ENV.filters["tex"] = latex_escape
_LATEX = _ENV.from_string(r"""\begin{table}[t]
\centering
\caption{ {{- table.title | tex -}} }
\label{tab:{{ table.table_id }}}
\begin{tabular}{l{{ 'r' * (table.columns | length - 1) }}}
\toprule
{{ table.columns | map('tex') | join(' & ') }} \\
\midrule
{% for row in table.rows %}
{{ row | map('tex') | join(' & ') }} \\
{% endfor %}
\bottomrule
\end{tabular}
{% for note in table.notes %}
% {{ note | replace('\n', ' ') }}
{% endfor %}
\end{table}
""")


def _frame(table: PaperTable, escape_pipes: bool = False) -> pl.DataFrame:
    def cell(text: str) -> str:
        return text.replace("|", "\\|") if escape_pipes else text

    return pl.DataFrame([[cell(c) for c in row] for row in table.rows],
                        schema={cell(c): pl.String for c in table.columns}, orient="row")


def to_csv(table: PaperTable) -> str:
    """The table as CSV (header = the column names), written by polars."""
    return _frame(table).write_csv()


def to_markdown(table: PaperTable) -> str:
    """``## title``, a Markdown table (polars' ASCII-Markdown formatting) and the notes."""
    with pl.Config(tbl_formatting="ASCII_MARKDOWN", tbl_hide_column_data_types=True, tbl_hide_dataframe_shape=True,
                   tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=1000, tbl_width_chars=10_000):
        body = str(_frame(table, escape_pipes=True))
    return "\n".join([f"## {table.title}", "", body, "", *table.notes]).rstrip() + "\n"


def to_latex(table: PaperTable) -> str:
    """A ``table`` float with a ``booktabs`` tabular; the notes as LaTeX comments."""
    return _LATEX.render(table=table)


def _numeric(cells: list[str]) -> bool:
    """Whether a column holds numbers (right-aligned): every cell starts like one or is "–"."""
    return all(c == "–" or c[:1].isdigit() or (c[:1] in "+-−" and c[1:2].isdigit()) for c in cells)


def to_rich(table: PaperTable):
    """The rich table: title above, notes below, number columns right-aligned."""
    from rich.table import Table

    out = Table(title=table.title, caption="\n".join(table.notes) or None, caption_justify="left")
    for i, col in enumerate(table.columns):
        out.add_column(col, justify="right" if i > 0 and _numeric([r[i] for r in table.rows]) else "left",
                       overflow="fold")  # a long one-word header (endorse_manipulated) folds, never cut to "…"
    for row in table.rows:
        out.add_row(*row)
    return out


def to_terminal(table: PaperTable, width: int | None = None) -> str:
    """:func:`to_rich` as text, ``width`` columns wide (default 120)."""
    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=width or 120, force_terminal=False, color_system=None).print(to_rich(table))
    return buf.getvalue()


def render(table: PaperTable, fmt: str) -> str:
    """``table`` in ``fmt`` (one of :data:`FORMATS`); ``ValueError`` for another."""
    if fmt == "term":
        return to_terminal(table)
    if fmt == "md":
        return to_markdown(table)
    if fmt == "csv":
        return to_csv(table)
    if fmt == "latex":
        return to_latex(table)
    raise ValueError(f"--format must be one of {', '.join(FORMATS)} (got {fmt!r})")
