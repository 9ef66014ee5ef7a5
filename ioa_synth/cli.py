"""Command-line entry point ``ioa-synth`` (typer).

Sub-commands live in their own modules and register here.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="ioa-synth",
    help="Build, audit and evaluate benchmarks of hidden disagreement in collaborative dialogue.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    from . import cli_build  # noqa: F401  (registers build, status)

    try:
        from .seeds.cli import seeds_app
    except ImportError:  # seeds package not present yet
        seeds_app = None
    if seeds_app is not None:
        app.add_typer(seeds_app, name="seeds", help="Fetch, import, assign and check seed papers.")
    for mod in ("cli_regenerate", "cli_audit", "cli_annotate"):
        try:
            __import__(f"{__package__}.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{mod}":
                raise


_register()


def main() -> None:
    """Console entry point: ``app`` with a one-line error when a catalog is busy."""
    from .catalog import CatalogLocked

    try:
        app()
    except CatalogLocked as exc:
        typer.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from None
