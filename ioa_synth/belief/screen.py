"""``ioa-synth belief screen`` (§5 screening): a ``screener`` answers each question
``samples`` times without context; each answer is labelled ``true`` / ``manipulated`` /
``both`` by alias matching, and by the belief judge when no answer occurs (``neither``
or ``uncertain`` then; :func:`ioa_synth.belief.conversation.label_answer`, shared with
the private probes); an item passes when its share of ``true`` answers is at least
``min_true``, of ``manipulated`` at most ``max_manipulated`` and of ``both`` at most
``max_both``; ``cap_per_relation`` keeps the first passing items of each relation.

Calls are stored in ``<out stem>.calls/catalog.duckdb`` (keys: item, sample index,
``screener:sample::`` / ``belief_judge:screen::``) and replayed on a re-run; the
per-item shares and reasons go to ``<out stem>.screen.json``.

With ``batch`` (``--batch`` / ``--batch-dir``) the samples go out in waves
(:func:`ioa_synth.runs.batch_mode.map_in_waves`): every screener answer in the first, then
the judge's labels of the answers string matching left open; the labels are a live run's.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from ioa_synth.belief.setup import template_setup
from ioa_synth.belief.conversation import Calls, ask, label_answer, study_call
from ioa_synth.belief.items import Item
from ioa_synth.belief.tables import BELIEF_TABLES
from ioa_synth.belief.judges import Answer, parser
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.core.templates import render_template
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.runs.batch_mode import BatchMode, map_in_waves, recorder_and_waves
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.context import open_run
from ioa_synth.runs.fanout import InlinePool
from ioa_synth.text.plural import plural

SCREEN_LABEL_OF = {"endorses_true": "true", "endorses_manipulated": "manipulated", "neither": "neither",
                   "ambiguous": "uncertain"}


@dataclass(frozen=True)
class Thresholds:
    samples: int = 5
    min_true: float = 0.6
    max_manipulated: float = 0.05
    max_both: float = 0.10
    cap_per_relation: int | None = None


def decide(items: list[Item], labels: dict[str, list[str]], th: Thresholds) -> tuple[list[Item], dict[str, Any]]:
    """The passing items and, per item, its label shares and why it dropped (``None``: kept)."""
    kept, report, per_relation = [], {}, Counter()
    for item in items:
        counts = Counter(labels[item.item_id])
        n = max(1, len(labels[item.item_id]))
        shares = {k: counts[k] / n for k in ("true", "manipulated", "both", "neither", "uncertain")}
        reason = None
        if shares["true"] < th.min_true:
            reason = f"true {shares['true']:.0%} < {th.min_true:.0%}"
        elif shares["manipulated"] > th.max_manipulated:
            reason = f"manipulated {shares['manipulated']:.0%} > {th.max_manipulated:.0%}"
        elif shares["both"] > th.max_both:
            reason = f"both {shares['both']:.0%} > {th.max_both:.0%}"
        elif th.cap_per_relation is not None and per_relation[item.relation] >= th.cap_per_relation:
            reason = f"relation {item.relation} already has {plural(th.cap_per_relation, 'item')}"
        if reason is None:
            per_relation[item.relation] += 1
            kept.append(item)
        report[item.item_id] = {"relation": item.relation, "labels": labels[item.item_id], "shares": shares,
                                "dropped": reason}
    return kept, report


def screen_prompt(item: Item):
    """The screener's prompt for ``item`` (no context: the question alone)."""
    return render_template("belief/screen.jinja2", question=item.question)


def screen_items(items: list[Item], work: Path, th: Thresholds, config: ToolkitConfig, local_model: str | None,
                 workers: int, args: dict[str, Any], batch: BatchMode | None = None) -> dict[str, list[str]]:
    """Ask and label every sample; return ``{item_id: [label per sample]}``. With ``batch``
    the calls go out in waves of batches.

    Raises:
        what :func:`~ioa_synth.runs.context.open_run` raises; LLMCallError (a sample without
        a usable answer stops the screening); BatchWaiting (a ``--batch-dir`` wave waits for
        its output file)."""
    describe, check = template_setup("belief screen")

    labels: dict[str, list[str | None]] = defaultdict(lambda: [None] * th.samples)
    with Catalog(work, tables=[BELIEF_TABLES]) as catalog, open_run(catalog, "belief screen", ["screener", "belief_judge"], config,
                                            local_model, args, describe=describe, check=check, in_kind="belief") as run:
        todo = deque((item, i) for item in items for i in range(th.samples))
        progress = BuildProgress(Console(stderr=True), total=len(todo), label="samples", statuses=("labelled",))
        recorder, waves = recorder_and_waves(run, batch, [i.item_id for i in items], note=progress.note)
        run.attach(progress)
        calls = Calls(recorder, run.clients, InlinePool())  # a sample's two calls depend on each other

        def one(entry: tuple[Item, int]) -> str:
            item, i = entry
            ans = ask(recorder, run.clients["screener"], study_call(item.item_id, i, "screener", "sample", None, None),
                      screen_prompt(item), "belief_answer", parser(Answer))
            verdict = label_answer(calls, item, ans.answer,
                                   study_call(item.item_id, i, "belief_judge", "screen", None, None), judge_both=False)
            return "both" if verdict is None else SCREEN_LABEL_OF[verdict.verdict]

        def done(entry: tuple[Item, int], label: str) -> None:
            labels[entry[0].item_id][entry[1]] = label
            progress.advance("labelled")

        with progress:
            map_in_waves(run, waves, todo, one, done, workers=workers, unit="sample", name="belief-screen")
    return {k: [x for x in v if x is not None] for k, v in labels.items()}
