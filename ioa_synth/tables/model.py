"""The one table value the ``table`` command renders: a paper table's cells, already
formatted as the paper prints them (units in the column names, significance marks in the cells)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class PaperTable:
    """One rendered paper table.

    Attributes:
        table_id: the registry id (``"ioa-12"``).
        title: the title, with the paper reference (``"Table 12: recall per disagreement type"``).
        columns: column headers, units included (``"P (%)"``).
        rows: one list of formatted cells per row, ``len(columns)`` each.
        notes: lines printed under the table (aggregation, significance marks, sources).
        figure: for a figure id (``belief-fig4``), a function returning its PNG (bytes); the
            rows are the figure's points. ``None`` for a table.
    """

    table_id: str
    title: str
    columns: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)
    figure: Callable[[], bytes] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if len(set(self.columns)) != len(self.columns):
            raise ValueError(f"{self.table_id}: column names repeat: {self.columns}")
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"{self.table_id}: a row has {len(row)} cells for {len(self.columns)} columns")


def percent(value: float | None, signed: bool = False) -> str:
    """A share (0-1) as the papers print it in a "%" column: ``0.4333`` → ``"43.3"``
    (``"+43.3"`` with ``signed``); ``None`` (undefined) → ``"–"``."""
    if value is None:
        return "–"
    return f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"
