"""Command-line entry point ``ioa-synth`` (typer).

Sub-commands live in the modules of this package (one per capability) and register here.
Every error, a usage error included, is one ``error: ...`` line on stderr; exit codes:
0 done, 1 the run ended with failed cases (or a check found problems), 2 bad input or a
setup error, 130 interrupted (issue 10).
"""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer._click import exceptions as click_exc  # typer >= 0.22 vendors click as typer._click
from typer.core import TyperGroup


class OneLineErrors(TyperGroup):
    """The root group: usage errors (``--workers 0``, a missing option) as one
    ``error: ...`` line and exit 2 instead of typer's boxed panel; a busy catalog too."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        from ioa_synth.store.catalog import CatalogLocked

        try:
            rv = super().main(args=args, prog_name=prog_name, complete_var=complete_var, standalone_mode=False,
                              **extra)
        except click_exc.NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click_exc.ClickException as exc:
            hint = ""
            ctx = getattr(exc, "ctx", None)
            if isinstance(exc, click_exc.UsageError) and ctx is not None:
                hint = f" (see '{ctx.command_path} --help')"
            typer.echo(f"error: {' '.join(exc.format_message().split())}{hint}", err=True)
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.echo("error: interrupted", err=True)
            sys.exit(130)
        except CatalogLocked as exc:
            typer.echo(f"error: {exc}", err=True)
            sys.exit(2)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    name="ioa-synth",
    cls=OneLineErrors,
    help="Build, audit and evaluate benchmarks of hidden disagreement in collaborative dialogue.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help: flags shown without a <bool> metavar
)


def _version(value: bool) -> None:
    if value:
        from ioa_synth import __version__

        typer.echo(f"ioa-synth {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Build, audit and evaluate benchmarks of hidden disagreement in collaborative dialogue."""


def _register() -> None:
    """Import the command modules; each registers its commands on ``app``."""
    from ioa_synth.cli import analysis, annotate, audit, build, evaluate, regenerate, show, sql  # noqa: F401
    from ioa_synth.cli.seeds import seeds_app

    app.add_typer(seeds_app, name="seeds", help="Fetch, import, assign and check seed papers.")
    from ioa_synth.cli.meeting import meeting_app

    app.add_typer(meeting_app, name="meeting", help="Live meetings: import, probe, serve answer pages, report.")


_register()


def main() -> None:
    """Console entry point."""
    app()
