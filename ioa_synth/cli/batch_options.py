"""The batch options of ``build`` and ``evaluate`` (``--batch``, ``--batch-dir``), checked
before any work: one ``error:`` line and exit 2 for a component on the embedded model or a
folder that cannot be written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from ioa_synth.cli.common import fail


def batch_option() -> Any:
    """``--batch``: the run's calls go out in waves through the endpoints' Batch API."""
    return typer.Option(False, "--batch", help="Send the calls in waves through the endpoints' Batch API "
                        "(half price, up to 24 h per wave; docs/scale.md)")


def batch_dir_option() -> Any:
    """``--batch-dir DIR``: batch mode with files (``vllm run-batch`` or any tool)."""
    return typer.Option(None, "--batch-dir", help="Batch mode with files: write each wave's requests to "
                        "DIR/<wave>.input.jsonl and stop (exit 75) until DIR/<wave>.output.jsonl exists "
                        "(e.g. from vllm run-batch)")


def batch_mode(components: list[str], batch: bool, batch_dir: Path | None):
    """The run's :class:`~ioa_synth.runs.waves.BatchMode` (``None``: live calls).

    ``--batch-dir`` implies ``--batch``. Refused (exit 2): a component with no base URL
    (it would run on the embedded model, which has no batch mode), a ``--batch-dir`` that
    is a file or cannot be created or written."""
    if not batch and batch_dir is None:
        return None
    from ioa_synth.llm.config import ConfigError, env_endpoint
    from ioa_synth.runs.batch_mode import BatchMode

    option = "--batch-dir" if batch_dir is not None else "--batch"
    try:
        embedded = [c for c in components if env_endpoint(c)[0] is None]
    except ConfigError as exc:
        fail(str(exc))
    if embedded:
        names = ", ".join(embedded)
        fail(f"{option} needs a remote endpoint for every component; {names} would run on the embedded model, "
             f"which has no batch mode (set {embedded[0].upper()}_BASE_URL or OPENAI_BASE_URL)")
    if batch_dir is not None:
        if batch_dir.exists() and not batch_dir.is_dir():
            fail(f"--batch-dir {batch_dir} exists and is not a folder")
        try:
            batch_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"--batch-dir {batch_dir}: cannot create it ({exc.strerror or exc})")
        if not os.access(batch_dir, os.W_OK | os.X_OK):
            fail(f"--batch-dir {batch_dir} is not writable")
    return BatchMode(batch_dir=batch_dir)
