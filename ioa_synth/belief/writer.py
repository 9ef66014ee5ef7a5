"""The ``item_writer`` component (§5): writes the true statement, the manipulated
statement and the neutral discussion seed of imported items. A reply whose seed names
either answer, or whose statement lacks its own answer, is rejected and asked again
(the client's ``content_retries``); an item still without usable text is dropped.

Calls are stored in ``<work>/catalog.duckdb`` (key: item, stage 0, role
``item_writer:write::``) and replayed when the import is run again.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console

from ioa_synth.belief.setup import template_setup
from ioa_synth.belief.conversation import ask, study_call
from ioa_synth.belief.tables import BELIEF_TABLES
from ioa_synth.belief.items import Draft, Item, check_written
from ioa_synth.belief.judges import WrittenText, parser
from ioa_synth.llm.client import LLMCallError
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.errors import StopRun
from ioa_synth.core.templates import render_template
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.context import open_run


def _complete(draft: Draft, text: WrittenText) -> Item:
    """``draft`` with the written fields it lacks; ``ValueError`` when they are unusable."""
    fields = {f: getattr(draft, f) or getattr(text, f)
              for f in ("true_statement", "manipulated_statement", "discussion_seed")}
    item = Item.model_validate(draft.model_dump() | fields)
    problem = check_written(item)
    if problem:
        raise ValueError(problem)
    return item


def write_items(drafts: list[Draft], work: Path, config: ToolkitConfig, local_model: str | None, workers: int,
                args: dict[str, Any]) -> tuple[list[Item], Counter]:
    """Complete every draft (the writer is called only for drafts that miss a field);
    return the items in input order and ``{reason: count}`` of the dropped ones."""
    done: dict[str, Item] = {}
    dropped: Counter = Counter()
    todo = []
    for d in drafts:
        if d.missing():
            todo.append(d)
            continue
        item = Item.model_validate(d.model_dump())
        problem = check_written(item)
        if problem:
            dropped[problem] += 1
        else:
            done[d.item_id] = item
    if todo:
        _call_writer(todo, work, config, local_model, workers, args, done, dropped)
    return [done[d.item_id] for d in drafts if d.item_id in done], dropped


def _call_writer(todo: list[Draft], work: Path, config: ToolkitConfig, local_model: str | None, workers: int,
                 args: dict[str, Any], done: dict[str, Item], dropped: Counter) -> None:
    describe, check = template_setup("belief items import")

    with Catalog(work, tables=[BELIEF_TABLES]) as catalog, open_run(catalog, "belief items import", ["item_writer"], config, local_model,
                                            args, describe=describe, check=check, in_kind="belief") as run:
        recorder = run.recorder(replay_of=[d.item_id for d in todo])
        client = run.clients["item_writer"]

        def one(d: Draft) -> Item | None:
            prompt = render_template("belief/item_writer.jinja2", question=d.question, true_answer=d.true_answer,
                                     manipulated_answer=d.manipulated_answer)
            try:
                return ask(recorder, client, study_call(d.item_id, 0, "item_writer", "write", None, None), prompt,
                           "belief_item_text", lambda data: _complete(d, parser(WrittenText)(data)))
            except StopRun:
                raise
            except LLMCallError:
                return None

        progress = BuildProgress(Console(stderr=True), total=len(todo), label="items", statuses=("written", "dropped"))
        run.attach(progress)

        def finished(d: Draft, item: Item | None) -> None:
            if item is None:
                dropped["the item writer gave no usable text"] += 1
            else:
                done[d.item_id] = item
            progress.advance("written" if item else "dropped", d.item_id)

        with progress:
            run.map(todo, one, finished, workers=workers, unit="item", name="belief-writer")
        run.summary.update({"written": len(todo) - sum(dropped.values()), "dropped": dict(dropped)})
