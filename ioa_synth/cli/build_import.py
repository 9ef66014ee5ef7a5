"""``ioa-synth build import``: IoA-Suite records into a build directory, as accepted cases whose
provenance is ``imported`` (reached through the ``build`` command: see ``cli/__init__.py``)."""

from __future__ import annotations

from pathlib import Path

import typer

from ioa_synth.cli.common import fail, refuse_other_kind, writable_out
from ioa_synth.cli.options import out_dir_option, split_option
from ioa_synth.text.plural import plural

import_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)


@import_app.command("import")
def build_import(
    records: Path = typer.Argument(..., metavar="RECORDS", help="IoA-Suite records: a released data folder "
                                   "(<split>/<domain>/<task_type>_NNN.json), a split folder or one record file"),
    split: str = split_option(),
    out: Path = out_dir_option(),
) -> None:
    """Bring IoA-Suite records (the released data, or samples/evaluate/test) into a build directory as
    accepted cases marked 'imported', with no judge score, so that check, audit, annotate, show,
    status and export work on them. Exit status: 0 imported, 2 bad input (nothing written)."""
    from ioa_synth.build.importer import RecordImportError, import_records

    writable_out(out)
    refuse_other_kind(out, "build")
    try:
        result = import_records(records, split, out)
    except RecordImportError as exc:
        fail(str(exc))
    except KeyboardInterrupt:  # while the records were read and checked: nothing written yet
        fail("interrupted: nothing was imported", code=130)
    if result["interrupted"]:
        typer.echo("Ctrl-C came while the import was being written; it was completed", err=True)
    kept = f"; {plural(len(result['unchanged']), 'case')} imported before, unchanged" if result["unchanged"] else ""
    typer.echo(f"{out}: {plural(len(result['imported']), 'case')} imported into split {split} "
               f"(accepted, provenance 'imported', no judge scores){kept}; next: ioa-synth check --out {out}, "
               f"ioa-synth export --out {out} --to DIR")
