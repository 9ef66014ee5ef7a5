"""The log of every model call a case made (a benchmark case, a live meeting's detector, a
reward's case), as the records of ``evaluate``, ``meetings`` and ``train``'s reward keep it.

Calls go through :class:`ioa_synth.runs.recorder.CallRecorder` (journaled in
``RESULTS/catalog.duckdb``, replayed on resume); :class:`CaseCalls` only adds the
record's view of them: component, participant, rollout, request messages, raw reply,
error and try index, for fresh, failed and replayed calls alike. Every call is tagged with
its component and participant (:mod:`ioa_synth.evaluate.tables`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from ioa_synth.core.templates import Prompt
from ioa_synth.llm.client import CallRecord, LLMClient
from ioa_synth.probing.language import in_case_language
from ioa_synth.runs.recorder import CallKey, CallRecorder, Tags

T = TypeVar("T")

#: The step (``llm_calls.stage``) of each evaluation component.
STAGES: dict[str, int] = {"prober": 0, "simulator": 1, "validity_filter": 2}


def role_of(component: str, participant: str | None) -> str:
    """The role of a call (``llm_calls.role``): the component, with ``:<participant>`` for
    the simulator (the participant is also in the call's tags)."""
    return f"{component}:{participant}" if participant else component


class _LoggedClient:
    """An :class:`LLMClient` seen through a callback that gets every try's record."""

    def __init__(self, client: LLMClient, on_record: Callable[[CallRecord], None]) -> None:
        self._client, self._on_record = client, on_record
        self.endpoint = client.endpoint

    def complete_json(self, messages, schema, name, parse, on_call, seed=None):  # noqa: ANN001 - LLMClient's signature
        def failed(rec: CallRecord) -> None:
            self._on_record(rec)
            on_call(rec)

        value, rec = self._client.complete_json(messages, schema, name, parse, failed, seed=seed)
        self._on_record(rec)
        return value, rec


@dataclass
class CaseCalls:
    """The calls of one case: made (or replayed) through ``recorder``, logged in ``log``.

    Args:
        recorder: the run's call recorder.
        case_id: the case's id (the unit of every call key).
        replay_tries: ``try_index`` of stored successful calls, for replayed entries.
        tags: added to every call's tags (a meeting's ``{"detector": name}``).
    """

    recorder: CallRecorder
    case_id: str
    replay_tries: dict[CallKey, int] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)
    tags: Tags = field(default_factory=dict)
    #: called before each call is made (the run uses it to start work for the next case)
    before_call: Callable[[], None] = lambda: None
    #: the case's language (its record's ``language``; ``None``: English): each prompt says it
    language: str | None = None

    def call(self, client: LLMClient, component: str, participant: str | None, attempt: int, prompt: Prompt,
             schema: dict[str, Any], parse: Callable[[Any], T]) -> T:
        """The parsed reply of one call; key ``(case_id, STAGES[component], role, attempt)``,
        tags ``{"component", "participant"}`` plus :attr:`tags`.

        Raises:
            ioa_synth.llm.client.LLMCallError: no usable reply after the client's retries.
        """
        if self.language is not None:  # a case in another language: the prompt says so
            prompt = in_case_language(prompt, self.language, component)
        key = CallKey(self.case_id, STAGES[component], role_of(component, participant), attempt)
        tags = {"component": component, "participant": participant, **self.tags}
        rollout = attempt if component == "simulator" else None
        base = {"component": component, "participant": participant, "rollout": rollout,
                "model": client.endpoint.model, "messages": prompt.messages}

        def on_record(rec: CallRecord) -> None:
            self.log.append({**base, "response": rec.response_text, "error": rec.error, "try_index": rec.try_index})

        self.before_call()
        value, fresh = self.recorder.call(_LoggedClient(client, on_record), key, prompt, schema, component, parse,
                                          tags=tags)
        if not fresh:
            self.log.append({**base, "response": self.recorder.replay.get(key), "error": None,
                             "try_index": self.replay_tries.get(key, 0), "replayed": True})
        return value
