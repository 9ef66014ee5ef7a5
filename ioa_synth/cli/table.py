"""``ioa-synth table ID RESULTS...`` and ``ioa-synth table --list``: the papers' tables
rendered from results folders (docs/tables.md)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ioa_synth.cli.app import app
from ioa_synth.cli.common import PANEL_SHARE, check_choice, fail, write_errors


def list_table():
    """The registry as a :class:`~ioa_synth.tables.model.PaperTable`: id, title, paper
    reference, what it needs, the command that makes it, implemented or what is missing."""
    from ioa_synth.tables.model import PaperTable
    from ioa_synth.tables.registry import all_specs, describe_needs

    rows = [[s.table_id, s.title, s.ref, describe_needs(s), s.command,
             "yes" if s.implemented else f"no: {s.missing}"] for s in all_specs()]
    return PaperTable("list", "Table ids of both papers ('ioa-synth table ID RESULTS...')",
                      ["id", "title", "paper", "needs", "made by", "implemented"], rows)


@app.command("table", rich_help_panel=PANEL_SHARE)
def table_cmd(
    table_id: Optional[str] = typer.Argument(None, metavar="ID", help="Table id, e.g. ioa-12 (see --list)"),
    results: Optional[List[Path]] = typer.Argument(None, metavar="RESULTS",
                                                   help="The results folders the table needs (read, never changed)"),
    show_list: bool = typer.Option(False, "--list", help="List every table id, what it needs, the command that "
                                   "makes it and whether it is implemented"),
    fmt: str = typer.Option("term", "--format", help="term (terminal table), md, csv or latex"),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the table to this file instead of printing it "
                                       "(a new file: an existing one is refused unless --overwrite); for a figure "
                                       "id (belief-fig4), FILE.png writes the figure, any other FILE the table "
                                       "with the figure beside it as FILE's name with .png"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the --out file if it exists"),
    settings: Optional[List[Path]] = typer.Option(None, "--settings", metavar="FILE",
                                                help="A settings table's file instead of its default in configs/ "
                                                     "(ioa-15: a models config .json; ioa-18: the verl settings "
                                                     ".yaml and/or the reward's models config .json); repeatable"),
) -> None:
    """Render a table of the IoA paper (ioa-1 ... ioa-27) or the belief study (belief-N,
    belief-figN) from results folders, in the paper's rows and columns.

    Each id needs folders of given kinds and numbers (e.g. one evaluate results folder per
    prober); other folders are refused with one line. A settings table (ioa-15, ioa-18) reads
    the repository's configs/ files, or those given with --settings. Exit status: 0 rendered, 2 bad
    input (unknown or not yet implemented id, folders of another kind or count, an unreadable
    folder or settings file)."""
    from ioa_synth.core.atomic import write_all_atomic
    from ioa_synth.tables.formats import FORMATS, render, to_rich
    from ioa_synth.tables.registry import TableError, make_table

    check_choice("--format", fmt, FORMATS)
    if out is not None and out.is_dir():
        fail(f"--out {out} is a folder; give a file name")
    if out is not None and out.exists() and not overwrite:
        fail(f"--out {out} exists; give a new file name, or --overwrite to replace it")
    if show_list:
        if table_id is not None or settings:
            fail("--list takes no ID, RESULTS or --settings")
        table = list_table()
    else:
        if table_id is None:
            fail("give a table ID and its RESULTS folders, or --list to see the ids")
        try:
            table = make_table(table_id, list(results or []), list(settings or []))
        except TableError as exc:
            fail(str(exc))
    files = _output_files(table, fmt, out, overwrite)
    if fmt == "term" and out is None:
        from ioa_synth.reports.output import wide_console

        if show_list:
            _print_list()
        else:
            wide_console().print(to_rich(table))
        _figure_note(table)
        return
    if out is None:
        typer.echo(render(table, fmt), nl=False)
        _figure_note(table)
    else:
        with write_errors():
            for path in write_all_atomic(files):
                typer.echo(f"wrote {path}", err=True)


def _output_files(table, fmt: str, out: Optional[Path], overwrite: bool) -> dict[Path, bytes]:
    """What ``--out`` writes: the rendered text to ``out``; for a figure id also its PNG beside
    it (``out`` with the suffix ``.png``), or only the PNG when ``out`` ends in ``.png``.
    Exits 2 (nothing written) for ``FILE.png`` with a table id, or a PNG beside that exists
    without ``--overwrite``."""
    from ioa_synth.tables.formats import render

    if out is None:
        return {}
    if out.suffix.lower() == ".png":
        if table.figure is None:
            fail(f"--out {out}: {table.table_id} is a table, not a figure; give a text file (.md, .csv, .tex, .txt)")
        return {out: table.figure()}
    files = {out: render(table, fmt).encode("utf-8")}
    if table.figure is not None:
        png = out.with_suffix(".png")
        if png.is_dir() or (png.exists() and not overwrite):
            fail(f"{png} (the figure beside --out {out}) exists; give another --out name, or --overwrite to replace it")
        files[png] = table.figure()
    return files


def _figure_note(table) -> None:
    """For a figure id printed to the terminal: where its PNG would go (stderr)."""
    if table.figure is not None:
        typer.echo(f"note: {table.table_id} is a figure; --out FILE.png writes it (or --out FILE.md: the table there, "
                   "the figure beside it as FILE.png)", err=True)


def _print_list() -> None:
    """``--list`` in the terminal: one block per id (a table of six long columns does not fit)."""
    from ioa_synth.tables.registry import all_specs, describe_needs

    for s in all_specs():
        state = "implemented" if s.implemented else f"not implemented yet: {s.missing}"
        typer.echo(f"{s.table_id:<12} {s.title} ({s.ref})\n{'':<12} needs: {describe_needs(s)}\n"
                   f"{'':<12} made by: {s.command}\n{'':<12} {state}")
