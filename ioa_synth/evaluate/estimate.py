"""What an ``evaluate`` will cost, before any call (``ioa-synth estimate evaluate``).

Calls per case not yet scored: the prober's (one; two in the ``ambiguity`` mode; none
with ``--questions-from``), the simulator's (both participants, every rollout) and one
validity-filter call when a question diverges (share ``filtered``: measured in the results
folder, else 1). Each call is sent again as often as the folder measured (content retries).

Tokens: the prober's first prompt is rendered per case and counted; the simulator's and
the filter's prompts are rendered per case with no question and counted, plus the
questions they show: the prober's completion tokens (measured, else ``max_tokens``) times
:data:`SHOWN_SHARE`, or the share measured on the calls stored in the folder.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from ioa_synth.core.templates import render_template
from ioa_synth.evaluate.access import filter_context
from ioa_synth.evaluate.inputs import load_cases, pick_cases
from ioa_synth.evaluate.records import read_record
from ioa_synth.evaluate.run import component_of, needed_components
from ioa_synth.evaluate.multiparty import TEMPLATES as MULTI, is_multi, multi_filter_context, participants_of
from ioa_synth.evaluate.simulator import simulator_prompt
from ioa_synth.evaluate.validity import TEMPLATE as FILTER_TEMPLATE
from ioa_synth.probing.cases import EvalCase
from ioa_synth.probing.probers import PROBERS, first_prompt
from ioa_synth.probing.calls import STAGES
from ioa_synth.llm.component_setup import component_setup, prices_for
from ioa_synth.llm.config import ToolkitConfig, load_config
from ioa_synth.llm.prices import Price
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.spend import CallKind, fold, measure_setups, sampled

#: Share of the prober's completion tokens that a simulator or filter prompt showing its
#: questions carries (the JSON keys go, the "Question n:" framing comes): stated.
SHOWN_SHARE = 0.8


def estimate_evaluate(params: dict[str, Any], prices: dict[str, Price], tokenizer: str | None, *,
                      cases: list[EvalCase] | None = None, config: ToolkitConfig | None = None,
                      catalog: Catalog | None = None) -> dict[str, Any]:
    """The estimate of ``evaluate`` with the command's ``params`` (its parsed options: ``data``,
    ``out``, ``config``, ``limit``, ``sample``, ``seed``, ``mode``, ``access``, ``rollouts``, ``questions_from``,
    ``local_model``, ``batch``, ``batch_dir``). A run about to start passes what it has
    already read: ``cases`` (after ``--limit`` or ``--sample``), ``config`` and its open ``catalog``
    (otherwise the folder's is opened read-only, when there is one).

    Raises:
        ioa_synth.evaluate.inputs.InputError / ValueError: unreadable ``--data``.
        ioa_synth.llm.tokens.TokenizerError, ConfigError: see :func:`component_setup`.
    """
    mode, rollouts, out = params["mode"], params["rollouts"], Path(params["out"])
    config = config if config is not None else load_config(params["config"])
    if cases is None:
        cases = load_cases(params["data"])
        cases = pick_cases(cases, params["limit"], params.get("sample"), params.get("seed", 0))
    todo = [c for c in cases if getattr(read_record(out, c.case_id), "status", None) != "scored"]
    needed = needed_components(mode, bool(params["questions_from"]))
    setups = {c: component_setup(c, config, params["local_model"], tokenizer) for c in needed}
    opened = catalog is None and (out / "catalog.duckdb").is_file()
    if opened:
        catalog = Catalog(out, read_only=True)
    try:
        measured = measure_setups(catalog, setups, roles=component_of)
        filtered = _filtered_share(catalog)
    finally:
        if opened and catalog is not None:
            catalog.close()

    def by_component(table: dict[tuple[int, str], float], comp: str) -> float | None:
        values = [v for (s, r), v in table.items() if s == STAGES[comp] and component_of(r) == comp]
        return sum(values) / len(values) if values else None

    def completion(comp: str) -> float:
        value = by_component(measured.completion, comp)
        return value if value is not None else float(setups[comp].max_tokens) if comp in setups else 0.0

    prober_out = completion("prober") if "prober" in setups else 0.0
    kinds: list[CallKind] = []
    n = len(todo)
    counted = sampled(todo)
    share: dict[str, float] = {}

    def shown(comp: str, skeleton: float) -> float:
        seen = by_component(measured.prompt, comp)
        share[comp] = SHOWN_SHARE if seen is None or not prober_out else max(0.0, min(2.0, (seen - skeleton) / prober_out))
        return skeleton + share[comp] * prober_out

    def retried(comp: str) -> float:
        return 1 + (by_component(measured.retries, comp) or 0.0)

    if "prober" in setups:
        prober = PROBERS[mode]
        template = getattr(prober, "first_template", None)
        make = prober.prompt if template is None else partial(first_prompt, template)  # wordnet: its MCQ prompt
        first = _mean([setups["prober"].counter.messages(make(c, params["access"]).messages) for c in counted])
        calls = 2 if mode == "ambiguity" else 1
        kinds.append(CallKind("prober", f"prober ({mode})", n * calls * retried("prober"), first, prober_out))
    if "simulator" in setups:
        prompts = [simulator_prompt(c, p) for c in counted for p in participants_of(c)]
        sk = _mean([setups["simulator"].counter.messages(render_template(name, **ctx, questions=[]).messages)
                    for name, ctx in prompts])
        people = _mean([len(participants_of(c)) for c in counted]) if counted else 2  # one call per participant
        kinds.append(CallKind("simulator", "simulator", n * people * rollouts * retried("simulator"),
                              shown("simulator", sk), completion("simulator")))
    if "validity_filter" in setups:
        sk = _mean([setups["validity_filter"].counter.messages(render_template(
            MULTI["filter"], **multi_filter_context(c), questions=[]).messages) if is_multi(c) else
                    setups["validity_filter"].counter.messages(render_template(
                        FILTER_TEMPLATE, **filter_context(c), questions=[]).messages) for c in counted])
        kinds.append(CallKind("validity_filter", "validity filter", n * filtered * retried("validity_filter"),
                              shown("validity_filter", sk), completion("validity_filter")))
    assumptions = {
        "command": "evaluate", "mode": mode, "rollouts": rollouts, "cases": n, "already_scored": len(cases) - n,
        "prompts_counted_for_cases": len(counted),
        "batch": bool(params.get("batch") or params.get("batch_dir")), "filtered_share": filtered,
        "completion_tokens_per_call": {c: round(completion(c), 1) for c in setups},
        "completion_source": {c: "measured" if by_component(measured.completion, c) is not None
                              else f"max_tokens {setups[c].max_tokens}" for c in setups},
        "shown_output_share": {k: round(v, 3) for k, v in share.items()},
        "tokenizers": {c: s.describe() for c, s in setups.items()},
    }
    return fold(kinds, prices_for(setups, prices), assumptions)


def estimate_of_run(params: dict[str, Any], cases: list[EvalCase], config: ToolkitConfig,
                    catalog: Catalog) -> dict[str, Any] | None:
    """The estimate an ``evaluate`` run starts from (``status`` shows it beside what was
    spent), with the prices of ``--config`` (``price_per_mtok``) and each component's own
    tokenizer; ``None`` when it cannot be made (a tokenizer that cannot be read...): a run
    never fails for it."""
    try:
        return estimate_evaluate(params, {}, None, cases=cases, config=config, catalog=catalog)
    except Exception:  # noqa: BLE001 - the estimate is a note for status, not part of the run
        return None


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def _filtered_share(catalog: Catalog | None) -> float:
    """Share of the cases with a simulator call that also got a filter call (1 without any)."""
    if catalog is None:
        return 1.0
    rows = catalog.execute(
        "SELECT count(DISTINCT case_id) FILTER (WHERE stage = ?), count(DISTINCT case_id) FILTER (WHERE stage = ?) "
        "FROM llm_calls WHERE error IS NULL", [STAGES["simulator"], STAGES["validity_filter"]])
    simulated, filtered = rows[0] if rows else (0, 0)
    return filtered / simulated if simulated else 1.0

