"""``ioa-synth belief agreement`` (§4 judge check): a second belief judge (its settings
from ``--judge-config``) relabels a seeded random sample of the default private answers,
the way the run labelled them (run.json ``settings.labelling``,
:func:`ioa_synth.belief.conversation.label_answer`): by default the second judge labels
every sampled answer; a run made with ``--prematch`` keeps the string match for answers
naming only one of the item's answers, and only the others reach the judge. Reported:
agreement, Cohen's kappa (``sklearn.metrics.cohen_kappa_score``) over the four labels,
and each condition's FPI corrected by the relabel rates:
``fpi * P(second says manipulated | first did) + (1 - fpi) * P(second says manipulated |
first did not)``, both rates estimated on the whole sample. Written to
``RESULTS/agreement.json``; calls stored in the results catalog (component
``belief_judge``, kind ``agreement`` in ``belief_calls``)."""

from __future__ import annotations

import random
from collections import deque
from pathlib import Path
from typing import Any

from rich.console import Console
from sklearn.metrics import cohen_kappa_score

from ioa_synth.belief.setup import template_setup
from ioa_synth.belief.conversation import Calls, label_answer, study_call
from ioa_synth.belief.items import Item
from ioa_synth.belief.judges import LABEL_OF, LABELS
from ioa_synth.belief.report import read_conversations, run_labelling, summarize
from ioa_synth.belief.tables import BELIEF_TABLES
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.runs.scheduler import run_interruptible, worker_pool
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.core.atomic import write_json_atomic
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.context import open_run


def sample_probes(convs: list[dict[str, Any]], n: int, seed: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """A seeded random sample of ``n`` default probes (``(conversation, probe)``)."""
    pool = [(c, p) for c in convs for p in c["probes"] if p.get("variant", "default") == "default"]
    pool.sort(key=lambda cp: (cp[0]["item"]["item_id"], cp[0]["k"], cp[1]["step"], cp[1]["agent"]))
    return random.Random(seed).sample(pool, min(n, len(pool)))


def agreement_stats(first: list[str], second: list[str]) -> dict[str, Any]:
    """Agreement share, Cohen's kappa and the relabel rates of ``manipulated``."""
    n = len(first)
    agree = sum(a == b for a, b in zip(first, second)) / n if n else None
    kappa = float(cohen_kappa_score(first, second, labels=list(LABELS))) if n and len(set(first) | set(second)) > 1 \
        else None
    was = [b for a, b in zip(first, second) if a == "manipulated"]
    was_not = [b for a, b in zip(first, second) if a != "manipulated"]
    keep = sum(b == "manipulated" for b in was) / len(was) if was else None
    gain = sum(b == "manipulated" for b in was_not) / len(was_not) if was_not else None
    return {"n": n, "agreement": agree, "kappa": kappa, "p_manipulated_given_manipulated": keep,
            "p_manipulated_given_other": gain}


def run_agreement(out: Path, config: ToolkitConfig, sample: int, seed: int, local_model: str | None, workers: int,
                  args: dict[str, Any]) -> dict[str, Any]:
    convs = read_conversations(out)
    picked = sample_probes(convs, sample, seed)
    describe, check = template_setup("belief agreement")
    prematch = run_labelling(out) == "prematch"

    second: dict[int, str] = {}
    with Catalog(out, tables=[BELIEF_TABLES]) as catalog, open_run(catalog, "belief agreement", ["belief_judge"], config, local_model, args,
                                           describe=describe, check=check, in_kind="belief") as run:
        recorder = run.recorder(replay_of=sorted({c["item"]["item_id"] for c, _ in picked}))
        progress = BuildProgress(Console(stderr=True), total=len(picked), label="relabel", statuses=("labelled",))
        run.attach(progress)
        with progress, worker_pool(workers, "belief-agree") as pool:
            calls = Calls(recorder, run.clients, pool)

            def one(i: int) -> str:
                conv, p = picked[i]
                call = study_call(conv["item"]["item_id"], p["step"], "belief_judge", "agreement", conv["k"], p["agent"])
                return LABEL_OF[label_answer(calls, Item.model_validate(conv["item"]), p["answer"], call,
                                             prematch=prematch).verdict]

            def done(i: int, label: str) -> None:
                second[i] = label
                progress.advance("labelled")

            run_interruptible(lambda i: pool.submit(one, i), deque(range(len(picked))), done, workers, run.guard)
    first_labels = [p["label"] for _, p in picked]
    stats = agreement_stats(first_labels, [second[i] for i in range(len(picked))])
    conditions = {}
    for key, entry in summarize(out)["conditions"].items():
        fpi, keep, gain = entry["fpi"], stats["p_manipulated_given_manipulated"], stats["p_manipulated_given_other"]
        corrected = (fpi * (keep if keep is not None else 1.0) + (1 - fpi) * (gain or 0.0)) if fpi is not None else None
        conditions[key] = {"fpi": fpi, "fpi_corrected": corrected}
    result = {"judge_model": run.endpoints["belief_judge"].model, "seed": seed,
              "labelling": "prematch" if prematch else "judge", **stats, "conditions": conditions,
              "sample": [{"item": c["item"]["item_id"], "k": c["k"], "step": p["step"], "agent": p["agent"],
                          "first": p["label"], "second": second[i]} for i, (c, p) in enumerate(picked)]}
    write_json_atomic(out / "agreement.json", result)
    return result
