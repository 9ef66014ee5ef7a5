"""What a ``build`` will cost, before any call (``ioa-synth estimate build``): calls per
component from the plan, prompt tokens counted on the rendered prompts, completion tokens
from what the build directory has measured (:mod:`ioa_synth.runs.spend`).

Calls. Each case not yet accepted or discarded (a reserve tuple drawn for a discard
counts too, as far as the reserve lasts) makes, per stage *s*: one generation, one more
when its first attempt fails (probability 1 - ``first_attempt``); a judge call for each
generation that passed the content rules and gates (share ``judged``); stage 2 only when
stage 1 passed (``after_regeneration``). Each call is sent again ``retries`` times on
average (unusable replies, failed sends). The rates are the build directory's own
(:func:`ioa_synth.build.passrates.pass_rates`), else stated defaults, unless given
(``--pass-rates FILE``, the same keys per stage): :mod:`ioa_synth.build.assumed_rates`.

Tokens. The stage-1 generator prompt of every case is rendered and counted (of at most
:data:`~ioa_synth.runs.spend.COUNTED_CASES` cases evenly spread over the plan: the mean of a
few hundred is within a percent of the whole). A prompt
that shows an earlier output (the judges', stage 2's) is rendered with that output left
blank (its plan's names, ids and turns only) and counted, plus the expected tokens of the
output it shows: the producing call's completion tokens times the share of them the
prompt carries (:data:`EMBED_SHARE`, or measured on the calls stored here). A
regeneration's prompt adds the judge's feedback (its completion). Completion tokens are
the means measured here per stage and role, else the request's ``max_tokens``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any, Callable

from ioa_synth.build.assumed_rates import assumed_rates
from ioa_synth.build.planted import split_plans
from ioa_synth.build.stages import DIALOGUE
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.prices import Price
from ioa_synth.protocol.plan_passes import THOUGHTS_ROLE
from ioa_synth.protocol.rubric import load_rubric
from ioa_synth.build.estimate_prompts import SkeletonCase, skeletons
from ioa_synth.build.estimate_series import judge_carried, series_kinds, with_series_notes
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.spend import CallKind, Measured, fold, measure, sampled
from ioa_synth.seeds.tuples import SeedTuple
from ioa_synth.llm.component_setup import ComponentSetup, component_setup, prices_for

#: Share of a generated output's completion tokens that a later prompt showing it carries
#: (no JSON keys or quotes; the stage-1 judge does not see the outline), per prompt: the
#: stage-1 judge, the stage-2 generator, the stage-2 judge (of both outputs). Measured with
#: the Qwen2.5 tokenizer on the toolkit's hand-written sample case (2 and 4 points, JSON
#: as ``json.dumps`` writes it): 0.41-0.48, 0.52-0.62, 0.40-0.50.
EMBED_SHARE = {"s1j": 0.45, "s2g": 0.57, "s2j": 0.45}


@dataclass
class BuildPlan:
    """What ``build`` was asked: seeds per cell (primaries, reserves), split and options."""

    seeds: list[SeedTuple]
    reserve: int
    split: str
    type_mix: str | None = None
    given_rates: dict[str, dict[str, float]] = field(default_factory=dict)
    #: the split's whole seed list before ``--limit``, what types are planted over (default: ``seeds``)
    split_seeds: list[SeedTuple] | None = None
    #: people per meeting (``--participants``): the multi-party stages' prompts are counted above 2
    participants: int = 2
    #: meetings per case (``--meetings``): a series' stage-2 calls are priced per meeting above 1
    meetings: int = 1
    #: the cases' language (``--language``, BCP-47; ``None``: English): each prompt carries its note
    language: str | None = None


def _cases(catalog: Catalog | None, plan: BuildPlan) -> tuple[list[SkeletonCase], int]:
    """The cases still to build (with their planned types) and how many are finished."""
    stored: dict[str, tuple[str, str]] = {}
    types: dict[str, tuple[str, ...]] = {}
    if catalog is not None:
        tables = {t for (t,) in catalog.execute("SELECT table_name FROM information_schema.tables")}
        stored = {s: (c, st) for s, c, st in catalog.execute(
            "SELECT seed_id, case_id, status FROM cases WHERE split = ?", [plan.split])}
        if "planned_types" in tables:
            types = {c: tuple(json.loads(t)) for c, t in catalog.execute(
                "SELECT case_id, types_json FROM planned_types WHERE split = ?", [plan.split])}
    todo, finished, new = [], 0, []
    for seed in plan.seeds:
        case_id, status = stored.get(seed.seed_id, (None, None))
        if status in ("accepted", "discarded"):
            finished += 1
            continue
        case = SkeletonCase(seed, types.get(case_id) if case_id else None)
        todo.append(case)
        if case.planned_types is None:
            new.append(case)
    if new:  # planted as build will plant them (over the split's whole seed list), nothing written
        planned = split_plans([*(plan.split_seeds or []), *plan.seeds], plan.type_mix)
        for c in new:
            c.planned_types = planned[c.seed.seed_id]
    return todo, finished


def estimate_build(plan: BuildPlan, out_dir: Path, config: ToolkitConfig, local_model: str | None = None,
                   prices: dict[str, Price] | None = None, tokenizer: str | None = None,
                   batch: bool = False, catalog: Catalog | None = None) -> dict[str, Any]:
    """The estimate of ``build`` over ``plan`` into ``out_dir`` (read, never written), in
    the contract of :func:`ioa_synth.runs.spend.fold`; ``catalog``: the directory's, when
    the caller has it open.

    Raises:
        ioa_synth.llm.tokens.TokenizerError: a ``tokenizer`` given that cannot be built.
        ioa_synth.llm.config.ConfigError: a blank base URL variable.
        PassRatesError: the given rates, with those filling their gaps, are incoherent.
    """
    setups = {c: component_setup(c, config, local_model, tokenizer) for c in ("generator", "judge")}
    return _read_folder(plan, out_dir, catalog, lambda: setups)(config, prices, batch)


def _read_folder(plan: BuildPlan, out_dir: Path, catalog: Catalog | None,
                 setups: Callable[[], dict[str, ComponentSetup]]) -> Callable[..., dict[str, Any]]:
    """Read what the estimate needs from ``out_dir`` now (cases, measured calls and rates);
    return ``fold_estimate(config, prices, batch)``, which makes the estimate from it later
    (tokenizers, prompts). ``setups()`` gives the components' setups, asked for here only
    to count stored replies that carry no usage."""
    opened = catalog is None and (Path(out_dir) / "catalog.duckdb").is_file()
    if opened:
        from ioa_synth.build.tables import BUILD_TABLES

        catalog = Catalog(out_dir, read_only=True, tables=[BUILD_TABLES])
    try:
        measured = measure(catalog, lambda c, t: setups()[c].counter.text(t),
                           lambda c, m: setups()[c].counter.messages(m), roles=lambda r: "judge" if r == "judge" else
                           "generator" if r == "generator" else r)
        todo, finished = _cases(catalog, plan)
        rates, rate_source = assumed_rates(catalog, plan.split, measured, plan.given_rates)
    finally:
        if opened and catalog is not None:
            catalog.close()
    return partial(_folded, plan, setups, measured, todo, finished, rates, rate_source)


def _folded(plan: BuildPlan, setups_of: Callable[[], dict[str, ComponentSetup]], measured: Measured,
            todo: list[SkeletonCase], finished: int, rates: dict[str, dict[str, float]],
            rate_source: dict[str, dict[str, str]], config: ToolkitConfig, prices: dict[str, Price] | None,
            batch: bool) -> dict[str, Any]:
    setups = setups_of()
    gen, judge = setups["generator"], setups["judge"]
    rubric = load_rubric()
    plan_mode = config.generator.plan or ("scaffold" if gen.embedded else "protocol")
    counted = sampled(todo)
    sk = with_series_notes([skeletons(c, plan_mode, rubric, gen, judge, plan.participants, plan.language)
                            for c in counted], plan.meetings, gen, judge)  # build --meetings K: the series note

    def mean(key: str) -> float:
        return sum(s[key] for s in sk) / len(sk) if sk else 0.0

    comp_source: dict[str, str] = {}

    def completion(stage: int, role: str, setup: ComponentSetup) -> float:
        value = measured.completion.get((stage, role))
        comp_source[f"stage{stage} {role}"] = "measured" if value is not None else f"max_tokens {setup.max_tokens}"
        return value if value is not None else float(setup.max_tokens)

    e1, e2 = completion(1, "generator", gen), completion(2, "generator", gen)
    c1, c2 = completion(1, "judge", judge), completion(2, "judge", judge)
    share: dict[str, float] = {}

    def shown(kind: str, stage: int, role: str, carried: float) -> float:
        """Mean prompt tokens of a prompt showing ``carried`` output tokens."""
        seen = measured.prompt.get((stage, role))
        skeleton = mean(kind)
        share[kind] = EMBED_SHARE[kind] if seen is None or not carried else \
            max(0.0, min(2.0, (seen - skeleton) / carried))
        return skeleton + share[kind] * carried

    s1j, s2g = shown("s1j", 1, "judge", e1), shown("s2g", 2, "generator", e1)
    s2j = shown("s2j", 2, "judge", judge_carried(e1, e2, plan.meetings))  # a series: K meetings' dialogues
    n = float(len(todo))
    r1, r2 = rates["stage1"], rates["stage2"]
    discard = 1 - r1["after_regeneration"] * r2["after_regeneration"]
    extra = min(float(plan.reserve), n * discard / (1 - discard) if discard < 1 else float(plan.reserve))
    n += extra
    reach2 = n * r1["after_regeneration"]

    def retried(stage: int, role: str) -> float:
        return 1 + measured.retries.get((stage, role), 0.0)

    kinds = [
        CallKind("generator", "stage 1 generator", n * retried(1, "generator"), mean("s1g"), e1),
        CallKind("generator", "stage 1 regeneration", n * (1 - r1["first_attempt"]) * retried(1, "generator"),
                 mean("s1g") + c1, e1),
        CallKind("judge", "stage 1 judge", n * (2 - r1["first_attempt"]) * r1["judged"] * retried(1, "judge"), s1j, c1),
        CallKind("generator", "stage 2 generator", reach2 * retried(2, "generator"), s2g, e2),
        CallKind("generator", "stage 2 regeneration", reach2 * (1 - r2["first_attempt"]) * retried(2, "generator"),
                 s2g + c2, e2),
        *(_thought_kinds(plan_mode, measured, reach2, r2, mean("s2t"), e2, retried(2, THOUGHTS_ROLE), gen)
          if plan.participants == 2 and plan.meetings == 1 else []),  # a multi-party or series meeting is one call
        CallKind("judge", "stage 2 judge", reach2 * (2 - r2["first_attempt"]) * r2["judged"] * retried(2, "judge"),
                 s2j, c2),
    ]
    kinds = series_kinds(kinds, plan.meetings, e2)
    assumptions = {
        "command": "build", "split": plan.split, "cases": len(todo), "already_finished": finished,
        "prompts_counted_for_cases": len(counted),
        "reserve_draws": round(extra, 1), "batch": batch,
        "pass_rates": rates, "pass_rate_source": rate_source,
        "completion_tokens_per_call": {k: round(v, 1) for k, v in
                                       {"stage1 generator": e1, "stage2 generator": e2, "stage1 judge": c1,
                                        "stage2 judge": c2}.items()},
        "completion_source": comp_source,
        "shown_output_share": {k: round(v, 3) for k, v in share.items()},
        "retries_per_call": {f"stage{s} {r}": round(v, 3) for (s, r), v in measured.retries.items()},
        "tokenizers": {name: s.describe() for name, s in setups.items()},
    }
    return fold(kinds, prices_for(setups, prices or {}), assumptions)


def _thought_kinds(plan_mode: str, measured: Measured, reach2: float, r2: dict[str, float], skeleton: float,
                   lines: float, retries: float, gen: ComponentSetup) -> list[CallKind]:
    """The thoughts pass of the scaffold's two-pass stage 2 (none under another plan): one per
    stage-2 attempt, its prompt the thoughts skeleton plus the lines (about the lines pass's
    completion, ``lines``), its completion measured or the generator's ``max_tokens``."""
    if DIALOGUE.passes_for(plan_mode) is None:
        return []
    prompt = measured.prompt.get((2, THOUGHTS_ROLE), skeleton + lines)
    completion = measured.completion.get((2, THOUGHTS_ROLE), float(gen.max_tokens))
    return [CallKind("generator", "stage 2 inner thoughts", reach2 * (2 - r2["first_attempt"]) * retries,
                     prompt, completion)]


def prepared_estimate(plans: dict, split: str, catalog: Catalog, config: ToolkitConfig, local_model: str | None,
                      type_mix: str | None, batch: bool, split_seeds: list[SeedTuple] | None = None,
                      participants: int = 2, meetings: int = 1,
                      language: str | None = None) -> Callable[[], dict[str, Any] | None]:
    """The estimate of a build about to run over ``plans`` (cells of
    :class:`~ioa_synth.build.run.CellPlan`), with the prices of ``--config``, in two steps:
    the build directory is read now (what is finished, measured), and the returned
    ``make()`` builds the tokenizers and counts the prompts (about a second), which a build
    runs once its first request is on the wire. ``make()`` gives ``None`` when the estimate
    cannot be made (a tokenizer that cannot be read...): a build never fails for it."""
    seeds = [s for p in plans.values() for s in p.primary]
    reserve = sum(len(p.reserve) for p in plans.values())
    setups = cache(lambda: {c: component_setup(c, config, local_model) for c in ("generator", "judge")})
    try:
        fold_estimate = _read_folder(BuildPlan(seeds, reserve, split, type_mix, split_seeds=split_seeds,
                                               participants=participants, meetings=meetings, language=language),
                                     catalog.out_dir, catalog, setups)
    except Exception:  # noqa: BLE001 - the estimate is a note for status, not part of the build
        return lambda: None

    def make() -> dict[str, Any] | None:
        try:
            return fold_estimate(config, None, batch)
        except Exception:  # noqa: BLE001 - as above
            return None

    return make
