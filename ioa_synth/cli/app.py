"""The ``ioa-synth`` application (typer) and how it prints: one ``error: ...`` line for every
error, usage errors included; commands listed by help panel; click-style usage lines.

The command modules of :mod:`ioa_synth.cli` register their commands on :data:`app`
(``from ioa_synth.cli.app import app``); :mod:`ioa_synth.cli` imports them all.
"""


from __future__ import annotations

import sys
from typing import Any

import typer
from typer._click import exceptions as click_exc  # typer >= 0.22 vendors click as typer._click
from typer.core import TyperCommand, TyperGroup


#: Sub-commands of a command that also runs on its own: ``{(command, name): click command}``.
#: ``ioa-synth build --seeds ...`` builds, ``ioa-synth build import ...`` imports records.
SUBCOMMANDS: dict[tuple[str, str], Any] = {}


class OneLineErrors(TyperGroup):
    """The root group: usage errors (``--workers 0``, a missing option) as one
    ``error: ...`` line and exit 2 instead of typer's boxed panel; a busy catalog too."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        from ioa_synth.reports.output import tolerant_streams
        from ioa_synth.runs.catalog import CatalogLocked, CatalogUnusable, shown_path

        tolerant_streams()

        for arg in sys.argv[1:] if args is None else args:
            if isinstance(arg, str) and not _utf8(arg):  # DuckDB and the JSON stores take UTF-8 only
                typer.echo(f"error: {shown_path(arg)}: not valid UTF-8; rename it (names of files and "
                           "folders given to ioa-synth must be UTF-8)", err=True)
                sys.exit(2)
        try:
            rv = super().main(args=args, prog_name=prog_name, complete_var=complete_var, standalone_mode=False,
                              **extra)
        except click_exc.NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click_exc.ClickException as exc:
            hint = ""
            ctx = getattr(exc, "ctx", None)
            message = exc.format_message()
            if isinstance(exc, click_exc.UsageError) and ctx is not None:
                hint = f" (see '{ctx.command_path} --help')"
                if isinstance(exc, click_exc.NoSuchOption):
                    message = _no_such_option(exc, ctx)
            typer.echo(f"error: {' '.join(message.split())}{hint}", err=True)
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.echo("error: interrupted", err=True)
            sys.exit(130)
        except (CatalogLocked, CatalogUnusable) as exc:
            typer.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except ValueError as exc:  # a folder's run.json that cannot be read, met by any command: one line
            manifest = sys.modules.get("ioa_synth.runs.manifest")  # loaded when one was raised
            if manifest is None or not isinstance(exc, manifest.ManifestError):
                raise
            typer.echo(f"error: {' '.join(str(exc).split())}", err=True)
            sys.exit(2)
        except RuntimeError as exc:  # a full disk while writing, in any command: one line, exit 1
            from ioa_synth.llm.errors import StorageFull

            if not isinstance(exc, StorageFull):
                raise
            typer.echo(f"error: {' '.join(str(exc).split())}", err=True)
            sys.exit(1)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        """A command's sub-command (:data:`SUBCOMMANDS`, e.g. ``build import``) when its name
        follows the command's; else the command itself."""
        name, cmd, rest = super().resolve_command(ctx, args)
        sub = SUBCOMMANDS.get((name, rest[0])) if name and rest else None
        if sub is not None:
            return f"{name} {rest[0]}", sub, rest[1:]
        return name, cmd, rest

    def list_commands(self, ctx: Any) -> list[str]:
        """Commands in pipeline order: by panel (:data:`ioa_synth.cli.common.PANELS`), then
        :data:`~ioa_synth.cli.common.COMMAND_ORDER`, then registration order."""
        from ioa_synth.cli.common import COMMAND_ORDER, PANELS

        names = list(self.commands)

        def key(name: str) -> tuple:
            panel = getattr(self.commands[name], "rich_help_panel", None)
            at = PANELS.index(panel) if panel in PANELS else len(PANELS) + (panel is None)
            return (at, COMMAND_ORDER.index(name) if name in COMMAND_ORDER else len(COMMAND_ORDER), names.index(name))

        return sorted(names, key=key)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """One help section per panel, in :meth:`list_commands` order."""
        shown = [(n, c) for n in self.list_commands(ctx) if (c := self.get_command(ctx, n)) and not c.hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(n) for n, _ in shown)
        sections: dict[str, list[tuple[str, str]]] = {}
        for name, cmd in shown:
            panel = getattr(cmd, "rich_help_panel", None) or "Other commands"
            sections.setdefault(panel, []).append((name, cmd.get_short_help_str(limit)))
        for panel, rows in sections.items():
            with formatter.section(panel):
                formatter.write_dl(rows)


class PlainUsage(TyperCommand):
    """A command whose usage line names its arguments in click's style: ``DIR QUERY``, an
    optional one ``[CASE_ID]``. Typer wraps a required argument in braces (``{DIR}
    {QUERY}``), which reads like a set of choices (``--source {arxiv,pmc,openalex}``)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        import re

        return [re.sub(r"^\{([^{}]+)\}", r"\1", piece) for piece in super().collect_usage_pieces(ctx)]


def _plain_usage(typer_app: typer.Typer) -> None:
    """Give every command of ``typer_app`` (sub-apps included) :class:`PlainUsage`."""
    for info in typer_app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = PlainUsage
    for group in typer_app.registered_groups:
        _plain_usage(group.typer_instance)


def _no_such_option(exc: Any, ctx: Any) -> str:
    """The message for an unknown option: the close names if any, else all the command's
    options. Click suggests what difflib finds close *with* the leading ``--``, which the
    dashes alone make look alike (``status --bogus`` got "(Possible options: --out)");
    names are compared here without their dashes."""
    import difflib

    names = [opt for param in ctx.command.get_params(ctx) if not getattr(param, "hidden", False)
             for opt in (*param.opts, *param.secondary_opts) if opt.startswith("--") and opt != "--help"]
    close = difflib.get_close_matches(exc.option_name.lstrip("-"), [n.lstrip("-") for n in names], n=3)
    if close:
        return f"{exc.message}; did you mean {' or '.join('--' + n for n in close)}?"
    return f"{exc.message}; this command takes {', '.join(names) or 'no options'}"


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
