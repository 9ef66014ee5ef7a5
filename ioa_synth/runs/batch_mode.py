"""A run's batch mode: its clients answered by batch lines (:mod:`ioa_synth.runs.batch`,
:func:`start_batch`), and its scheduler (:meth:`~ioa_synth.runs.context.RunContext.map`)
driving the units in waves, a unit parked while one of its calls waits for a batch
(:func:`map_in_waves`, :mod:`ioa_synth.runs.waves`).

A run that may go either way takes its recorder and waves from :func:`recorder_and_waves`
(``waves`` ``None``: live calls) and, when a unit hands calls to a pool, that pool from
:func:`unit_pool`::

    recorder, waves = recorder_and_waves(run, batch, unit_ids, note=progress.note)
    map_in_waves(run, waves, deque(units), work, on_done, workers=n, unit="item")
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ioa_synth.llm.batch_api import CallParked
from ioa_synth.runs.batch import BatchCalls
from ioa_synth.runs.batch_recorder import BatchRecorder
from ioa_synth.runs.context import RunContext
from ioa_synth.runs.interrupt import RunInterrupted
from ioa_synth.runs.fanout import InlinePool
from ioa_synth.runs.recorder import CallRecorder, load_replay
from ioa_synth.runs.scheduler import worker_pool
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


def recorder_and_waves(run: RunContext, mode: BatchMode | None, replay_of: list[str],
                       note: Callable[[str], None]) -> tuple[CallRecorder, BatchWaves | None]:
    """The recorder of ``run``'s calls (replaying the stored calls of the units
    ``replay_of``) and, with ``mode`` (``--batch`` / ``--batch-dir``), the run's waves
    (:func:`start_batch`; ``note`` hears of the batches in flight); for live calls
    (``mode`` ``None``) :meth:`RunContext.recorder` and no waves."""
    if mode is None:
        return run.recorder(replay_of=replay_of), None
    return start_batch(run, mode, replay_of, note)


def unit_pool(waves: BatchWaves | None, workers: int, name: str) -> Any:
    """The pool a unit hands its independent calls to (``submit(fn, *args) -> Future``,
    a context manager): ``workers`` threads for live calls, an
    :class:`~ioa_synth.runs.fanout.InlinePool` in batch mode (so that they park together)."""
    return worker_pool(workers, name) if waves is None else InlinePool()


def map_in_waves(run: RunContext, waves: BatchWaves | None, units: deque, work: Callable[[Any], Any],
                 on_done: Callable[[Any, Any], None], **options: Any) -> None:
    """``run.map(units, work, on_done, **options)``; in batch mode (``waves``) in waves: a
    unit one of whose calls waits for a batch answer is parked, and the parked units are
    driven again after each wave until none is (``on_done`` sees finished units only;
    ``options.on_submit`` sees a unit each time it is driven).

    Raises:
        what :meth:`RunContext.map` and :meth:`BatchWaves.run` raise (a
        :class:`~ioa_synth.runs.interrupt.RunInterrupted` counts the units finished over
        every wave, a parked one not among them).
    """
    if waves is None:
        run.map(units, work, on_done, **options)
        return
    parked: list[Any] = []
    finished = 0

    def done(unit: Any, result: Any) -> None:
        nonlocal finished
        if result is PARKED:
            parked.append(unit)
        else:
            on_done(unit, result)
            finished += 1

    def drive() -> int:
        run.map(units, parking(work), done, **options)
        units.extend(parked)
        parked.clear()
        return len(units)

    try:
        waves.run(drive)
    except RunInterrupted as exc:
        exc.finished, exc.unit = finished, options.get("unit", exc.unit)
        raise
