"""``ioa-synth export``: publish accepted cases as a Hugging Face dataset folder with its card."""

from __future__ import annotations

from pathlib import Path

import typer

from ioa_synth.cli.app import app
from ioa_synth.cli.common import PANEL_SHARE, check_out_folder, fail, writable_out
from ioa_synth.cli.options import out_dir_option, threshold_option


@app.command(rich_help_panel=PANEL_SHARE)
def export(
    out: Path = out_dir_option(),
    to: Path = typer.Option(..., "--to", help="Folder to write (data/*.jsonl, README.md dataset card, croissant.json)"),
    splits: str = typer.Option("train,val,test", "--splits", help="Comma-separated build splits to export"),
    license: str = typer.Option("cc-by-4.0", "--license", help="Licence of the generated content (Hub licence id)"),
    threshold: float = threshold_option("Jaccard similarity of the near-duplicate check the card reports"),
    name: str = typer.Option(None, "--name", help="Dataset name in the card and Croissant metadata"),
) -> None:
    """Write a folder that datasets.load_dataset(PATH) loads as train/validation/test, with a
    dataset card stating the build's provenance and a Croissant 1.0 file. Splits without
    accepted cases are left out."""
    from ioa_synth.protocol.cells import SPLITS

    chosen = [s.strip() for s in splits.split(",") if s.strip()]
    bad = [s for s in chosen if s not in SPLITS]
    if not chosen or bad:
        fail(f"--splits must list some of {', '.join(SPLITS)} (got {splits!r})")
    check_out_folder(to, "--to")
    writable_out(to, "--to")
    try:
        import datasets  # noqa: F401
        import mlcroissant  # noqa: F401
    except ImportError:
        fail("ioa-synth export needs the export extra: pip install 'ioa-synth[export]'")
    from ioa_synth.build.builddir import BuildDirError
    from ioa_synth.export.run import ExportError, export_build

    try:
        result = export_build(out, to, list(dict.fromkeys(chosen)), license=license, threshold=threshold, name=name)
    except (BuildDirError, ExportError) as exc:
        fail(str(exc))
    sizes = ", ".join(f"{k} {v}" for k, v in result["splits"].items())
    typer.echo(f"wrote {result['path']}: {sizes} (README.md, croissant.json)")
    for s in result["skipped"]:
        typer.echo(f"split {s}: no accepted case, left out", err=True)
    dup = result["near_duplicates"]
    if dup["cross_split"]:
        typer.echo(f"warning: {dup['cross_split']} near-duplicate pair(s) span two splits (see ioa-synth check)",
                   err=True)
