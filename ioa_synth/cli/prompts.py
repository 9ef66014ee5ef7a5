"""``ioa-synth prompts list|export`` and ``--prompts DIR`` (docs/prompts.md): the prompt
templates by name, the packaged text as a starting point, and a folder replacing any of
them for one run."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ioa_synth.cli.common import fail, write_errors
from ioa_synth.cli.options import json_option

prompts_app = typer.Typer(no_args_is_help=True, add_completion=False)

#: The options naming a command's config file, whose ``"prompts"`` key applies without ``--prompts``.
CONFIG_FLAGS = ("--config", "--judge-config")


def _registered() -> None:
    """Import every capability: each registers its templates when imported."""
    from ioa_synth.cli.common import _kinds

    _kinds()


def _config_prompts(ctx: typer.Context) -> Path | None:
    """The ``"prompts"`` folder of the command's config file (already parsed: the option is
    declared last), or ``None``; a config that does not load is left to the command's own check."""
    from ioa_synth.llm.config import ConfigError, load_config

    for param in ctx.command.params:
        path = ctx.params.get(param.name or "") if set(CONFIG_FLAGS) & set(param.opts) else None
        if path is not None:
            try:
                folder = load_config(path).prompts
            except ConfigError:
                return None
            return Path(folder) if folder else None
    return None


def apply_prompts(ctx: typer.Context, param: typer.CallbackParam, value: Optional[Path]) -> Optional[Path]:
    """The callback of ``--prompts`` (:func:`ioa_synth.cli.options.prompts_option`): read and
    check the folder of ``--prompts``, else of the config's ``"prompts"`` key, and install it
    for this command (removed when the command ends); with neither, the packaged text.
    A bad folder: one ``error:`` line, exit 2, before the command runs."""
    from ioa_synth.core.prompt_overrides import PromptsError, load_overrides
    from ioa_synth.core.templates import install_overrides

    if ctx.resilient_parsing:  # shell completion: nothing to check
        return value
    folder = value if value is not None else _config_prompts(ctx)
    if folder is None:
        install_overrides({})
        return value
    _registered()
    try:
        overrides = load_overrides(folder)
    except PromptsError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"prompts folder {folder}: cannot read {exc.filename or ''} ({exc.strerror or exc})")
    install_overrides(overrides)
    ctx.find_root().call_on_close(lambda: install_overrides({}))
    return value


@prompts_app.command("list")
def list_(
    json_out: bool = json_option("Print JSON: one object per template, instead of lines"),
) -> None:
    """Every prompt template: its name (the file under a --prompts folder), capability and
    the component that renders it; one line each (--json adds the variables each is rendered with)."""
    import json

    from ioa_synth.core.prompt_overrides import template_variables
    from ioa_synth.core.templates import template_names, template_renders

    _registered()
    rows = [{"name": n, "capability": n.split("/", 1)[0], "component": template_renders(n) or "-"}
            for n in template_names()]
    if json_out:
        rows = [r | {"variables": template_variables(r["name"])} for r in rows]
        typer.echo(json.dumps(rows, indent=2))
        return
    width, cap = (max(len(r[key]) for r in rows) for key in ("name", "capability"))
    for r in rows:
        typer.echo(f"{r['name']:<{width}}  {r['capability']:<{cap}}  {r['component']}")


@prompts_app.command("export")
def export(
    folder: Path = typer.Argument(..., metavar="DIR", help="Folder to write DIR/<capability>/<file> into"),
    only: Optional[List[str]] = typer.Option(None, "--only", metavar="NAME",
                                             help="Export only this template (repeat for more)"),
) -> None:
    """Write the current text of every template (or --only some) as a starting point for
    --prompts DIR; an existing file is never overwritten (nothing is written then)."""
    from ioa_synth.core.prompt_overrides import PromptsError, export_templates

    _registered()
    if folder.exists() and not folder.is_dir():
        fail(f"{folder} exists and is not a folder")
    try:
        with write_errors():
            written = export_templates(folder, only or None)
    except PromptsError as exc:
        fail(str(exc))
    typer.echo(f"wrote {len(written)} template(s) under {folder}; edit any, delete the rest, then run with "
               f"--prompts {folder}")
