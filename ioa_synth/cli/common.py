"""Shared CLI helpers: one-line errors with an exit status, common options."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, NoReturn

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


@contextmanager
def llm_command_errors() -> Iterator[None]:
    """Wrap the LLM work of a command (build, regenerate, audit, evaluate): each way a
    run can stop becomes one ``error: ...`` line and an exit status (issue 10).

    - setup error (HTTP 400/401/403/404/422, server unreachable), a changed setup
      (fingerprint), an unusable endpoint: exit 2, quoting the server and naming the
      config key or variable;
    - the embedded model cannot start: exit 1;
    - Ctrl-C: exit 130 with how to resume (the process ends at once when calls were
      still running after the grace period; the journal keeps what was stored).
    """
    from ioa_synth.llm.endpoints import EndpointError
    from ioa_synth.llm.errors import SetupError
    from ioa_synth.llm.local_model import LocalModelError
    from ioa_synth.reports.interrupt import RunInterrupted
    from ioa_synth.store.runs import FingerprintMismatch

    try:
        yield
    except (SetupError, FingerprintMismatch, EndpointError) as exc:
        fail(str(exc), code=2)
    except LocalModelError as exc:
        fail(str(exc), code=1)
    except RunInterrupted as exc:
        message = f"{exc}; run the same command again to resume (finished calls are kept)"
        if exc.abandoned:  # worker threads still in a request: do not wait for them
            typer.echo(f"error: {message}", err=True)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
        fail(message, code=130)
    except KeyboardInterrupt:
        fail("interrupted; run the same command again to resume", code=130)
