"""Turning a run's scheduler into a batch-mode one: the run's clients answered by batch
lines (:mod:`ioa_synth.runs.batch`), its units parked while a call waits for a wave
(:mod:`ioa_synth.runs.waves`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ioa_synth.llm.batch_api import CallParked
from ioa_synth.runs.batch import BatchCalls
from ioa_synth.runs.batch_recorder import BatchRecorder
from ioa_synth.runs.context import RunContext
from ioa_synth.runs.recorder import load_replay
from ioa_synth.runs.waves import BatchWaves


#: What a unit's work returns when one of its calls waits for a batch (:func:`parking`).
PARKED = object()


@dataclass(frozen=True)
class BatchMode:
    """``--batch`` (``batch_dir`` ``None``: the endpoints' Batch API) or ``--batch-dir DIR``."""

    batch_dir: Path | None = None


def parking(work: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``work`` returning :data:`PARKED` instead of raising
    :class:`~ioa_synth.llm.batch_api.CallParked` (a unit waiting for a batch answer)."""
    def run(unit: Any) -> Any:
        try:
            return work(unit)
        except CallParked:
            return PARKED
    return run


def start_batch(run: RunContext, mode: BatchMode, replay_of: list[str],
                note: Callable[[str], None]) -> tuple[BatchRecorder, BatchWaves]:
    """Put ``run``'s clients in batch mode: the recorder of its calls (replaying the stored
    calls of the units ``replay_of``) and its waves."""
    calls = BatchCalls(run.catalog)
    for client in run.clients.values():
        client.batch = calls
    replay = load_replay(run.catalog, replay_of) if replay_of else {}
    recorder = BatchRecorder(run.catalog, run.start(), replay, on_tokens=run.tokens.add, batch=calls)
    run.recorders.append(recorder)
    return recorder, BatchWaves(run.catalog, calls, run.clients, mode.batch_dir, run.guard.stop, note)
