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
PANEL_COLLAB = "Collaboration study"
PANEL_SHARE = "Export and inspect"
PANELS = (PANEL_SEEDS, PANEL_BUILD, PANEL_QUALITY, PANEL_EVALUATE, PANEL_TRAIN, PANEL_MEETINGS, PANEL_BELIEF,
          PANEL_COLLAB, PANEL_SHARE)
#: Order of commands inside a panel (commands not named here follow, in registration order).
COMMAND_ORDER = ("seeds", "estimate", "build", "status", "show", "regenerate", "audit", "annotate", "check", "evaluate", "report",
                 "compare", "train", "meeting", "belief", "collab", "export", "sql")


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


def existing_results_folder(path: Path, option: str = "RESULTS") -> Path:
    """Exit 2 with one line unless ``path`` is an existing folder: a file is said to be a
    file (:func:`check_out_folder`, the check ``status`` makes), a missing path to be no
    such results folder; return ``path``."""
    check_out_folder(path, option)
    if not path.is_dir():
        fail(f"{path}: no such results folder")
    return path


def _kinds():
    """The folder-kind registry with every capability's kinds registered (each capability
    registers its kinds when its package is imported)."""
    import ioa_synth.belief  # noqa: F401
    import ioa_synth.build  # noqa: F401
    import ioa_synth.collab  # noqa: F401
    import ioa_synth.evaluate  # noqa: F401
    import ioa_synth.export  # noqa: F401
    import ioa_synth.meetings  # noqa: F401
    import ioa_synth.train  # noqa: F401
    import ioa_synth.typelabels  # noqa: F401
    from ioa_synth.runs import folder_kinds

    return folder_kinds


#: What a run may leave in its output folder before anything tells its kind (a catalog with
#: no rows yet, the embedded server's log, a manifest): such a folder is resumed, not refused.
OWN_LEFTOVERS = frozenset({"catalog.duckdb", "catalog.duckdb.wal", "catalog.journal", "logs", "private", "run.json",
                           ".DS_Store"})


def refuse_other_kind(path: Path, wanted: str, option: str = "--out", hint: str = "use a folder of its own") -> None:
    """Exit 2 with one line (ending in ``hint``) when ``path`` is a folder of another kind
    than ``wanted`` (:func:`folder_kind`): output folders of different commands never mix,
    and a command reading results names the kind it was given. For ``--out`` (a folder the
    command writes) a folder of no kind that holds anything but :data:`OWN_LEFTOVERS` (a
    user's own files) is refused too: a run never writes its files among someone else's."""
    kinds = _kinds()
    try:
        kinds.check_folder_kind(path, wanted, what=f"{option} {path}", hint=hint)
    except kinds.FolderKindMismatch as exc:
        fail(str(exc))
    if option == "--out" and path.is_dir() and kinds.folder_kind(path) is None:
        foreign = sorted(p.name for p in path.iterdir() if p.name not in OWN_LEFTOVERS)
        if foreign and (path / "run.json").is_file():  # a run.json that does not read hides the folder's kind
            from ioa_synth.runs.manifest import ManifestError, read_manifest

            try:
                read_manifest(path)
            except ManifestError as exc:
                fail(f"{' '.join(str(exc).split())}; repair it (or move the folder away) before writing to "
                     f"{option} {path}")
        if foreign:
            more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
            fail(f"{option} {path} is not empty ({foreign[0]}{more}) and is not {kinds.title(wanted)}; "
                 "give a new or empty folder")


def folder_kind(path: Path) -> str | None:
    """What ``path`` holds, by the kinds the capabilities registered
    (:func:`ioa_synth.runs.folder_kinds.folder_kind`): its manifest's kind (``"evaluate"``,
    ``"belief"``, ``"build"``, ``"meeting"``, ...); for a folder of an earlier release without
    one, the kind whose layout it has (a session's ``session.json``, a catalog holding build
    cases, seed tuples, seed papers or runs of unclaimed commands); or ``None`` (missing,
    empty or not recognised). Never writes.

    Raises:
        ioa_synth.runs.catalog.CatalogLocked: the catalog is open in another process.
    """
    return _kinds().folder_kind(path)


def folder_kind_of(path: Path) -> str | None:
    """What ``path`` holds by its ``run.json`` (or, without one, marker files) alone (no
    catalog opened: a run may hold it), or ``None``."""
    return _kinds().folder_kind(path, open_catalog=False)


def warn_unreadable_manifest(path: Path) -> None:
    """A reader (``status``, ``show``) of a folder whose ``run.json`` is there but does not
    read: one ``warning:`` line on stderr naming the problem, and the command goes on from the
    catalog (a command that writes the folder refuses it)."""
    from ioa_synth.runs.manifest import MANIFEST_FILE, ManifestError, read_manifest

    if not (path / MANIFEST_FILE).is_file():
        return
    try:
        read_manifest(path)
    except ManifestError as exc:
        typer.echo(f"warning: {' '.join(str(exc).split())}; read from the catalog without it (a command that "
                   "writes this folder refuses it until it is repaired)", err=True)


def status_dir_callback(path: Path) -> Path:
    """``status --out``: refuse a file with one line (every kind of folder is read)."""
    check_out_folder(path)
    return path


def build_dir_callback(path: Path) -> Path:
    """``--out`` of the build-directory commands (build, status, show, regenerate, audit,
    annotate, seeds, export, check): refuse a file and a folder of another kind (a results
    folder, a live-meeting session folder), one line, exit 2. No catalog is opened: a build
    may be running."""
    check_out_folder(path)
    kinds = _kinds()
    found = kinds.detect_folder(path, open_catalog=False)
    if found is not None and found.kind != "build":
        fail(f"--out {path} is {found.title}, not a build directory; {kinds.hint(found.kind)}")
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
    at most the requests its server decodes at once (its slots,
    :func:`ioa_synth.llm.local_model.embedded_slots`; more would only wait in the client);
    unchanged when some component has a base URL. Returns the count and ``announce()``,
    which says the lowering once on stderr (nothing when unchanged): call it once the
    input is known to be good, so bad input gives its one ``error:`` line alone. Exit 2 on
    a blank ``<X>_BASE_URL`` or a bad ``IOA_SYNTH_EMBEDDED_SLOTS``."""
    from ioa_synth.llm.config import ConfigError, env_endpoint
    from ioa_synth.llm.local_model import SLOTS_ENV, embedded_slots
    from ioa_synth.llm.local_weights import LocalModelError

    try:
        embedded = all(env_endpoint(c)[0] is None for c in components)
        slots = embedded_slots() if embedded else workers
    except (ConfigError, LocalModelError) as exc:
        fail(str(exc))
    if workers <= slots:
        return workers, lambda: None
    said: list[bool] = []

    def announce() -> None:
        if not said:
            said.append(True)
            typer.echo(f"note: --workers {workers} lowered to {slots}: the embedded model decodes {slots} "
                       f"request{'s' if slots > 1 else ''} at once ({SLOTS_ENV} sets it; a server of your own, "
                       "set with OPENAI_BASE_URL, can take more)", err=True)

    return slots, announce


@contextmanager
def llm_command_errors() -> Iterator[None]:
    """Wrap the LLM work of a command (build, regenerate, audit, evaluate): each way a
    run can stop becomes one ``error: ...`` line and an exit status.

    - setup error (HTTP 400/401/403/404/422, server unreachable), a changed setup
      (fingerprint), an unusable endpoint: exit 2, quoting the server and naming the
      config key or variable;
    - the embedded model cannot start, or the disk is full (naming the file): exit 1;
    - a ``--batch-dir`` wave waits for its output file: exit 75 with the line saying
      which file to process and where its output goes;
    - Ctrl-C: exit 130 with how to resume (the process ends at once when calls were
      still running after the grace period; the journal keeps what was stored).
    """
    from ioa_synth.llm.config import ConfigError
    from ioa_synth.llm.endpoints import EndpointError
    from ioa_synth.llm.errors import SetupError, StorageFull
    from ioa_synth.llm.local_weights import LocalModelError
    from ioa_synth.runs.folder_kinds import FolderKindMismatch
    from ioa_synth.runs.interrupt import RunInterrupted
    from ioa_synth.runs.run_rows import FingerprintMismatch
    from ioa_synth.runs.waves import BatchWaiting
    from ioa_synth.core.templates import TemplateOverrideError

    try:
        yield
    except BatchWaiting as exc:  # a --batch-dir wave waits for its output file: not an error
        typer.echo(" ".join(str(exc).split()), err=True)
        raise typer.Exit(75)
    except (SetupError, FingerprintMismatch, FolderKindMismatch, EndpointError, ConfigError, TemplateOverrideError) as exc:
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
