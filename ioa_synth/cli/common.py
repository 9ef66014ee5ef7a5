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


def check_choice(option: str, value: object, choices: tuple | list) -> None:
    """Exit 2 with ``--option must be one of ...`` unless ``value`` is ``None`` or in ``choices``."""
    if value is not None and value not in choices:
        fail(f"{option} must be one of {', '.join(map(str, choices))} (got {value!r})")


def config_or_fail(path: Path | None):
    """Load a ``--config`` file (``ioa_synth.llm.config.load_config``); exit 2 with its error."""
    from ioa_synth.llm.config import ConfigError, load_config

    try:
        return load_config(path)
    except ConfigError as exc:
        fail(str(exc))
