"""Report output shared by ``regenerate``, ``audit``, ``annotate`` and ``status``:
consoles whose tables are not cut when piped, number formatting, and atomic report
files under ``DIR/reports/`` (JSON, and CSV written by polars)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console

from ioa_synth.store.atomic import write_json_atomic, write_text_atomic

#: Width used when stdout is not a terminal, so that ids and numbers are never cut.
PIPE_WIDTH = 220


def wide_console(stderr: bool = False) -> Console:
    """A rich console: the terminal's width on a tty; otherwise ``COLUMNS`` when it is set to
    a positive number (a user piping to a file of their own width), else :data:`PIPE_WIDTH`."""
    stream = sys.stderr if stderr else sys.stdout
    columns = os.environ.get("COLUMNS", "")
    piped = int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH
    return Console(stderr=stderr, width=None if stream.isatty() else piped)


def fmt(value: float | None, digits: int = 2, percent: bool = False) -> str:
    """``value`` rounded (as a percentage with ``percent``), ``-`` for ``None``."""
    if value is None:
        return "-"
    return f"{value * 100:.1f}%" if percent else f"{value:.{digits}f}"


def reports_dir(out_dir: Path) -> Path:
    """``DIR/reports``."""
    return Path(out_dir) / "reports"


def write_report(out_dir: Path, name: str, report: dict[str, Any], rows: list[dict[str, Any]] | None = None) -> list[Path]:
    """Write ``DIR/reports/<name>.json`` (``report``) and, when ``rows`` is given,
    ``DIR/reports/<name>.csv`` (one line per row), both atomically; return the paths."""
    paths = [write_json_atomic(reports_dir(out_dir) / f"{name}.json", report)]
    if rows is not None:
        csv = pl.DataFrame(rows, infer_schema_length=None).write_csv()
        paths.append(write_text_atomic(reports_dir(out_dir) / f"{name}.csv", csv))
    return paths
