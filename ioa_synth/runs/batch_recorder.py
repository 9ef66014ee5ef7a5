"""The recorder of a batch-mode run, and independent calls made so that they park together
(:mod:`ioa_synth.runs.batch`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from ioa_synth.core.errors import LLMCallError, StopRun
from ioa_synth.core.templates import Prompt
from ioa_synth.llm.batch_api import CallParked
from ioa_synth.llm.replies import reply_json
from ioa_synth.llm.request import CallRecord
from ioa_synth.runs.batch import BatchCalls
from ioa_synth.runs.journal import Entry
from ioa_synth.runs.recorder import CallKey, CallRecorder, Derive, Tags, now_utc

T = TypeVar("T")


def gather(calls: list[Callable[[], T]]) -> list[T]:
    """The results of independent calls, made in order (as a live run makes them); in
    batch mode every call that waits for an answer is parked, so that all of them go out
    in the same wave (the simulator's participants and rollouts), and
    :class:`~ioa_synth.llm.batch_api.CallParked` is raised once all were tried. Any other
    exception stops at the call that raised it, as in a loop."""
    out: list[Any] = []
    parked: CallParked | None = None
    for call in calls:
        try:
            out.append(call())
        except CallParked as exc:
            parked = parked or exc
            out.append(None)
    if parked is not None:
        raise parked
    return out


@dataclass
class BatchRecorder(CallRecorder):
    """A :class:`CallRecorder` whose calls go through :class:`BatchCalls`: a call with
    batch lines is answered from them (not from ``replay``), a stored answer is marked in
    ``batch_marks`` with its ``llm_calls`` row, and a call that gives up closes its lines."""

    batch: BatchCalls | None = None

    def call(self, client: Any, key: CallKey, prompt: Prompt, schema: dict[str, Any] | None, name: str,
             parse: Callable[[Any], T], derive: Derive | None = None,
             temperature: float | None = None, tags: Tags | None = None,
             decode: Callable[[str], Any] = reply_json) -> tuple[T, bool]:
        try:
            return super().call(client, key, prompt, schema, name, parse, derive, temperature, tags, decode)
        except StopRun:
            raise
        except LLMCallError:
            assert self.batch is not None
            self.catalog.record(self.batch.close(key))
            raise

    def _stored_reply(self, key: CallKey) -> str | None:
        assert self.batch is not None
        return None if self.batch.has_lines(key) else self.replay.get(key)

    def _failed_before(self, key: CallKey, failed: dict[CallKey, int]) -> int:
        assert self.batch is not None
        return self.batch.failed_before(key, failed.get(key, 0))

    def _making(self, key: CallKey) -> Any:
        assert self.batch is not None
        return self.batch.making(key, self._failed_before(key, self._failed_tries()))

    def _stored_with(self, key: CallKey, rec: CallRecord) -> list[Entry]:
        if rec.batch_line is None:
            return []
        case_id, stage, role, attempt = key
        return [("batch_marks", {"custom_id": rec.batch_line, "case_id": case_id, "stage": stage, "role": role,
                                 "attempt": attempt, "mark": "stored", "created_at": now_utc()})]
