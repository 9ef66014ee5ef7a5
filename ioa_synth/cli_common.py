"""Shared CLI helpers: one-line errors with an exit status, common options."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import typer


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: <message>`` on one line to stderr and exit with ``code``."""
    typer.echo(f"error: {' '.join(str(message).split())}", err=True)
    raise typer.Exit(code)


def out_dir_option() -> Path:
    """The ``--out DIR`` option (build directory)."""
    return typer.Option(..., "--out", help="Build directory (records, catalog.duckdb)")
