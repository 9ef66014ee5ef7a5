"""Journaled, replayable LLM calls: the one place where a command's model calls meet the
catalog (every capability's calls go through :class:`CallRecorder`).

Each call has a key :class:`CallKey` ``(unit, step, role, attempt)``, unique in its catalog,
and may carry ``tags``: a JSON object describing it (stored in ``llm_calls.tags``; a
capability's catalog views read them). A successful reply is stored in ``llm_calls``
together with the rows derived from it (e.g. judge ``scores``) in one journal write, so a
``kill -9`` never separates a call from what it produced. That write is made before
:meth:`CallRecorder.call` returns the reply (the journal survives a ``kill -9`` once it
returns): whatever the unit does next with the reply, its next request included, happens
after the reply is stored, so a killed run asks again only the calls whose replies had not
arrived. A re-run loads the stored replies
(:func:`load_replay`) and :meth:`CallRecorder.call` returns a stored reply instead of
paying for it again. Failed tries are stored as they happen, with their error, and are
never replayed; a re-run sends such a call with a new seed (:func:`call_seed` counts the
failed tries stored for its key).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Mapping, NamedTuple, TypeVar

from ioa_synth.llm.client import SEED_RANGE, CallRecord, LLMClient
from ioa_synth.core.templates import Prompt
from ioa_synth.llm.replies import reply_json
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.schema import dumps
from ioa_synth.runs.journal import Entry

T = TypeVar("T")


class CallKey(NamedTuple):
    """What identifies one call in a catalog; stored in ``llm_calls`` as ``case_id``,
    ``stage``, ``role``, ``attempt`` (the first release's column names, kept for the
    queries and joins written against them).

    - ``unit``: the unit of work the call belongs to, what a re-run replays by (a build or
      evaluate case, a belief item, a meeting detector, a reward's completion key).
    - ``step``: its step within the unit (a build stage, an evaluate component's place:
      0 prober, 1 simulator, 2 validity filter; a belief round or probe step).
    - ``role``: who is asked: the component, qualified when one component answers for
      several parties in the same step (``simulator:M1``; belief's
      ``agent:say:k1:3``). What a qualified role stands for is in the call's tags.
    - ``attempt``: a build's regeneration attempt, an evaluate rollout; 0 or 1 elsewhere.

    A plain 4-tuple compares and hashes equal to its ``CallKey``.
    """

    unit: str
    step: int
    role: str
    attempt: int


#: ``tags``: what a capability says about a call (JSON scalars), e.g. ``{"component": ...}``.
Tags = Mapping[str, Any]

#: ``derive(call_id, value) -> entries`` stored with a successful call (same journal write).
Derive = Callable[[str, Any], list[Entry]]


def call_seed(base: int | None, key: tuple[Any, ...], failed: int = 0) -> int | None:
    """The sampling seed of the call ``key`` (``(unit, step, role, attempt)``): the
    first 4 bytes of the SHA-256 of the key's parts joined by ``"|"``, plus ``base``, plus
    ``failed`` (the failed tries of this key already stored), modulo :data:`SEED_RANGE`;
    ``None`` when ``base`` is ``None`` (send no seed).

    Stable across processes and machines (not Python's salted ``hash``), so a re-run sends
    the same seeds and a new attempt a different one. A key whose earlier tries all failed
    starts past them on a re-run: the client adds the try index on a content retry, so a
    run that stored ``n`` failed tries used at most seeds ``s .. s + n - 1`` and the next
    starts at ``s + n`` (a new draw, never a repeat of a failed one). A key that never
    failed keeps ``s``.
    """
    if base is None:
        return None
    digest = hashlib.sha256("|".join(str(k) for k in key).encode("utf-8")).digest()
    return (int.from_bytes(digest[:4], "big") + base + failed) % SEED_RANGE


def now_utc() -> datetime:
    """Naive UTC timestamp, as stored in every ``TIMESTAMP`` column."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _latest_ok(catalog: Catalog, units: list[str], column: str) -> dict[CallKey, Any]:
    """``column`` of the latest stored successful call per key of these units."""
    if not units:
        return {}
    rows = catalog.execute(
        f"SELECT case_id, stage, role, attempt, last({column} ORDER BY created_at) FROM llm_calls "
        "WHERE error IS NULL AND list_contains(?, case_id) GROUP BY ALL", [units])
    return {CallKey(u, s, r, a): value for u, s, r, a, value in rows}


def load_replay(catalog: Catalog, units: list[str]) -> dict[CallKey, str]:
    """Stored successful responses of these units, by :class:`CallKey` (the latest one
    when a key was answered twice)."""
    return _latest_ok(catalog, units, "response_text")


def load_replay_tries(catalog: Catalog, units: list[str]) -> dict[CallKey, int]:
    """``try_index`` of the latest stored successful call per key of these units (which
    content retry produced the reply that :func:`load_replay` returns)."""
    return _latest_ok(catalog, units, "try_index")


def call_row(base: dict[str, Any], rec: CallRecord) -> dict[str, Any]:
    """The ``llm_calls`` row of one request: ``base`` (case_id, stage, role, attempt, tags,
    template_sha256, run_id) plus the request/reply facts of ``rec`` and a fresh ``call_id``."""
    return {"call_id": uuid.uuid4().hex, **base, "try_index": rec.try_index, "model": rec.model,
            "base_url": rec.base_url, "temperature": rec.temperature, "request_json": rec.request_json,
            "response_text": rec.response_text, "finish_reason": rec.finish_reason,
            "prompt_tokens": rec.prompt_tokens, "completion_tokens": rec.completion_tokens,
            "latency_ms": rec.latency_ms, "error": rec.error, "reply_field": rec.reply_field, "via": rec.via,
            "created_at": now_utc()}


@dataclass
class CallRecorder:
    """Makes, stores and replays the LLM calls of one run.

    Args:
        catalog: where ``llm_calls`` (and derived rows) go, through its journal.
        run_id: id of the current run, stored with each call.
        replay: stored successful replies by key (see :func:`load_replay`); grows as
            calls succeed.
        on_tokens: called with ``prompt + completion`` tokens of each fresh request that
            returned usage, the rejected tries (invalid JSON, a refusal...) included:
            billed tokens are what the user pays, and what ``llm_calls`` holds.

    ``tokens_by_case`` adds up those tokens per unit (for per-case progress lines);
    ``stored_calls`` counts the fresh successful calls stored (a re-run replays them),
    ``failed_tries`` the failed tries stored (a re-run asks those calls again),
    ``reused_calls`` the calls answered from ``replay`` (no request, no tokens).

    A fresh call's seed (:func:`call_seed`) counts the failed tries already stored for its
    key (read from the catalog once, at the first fresh call, then kept up to date), so a
    call that failed on every try draws a new seed when the command is run again.
    """

    catalog: Catalog
    run_id: str
    replay: dict[CallKey, str] = field(default_factory=dict)
    on_tokens: Callable[[int], None] = lambda n: None
    tokens_by_case: dict[str, int] = field(default_factory=dict)
    stored_calls: int = 0
    failed_tries: int = 0
    reused_calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _failed: dict[CallKey, int] | None = field(default=None, repr=False)

    def call(self, client: LLMClient, key: CallKey, prompt: Prompt, schema: dict[str, Any] | None, name: str,
             parse: Callable[[Any], T], derive: Derive | None = None,
             temperature: float | None = None, tags: Tags | None = None,
             decode: Callable[[str], Any] = reply_json) -> tuple[T, bool]:
        """Return ``(parse(reply), fresh)`` for the call ``key``: the stored reply when one
        parses (``fresh`` False, no request), else a new request through ``client``
        (``temperature``, when given, overrides the endpoint's for this call). ``tags``
        describe the call (stored as JSON in ``llm_calls.tags`` with every try; not part of
        its identity: the key alone is replayed and seeds the request). ``decode`` turns the
        reply text into what ``parse`` gets (default its JSON; a free-text reply passes
        :func:`~ioa_synth.llm.replies.reply_text`).

        Raises:
            ioa_synth.llm.client.LLMCallError: no usable reply after the client's retries
                (the failed tries are stored).
        """
        cached = self._stored_reply(key)
        if cached is not None:
            try:
                stored = parse(decode(cached))
            except ValueError:
                pass  # a stored reply the current parser rejects: ask again
            else:
                with self._lock:
                    self.reused_calls += 1
                return stored, False
        unit, step, role, attempt = key
        base = {"case_id": unit, "stage": step, "role": role, "attempt": attempt,
                "tags": dumps(dict(tags)) if tags else None,
                "template_sha256": prompt.template_sha256, "run_id": self.run_id}

        def store_failed(rec: CallRecord) -> None:
            if rec.already_stored:  # a batch answer an earlier pass over the unit stored
                return
            self.catalog.record([("llm_calls", call_row(base, rec))] + self._stored_with(key, rec))
            self._bill(unit, rec)
            with self._lock:
                failed[key] = failed.get(key, 0) + 1
                self.failed_tries += 1

        failed = self._failed_tries()
        # a new attempt is a new draw; a re-run the same one, unless every earlier try failed
        seed = call_seed(client.endpoint.seed, key, self._failed_before(key, failed))
        extra: dict[str, Any] = {} if temperature is None else {"temperature": temperature}
        if decode is not reply_json:  # (client wrappers that log calls take the default only)
            extra["decode"] = decode
        with self._making(key):
            value, rec = client.complete_json(prompt.messages, schema, name, parse, store_failed, seed=seed, **extra)
        if rec.already_stored:
            return value, True
        self._bill(unit, rec, stored=True)

        # the call and what it produced, in one journal write, before the unit sees the reply:
        # its next request depends on it, and a kill after that request left must not lose it
        row = call_row(base, rec)
        self.catalog.record_now([("llm_calls", row)] + (derive(row["call_id"], value) if derive is not None else [])
                                + self._stored_with(key, rec))
        with self._lock:
            self.replay[key] = rec.response_text or ""
        return value, True

    # -- what a batch-mode recorder (ioa_synth.runs.batch_recorder) changes ------------
    def _stored_reply(self, key: CallKey) -> str | None:
        """The stored reply that answers ``key`` without a request, if any."""
        return self.replay.get(key)

    def _failed_before(self, key: CallKey, failed: dict[CallKey, int]) -> int:
        """The failed tries of ``key`` its seed starts past (:func:`call_seed`)."""
        return failed.get(key, 0)

    def _making(self, key: CallKey) -> Any:
        """Context held while the client makes the call ``key``."""
        return contextlib.nullcontext()

    def _stored_with(self, key: CallKey, rec: CallRecord) -> list[Entry]:
        """Entries journaled with the ``llm_calls`` row of ``rec``."""
        return []

    def _failed_tries(self) -> dict[CallKey, int]:
        """Stored failed tries per key (loaded from ``llm_calls`` at the first fresh call)."""
        with self._lock:
            if self._failed is None:
                rows = self.catalog.execute("SELECT case_id, stage, role, attempt, count(*) FROM llm_calls "
                                            "WHERE error IS NOT NULL GROUP BY ALL")
                self._failed = {CallKey(u, s, r, a): n for u, s, r, a, n in rows}
            return self._failed

    def _bill(self, unit: str, rec: CallRecord, stored: bool = False) -> None:
        """Count the tokens of one fresh request (``stored``: a successful call)."""
        tokens = (rec.prompt_tokens or 0) + (rec.completion_tokens or 0)
        with self._lock:
            self.tokens_by_case[unit] = self.tokens_by_case.get(unit, 0) + tokens
            self.stored_calls += stored
        if tokens or stored:
            self.on_tokens(tokens)
