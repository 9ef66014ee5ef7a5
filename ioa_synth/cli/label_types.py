"""``ioa-synth label-types``: type labels of disagreements by a judge (App. B.5 taxonomy)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Optional

import typer

from ioa_synth.cli.app import app
from ioa_synth.cli.common import (PANEL_QUALITY, _kinds, check_out_folder, config_or_fail, fail,
                                  llm_command_errors, lowered_workers)
from ioa_synth.cli.options import (config_option, json_option, limit_option, local_model_option, prompts_option,
                                   workers_option)


def types_option(detail: str) -> Any:
    """``--types FOLDER``: judged types from a ``label-types`` results folder; ``detail``
    says what the command does with them."""
    return typer.Option(None, "--types", help=f"Judged types from a 'label-types' results folder: {detail}")


def load_type_labels(folder: Path):
    """The :class:`~ioa_synth.typelabels.labels.TypeLookup` of a ``--types`` folder; exit 2
    with its one-line error."""
    from ioa_synth.typelabels.labels import LabelsError, load_lookup

    try:
        return load_lookup(folder)
    except LabelsError as exc:
        fail(str(exc))


@app.command("label-types", rich_help_panel=PANEL_QUALITY)
def label_types_cmd(
    inputs: List[Path] = typer.Argument(..., metavar="FOLDER", help="Build folders, folders of record files, or "
                                        "finished meeting session folders (read, never changed)"),
    out: Path = typer.Option(..., "--out", help="Results folder for labels.jsonl, summary.json and the calls"),
    config: Optional[Path] = config_option("its type_judge block"),
    limit: Optional[int] = limit_option("Label the first N cases (or sessions) only"),
    workers: int = workers_option("Judge calls"),
    local_model: Optional[str] = local_model_option("when TYPE_JUDGE_BASE_URL/OPENAI_BASE_URL is unset"),
    as_json: bool = json_option("Print the summary JSON instead of tables"),
    prompts: Optional[Path] = prompts_option(),
) -> None:
    """Label each misalignment point (and validated meeting disagreement) with its type.

    The type_judge component reads each disagreement without its planted type. Labels go
    to OUT/labels.jsonl keyed by case id and MA id; where the input has planted types (a
    self-built build), the agreement and Cohen's kappa of judged vs planted types are
    printed and stored in OUT/summary.json. Give OUT to 'report --by type --types OUT' and
    'meeting report --types OUT'. Exit status: 0 all labelled, 1 some case failed (run
    again to retry), 2 bad input or a setup error, 130 interrupted.
    """
    from ioa_synth.evaluate.analysis.render import to_rich
    from ioa_synth.reports.output import wide_console
    from ioa_synth.text.plural import plural
    from ioa_synth.typelabels.items import ItemsError, collect
    from ioa_synth.typelabels.run import COMPONENT, label_types
    from ioa_synth.typelabels.tables import agreement_table, mix_table

    check_out_folder(out, "--out")
    inside = next((p for p in inputs if out.resolve().is_relative_to(p.resolve())), None)
    if inside is not None:
        fail(f"--out {out} is inside the input {inside}; labels go into a folder of their own")
    cfg = config_or_fail(config)
    _kinds()  # every capability's folder kinds, so that an export or a results folder is named as such
    try:
        units = collect(inputs)
    except ItemsError as exc:
        fail(str(exc))
    if not units:
        fail("nothing to label: no accepted case, record or validated meeting disagreement in the inputs")
    units = units[:limit] if limit else units
    workers, announce = lowered_workers([COMPONENT], workers)
    announce()
    args = {"inputs": [str(p) for p in inputs], "limit": limit, "workers": workers, "local_model": local_model,
            "config": str(config) if config else None}
    with llm_command_errors():
        summary = label_types(units, out, inputs, cfg, workers=workers, local_model=local_model, args=args,
                              console=wide_console(stderr=True))
    if as_json:
        typer.echo(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        console = wide_console()
        if summary["mix"]:
            console.print(to_rich(mix_table(summary["mix"])))
        if summary["meeting_mix"]:
            console.print(to_rich(mix_table(summary["meeting_mix"], "Judged types of validated meeting disagreements")))
        agree = summary["agreement"]
        if agree["pairs"]:
            console.print(to_rich(agreement_table(agree)))
            console.print(f"agreement with planted types: {agree['agree']}/{agree['pairs']} "
                          f"({agree['agreement']:.1%}), Cohen's kappa "
                          f"{'n/a' if agree['kappa'] is None else format(agree['kappa'], '.3f')}", soft_wrap=True)
        console.print(f"type judge {summary['model']}: {plural(summary['points'], 'point')} of "
                      f"{plural(summary['cases'], 'case')}, {summary['labelled']} labelled, {summary['failed']} "
                      f"case(s) failed; wrote {out / 'labels.jsonl'} and {out / 'summary.json'}", soft_wrap=True)
    if summary["failed"]:
        for err in summary["errors"][:5]:
            typer.echo(f"failed: {err}", err=True)
        typer.echo(f"{summary['failed']} case(s) could not be labelled; run the same command again to retry them",
                   err=True)
        raise typer.Exit(1)
