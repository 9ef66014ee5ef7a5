"""``ioa-synth estimate build|evaluate|belief run|belief reask|belief screen|collab run|meeting
probe ...``: calls, tokens and cost of a run before any call.

The arguments after the command are that command's own, read by that command's parser
and checked by that command's own code (:func:`~ioa_synth.cli.build.build_inputs`,
:func:`~ioa_synth.cli.evaluate.evaluate_inputs`, :func:`~ioa_synth.cli.belief_inputs.run_inputs`,
:func:`~ioa_synth.cli.belief_inputs.reask_inputs`, :func:`~ioa_synth.cli.belief_inputs.screen_inputs`,
:func:`~ioa_synth.cli.collab_inputs.run_inputs`, :func:`~ioa_synth.cli.meeting_inputs.probe_inputs`),
so the estimate refuses what the command refuses, with the same line; ``--prices``,
``--pass-rates``, ``--tokenizer`` and ``--json`` are the estimate's. No endpoint is opened,
nothing written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from ioa_synth.cli.app import app
from ioa_synth.cli.common import PANEL_BUILD, fail
from ioa_synth.cli.options import json_option

ESTIMATED = ("build", "evaluate", "belief", "collab", "meeting")
#: The subcommands estimated of a command group (``estimate belief run ...``).
SUBCOMMAND = {"belief": ("run", "reask", "screen"), "collab": ("run",), "meeting": ("probe",)}


@app.command(rich_help_panel=PANEL_BUILD, context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def estimate(
    ctx: typer.Context,
    command: str = typer.Argument(..., metavar="COMMAND",
                                  help="The command to estimate, build, evaluate, 'belief run', 'belief reask', "
                                  "'belief screen', 'collab run' or 'meeting probe', followed by its arguments"),
    prices: Optional[Path] = typer.Option(None, "--prices", help="USD per million tokens per component or model "
                                          '(JSON: {"generator": {"input": 2.5, "output": 10, "batch": 0.5}})'),
    pass_rates: Optional[Path] = typer.Option(None, "--pass-rates", help="Build pass rates to assume (JSON: "
                                              '{"stage1": {"first_attempt": 0.7, "after_regeneration": 0.9}})'),
    tokenizer: Optional[str] = typer.Option(None, "--tokenizer", help="Count with: chars, tiktoken:<encoding>, "
                                            "gguf:<path>, or an embedded model's name (default: per component)"),
    as_json: bool = json_option("Print JSON instead of a table"),
) -> None:
    """Estimate the calls, tokens and cost of 'build', 'evaluate', 'belief run', 'belief reask',
    'belief screen', 'collab run' or 'meeting probe' with the same arguments (ioa-synth estimate build --split test --out DIR ...), before any
    call: nothing is sent or written.

    Exit status: 0, or 2 for bad input.
    """
    from ioa_synth.build.assumed_rates import PassRatesError, load_pass_rates
    from ioa_synth.cli.common import check_choice
    from ioa_synth.llm.config import ConfigError
    from ioa_synth.llm.prices import PricesError, load_prices
    from ioa_synth.llm.tokens import TokenizerError

    check_choice("the command", command, ESTIMATED)
    try:
        price_table = load_prices(prices) if prices is not None else {}
        rates = load_pass_rates(pass_rates) if pass_rates is not None else {}
    except (PricesError, PassRatesError) as exc:
        fail(str(exc))
    # The command's own parser, as a command of the root: a usage error reads as the
    # command's own (the root prints it, with the hint 'ioa-synth build --help').
    target = typer.main.get_command(app).get_command(ctx, command)  # type: ignore[attr-defined]
    rest, name = list(ctx.args), command
    if command in SUBCOMMAND:
        wanted = SUBCOMMAND[command]
        if not rest or rest[0] not in wanted:
            named = " or ".join(f"'{command} {w}'" for w in wanted)
            fail(f"estimate {command} estimates {named}: give 'ioa-synth estimate {command} {wanted[0]} ...'"
                 + (f" (or {', '.join(wanted[1:])})" if len(wanted) > 1 else ""))
        target, rest, name = target.get_command(ctx, rest[0]), rest[1:], f"{command} {rest[0]}"
    sub = target.make_context(name, rest, parent=ctx.parent)
    from ioa_synth.cli.estimate_more import ESTIMATES

    try:
        if command == "build":
            est = _build(sub.params, price_table, rates, tokenizer)
        elif command == "evaluate":
            est = _evaluate(sub.params, price_table, tokenizer)
        elif name in ESTIMATES:
            est = ESTIMATES[name](sub.params, price_table, tokenizer)
        elif command == "belief":
            est = _belief(sub.params, price_table, tokenizer)
        else:
            est = _collab(sub.params, price_table, tokenizer)
    except (ConfigError, TokenizerError, ValueError) as exc:
        fail(str(exc))
    _note_unused_prices(price_table, est)
    if as_json:
        typer.echo(json.dumps(est, indent=2, default=str))
        return
    from ioa_synth.reports.output import wide_console
    from ioa_synth.reports.spend_table import assumption_lines, estimate_table

    console = wide_console()
    batch = est["assumptions"].get("batch")
    console.print(estimate_table(est, f"estimate: ioa-synth {name}" + (" --batch" if batch else "")))
    for line in assumption_lines(est):
        console.print(line, soft_wrap=True, markup=False, highlight=False)


def _note_unused_prices(price_table: dict, est: dict[str, Any]) -> None:
    """Say on stderr which ``--prices`` keys name neither a component nor a model of this run
    (a typo such as ``genrator`` would otherwise leave a component unpriced without a word;
    a shared prices file may hold other models, so this is a note, not an error)."""
    models = {t.get("model") for t in est["assumptions"].get("tokenizers", {}).values()}
    unused = [k for k in price_table if k not in est["components"] and k not in models]
    if unused:
        typer.echo(f"note: --prices: {', '.join(repr(k) for k in unused)} "
                   f"{'names' if len(unused) == 1 else 'name'} no component or model of this run "
                   f"(components: {', '.join(est['components'])}; models: {', '.join(sorted(m for m in models if m))})",
                   err=True)


def _refuse_changed_build_setup(p: dict[str, Any], config: Any) -> None:
    """Refuse, as ``build`` does before it starts anything, a ``--out`` whose stored calls were
    made with another setup (another ``--participants``, ``--meetings``, ``--language``,
    model or template): the same check on the catalog opened read-only, no server started."""
    from functools import partial

    from ioa_synth.build.fingerprint import build_setup_description, check_build_setup
    from ioa_synth.build.tables import BUILD_TABLES
    from ioa_synth.runs.run_rows import FingerprintMismatch
    from ioa_synth.runs.setup_check import check_folder_first

    describe = partial(build_setup_description, participants=p.get("participants") or 2,
                       language=p.get("language"), meetings=p.get("meetings") or 1)
    try:
        check_folder_first(p["out"], [BUILD_TABLES], ["generator", "judge"], config, p["local_model"],
                           describe=describe, check=check_build_setup)
    except FingerprintMismatch as exc:
        fail(str(exc))


def _build(params: dict[str, Any], prices: dict, rates: dict, tokenizer: str | None) -> dict[str, Any]:
    """The estimate of ``build`` with its parsed ``params``, after the command's own checks
    (:func:`~ioa_synth.cli.build.build_inputs`: what ``build`` refuses, this refuses)."""
    from ioa_synth.build.estimate import BuildPlan, estimate_build
    from ioa_synth.cli.build import build_inputs

    p = params
    inputs = build_inputs(p["split"], p["out"], p["seeds"], p["config"], p["limit"], p["type_mix"], p["workers"],
                          p["batch"], p["batch_dir"], p.get("language"))
    _refuse_changed_build_setup(p, inputs.config)
    seeds = [s for plan in inputs.plans.values() for s in plan.primary]
    reserve = sum(len(plan.reserve) for plan in inputs.plans.values())
    plan = BuildPlan(seeds, reserve, p["split"], p["type_mix"], rates, inputs.split_seeds,
                     participants=p.get("participants") or 2, meetings=p.get("meetings") or 1,
                     language=p.get("language"))
    return estimate_build(plan, p["out"], inputs.config, p["local_model"], prices, tokenizer,
                          batch=inputs.batch is not None)


def _evaluate(params: dict[str, Any], prices: dict, tokenizer: str | None) -> dict[str, Any]:
    """The estimate of ``evaluate`` with its parsed ``params``, after the command's own checks
    (:func:`~ioa_synth.cli.evaluate.evaluate_inputs`: what ``evaluate`` refuses, this refuses)."""
    from ioa_synth.cli.evaluate import evaluate_inputs
    from ioa_synth.evaluate.estimate import estimate_evaluate

    p = params
    inputs = evaluate_inputs(p["data"], p["out"], p["config"], p["limit"], p["mode"], p["rollouts"], p["permute_seed"],
                             p["questions_from"], p["workers"], p["batch"], p["batch_dir"], sample=p.get("sample"),
                             seed=p.get("seed", 0))
    return estimate_evaluate(p, prices, tokenizer, cases=inputs.todo, config=inputs.config)


def _belief(params: dict[str, Any], prices: dict, tokenizer: str | None) -> dict[str, Any]:
    """The estimate of ``belief run`` with its parsed ``params``, after the command's own
    checks (:func:`~ioa_synth.cli.belief_inputs.run_inputs`: what ``belief run`` refuses, this refuses)."""
    from ioa_synth.belief.estimate import estimate_belief
    from ioa_synth.cli.belief_inputs import run_inputs

    p = params
    inputs = run_inputs(p["items"], p["out"], p["agents"], p["attackers"], p["rounds"], p["memory"], p["seed"],
                        p["prematch"], p["config"], p["workers"], p["limit"], p["batch"], p["batch_dir"])
    return estimate_belief(inputs.job, p["out"], inputs.config, p["local_model"], prices, tokenizer,
                           batch=inputs.batch is not None)


def _collab(params: dict[str, Any], prices: dict, tokenizer: str | None) -> dict[str, Any]:
    """The estimate of ``collab run`` with its parsed ``params``, after the command's own
    checks (:func:`~ioa_synth.cli.collab_inputs.run_inputs`: what ``collab run`` refuses, this refuses)."""
    from ioa_synth.cli.collab_inputs import run_inputs
    from ioa_synth.collab.estimate import estimate_collab

    p = params
    inputs = run_inputs(p["bench"], p["tasks"], p["out"], p["configs"], p["detector"], p["config"], p["workers"],
                        p["limit"], p["seed"], p["memory_limit"], p["max_extra_rounds"], p["batch"], p["batch_dir"])
    return estimate_collab(inputs.job, p["out"], inputs.config, p["local_model"], prices, tokenizer,
                           batch=inputs.batch is not None)
