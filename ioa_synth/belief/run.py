"""``ioa-synth belief run``: one conversation per item and attacker count, ``--workers``
calls in flight across conversations, every call on record and resumable.

Layout of ``RESULTS``: ``run.json`` (the manifest, :mod:`ioa_synth.runs.manifest`: settings,
components, the probe temperature, fingerprint),
``conversations/<item>_k<k>.json`` (written atomically when a conversation ends),
``catalog.duckdb`` (``llm_calls`` and the ``belief_calls`` view, :mod:`ioa_synth.belief.tables`),
``summary.json``.
A re-run skips finished conversations and replays the stored calls of unfinished ones;
a changed setup is refused once results are stored. With ``--batch`` / ``--batch-dir``
the calls go out in waves (:mod:`ioa_synth.runs.waves`): every conversation is driven as
far as its answers go, its calls made in its own thread
(:class:`~ioa_synth.runs.fanout.InlinePool`), so that a wave holds the next utterance of
every conversation with the probes and labels ready beside it; the records are a live
run's.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

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
from ioa_synth.reports.progress import BuildProgress
from ioa_synth.core.atomic import write_json_atomic
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.fingerprint import FINGERPRINT_VERSION
from ioa_synth.runs.context import RunContext, open_run
from ioa_synth.runs.manifest import ManifestError, read_manifest
from ioa_synth.runs.setup_check import SetupChanged, SetupCheck, stored_results
from ioa_synth.runs.batch_mode import BatchMode, map_in_waves, recorder_and_waves, unit_pool
from ioa_synth.runs.spend import record_run_estimate

__all__ = ["CHECK_SETUP", "COMPONENTS", "PROBE_TEMPERATURE", "SETUP_VERSION", "RunJob", "SetupChanged",
           "conversation_path", "describe", "run_study"]

COMPONENTS = ["agent", "belief_judge", "stance_judge"]
#: Version of the study's setup description (``belief_setup_version`` in it, ``versions.setup`` in run.json).
#: 2: the study settings name the labelling mode of private answers (``labelling``).
SETUP_VERSION = 2
#: Temperature of every private probe (run.json ``probe_temperature``).
PROBE_TEMPERATURE = 0.0


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


#: A study's results: any successful call or conversation record.
_results_stored = stored_results("conversations", "*.json", calls=True)


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


def check_labelling(catalog: Catalog, desc: dict[str, Any]) -> None:
    """Refuse to resume results labelled in another mode than this run's (labels of the two
    modes must not mix in one study), saying how to resume them. (A folder without a
    readable manifest is left to :data:`CHECK_SETUP`'s own refusal.)"""
    out = catalog.out_dir
    if not _results_stored(catalog):
        return
    try:
        old = read_manifest(out).fingerprint_parts
    except ManifestError:
        return
    was, now = stored_labelling(old), stored_labelling(desc)
    if was != now:
        text, flag = _LABELLING_TEXT.get(was, (f"labelling {was!r}", "match it"))
        raise SetupChanged(f"{out} holds results where {text}; {flag} to resume them, or use a new --out "
                           f"for a study labelled with {now!r}")


#: A changed component with stored calls is refused, and so are changed study settings
#: (the labelling mode among them) or items once any call or conversation is stored.
_CHECK_PROTOCOL = SetupCheck(commands=("belief run", "belief reask"), component_of=component_of,
                             protocol=study_protocol, results_stored=_results_stored)


def CHECK_SETUP(catalog: Catalog, desc: dict[str, Any]) -> str:  # noqa: N802 - the check open_run is given
    """The setup check of a study run: a labelling mode other than the stored results'
    (:func:`check_labelling`, whose refusal names the flag that resumes them), then
    :class:`~ioa_synth.runs.setup_check.SetupCheck`'s rules."""
    check_labelling(catalog, desc)
    return _CHECK_PROTOCOL(catalog, desc)




def run_study(job: RunJob, out: Path, config: ToolkitConfig, local_model: str | None, console: Console,
              args: dict[str, Any], batch: BatchMode | None = None,
              estimate: tuple[dict[str, Any], Callable[[Catalog], dict[str, Any] | None]] | None = None
              ) -> dict[str, Any]:
    """Run every conversation not yet on disk; return this run's counts. With ``batch``
    the calls go out in waves of batches; ``estimate``, ``(plan, make)``: the estimate this
    run starts from, recorded for ``status`` (:func:`ioa_synth.runs.spend.record_run_estimate`).

    Raises:
        FingerprintMismatch / SetupChanged, SetupError, EndpointError, LocalModelError,
        RunInterrupted (see :func:`ioa_synth.runs.context.open_run`), BatchWaiting (a
        ``--batch-dir`` wave waits for its output file).
    """
    catalog = Catalog(out, tables=[BELIEF_TABLES])  # with the view belief_calls
    try:
        extra = {"probe_temperature": PROBE_TEMPERATURE, "expected_conversations": expected_conversations(job)}
        with open_run(catalog, "belief run", COMPONENTS, config, local_model, args, kind="belief",
                      describe=lambda eps: describe(eps, job), check=CHECK_SETUP, settings=job.settings.as_dict(),
                      setup_version=SETUP_VERSION, manifest_extra=extra) as run:
            record_run_estimate(catalog, run.run_id, "belief run", estimate)
            stats = _run_conversations(job, out, run, console, batch)
            run.summary.update(stats)
        return stats
    finally:
        catalog.close()


def _run_conversations(job: RunJob, out: Path, run: RunContext, console: Console,
                       batch: BatchMode | None = None) -> dict[str, Any]:
    todo = [(it, k) for it in job.items for k in job.settings.attackers]
    stats = {"done": 0, "failed": 0, "skipped": 0}
    pending = []
    for it, k in todo:
        if conversation_path(out, it.item_id, k).is_file():
            stats["skipped"] += 1
        else:
            pending.append((it, k))
    replay_of = sorted({it.item_id for it, _ in pending})
    # in batch mode a conversation is driven again after each wave: its calls are counted once it ends
    recorder, waves = recorder_and_waves(run, batch, replay_of, note=lambda text: progress.note(text))
    work = StudyWork(job.settings, [(f"{it.item_id}_k{k}", k) for it, k in pending],
                     reused=lambda: recorder.reused_calls)
    progress = BuildProgress(console, total=len(pending), label="conversations",
                             statuses=("done", "failed"), detail=work.describe, earlier=stats["skipped"])
    run.attach(progress)
    errors: list[str] = []

    def one(entry: tuple[Item, int]) -> str:
        item, k = entry
        conv = f"{item.item_id}_k{k}"
        try:
            record = run_conversation(calls, item, k, job.settings,
                                      work.watch(conv) if waves is None else lambda n, rnd: None)
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
    with progress, unit_pool(waves, job.workers, "belief-call") as pool:
        calls = Calls(recorder, run.clients, pool, prematch=job.settings.labelling == "prematch")
        map_in_waves(run, waves, deque(pending), one, done, workers=slots, unit="conversation", name="belief-conv")
    stats["errors"] = errors[:20]
    return stats
