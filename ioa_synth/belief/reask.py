"""``ioa-synth belief reask`` (§3 re-ask validation): no conversation is re-run. For each
stored conversation, benign agent and requested step, the default probe's input is
rebuilt from the conversation log and must equal the stored request byte for byte; then
the variant (``own``, ``anonymized``, ``group``) is asked on the same model at
temperature 0 and labelled as the run labelled its probes (run.json ``settings.labelling``). The answers join the conversation's
``probes`` with their ``variant``; ``summary.json`` gains ``reask`` retention rates.

``sample`` (``--sample N --seed S``) re-asks a random N of the conversations, stratified by
cell: (item source, attacker count k), the conditions of the run
(:mod:`ioa_synth.protocol.sample`).

With ``batch`` (``--batch`` / ``--batch-dir``) the re-asks go out in waves
(:func:`ioa_synth.runs.batch_mode.map_in_waves`): every variant probe in the first, their
belief labels in the second; the answers are a live run's."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any, Callable

from rich.console import Console

from ioa_synth.belief.chat import Agent, probe_prompt
from ioa_synth.belief.setup import template_setup
from ioa_synth.belief.conversation import Calls, probe, study_call
from ioa_synth.belief.items import Item
from ioa_synth.belief.report import belief_manifest, read_conversations, run_labelling
from ioa_synth.belief.run import conversation_path
from ioa_synth.belief.tables import BELIEF_TABLES
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.protocol.sample import stratified_sample
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.core.atomic import write_json_atomic
from ioa_synth.runs.batch_mode import BatchMode, map_in_waves, recorder_and_waves
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.context import open_run
from ioa_synth.runs.fanout import InlinePool


class StepsError(ValueError):
    """``--steps`` names a step the run does not have."""


def run_rounds(out: Path) -> int:
    """The rounds of ``out``'s run (run.json ``settings.rounds``; for a run.json without it,
    the last round of any stored conversation).

    Raises:
        ReportError: not a belief results folder, or no conversation finished yet.
    """
    rounds = belief_manifest(out).settings.rounds
    if isinstance(rounds, int) and not isinstance(rounds, bool) and rounds >= 1:
        return rounds
    return max(t["round"] for conv in read_conversations(out) for t in conv["turns"])


def reask_steps(out: Path, steps: list[int], given: bool) -> tuple[list[int], str | None]:
    """The steps to re-ask in ``out`` and a note for the terminal, or ``None``.

    Steps run from 0 (before the discussion) to the run's last round. A step outside that
    range named by the user (``given``) is bad input; the default steps are clipped to the
    run, with a note saying which were dropped.

    Raises:
        StepsError: ``given`` steps outside ``0..rounds``, or no default step left.
        ReportError: not a belief results folder.
    """
    rounds = run_rounds(out)
    outside = [s for s in steps if not 0 <= s <= rounds]
    if not outside:
        return sorted(set(steps)), None
    if given:
        raise StepsError(f"--steps {','.join(map(str, outside))}: the run in {out} has {rounds} round"
                         f"{'' if rounds == 1 else 's'}, so steps run from 0 to {rounds}")
    kept = sorted({s for s in steps if 0 <= s <= rounds})
    if not kept:
        raise StepsError(f"none of the default steps {','.join(map(str, steps))} is in the run in {out} "
                         f"(steps 0 to {rounds}); name them with --steps")
    return kept, (f"note: the run has {rounds} round{'' if rounds == 1 else 's'}: re-asking at step(s) "
                  f"{','.join(map(str, kept))} (default steps {','.join(map(str, outside))} dropped)")


class ProbeMismatch(RuntimeError):
    """A rebuilt default probe differs from the stored one (the log cannot be trusted)."""


def stored_probe_messages(catalog: Catalog, item_id: str, k: int, agent: int, step: int) -> list[dict] | None:
    """The messages of the stored successful default probe call, or ``None``."""
    key = study_call(item_id, step, "agent", "probe", k, agent).key
    rows = catalog.execute("SELECT request_json FROM llm_calls WHERE case_id = ? AND stage = ? AND role = ? "
                           "AND attempt = ? AND error IS NULL ORDER BY created_at DESC LIMIT 1", list(key))
    return json.loads(rows[0][0])["messages"] if rows else None


def check_rebuilt(catalog: Catalog, conv: dict[str, Any], agent: Agent, step: int, memory: int) -> None:
    """Raise :class:`ProbeMismatch` unless the rebuilt default probe equals the stored one."""
    item = Item.model_validate(conv["item"])
    rebuilt = probe_prompt(agent, item, conv["turns"], step, memory).messages
    stored = stored_probe_messages(catalog, item.item_id, conv["k"], agent.id, step)
    where = f"{item.item_id} k={conv['k']} agent {agent.id} step {step}"
    if stored is None:
        raise ProbeMismatch(f"{where}: no stored probe call in the catalog")
    if json.dumps(rebuilt, ensure_ascii=False).encode() != json.dumps(stored, ensure_ascii=False).encode():
        raise ProbeMismatch(f"{where}: the probe rebuilt from the log differs from the stored request")


#: One re-ask: a stored conversation, a benign agent of it and the step to re-ask.
Reask = tuple[dict[str, Any], Agent, int]


def reask_plan(out: Path, steps: list[int], catalog: Catalog, sample: int | None = None,
               seed: int = 0) -> tuple[list[dict[str, Any]], list[Reask]]:
    """The conversations of ``out`` to re-ask (all, or ``sample`` of them stratified by
    (source, k) and drawn with ``seed``) and every re-ask of them: each benign agent at each
    of ``steps`` the conversation reached, its default probe checked against ``catalog``.
    ``belief reask`` and its estimate both start from it; nothing is written.

    Raises:
        ioa_synth.protocol.sample.SampleError: ``sample`` above the number of conversations.
        ProbeMismatch: a rebuilt default probe differs from the stored request, or none is stored.
        ReportError: not a belief results folder.
    """
    convs = read_conversations(out)
    if sample is not None:
        convs = stratified_sample(convs, lambda c: (c["item"]["source"], c["k"]), sample, seed, "conversations")
    memory = run_memory(out)
    todo: list[Reask] = []
    for conv in convs:
        agents = [Agent(a["id"], a["name"], a["role"], a["trait"]) for a in conv["agents"]]
        last = max(t["round"] for t in conv["turns"])
        for step in (s for s in steps if 0 <= s <= last):
            for agent in (a for a in agents if a.role == "benign"):
                check_rebuilt(catalog, conv, agent, step, memory)
                todo.append((conv, agent, step))
    return convs, todo


def run_memory(out: Path) -> int:
    """The full rounds of history ``out``'s agents saw (run.json ``settings.memory``, else 5)."""
    return int(belief_manifest(out).settings.memory or 5)


def run_reask(out: Path, variant: str, steps: list[int], config: ToolkitConfig, local_model: str | None,
              workers: int, args: dict[str, Any], sample: int | None = None, seed: int = 0,
              batch: BatchMode | None = None, planned: Callable[[], None] = lambda: None) -> dict[str, int]:
    """Re-ask ``variant`` at ``steps`` in every conversation of ``out`` (or in ``sample`` of
    them, stratified by (source, k) and drawn with ``seed``: :func:`reask_plan`); return
    counts. With ``batch`` the calls go out in waves of batches. ``planned()`` is called once
    the plan passed its checks, before any endpoint is opened (the command makes its
    ``--batch-dir`` there).

    Raises:
        what :func:`reask_plan` raises (before any call or write); what
        :func:`~ioa_synth.runs.context.open_run` raises; BatchWaiting (a ``--batch-dir``
        wave waits for its output file)."""
    memory = run_memory(out)
    describe, check = template_setup("belief run", "belief reask")

    counts = {"asked": 0, "conversations": 0}
    with Catalog(out, tables=[BELIEF_TABLES]) as catalog:
        convs, plan = reask_plan(out, steps, catalog, sample, seed)
        todo = deque(plan)
        planned()
        with open_run(catalog, "belief reask", ["agent", "belief_judge"], config, local_model, args,
                      describe=describe, check=check, in_kind="belief") as run:
            progress = BuildProgress(Console(stderr=True), total=len(todo), label="reask", statuses=("asked",))
            recorder, waves = recorder_and_waves(run, batch, sorted({c["item"]["item_id"] for c in convs}),
                                                 note=progress.note)
            run.attach(progress)
            answers: dict[int, list[dict[str, Any]]] = {}
            # a re-ask's two calls (the probe, then its label) depend on each other: no pool to fan out to
            calls = Calls(recorder, run.clients, InlinePool(), prematch=run_labelling(out) == "prematch")

            def one(entry: Reask) -> dict[str, Any]:
                conv, agent, step = entry
                return probe(calls, Item.model_validate(conv["item"]), agent, conv["turns"], step, conv["k"],
                             memory, variant)

            def done(entry: Reask, rec: dict[str, Any]) -> None:
                answers.setdefault(id(entry[0]), []).append(rec)
                progress.advance("asked")

            with progress:
                map_in_waves(run, waves, todo, one, done, workers=workers, unit="re-ask", name="belief-reask")
            for conv in convs:
                # in the order of the plan, whichever re-ask finished first (live workers, waves)
                new = sorted(answers.get(id(conv), []), key=lambda p: (p["step"], p["agent"]))
                if not new:
                    continue
                fresh = {(p["step"], p["agent"]) for p in new}
                conv["probes"] = [p for p in conv["probes"] if not (p.get("variant") == variant and
                                                                    (p["step"], p["agent"]) in fresh)] + new
                write_json_atomic(conversation_path(out, conv["item"]["item_id"], conv["k"]), conv)
                counts["asked"] += len(new)
                counts["conversations"] += 1
            run.summary.update(counts)
    return counts
