"""The batch options of ``build``, ``evaluate``, ``belief run`` and ``collab run`` (``--batch``, ``--batch-dir``), checked
before any work and without writing anything (:func:`batch_mode`: one ``error:`` line and
exit 2), the ``--batch-dir`` folder created only once every check of the command passed
(:func:`create_batch_dir`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ioa_synth.cli.common import fail

if TYPE_CHECKING:
    from ioa_synth.llm.config import ToolkitConfig
    from ioa_synth.llm.endpoints import EndpointSource
    from ioa_synth.runs.batch_mode import BatchMode


def batch_option() -> Any:
    """``--batch``: the run's calls go out in waves through the endpoints' Batch API."""
    return typer.Option(False, "--batch", help="Send the calls in waves through the endpoints' Batch API "
                        "(half price, up to 24 h per wave; docs/scale.md)")


def batch_dir_option() -> Any:
    """``--batch-dir DIR``: batch mode with files (``vllm run-batch`` or any tool)."""
    return typer.Option(None, "--batch-dir", help="Batch mode with files: write each wave's requests to "
                        "DIR/<wave>.input.jsonl and stop (exit 75) until DIR/<wave>.output.jsonl exists "
                        "(e.g. from vllm run-batch); not with --batch")


def batch_mode(components: list[str], batch: bool, batch_dir: Path | None, config: ToolkitConfig,
               sources: dict[str, EndpointSource] | None = None) -> BatchMode | None:
    """The run's :class:`~ioa_synth.runs.batch_mode.BatchMode` (``None``: live calls), checked
    and nothing written (``estimate`` runs the same checks): :func:`create_batch_dir` makes
    the folder when the run is about to start. ``sources``: the run's endpoints opened under
    names of their own (``collab run``'s detectors, :class:`~ioa_synth.llm.endpoints.EndpointSource`),
    checked as the ``components`` are, with their own settings block and variables.

    Refused (exit 2), each with one line:

    - ``--batch`` and ``--batch-dir`` together (two transports; the run would use one of them);
    - a component with no base URL (it would run on the embedded model, which has no batch mode);
    - a ``--batch-dir`` that is a file, or that could not be created or written
      (:func:`ioa_synth.runs.folder_checks.check_writable`);
    - ``--batch-dir`` with a component that has no ``model`` in ``config``: the input files
      name each request's model and the endpoint is never contacted, so it cannot be asked
      for its first model.
    """
    if not batch and batch_dir is None:
        return None
    if batch and batch_dir is not None:
        fail("--batch and --batch-dir are two ways to send the calls; give one: --batch (the endpoints' Batch "
             "API) or --batch-dir DIR (request files for vllm run-batch or any tool)")
    from ioa_synth.llm.config import ConfigError, env_endpoint
    from ioa_synth.runs.batch_mode import BatchMode
    from ioa_synth.runs.catalog import CatalogUnusable
    from ioa_synth.runs.folder_checks import check_writable

    option = "--batch-dir" if batch_dir is not None else "--batch"
    sources = sources or {}
    try:
        embedded = [(c, c.upper()) for c in components if env_endpoint(c)[0] is None]
        embedded += [(name, (src.prefixes or (src.component.upper(),))[0]) for name, src in sources.items()
                     if env_endpoint(src.component, src.prefixes)[0] is None]
    except ConfigError as exc:
        fail(str(exc))
    if embedded:
        names = ", ".join(name for name, _ in embedded)
        fail(f"{option} needs a remote endpoint for every component; {names} would run on the embedded model, "
             f"which has no batch mode (set {embedded[0][1]}_BASE_URL or OPENAI_BASE_URL)")
    if batch_dir is None:
        return BatchMode()
    if batch_dir.exists() and not batch_dir.is_dir():
        fail(f"--batch-dir {batch_dir} exists and is not a folder")
    try:
        check_writable(batch_dir)
    except CatalogUnusable as exc:
        fail(f"--batch-dir: {exc}")
    unnamed = [c for c in components if not config.component(c).model]
    unnamed += [name for name, src in sources.items() if not src.config.model]
    if unnamed:
        fail(f"--batch-dir never contacts the endpoint, so it cannot ask which model to use: set \"model\" in the "
             f"--config block of {', '.join(unnamed)} (each request line names its model)")
    return BatchMode(batch_dir=batch_dir)


def create_batch_dir(mode: BatchMode | None) -> None:
    """Make ``mode``'s ``--batch-dir`` (nothing for live calls or ``--batch``): call it once
    every check of the command passed, so that a refused run leaves no empty folder behind.
    Exit 2 with one line when it cannot be created."""
    if mode is None or mode.batch_dir is None:
        return
    try:
        mode.batch_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"--batch-dir {mode.batch_dir}: cannot create it ({exc.strerror or exc})")
    if not os.access(mode.batch_dir, os.W_OK | os.X_OK):
        fail(f"--batch-dir {mode.batch_dir} is not writable")
