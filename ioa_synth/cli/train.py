"""``ioa-synth train``: training data for a prober (SFT warm-start, GRPO prompts)."""

from __future__ import annotations

from pathlib import Path

import typer

from ioa_synth.cli.common import check_choice, check_out_folder, fail

train_app = typer.Typer(no_args_is_help=True, help="Training data for a prober (SFT warm-start, GRPO prompts).")


@train_app.command("sft")
def sft(
    results: Path = typer.Option(..., "--results", help="Results folder of a teacher prober's 'evaluate' run (--mode mcq)"),
    out: Path = typer.Option(..., "--out", help="Folder for sft.jsonl"),
    keep_c: bool = typer.Option(False, "--keep-c", help="Keep Category-C questions (the 'w/o filterC' ablation)"),
    fmt: str = typer.Option("messages", "--format", help="messages or prompt-completion (TRL conversational formats)"),
    allow_split: bool = typer.Option(False, "--allow-split", help="Export cases of a split other than train"),
) -> None:
    """One row per scored dialogue: the teacher's prober messages and its question set
    without Category-C questions. Exit status: 0 written, 2 bad input."""
    from ioa_synth.train.files import FORMATS_SFT, ExportError
    from ioa_synth.train.sft import build_sft, write_sft

    check_choice("--format", fmt, FORMATS_SFT)
    check_out_folder(out)
    try:
        export = build_sft(results, keep_c=keep_c, fmt=fmt, allow_split=allow_split)
    except ExportError as exc:
        fail(str(exc))
    path = write_sft(export, out)
    removed = "kept (--keep-c)" if keep_c else f"{export.removed_c} removed"
    typer.echo(f"wrote {len(export.rows)} rows to {path} (teacher {export.teacher}; splits "
               f"{', '.join(sorted(export.splits))}); Category-C questions: {removed}; "
               f"{len(export.dropped_empty)} dialogue(s) dropped with no question left; "
               f"{len(export.not_scored)} case(s) not scored in the teacher run", err=True)


@train_app.command("prompts")
def prompts(
    data: Path = typer.Option(..., "--data", help="A built split, e.g. DIR/train (cases searched recursively)"),
    out: Path = typer.Option(..., "--out", help="Folder for <split>.jsonl (trl) or <split>.parquet (verl)"),
    access: str = typer.Option("public", "--access", help="Prober access: public, thoughts, private, private+thoughts"),
    fmt: str = typer.Option("trl", "--format", help="trl (JSONL) or verl (parquet)"),
) -> None:
    """One row per dialogue: the prober prompt exactly as 'evaluate' sends it, and the case id
    the reward reads. Exit status: 0 written, 2 bad input."""
    from ioa_synth.evaluate.access import ACCESS_LEVELS
    from ioa_synth.evaluate.inputs import InputError
    from ioa_synth.train.files import FORMATS_PROMPTS, ExportError
    from ioa_synth.train.prompts import export_prompts

    check_choice("--access", access, ACCESS_LEVELS)
    check_choice("--format", fmt, FORMATS_PROMPTS)
    check_out_folder(out)
    try:
        path, n = export_prompts(data, out, access=access, fmt=fmt)
    except (InputError, ExportError) as exc:
        fail(str(exc))
    typer.echo(f"wrote {n} prompts to {path} (access {access}, {fmt} layout)", err=True)
