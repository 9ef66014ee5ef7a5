"""The estimate a build starts from, made off the path to its first request.

``status`` shows the estimate a run started from beside what its calls cost
(:mod:`ioa_synth.runs.spend`). Reading the build directory for it is quick and is done
before the first call, so the estimate is of the folder as the run found it; building the
tokenizers and counting the rendered prompts takes about a second (most of it in the
tokenizers' Rust code, which holds the GIL), and was the largest part of the time from
``ioa-synth build`` to its first request. That part runs on a helper thread once a worker's
first request is on the wire and no worker is answering a reply
(:mod:`ioa_synth.llm.on_wire`), at once in batch mode, or at the end of a run that sent no
request; the estimate is dated when the folder was read, before the run's first call.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from ioa_synth.llm import on_wire
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.recorder import now_utc
from ioa_synth.runs.spend import record_estimate, should_record

#: ``(plan, make)``: the run's plan (JSON-able) and ``make(catalog)``, which reads the folder
#: and returns ``finish()``, the estimate (or ``None`` when it cannot be made).
EstimateOf = tuple[dict[str, Any], Callable[[Catalog], Callable[[], dict[str, Any] | None]]]


class DeferredEstimate:
    """Records the estimate of a build run (``run_id``) unless the estimate recorded last is
    of the same plan (:func:`~ioa_synth.runs.spend.should_record`); made by :meth:`arm` after
    the calling worker's next request is sent, or by :meth:`close`."""

    def __init__(self, catalog: Catalog, run_id: str, estimate: EstimateOf | None) -> None:
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._started = False
        if estimate is None or not should_record(catalog, estimate[0]):
            return
        plan, make = estimate
        read_at, finish = now_utc(), make(catalog)

        def record() -> None:
            made = finish()
            if made is None:
                return
            try:
                record_estimate(catalog, run_id, "build", plan, made, created_at=read_at)
            except Exception:  # noqa: BLE001 - a note for status: the run itself reports a catalog it cannot write
                pass

        self._thread = threading.Thread(target=record, name="estimate", daemon=True)

    def arm(self) -> None:
        """Start the estimate once this thread's next request is on the wire (called by a
        worker before its first call; later calls do nothing)."""
        if self._thread is not None and not self._started:
            on_wire.after_send(lambda: on_wire.when_idle(self.start))

    def start(self) -> None:
        """Start making the estimate now (a batch run, whose calls go out in files)."""
        with self._lock:
            if self._thread is None or self._started:
                return
            self._started = True
        self._thread.start()

    def close(self, finished: bool) -> None:
        """Wait for the estimate; a run that ``finished`` without sending a request makes it
        now, a stopped one leaves it to the next run unless it was started."""
        if finished:
            self.start()
        if self._thread is not None and self._started:
            self._thread.join()
