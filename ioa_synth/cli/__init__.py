"""Command-line entry point ``ioa-synth`` (typer).

Sub-commands live in the modules of this package (one per capability) and register here.
Every error, a usage error included, is one ``error: ...`` line on stderr; exit codes:
0 done, 1 the run ended with failed cases (or a check found problems, or the disk is full),
2 bad input or a setup error, 130 interrupted (docs/errors.md).
"""

from __future__ import annotations

import os
import signal
import sys
import threading


def _quit_while_loading(signum: int, frame: object) -> None:
    """Ctrl-C while the commands load: nothing has been read or written yet."""
    sys.stderr.write("error: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


# a Ctrl-C in the half second typer and the command modules take to load ends the process with one
# line (Python's default would print a traceback from whichever import it hit, typer's included)
_LOADING = threading.current_thread() is threading.main_thread() and \
    signal.getsignal(signal.SIGINT) is signal.default_int_handler
if _LOADING:
    signal.signal(signal.SIGINT, _quit_while_loading)

import typer  # noqa: E402

from ioa_synth.cli.app import SUBCOMMANDS, _plain_usage, app  # noqa: E402

__all__ = ["app", "main"]


def _register() -> None:
    """Import the command modules; each registers its commands on ``app``."""
    from ioa_synth.cli import analysis, annotate, audit, build, evaluate, regenerate, show, sql, status  # noqa: F401
    from ioa_synth.cli.common import PANEL_BELIEF, PANEL_MEETINGS, PANEL_SEEDS, PANEL_TRAIN
    from ioa_synth.cli import check, estimate, export, label_types, table, view  # noqa: F401
    from ioa_synth.cli.seeds import seeds_app

    app.add_typer(seeds_app, name="seeds", help="Fetch, import, assign and check seed papers.",
                  rich_help_panel=PANEL_SEEDS)
    from ioa_synth.cli.train import train_app

    app.add_typer(train_app, name="train", help="Training a prober: SFT warm-start data, GRPO prompts, the F1 reward.",
                  rich_help_panel=PANEL_TRAIN)
    from ioa_synth.cli.belief import belief_app

    app.add_typer(belief_app, name="belief", help="The hidden belief collapse study (items, screen, run, report).",
                  rich_help_panel=PANEL_BELIEF)
    from ioa_synth.cli.collab import collab_app
    from ioa_synth.cli.common import PANEL_COLLAB

    app.add_typer(collab_app, name="collab", help="Multi-agent collaboration: does a detector in a team's loop raise "
                  "its task score (run, report).", rich_help_panel=PANEL_COLLAB)
    from ioa_synth.cli.meeting import meeting_app

    app.add_typer(meeting_app, name="meeting", help="Live meetings: import, probe, serve answer pages, report.",
                  rich_help_panel=PANEL_MEETINGS)
    from ioa_synth.cli.common import PANEL_SHARE
    from ioa_synth.cli.prompts import prompts_app

    app.add_typer(prompts_app, name="prompts", help="The prompt templates by name: list them, export their text to "
                  "edit, and run with --prompts DIR.", rich_help_panel=PANEL_SHARE)
    _plain_usage(app)
    from ioa_synth.cli.build_import import import_app

    _plain_usage(import_app)
    SUBCOMMANDS[("build", "import")] = typer.main.get_command(import_app)


try:
    _register()
finally:
    if _LOADING:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _forget_caught_interrupt() -> None:
    """Clear CPython's record of a KeyboardInterrupt that escaped code compiled from a string.

    A Ctrl-C that lands inside ``exec``/``eval`` of a string (dataclasses, namedtuple and
    pydantic build classes that way while a command imports lazily) leaves that record set even
    after a command caught the interrupt; under ``python -m ioa_synth`` the interpreter then ends
    by killing itself with SIGINT instead of the exit status given (``Py_RunMain``). Running any
    string through ``exec`` clears it."""
    exec("pass")


def main() -> None:
    """Console entry point. A Ctrl-C that no command caught (one while typer builds the
    command line) is one ``error: interrupted`` line and exit 130; a caught one exits with the
    command's status under ``python -m`` too."""
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        sys.exit(130)
    finally:
        _forget_caught_interrupt()
