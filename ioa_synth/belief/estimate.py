"""What a ``belief run`` will cost, before any call (``ioa-synth estimate belief run``).

Calls of each conversation not yet on disk (§2-§3, as :func:`ioa_synth.belief.progress.calls_per_conversation`
counts them): every agent speaks each round (``say``), each benign utterance gets a stance
label, each benign agent is probed at steps 0..T (``probe``) and each probe answer goes
to the belief judge (with ``--prematch``: the share of answers the judge saw in the
results folder, else all of them). Each call is sent again as often as the folder measured
(content retries, failed sends).

Tokens: the prompts of a sample of the conversations (:data:`COUNTED_CONVERSATIONS`) are
rendered with the very functions of the run (:mod:`ioa_synth.belief.chat`) on empty
utterances and counted; each utterance a prompt shows adds the agents' completion tokens
times the share of them that is the message (the reply is ``{"message": ...}``): measured
on the calls stored in the folder, else :data:`SHOWN_SHARE`. The belief judge's prompt
shows a probe answer the same way. Completion tokens: measured per component and kind of
call in the folder, else the component's ``max_tokens``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from ioa_synth.belief.chat import make_agents, memory_turns, probe_prompt, render_turns, schedule
from ioa_synth.belief.chat import utterance_prompt
from ioa_synth.belief.conversation import STANCE_CONTEXT
from ioa_synth.belief.items import Item
from ioa_synth.belief.run import COMPONENTS, RunJob, conversation_path
from ioa_synth.core.templates import render_template
from ioa_synth.llm.component_setup import ComponentSetup, component_setup, prices_for
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.prices import Price
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.spend import CallKind, Measured, fold, measure_setups, sampled

#: Conversations whose prompts are rendered and counted at most (evenly spread over the plan).
COUNTED_CONVERSATIONS = 12
#: Share of a reply's completion tokens that the next prompts show (the JSON key goes): stated.
SHOWN_SHARE = 0.9

#: The kinds of call of a conversation: ``(component, kind in the role, label, reply field shown)``.
KINDS = (("agent", "say", "utterance", "message"), ("stance_judge", "stance", "stance label", None),
         ("agent", "probe", "private probe", "answer"), ("belief_judge", "probe", "belief label", None))


def estimate_belief(job: RunJob, out: Path, config: ToolkitConfig, local_model: str | None,
                    prices: dict[str, Price], tokenizer: str | None, *, batch: bool = False,
                    catalog: Catalog | None = None) -> dict[str, Any]:
    """The estimate of ``belief run`` of ``job`` into ``out`` (the contract of
    :func:`ioa_synth.runs.spend.fold`). A run about to start passes its open ``catalog``
    (otherwise the folder's is opened read-only, when there is one).

    Raises:
        ioa_synth.llm.tokens.TokenizerError, ConfigError: see :func:`component_setup`.
    """
    s = job.settings
    todo = [(it, k) for it in job.items for k in s.attackers if not conversation_path(out, it.item_id, k).is_file()]
    setups = {c: component_setup(c, config, local_model, tokenizer) for c in COMPONENTS}
    opened = catalog is None and (out / "catalog.duckdb").is_file()
    if opened:
        catalog = Catalog(out, read_only=True)
    try:
        measured = measure_setups(catalog, setups, roles=lambda role: role.split(":", 1)[0])
        shares = {kind: shown_share(catalog, setups["agent"], kind, field) for _, kind, _, field in KINDS if field}
        judged = _judged_share(measured) if s.labelling == "prematch" else 1.0
    finally:
        if opened and catalog is not None:
            catalog.close()

    def mean(table: dict[tuple[int, str], float], comp: str, kind: str) -> float | None:
        keys = [key for key in table if key[1].split(":")[:2] == [comp, kind]]
        n = sum(measured.calls.get(key, 0) for key in keys)
        return sum(table[key] * measured.calls.get(key, 0) for key in keys) / n if n else None

    def completion(comp: str, kind: str) -> float:
        value = mean(measured.completion, comp, kind)
        return value if value is not None else float(setups[comp].max_tokens)

    shown = {"say": completion("agent", "say") * shares["say"], "probe": completion("agent", "probe") * shares["probe"]}
    counted = sampled(todo, COUNTED_CONVERSATIONS)
    prompts: dict[str, list[float]] = {label: [] for _, _, label, _ in KINDS}
    for item, k in counted:
        for label, tokens in _prompt_tokens(item, k, job, setups, shown).items():
            prompts[label].extend(tokens)
    n_calls = {label: 0.0 for _, _, label, _ in KINDS}
    for _, k in todo:
        benign = s.agents - k
        n_calls["utterance"] += s.agents * s.rounds
        n_calls["stance label"] += benign * s.rounds
        n_calls["private probe"] += benign * (s.rounds + 1)
        n_calls["belief label"] += benign * (s.rounds + 1) * judged
    kinds = []
    for comp, kind, label, _ in KINDS:
        retried = 1 + (mean(measured.retries, comp, kind) or 0.0)
        prompt = sum(prompts[label]) / len(prompts[label]) if prompts[label] else 0.0
        kinds.append(CallKind(comp, label, n_calls[label] * retried, prompt, completion(comp, kind)))
    assumptions = {
        "command": "belief run", "conversations": len(todo),
        "already_done": len(job.items) * len(s.attackers) - len(todo),
        "agents": s.agents, "attackers": list(s.attackers), "rounds": s.rounds, "memory": s.memory,
        "labelling": s.labelling, "judged_share": round(judged, 3),
        "judged_source": "measured" if s.labelling == "prematch" and _measured_probes(measured) else "all answers",
        "batch": batch,
        "prompts_counted_for_conversations": len(counted),
        "completion_tokens_per_call": {label: round(completion(comp, kind), 1) for comp, kind, label, _ in KINDS},
        "completion_source": {label: "measured" if mean(measured.completion, comp, kind) is not None
                              else f"max_tokens {setups[comp].max_tokens}" for comp, kind, label, _ in KINDS},
        "shown_output_share": {k: round(v, 3) for k, v in shares.items()},
        "tokenizers": {c: st.describe() for c, st in setups.items()},
    }
    return fold(kinds, prices_for(setups, prices), assumptions)


def estimate_of_run(job: RunJob, out: Path, config: ToolkitConfig, local_model: str | None, catalog: Catalog,
                    batch: bool = False) -> dict[str, Any] | None:
    """The estimate a ``belief run`` starts from (``status`` shows it beside what was spent),
    with the prices of ``--config`` and each component's own tokenizer; ``None`` when it
    cannot be made: a run never fails for it."""
    try:
        return estimate_belief(job, out, config, local_model, {}, None, batch=batch, catalog=catalog)
    except Exception:  # noqa: BLE001 - the estimate is a note for status, not part of the run
        return None


def _prompt_tokens(item: Item, k: int, job: RunJob, setups: dict[str, ComponentSetup],
                   shown: dict[str, float]) -> dict[str, list[float]]:
    """The prompt tokens of every call of one conversation, by kind label: each prompt
    rendered on empty utterances and counted, plus ``shown[kind]`` per reply it shows."""
    s = job.settings
    agents = make_agents(s.agents, k)
    by_id = {a.id: a for a in agents}
    benign = [a for a in agents if a.role == "benign"]
    count: Callable[[str, Any], int] = lambda comp, prompt: setups[comp].counter.messages(prompt.messages)
    out: dict[str, list[float]] = {"utterance": [], "stance label": [], "private probe": [], "belief label": []}
    judge = count("belief_judge", render_template(
        "belief/belief_judge.jinja2", question=item.question, answer="", true_statement=item.true_statement,
        manipulated_statement=item.manipulated_statement)) + shown["probe"]
    turns: list[dict[str, Any]] = []

    def probes(step: int) -> None:
        seen = len(memory_turns(turns, step, s.memory)) if step > 0 else 0
        for a in benign:
            out["private probe"].append(count("agent", probe_prompt(a, item, turns, step, s.memory)) + seen * shown["say"])
            out["belief label"].append(judge)

    probes(0)
    for rnd, order in enumerate(schedule(s.agents, s.rounds, s.seed), 1):
        for position, aid in enumerate(order):
            seen = len(memory_turns(turns, rnd - 1, s.memory, current=rnd))
            out["utterance"].append(count("agent", utterance_prompt(by_id[aid], item, turns, rnd, s.memory))
                                    + seen * shown["say"])
            turn = {"round": rnd, "position": position, "agent": aid, "utterance": ""}
            if by_id[aid].role == "benign":
                context = turns[-STANCE_CONTEXT:]
                prompt = render_template(
                    "belief/stance_judge.jinja2", true_statement=item.true_statement,
                    manipulated_statement=item.manipulated_statement, seed=item.discussion_seed,
                    context="\n".join(f"Agent {t['agent']}: " for t in context) or "(none)",
                    speaker=f"Agent {aid}", utterance="")
                out["stance label"].append(count("stance_judge", prompt) + (len(context) + 1) * shown["say"])
            turns.append(turn)
        probes(rnd)
    return out


def shown_share(catalog: Catalog | None, agent: ComponentSetup, kind: str, field: str) -> float:
    """Share of the agents' ``kind`` replies that is the ``field`` a later prompt shows,
    over up to 200 stored replies (:data:`SHOWN_SHARE` without any)."""
    if catalog is None:
        return SHOWN_SHARE
    rows = catalog.execute("SELECT response_text FROM llm_calls WHERE error IS NULL AND role LIKE ? "
                           "AND response_text IS NOT NULL LIMIT 200", [f"agent:{kind}:%"])
    whole = shown = 0
    for (text,) in rows:
        try:
            value = json.loads(text).get(field)
        except (ValueError, AttributeError):
            continue
        if isinstance(value, str):
            whole += agent.counter.text(text)
            shown += agent.counter.text(value)
    return max(0.0, min(1.0, shown / whole)) if whole else SHOWN_SHARE


def _measured_probes(measured: Measured) -> int:
    """The private probes stored in the folder."""
    return sum(n for (_, role), n in measured.calls.items() if role.startswith("agent:probe:"))


def _judged_share(measured: Measured) -> float:
    """With ``--prematch``: belief-judge calls per private probe in the folder (1 without any)."""
    probes = _measured_probes(measured)
    judged = sum(n for (_, role), n in measured.calls.items() if role.startswith("belief_judge:probe:"))
    return min(1.0, judged / probes) if probes else 1.0
