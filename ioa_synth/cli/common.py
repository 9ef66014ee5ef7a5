"""Shared CLI helpers: one-line errors with an exit status, folder checks (the options several
commands take are declared in :mod:`ioa_synth.cli.options`)."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, NoReturn

import typer


# Help panels of ``ioa-synth --help``, in pipeline order: register a command with
# ``@app.command(rich_help_panel=PANEL_...)`` (or ``app.add_typer(..., rich_help_panel=...)``).
# A panel not listed in PANELS comes after these; a command without one under "Other commands".
PANEL_SEEDS = "Seed papers"
PANEL_BUILD = "Build a benchmark"
PANEL_QUALITY = "Check its quality"
PANEL_EVALUATE = "Evaluate probers"
PANEL_TRAIN = "Train"
PANEL_MEETINGS = "Live meetings"
PANEL_BELIEF = "Belief study"
PANEL_SHARE = "Export and inspect"
PANELS = (PANEL_SEEDS, PANEL_BUILD, PANEL_QUALITY, PANEL_EVALUATE, PANEL_TRAIN, PANEL_MEETINGS, PANEL_BELIEF,
          PANEL_SHARE)
#: Order of commands inside a panel (commands not named here follow, in registration order).
COMMAND_ORDER = ("seeds", "build", "status", "show", "regenerate", "audit", "annotate", "check", "evaluate", "report",
                 "compare", "train", "meeting", "belief", "export", "sql")


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: <message>`` on one line to stderr and exit with ``code``."""
    typer.echo(f"error: {' '.join(str(message).split())}", err=True)
    raise typer.Exit(code)


def check_out_folder(path: Path | None, option: str = "--out") -> Path | None:
    """Exit 2 with one line when ``path`` exists and is not a folder (a file where a
    command would write or read its folder); return ``path``."""
    if path is not None and path.exists() and not path.is_dir():
        fail(f"{option} {path} exists and is not a folder")
    return path


def _run_json_command(path: Path) -> str | None:
    """The command that wrote ``path/run.json`` (``evaluate``, ``belief run``), or ``None``."""
    from ioa_synth.evaluate.records import RunJsonError, read_run_json

    try:
        command = read_run_json(path).get("command")
    except RunJsonError:
        return None
    return command if isinstance(command, str) else None


def _meeting_session(path: Path) -> bool:
    """True when ``path`` is a session folder written by ``ioa-synth meeting import``."""
    return (path / "session.json").is_file() and (path / "private").is_dir()


def _evaluate_run_json(path: Path) -> bool:
    """True when ``path/run.json`` was written by ``ioa-synth evaluate``."""
    return _run_json_command(path) == "evaluate"


#: What each folder kind is, for the one-line refusals of a folder of another kind.
FOLDER_KINDS = {"evaluate": "an 'ioa-synth evaluate' results folder", "belief": "an 'ioa-synth belief run' results folder",
                "meeting": "a live-meeting session folder", "build": "an 'ioa-synth build' directory"}


def refuse_other_kind(path: Path, wanted: str, option: str = "--out", hint: str = "use a folder of its own") -> None:
    """Exit 2 with one line (ending in ``hint``) when ``path`` is a folder of another kind
    than ``wanted`` (:func:`folder_kind`): output folders of different commands never mix,
    and a command reading results names the kind it was given."""
    if not path.is_dir():
        return
    kind = folder_kind(path)
    if kind is not None and kind != wanted:
        fail(f"{option} {path} is {FOLDER_KINDS[kind]}, not {FOLDER_KINDS[wanted]}; {hint}")


def folder_kind(path: Path) -> str | None:
    """What ``path`` holds: ``"evaluate"`` (a ``run.json`` written by ``ioa-synth evaluate``),
    ``"build"`` (a ``catalog.duckdb`` holding build cases, seed tuples, imported or assigned
    seed papers, or runs of another command than evaluate), or ``None`` (missing, empty or
    not recognised). Never writes.

    Raises:
        ioa_synth.runs.catalog.CatalogLocked: the catalog is open in another process.
    """
    command = _run_json_command(path)
    if command == "evaluate":
        return "evaluate"
    if command == "belief run":
        return "belief"
    if _meeting_session(path):
        return "meeting"
    if not (path / "catalog.duckdb").is_file():
        return None
    from ioa_synth.runs.catalog import Catalog

    with Catalog(path, read_only=True) as cat:
        tables = {name for (name,) in cat.execute("SELECT table_name FROM information_schema.tables")}
        cases = sum(cat.execute(f"SELECT count(*) FROM {t}")[0][0]
                    for t in ("cases", "seeds", "papers", "seed_pool") if t in tables)
        commands = {c for (c,) in cat.execute("SELECT DISTINCT command FROM runs")} if "runs" in tables else set()
    if any(c.startswith("belief") for c in commands):
        return "belief"
    return "build" if cases or commands - {"evaluate"} else None


def build_dir_callback(path: Path) -> Path:
    """``--out`` of the build-directory commands (build, status, show, regenerate, audit,
    annotate, seeds, export, check): refuse a file, a results folder of ``evaluate`` or
    ``belief run`` and a live-meeting session folder (one line, exit 2)."""
    check_out_folder(path)
    command = _run_json_command(path) if path.is_dir() else None  # (no catalog opened: a build may be running)
    if command == "evaluate":
        fail(f"--out {path} is an 'ioa-synth evaluate' results folder (run.json), not a build directory; "
             "read it with 'ioa-synth report' or 'ioa-synth compare'")
    if command == "belief run":
        fail(f"--out {path} is an 'ioa-synth belief run' results folder (run.json), not a build directory; "
             "read it with 'ioa-synth belief report'")
    if path.is_dir() and _meeting_session(path):
        fail(f"--out {path} is {FOLDER_KINDS['meeting']}, not a build directory; use a folder of its own")
    return path


def writable_out(path: Path, option: str = "--out") -> Path:
    """Exit 2 with one line, before any work, when ``path`` could not be written (see
    :func:`ioa_synth.runs.catalog.check_writable`); return ``path``."""
    from ioa_synth.runs.catalog import CatalogUnusable, check_writable

    try:
        check_writable(path)
    except CatalogUnusable as exc:
        fail(f"{option}: {exc}")
    return path


@contextmanager
def write_errors() -> Iterator[None]:
    """An output file that cannot be written (a read-only folder or file system, a folder in
    its place, no permission, disk full): one ``error:`` line, exit 2."""
    try:
        yield
    except OSError as exc:
        fail(f"cannot write {exc.filename or 'an output file'}: {exc.strerror or exc}")


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


def lowered_workers(components: list[str], workers: int) -> tuple[int, Callable[[], None]]:
    """``--workers`` for a command whose LLM ``components`` all run on the embedded model:
    at most the requests its server decodes at once (more would only queue there);
    unchanged when some component has a base URL. Returns the count and ``announce()``,
    which says the lowering once on stderr (nothing when unchanged): call it once the
    input is known to be good, so bad input gives its one ``error:`` line alone. Exit 2 on
    a blank ``<X>_BASE_URL``."""
    from ioa_synth.llm.config import ConfigError, env_endpoint
    from ioa_synth.llm.local_model import SERVER_PARALLEL

    try:
        embedded = all(env_endpoint(c)[0] is None for c in components)
    except ConfigError as exc:
        fail(str(exc))
    if not embedded or workers <= SERVER_PARALLEL:
        return workers, lambda: None
    said: list[bool] = []

    def announce() -> None:
        if not said:
            said.append(True)
            typer.echo(f"note: --workers {workers} lowered to {SERVER_PARALLEL}: the embedded model answers "
                       f"{SERVER_PARALLEL} request at a time (a server of your own, set with OPENAI_BASE_URL, "
                       "can take more)", err=True)

    return SERVER_PARALLEL, announce


@contextmanager
def llm_command_errors() -> Iterator[None]:
    """Wrap the LLM work of a command (build, regenerate, audit, evaluate): each way a
    run can stop becomes one ``error: ...`` line and an exit status.

    - setup error (HTTP 400/401/403/404/422, server unreachable), a changed setup
      (fingerprint), an unusable endpoint: exit 2, quoting the server and naming the
      config key or variable;
    - the embedded model cannot start, or the disk is full (naming the file): exit 1;
    - Ctrl-C: exit 130 with how to resume (the process ends at once when calls were
      still running after the grace period; the journal keeps what was stored).
    """
    from ioa_synth.llm.config import ConfigError
    from ioa_synth.llm.endpoints import EndpointError
    from ioa_synth.llm.errors import SetupError, StorageFull
    from ioa_synth.llm.local_weights import LocalModelError
    from ioa_synth.runs.interrupt import RunInterrupted
    from ioa_synth.runs.run_rows import FingerprintMismatch

    try:
        yield
    except (SetupError, FingerprintMismatch, EndpointError, ConfigError) as exc:
        fail(str(exc), code=2)
    except (LocalModelError, StorageFull) as exc:
        fail(str(exc), code=1)
    except RunInterrupted as exc:
        kept = "" if exc.stored_calls is not None else " (finished calls are kept)"
        message = f"{exc}; run the same command again to resume{kept}"
        if exc.abandoned:  # worker threads still in a request: do not wait for them
            typer.echo(f"error: {message}", err=True)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
        fail(message, code=130)
    except KeyboardInterrupt:
        fail("interrupted; run the same command again to resume", code=130)
