"""``ioa-synth belief run``: one conversation per item and attacker count, ``--workers``
calls in flight across conversations, every call on record and resumable.

Layout of ``RESULTS``: ``run.json`` (settings, components, fingerprint),
``conversations/<item>_k<k>.json`` (written atomically when a conversation ends),
``catalog.duckdb`` (``llm_calls`` and the ``belief_calls`` view, :mod:`ioa_synth.belief.tables`),
``summary.json``.
A re-run skips finished conversations and replays the stored calls of unfinished ones;
a changed setup is refused once results are stored.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, deque
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console

from ioa_synth import __version__
from ioa_synth.belief.conversation import (LEGACY_LABELLING, Calls, StudySettings, component_of,
                                          run_conversation)
from ioa_synth.belief.items import Item, items_digest
from ioa_synth.belief.progress import StudyWork
from ioa_synth.belief.tables import BELIEF_TABLES
from ioa_synth.llm.client import Endpoint
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.errors import StopRun
from ioa_synth.llm.client import LLMCallError
from ioa_synth.core.templates import all_template_hashes
from ioa_synth.runs.interrupt import RunInterrupted, run_interruptible, worker_pool
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.core.atomic import write_json_atomic
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.fingerprint import FINGERPRINT_VERSION, describe_difference, fingerprint
from ioa_synth.runs.context import open_run
from ioa_synth.runs.run_rows import FingerprintMismatch, check_fingerprint

COMPONENTS = ["agent", "belief_judge", "stance_judge"]
SETUP_VERSION = 1


class SetupChanged(FingerprintMismatch):
    """``RESULTS`` holds results of another study setup."""


@dataclass
class RunJob:
    items: list[Item]
    all_items: list[Item]
    settings: StudySettings
    workers: int = 8


def conversation_path(out: Path, item_id: str, k: int) -> Path:
    return out / "conversations" / f"{item_id}_k{k}.json"


def describe(eps: dict[str, Endpoint], job: RunJob) -> dict[str, Any]:
    """The fingerprinted setup: each component's identity and the study's templates,
    protocol settings and items."""
    templates = all_template_hashes("belief")
    return {"fingerprint_version": FINGERPRINT_VERSION, "belief_setup_version": SETUP_VERSION,
            "toolkit_version": __version__,
            "components": {n: ep.identity() | {"templates": templates} for n, ep in sorted(eps.items())},
            "study": job.settings.as_dict(), "items": items_digest(job.all_items)}


def expected_conversations(job: RunJob) -> dict[str, int]:
    """``{"<source>|k=<k>": n}``: the conversations this invocation sets out to make (its
    items after ``--limit``, per source, for each attacker count), read by ``belief report``
    to tell a partial run from a finished one."""
    per_source = Counter(it.source for it in job.items)
    return {f"{source}|k={k}": n for source, n in sorted(per_source.items()) for k in job.settings.attackers}


def read_run_json(out: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((out / "run.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def check_setup(catalog: Catalog, desc: dict[str, Any]) -> None:
    """Refuse a setup that would mix with stored results (a changed component with stored
    calls; changed study settings or items once any call or conversation is stored)."""
    check_fingerprint(catalog, desc, commands=("belief run", "belief reask"), component_of=component_of)
    out = catalog.out_dir
    stored = catalog.execute("SELECT count(*) FROM llm_calls WHERE error IS NULL")[0][0]
    if not stored and not any((out / "conversations").glob("*.json")):
        return
    old = (read_run_json(out) or {}).get("fingerprint_parts")
    if not isinstance(old, dict):
        raise SetupChanged(f"{out / 'run.json'} is missing or unreadable but results are stored; use a new --out")
    check_labelling(out, old, desc)
    a, b = study_protocol(old), study_protocol(desc)
    if a != b:
        diffs = describe_difference(a, b)
        raise SetupChanged(f"{out} holds results of another setup ({'; '.join(diffs[:3])}); "
                           "use a new --out for a changed setup")


def stored_labelling(parts: dict[str, Any]) -> str:
    """The labelling mode of a stored setup description (:data:`LEGACY_LABELLING` for one
    written before the mode was recorded)."""
    study = parts.get("study") if isinstance(parts.get("study"), dict) else {}
    return str(study.get("labelling", LEGACY_LABELLING))


def study_protocol(parts: dict[str, Any]) -> dict[str, Any]:
    """The part of a setup description that may not change once results are stored: the
    study settings (a description without a labelling mode has the legacy one) and items."""
    study = parts.get("study") if isinstance(parts.get("study"), dict) else {}
    return {"study": {**study, "labelling": stored_labelling(parts)}, "items": parts.get("items")}


#: How each labelling mode is named in a refusal, and the flag that selects it.
_LABELLING_TEXT = {"judge": ("the belief judge labelled every private answer", "drop --prematch"),
                   "prematch": ("private answers naming one answer were labelled by string match (--prematch; "
                                "the only rule of results folders written before the judge labelled every answer)",
                                "add --prematch")}


def check_labelling(out: Path, old: dict[str, Any], desc: dict[str, Any]) -> None:
    """Refuse to resume results labelled in another mode than this run's (labels of the two
    modes must not mix in one study), saying how to resume them."""
    was, now = stored_labelling(old), stored_labelling(desc)
    if was != now:
        text, flag = _LABELLING_TEXT.get(was, (f"labelling {was!r}", "match it"))
        raise SetupChanged(f"{out} holds results where {text}; {flag} to resume them, or use a new --out "
                           f"for a study labelled with {now!r}")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def run_study(job: RunJob, out: Path, config: ToolkitConfig, local_model: str | None, console: Console,
              args: dict[str, Any]) -> dict[str, Any]:
    """Run every conversation not yet on disk; return this run's counts.

    Raises:
        FingerprintMismatch / SetupChanged, SetupError, EndpointError, LocalModelError,
        RunInterrupted (see :func:`ioa_synth.runs.context.open_run`).
    """
    catalog = Catalog(out, tables=[BELIEF_TABLES])  # with the view belief_calls
    try:
        holder: dict[str, Any] = {}

        def describe_job(eps: dict[str, Endpoint]) -> dict[str, Any]:
            holder["desc"] = describe(eps, job)
            holder["eps"] = eps
            return holder["desc"]

        with open_run(catalog, "belief run", COMPONENTS, config, local_model, args, describe=describe_job,
                      check=check_setup) as run:
            desc = holder["desc"]
            run_json = {"command": "belief run", "argv": sys.argv[1:], "args": args,
                        "settings": job.settings.as_dict(),
                        "components": {n: {"model": ep.model, "temperature": ep.temperature,
                                           "base_url_kind": "embedded" if ep.embedded else "remote"}
                                       for n, ep in holder["eps"].items()},
                        "probe_temperature": 0.0, "expected_conversations": expected_conversations(job),
                        "fingerprint": fingerprint(desc), "fingerprint_parts": desc,
                        "started_at": _now(), "finished_at": None}
            write_json_atomic(out / "run.json", run_json)
            stats = _run_conversations(job, out, catalog, run, console)
            run.summary.update(stats)
            write_json_atomic(out / "run.json", run_json | {"finished_at": _now()})
        return stats
    finally:
        catalog.close()


def _run_conversations(job: RunJob, out: Path, catalog: Catalog, run: Any, console: Console) -> dict[str, Any]:
    todo = [(it, k) for it in job.items for k in job.settings.attackers]
    stats = {"done": 0, "failed": 0, "skipped": 0}
    pending = deque()
    for it, k in todo:
        if conversation_path(out, it.item_id, k).is_file():
            stats["skipped"] += 1
        else:
            pending.append((it, k))
    recorder = run.recorder(replay_of=sorted({it.item_id for it, _ in pending}))  # counted on Ctrl-C
    work = StudyWork(job.settings, [(f"{it.item_id}_k{k}", k) for it, k in pending],
                     reused=lambda: recorder.reused_calls)
    progress = BuildProgress(console, total=len(pending), label="conversations",
                             statuses=("done", "failed"), detail=work.describe)
    run.attach(progress)
    errors: list[str] = []

    def one(entry: tuple[Item, int]) -> str:
        item, k = entry
        conv = f"{item.item_id}_k{k}"
        try:
            record = run_conversation(calls, item, k, job.settings, work.watch(conv))
        except StopRun:
            raise
        except LLMCallError as exc:
            errors.append(f"{item.item_id} k={k}: {exc}")
            work.finished(conv, ok=False)
            return "failed"
        write_json_atomic(conversation_path(out, item.item_id, k), record)
        work.finished(conv, ok=True)
        return "done"

    def done(entry: tuple[Item, int], status: str) -> None:
        stats[status] += 1
        progress.advance(status, f"{entry[0].item_id}_k{entry[1]}")

    # conversations in flight: enough that the call pool always has ready calls
    slots = max(1, min(len(pending), 2 * job.workers + 2))
    try:
        with progress, worker_pool(job.workers, "belief-call") as pool, worker_pool(slots, "belief-conv") as convs:
            calls = Calls(recorder, run.clients, pool, prematch=job.settings.labelling == "prematch")
            run_interruptible(lambda e: convs.submit(one, e), pending, done, slots, run.guard)
    except RunInterrupted as exc:
        exc.unit = "conversation"
        raise
    stats["errors"] = errors[:20]
    return stats
