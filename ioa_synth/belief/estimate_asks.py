"""What a ``belief reask`` or a ``belief screen`` will cost, before any call (``ioa-synth
estimate belief reask|screen``), in the contract of :func:`ioa_synth.runs.spend.fold`.

Both commands replay the calls stored under their keys, so only the calls not stored yet
count.

``belief reask``: the re-asks of :func:`ioa_synth.belief.reask.reask_plan` (the same plan,
and the same refusals, as the command): per re-ask the variant probe on the agents' model
and its belief label (with the run's ``--prematch``: the share of answers the judge saw, as
measured in RESULTS). The probes' prompts are rendered from the stored conversation with
the command's own function, so they are counted exactly; the label's prompt shows the
answer (the agents' probe completion times the share that is the answer, measured in
RESULTS). Completion tokens: measured on the variant's calls in RESULTS, else on the run's
default probes and labels, else ``max_tokens``.

``belief screen``: ``samples`` screener answers per item (prompts rendered and counted) and
a belief label for the answers string matching leaves open: the share measured in
``<out stem>.calls``, else every answer (an upper bound: a pilot measures it, e.g. the same
command on the first items). Completion tokens: measured there, else ``max_tokens``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ioa_synth.belief.conversation import component_of, study_call
from ioa_synth.belief.chat import probe_prompt
from ioa_synth.belief.estimate import SHOWN_SHARE, shown_share
from ioa_synth.belief.items import Item
from ioa_synth.belief.reask import Reask, reask_plan, run_memory
from ioa_synth.belief.report import run_labelling
from ioa_synth.belief.screen import screen_prompt
from ioa_synth.core.templates import render_template
from ioa_synth.llm.component_setup import ComponentSetup, component_setup, prices_for
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.prices import Price
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.spend import CallKind, Measured, fold, measure_setups, sampled

#: Re-asks or samples whose prompts are rendered and counted at most (evenly spread).
COUNTED = 400


def estimate_reask(out: Path, variant: str, steps: list[int], config: ToolkitConfig, local_model: str | None,
                   prices: dict[str, Price], tokenizer: str | None, *, sample: int | None = None, seed: int = 0,
                   batch: bool = False) -> dict[str, Any]:
    """The estimate of ``belief reask RESULTS --variant variant --steps steps`` (``out`` is
    RESULTS). Nothing is written: the catalog is opened read-only.

    Raises:
        what :func:`~ioa_synth.belief.reask.reask_plan` raises (the command's refusals);
        ioa_synth.llm.tokens.TokenizerError, ConfigError: see :func:`component_setup`.
    """
    setups = {c: component_setup(c, config, local_model, tokenizer) for c in ("agent", "belief_judge")}
    kind = f"reask-{variant}"
    with Catalog(out, read_only=True) as catalog:
        _, plan = reask_plan(out, steps, catalog, sample, seed)
        stored = _stored_keys(catalog)
        measured = measure_setups(catalog, setups, roles=component_of)
        share = shown_share(catalog, setups["agent"], "probe", "answer")
    prematch = run_labelling(out) == "prematch"
    judged, judged_source = 1.0, "all answers"
    if prematch:
        judged, judged_source = _share(measured, ("belief_judge", kind), ("agent", kind)) or \
            _share(measured, ("belief_judge", "probe"), ("agent", "probe")) or (1.0, "all answers (none measured)")

    def key(entry: Reask, comp: str) -> tuple:
        conv, agent, step = entry
        return study_call(conv["item"]["item_id"], step, comp, kind, conv["k"], agent.id).key

    asks = [e for e in plan if key(e, "agent") not in stored]
    labels = [e for e in plan if key(e, "belief_judge") not in stored]
    completion = {c: _completion(measured, setups[c], c, (kind, "probe")) for c in setups}
    memory = run_memory(out)
    counted = sampled(asks, COUNTED)
    ask_prompt = _mean([setups["agent"].counter.messages(probe_prompt(
        agent, Item.model_validate(conv["item"]), conv["turns"], step, memory, variant).messages)
        for conv, agent, step in counted])
    answer = completion["agent"][0] * share
    label_prompt = _mean([_judge_tokens(setups["belief_judge"], Item.model_validate(conv["item"])) + answer
                          for conv, _, _ in sampled(labels, COUNTED)])
    kinds = [_kind(measured, "agent", kind, f"{variant} re-ask", len(asks), ask_prompt, completion["agent"][0]),
             _kind(measured, "belief_judge", kind, "belief label", len(labels) * judged, label_prompt,
                   completion["belief_judge"][0])]
    assumptions = {
        "command": "belief reask", "variant": variant, "steps": steps, "reasks": len(plan),
        "already_done": len(plan) - len(asks), "labelling": "prematch" if prematch else "judge",
        "judged_share": round(judged, 3), "judged_source": judged_source, "batch": batch,
        "prompts_counted_for_reasks": len(counted), "shown_output_share": {"probe": round(share, 3)},
        "completion_tokens_per_call": {c: round(v[0], 1) for c, v in completion.items()},
        "completion_source": {c: v[1] for c, v in completion.items()},
        "tokenizers": {c: st.describe() for c, st in setups.items()},
    }
    return fold(kinds, prices_for(setups, prices), assumptions)


def estimate_screen(items: list[Item], work: Path, samples: int, config: ToolkitConfig, local_model: str | None,
                    prices: dict[str, Price], tokenizer: str | None, *, batch: bool = False) -> dict[str, Any]:
    """The estimate of ``belief screen`` of ``items`` with ``samples`` answers each, its
    calls kept in ``work`` (``<out stem>.calls``, opened read-only when it exists).

    Raises:
        ioa_synth.llm.tokens.TokenizerError, ConfigError: see :func:`component_setup`.
    """
    setups = {c: component_setup(c, config, local_model, tokenizer) for c in ("screener", "belief_judge")}
    stored: set[tuple] = set()
    measured = Measured()
    if (work / "catalog.duckdb").is_file():
        with Catalog(work, read_only=True) as catalog:
            stored = _stored_keys(catalog)
            measured = measure_setups(catalog, setups, roles=component_of)
    judged, judged_source = _share(measured, ("belief_judge", "screen"), ("screener", "sample")) or \
        (1.0, "every answer not string-matched, as an upper bound (none measured)")
    entries = [(item, i) for item in items for i in range(samples)]
    asks = [(item, i) for item, i in entries
            if study_call(item.item_id, i, "screener", "sample", None, None).key not in stored]
    completion = {"screener": _completion(measured, setups["screener"], "screener", ("sample",)),
                  "belief_judge": _completion(measured, setups["belief_judge"], "belief_judge", ("screen",))}
    counted = sampled(asks, COUNTED)
    ask_prompt = _mean([setups["screener"].counter.messages(screen_prompt(item).messages) for item, _ in counted])
    answer = completion["screener"][0] * SHOWN_SHARE
    label_prompt = _mean([_judge_tokens(setups["belief_judge"], item) + answer for item, _ in counted])
    kinds = [_kind(measured, "screener", "sample", "screener answer", len(asks), ask_prompt,
                   completion["screener"][0]),
             _kind(measured, "belief_judge", "screen", "belief label", len(asks) * judged, label_prompt,
                   completion["belief_judge"][0])]
    assumptions = {
        "command": "belief screen", "items": len(items), "samples": samples, "answers": len(entries),
        "already_done": len(entries) - len(asks), "judged_share": round(judged, 3), "judged_source": judged_source,
        "judged_of": "screener answers",
        "batch": batch, "prompts_counted_for_answers": len(counted),
        "completion_tokens_per_call": {c: round(v[0], 1) for c, v in completion.items()},
        "completion_source": {c: v[1] for c, v in completion.items()},
        "tokenizers": {c: st.describe() for c, st in setups.items()},
    }
    return fold(kinds, prices_for(setups, prices), assumptions)


def _stored_keys(catalog: Catalog) -> set[tuple]:
    """The keys ``(case_id, stage, role, attempt)`` of the successful calls in ``catalog``
    (those a re-run replays)."""
    return {tuple(r) for r in catalog.execute("SELECT DISTINCT case_id, stage, role, attempt FROM llm_calls "
                                              "WHERE error IS NULL")}


def _of(measured: Measured, comp: str, kind: str) -> list[tuple[int, str]]:
    """The measured ``(stage, role)`` keys of ``comp``'s calls of ``kind``."""
    return [key for key in measured.calls if key[1].split(":")[:2] == [comp, kind]]


def _mean_of(measured: Measured, table: dict[tuple[int, str], float], comp: str, kind: str) -> float | None:
    keys = _of(measured, comp, kind)
    n = sum(measured.calls[k] for k in keys)
    return sum(table[k] * measured.calls[k] for k in keys) / n if n else None


def _completion(measured: Measured, setup: ComponentSetup, comp: str, kinds: tuple[str, ...]) -> tuple[float, str]:
    """``comp``'s completion tokens per call and where the figure comes from: measured on
    its calls of the first of ``kinds`` that has any, else its ``max_tokens``."""
    for kind in kinds:
        value = _mean_of(measured, measured.completion, comp, kind)
        if value is not None:
            return value, f"measured ({kind})"
    return float(setup.max_tokens), f"max_tokens {setup.max_tokens}"


def _share(measured: Measured, judged: tuple[str, str], asked: tuple[str, str]) -> tuple[float, str] | None:
    """Calls of ``judged`` per call of ``asked`` (``(component, kind)``) measured, or ``None``."""
    n = sum(measured.calls[k] for k in _of(measured, *asked))
    if not n:
        return None
    return min(1.0, sum(measured.calls[k] for k in _of(measured, *judged)) / n), f"measured ({judged[1]})"


def _kind(measured: Measured, comp: str, kind: str, label: str, calls: float, prompt: float,
          completion: float) -> CallKind:
    """A :class:`CallKind` with the failed tries measured on ``comp``'s ``kind`` calls added."""
    retried = 1 + (_mean_of(measured, measured.retries, comp, kind) or 0.0)
    return CallKind(comp, label, calls * retried, prompt, completion)


def _judge_tokens(setup: ComponentSetup, item: Item) -> int:
    """The belief judge's prompt about ``item`` with an empty answer."""
    return setup.counter.messages(render_template(
        "belief/belief_judge.jinja2", question=item.question, answer="", true_statement=item.true_statement,
        manipulated_statement=item.manipulated_statement).messages)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
