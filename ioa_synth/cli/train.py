"""``ioa-synth train``: training a prober (SFT warm-start data, GRPO prompts, scoring with the reward)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ioa_synth.cli.common import check_choice, check_out_folder, fail, writable_out, write_errors
from ioa_synth.cli.options import access_option, config_option, local_model_option, sample_option, seed_option
from ioa_synth.cli.options import prompts_option
from ioa_synth.text.plural import plural

train_app = typer.Typer(no_args_is_help=True, help="Training a prober: SFT warm-start data, GRPO prompts, the F1 reward.")


@train_app.command("sft")
def sft(
    results: Path = typer.Option(..., "--results", help="Results folder of a teacher prober's 'evaluate' run (--mode mcq)"),
    out: Path = typer.Option(..., "--out", help="Folder for sft.jsonl"),
    keep_c: bool = typer.Option(False, "--keep-c", help="Keep Category-C questions (the 'w/o filterC' ablation)"),
    fmt: str = typer.Option("messages", "--format", help="messages or prompt-completion (TRL conversational formats)"),
    allow_split: bool = typer.Option(False, "--allow-split", help="Export cases of a split other than train"),
    sample: Optional[int] = sample_option("scored dialogues"),
    seed: int = seed_option("Seed of the --sample draw"),
) -> None:
    """One row per scored dialogue: the teacher's prober messages and its question set
    without Category-C questions; the paper's warm-start is --sample 300 of the train split
    (Table 17). Exit status: 0 written, 2 bad input."""
    from ioa_synth.train.files import FORMATS_SFT, ExportError
    from ioa_synth.train.sft import build_sft, write_sft

    check_choice("--format", fmt, FORMATS_SFT)
    check_out_folder(out)
    writable_out(out)
    try:
        export = build_sft(results, keep_c=keep_c, fmt=fmt, allow_split=allow_split, sample=sample, seed=seed)
    except ExportError as exc:
        fail(str(exc))
    with write_errors():
        path = write_sft(export, out)
    removed = "kept (--keep-c)" if keep_c else f"{export.removed_c} removed"
    typer.echo(f"wrote {plural(len(export.rows), 'row')} to {path} (teacher {export.teacher}; splits "
               f"{', '.join(sorted(export.splits))}); Category-C questions: {removed}; "
               f"{len(export.dropped_empty)} dialogue(s) dropped with no question left; "
               f"{len(export.not_scored)} case(s) not scored in the teacher run", err=True)


@train_app.command("prompts")
def prompts(
    data: Path = typer.Option(..., "--data", help="A built split, e.g. DIR/train (cases searched recursively)"),
    out: Path = typer.Option(..., "--out", help="Folder for <split>.jsonl (trl) or <split>.parquet (verl)"),
    access: str = access_option(),
    fmt: str = typer.Option("trl", "--format", help="trl (JSONL) or verl (parquet)"),
    val: bool = typer.Option(True, "--val/--no-val",
                             help="With --data DIR/train, also write the validation prompts of DIR/val when that "
                                  "folder exists (the paper's GRPO validates on val)"),
) -> None:
    """One row per dialogue: the prober prompt exactly as 'evaluate' sends it, and the case id
    the reward reads; a train split's val split beside it is written too (--no-val: not).
    Exit status: 0 written, 2 bad input."""
    from ioa_synth.evaluate.inputs import InputError
    from ioa_synth.train.files import FORMATS_PROMPTS, ExportError
    from ioa_synth.train.prompts import export_prompts

    check_choice("--format", fmt, FORMATS_PROMPTS)
    check_out_folder(out)
    writable_out(out)
    try:
        with write_errors():
            written = export_prompts(data, out, access=access, fmt=fmt, with_val=val)
    except (InputError, ExportError) as exc:
        fail(str(exc))
    for path, n in written:
        typer.echo(f"wrote {plural(n, 'prompt')} to {path} (access {access}, {fmt} layout)", err=True)


@train_app.command("score")
def score(
    data: Path = typer.Option(..., "--data", help="The built split the prompts came from, e.g. DIR/train"),
    case_id: str = typer.Option(..., "--case-id", help="Case id (path under --data without .json)"),
    completion: Path = typer.Option(..., "--completion", help="File holding the prober reply to score ('-': stdin)"),
    out: Path = typer.Option(Path("ioa-reward"), "--out", help="Catalog folder of the reward's calls (resumable)"),
    config: Optional[Path] = config_option(),
    local_model: Optional[str] = local_model_option(),
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Score one completion with the training reward (the F1 'evaluate' gives its question set)
    and print the result as JSON. Exit status: 0 scored, 1 a call failed, 2 bad input.

    Every argument (the case among --data's cases included) is checked before any endpoint,
    catalog or log is opened."""
    import json
    import sys
    from dataclasses import asdict

    from ioa_synth.cli.common import config_or_fail, llm_command_errors
    from ioa_synth.evaluate.inputs import InputError, load_cases
    from ioa_synth.train.cases import CaseIndex, UnknownCaseError
    from ioa_synth.train.reward import RewardScorer

    check_out_folder(out)
    cfg = config_or_fail(config)
    try:
        cases = load_cases(data)
        CaseIndex(data, cases).find(case_id)
    except (InputError, UnknownCaseError) as exc:
        fail(str(exc))
    from ioa_synth.core.jsonl import read_problem
    from ioa_synth.text.utf8 import decode_utf8

    try:
        raw = sys.stdin.buffer.read() if str(completion) == "-" else completion.read_bytes()
        text = decode_utf8(raw, f"--completion {completion}")
    except OSError as exc:
        fail(f"--completion {read_problem(completion, exc)}")
    except ValueError as exc:  # not UTF-8
        fail(str(exc))
    writable_out(out)
    with llm_command_errors():
        with RewardScorer(data, cfg, out=out, workers=1, local_model=local_model, cases=cases) as reward:
            result = reward.score(case_id, text)
    typer.echo(json.dumps(asdict(result)))
    if result.f1 is None:
        raise typer.Exit(1)
