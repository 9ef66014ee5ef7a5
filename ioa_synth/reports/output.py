"""Report output shared by every command: standard streams that print under any encoding,
consoles whose tables are not cut when piped, number formatting, and atomic report files
under ``DIR/reports/`` (JSON, and CSV written by polars), all written or none."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from ioa_synth.core.atomic import json_bytes, write_all_atomic

#: Width used when stdout is not a terminal, so that ids and numbers are never cut.
PIPE_WIDTH = 220


def tolerant_streams() -> None:
    """Make stdout and stderr replace what their encoding cannot show (``?``) instead of
    raising ``UnicodeEncodeError``: a Windows console (cp1252), ``PYTHONIOENCODING``, or
    ``LC_ALL=C`` with ``PYTHONUTF8=0`` (ASCII) must not crash a command after its files are
    written because a line holds "−", "§" or a non-ASCII case id. Called once by the CLI
    before any command runs."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="replace")
            except (ValueError, OSError):  # a closed or detached stream: nothing to print to anyway
                pass


def wide_console(stderr: bool = False) -> Console:
    """A rich console: the terminal's width on a tty; otherwise ``COLUMNS`` when it is set to
    a positive number (a user piping to a file of their own width), else :data:`PIPE_WIDTH`."""
    stream = sys.stderr if stderr else sys.stdout
    columns = os.environ.get("COLUMNS", "")
    piped = int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH
    return Console(stderr=stderr, width=None if stream.isatty() else piped)


#: How every table shows an undefined value (``None``: a rate or mean over nothing).
NA = "n/a"


def fmt(value: float | None, digits: int = 2, percent: bool = False) -> str:
    """``value`` rounded (as a percentage with ``percent``), :data:`NA` for ``None`` (undefined,
    e.g. a mean over nothing: never shown as 0)."""
    if value is None:
        return NA
    return f"{value * 100:.1f}%" if percent else f"{value:.{digits}f}"


def reports_dir(out_dir: Path) -> Path:
    """``DIR/reports``."""
    return Path(out_dir) / "reports"


def report_files(out_dir: Path, name: str, report: dict[str, Any], rows: list[dict[str, Any]] | None = None
                 ) -> dict[Path, bytes]:
    """The contents of ``DIR/reports/<name>.json`` (``report``) and, when ``rows`` is given,
    ``DIR/reports/<name>.csv`` (one line per row), by path, not yet written."""
    files = {reports_dir(out_dir) / f"{name}.json": json_bytes(report)}
    if rows is not None:
        import polars as pl  # not at import: every command loads this module before it starts

        files[reports_dir(out_dir) / f"{name}.csv"] = pl.DataFrame(rows, infer_schema_length=None).write_csv().encode()
    return files


def write_report(out_dir: Path, name: str, report: dict[str, Any], rows: list[dict[str, Any]] | None = None) -> list[Path]:
    """Write :func:`report_files` all or none (:func:`ioa_synth.core.atomic.write_all_atomic`);
    return the paths."""
    return write_all_atomic(report_files(out_dir, name, report, rows))
