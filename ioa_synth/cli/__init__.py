"""Command-line entry point ``ioa-synth`` (typer).

Sub-commands live in the modules of this package (one per capability) and register here.
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
    """Import the command modules; each registers its commands on ``app``."""
    from ioa_synth.cli import annotate, audit, build, regenerate  # noqa: F401
    from ioa_synth.cli import show  # noqa: F401
    from ioa_synth.cli.seeds import seeds_app

    app.add_typer(seeds_app, name="seeds", help="Fetch, import, assign and check seed papers.")


_register()


def main() -> None:
    """Console entry point: ``app`` with a one-line error when a catalog is busy."""
    from ioa_synth.store.catalog import CatalogLocked

    try:
        app()
    except CatalogLocked as exc:
        typer.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from None
