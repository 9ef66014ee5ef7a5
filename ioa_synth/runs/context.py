"""One run of an LLM-using command, shared by every capability (build, regenerate, audit,
evaluate, training rewards, meetings, the belief study).

A run opens the endpoints of the components it needs (remote ones from ``<X>_BASE_URL`` /
``--config``, the rest on the embedded model), describes and fingerprints that setup,
refuses a setup that would mix with stored results, records a ``runs`` row, hands out one
:class:`~ioa_synth.llm.client.LLMClient` per component, counts billed tokens across
threads, stops on Ctrl-C (:class:`~ioa_synth.runs.interrupt.InterruptGuard`) and, however
it ends, closes the clients and stores the run's summary (with ``"stopped"`` naming the
exception when it ended early). :meth:`RunContext.recorder` hands out the
:class:`~ioa_synth.runs.recorder.CallRecorder` that stores the run's calls, replays the
stored ones and counts their tokens; :meth:`RunContext.map` runs the units of work on the
worker threads (:mod:`ioa_synth.runs.scheduler`). A run opened with ``kind`` owns its
results folder: it refuses a folder of another kind and writes the folder's manifest
(``run.json``, :mod:`ioa_synth.runs.manifest`) when it starts and again when it finishes.

Usage::

    with open_run(catalog, "belief run", ["agent", "belief_judge"], config, local_model, args,
                  kind="belief", settings=study.as_dict(), setup_version=SETUP_VERSION) as run:
        run.attach(progress)            # rate-limit notes and token totals on the progress line
        calls = run.recorder(replay_of=item_ids)
        run.map(conversations, talk, on_done=count, workers=8, unit="conversation")
        run.summary["conversations"] = n

Modelled on inspect_ai's eval context (one place owns the model handles and the log) and
NeMo DataDesigner's fingerprinted configs.
"""

from __future__ import annotations

import threading
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Protocol, TypeVar

from ioa_synth.llm.client import Endpoint, LLMClient
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.endpoints import EndpointSource, open_endpoints
from ioa_synth.runs.interrupt import GRACE_SECONDS, InterruptGuard, RunInterrupted
from ioa_synth.runs.recorder import CallRecorder, load_replay
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.fingerprint import fingerprint, identity_description
from ioa_synth.runs.folder_kinds import check_folder_kind, claim_folder
from ioa_synth.runs.manifest import (MANIFEST_FILE, Manifest, finish_manifest, new_manifest, now_iso, read_manifest,
                                     unfinished_start, write_manifest)
from ioa_synth.runs.run_rows import finish_run, start_run
from ioa_synth.runs.scheduler import run_interruptible, worker_pool
from ioa_synth.runs.setup_check import check_before_start

U = TypeVar("U")
R = TypeVar("R")

#: ``describe(endpoints) -> description``: the fingerprinted setup of a run.
Describe = Callable[[dict[str, Endpoint]], dict[str, Any]]
#: ``check(catalog, description)``: raises when the setup may not run in this folder.
Check = Callable[[Catalog, dict[str, Any]], Any]


class ProgressSink(Protocol):
    """What a run reports to a progress display (:class:`ioa_synth.reports.progress.BuildProgress`;
    one with a ``watch(*clients)`` method is also shown the calls in flight)."""

    def note(self, text: str) -> None: ...

    def tokens(self, total: int) -> None: ...


@dataclass
class TokenCount:
    """Billed tokens (prompt + completion) of a run's fresh requests, safe across threads.

    ``add(n)`` counts one fresh request of ``n`` tokens (a rejected try that returned usage
    included: :class:`~ioa_synth.runs.recorder.CallRecorder` reports every one) and returns
    the new total; ``total`` and ``calls`` are read at any time."""

    total: int = 0
    calls: int = 0
    on_change: Callable[[int], None] = lambda total: None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, n: int) -> int:
        with self._lock:
            self.calls += 1
            self.total += n
            total = self.total
        self.on_change(total)
        return total


@dataclass
class RunContext:
    """An open run: its ``run_id`` (``runs`` row), ``endpoints`` and ``clients`` by
    component, the fingerprinted ``description``, the Ctrl-C ``guard``, the ``tokens``
    counter and the ``summary`` dict stored on ``runs.summary_json`` when the run ends.

    A run opened with ``record=False`` has no ``runs`` row (``run_id`` is ``""``) until
    :meth:`start` (audit records no run when every item is already scored)."""

    catalog: Catalog
    command: str
    run_id: str
    endpoints: dict[str, Endpoint]
    clients: dict[str, LLMClient]
    description: dict[str, Any]
    guard: InterruptGuard
    tokens: TokenCount = field(default_factory=TokenCount)
    summary: dict[str, Any] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)
    #: the recorders :meth:`recorder` handed out (their counts say what a stopped run kept)
    recorders: list[CallRecorder] = field(default_factory=list)
    #: the folder's manifest, for a run opened with ``kind`` (written at the start)
    manifest: Manifest | None = None
    #: the version of the capability's setup description (``versions.setup`` of the manifest)
    setup_version: int | str | None = None

    def attach(self, progress: ProgressSink) -> None:
        """Send every client's wait notes and calls in flight, and the run's token total, to ``progress``."""
        watch = getattr(progress, "watch", None)
        if watch is not None:
            watch(*self.clients.values())
        else:  # a display that shows notes only
            for client in self.clients.values():
                client.on_wait = progress.note
        self.tokens.on_change = progress.tokens

    def start(self) -> str:
        """Record the ``runs`` row (once) and return ``run_id``."""
        if not self.run_id:
            self.run_id = start_run(self.catalog, self.command, self.args, self.description)
        return self.run_id

    def recorder(self, replay_of: list[str] | None = None) -> CallRecorder:
        """A :class:`CallRecorder` storing calls under this run, counting their tokens in
        :attr:`tokens` and replaying the stored successful calls of the units (case ids)
        ``replay_of``."""
        replay = load_replay(self.catalog, replay_of) if replay_of else {}
        recorder = CallRecorder(self.catalog, self.start(), replay, on_tokens=self.tokens.add)
        self.recorders.append(recorder)
        return recorder

    def map(self, units: Iterable[U], work: Callable[[U], R], on_done: Callable[[U, R], None] | None = None, *,
            workers: int, unit: str = "case", name: str | None = None,
            on_submit: Callable[[U], None] | None = None) -> int:
        """Run ``work(u)`` for every unit of ``units`` on ``workers`` threads; return how
        many finished.

        ``workers`` units are kept in flight and one more waits in the pool's queue, so a
        worker that finishes starts its next unit at once (``on_submit(u)``, called in this
        thread as a unit is queued, tells which one comes next). ``on_done(u, result)`` runs
        in this thread as each unit finishes; given a :class:`collections.deque`, ``units``
        is the queue itself and ``on_done`` may append to it (e.g. a reserve draw). The
        threads are named ``<name>_N`` (default: ``unit``).

        Raises:
            RunInterrupted: Ctrl-C (or SIGTERM), after the grace period; ``finished`` and
                ``abandoned`` count units.
            BaseException: the first exception of a unit or of ``on_done`` (a
                :class:`~ioa_synth.llm.errors.StopRun`: a setup error, a full disk), after
                the other units in flight got the grace period.
        """
        queue = units if isinstance(units, deque) else deque(units)
        done = on_done or _ignore
        with worker_pool(workers, name or unit) as pool:
            def submit(u: U):
                if on_submit is not None:
                    on_submit(u)
                return pool.submit(work, u)

            return run_interruptible(submit, queue, done, workers, self.guard, unit)


def _ignore(unit: Any, result: Any) -> None:
    return None


@contextmanager
def open_run(catalog: Catalog, command: str, components: list[str], config: ToolkitConfig,
             local_model: str | None = None, args: dict[str, Any] | None = None, *,
             describe: Describe = identity_description, check: Check | None = None,
             interruptible: bool = True, record: bool = True, kind: str | None = None, in_kind: str | None = None,
             settings: dict[str, Any] | None = None, setup_version: int | str | None = None,
             manifest_extra: dict[str, Any] | None = None,
             sources: dict[str, EndpointSource] | None = None) -> Iterator[RunContext]:
    """Open a run of ``command`` over ``components`` in ``catalog``'s folder.

    ``describe`` turns the opened endpoints into the fingerprinted setup description (the
    capability's, built with :mod:`ioa_synth.runs.fingerprint`; default: the components'
    identities only); ``check`` refuses a setup that may not run here (usually
    :func:`ioa_synth.runs.run_rows.check_fingerprint` over the capability's commands, or
    :class:`ioa_synth.runs.setup_check.SetupCheck` for a capability's own rules; ``None``,
    the default, checks nothing). With ``interruptible`` the run holds an
    :class:`InterruptGuard` whose ``stop`` event every client shares. With ``record``
    False the ``runs`` row waits for :meth:`RunContext.start` (none if never started).
    ``sources`` opens further endpoints under names of their own
    (:class:`~ioa_synth.llm.endpoints.EndpointSource`, e.g. one per detector).

    With ``kind`` (a registered folder kind, :mod:`ioa_synth.runs.folder_kinds`) the run
    owns the folder's manifest: a folder of another kind is refused before any endpoint
    is opened; once the setup is checked ``run.json`` is written (``settings``: the
    capability's protocol settings; ``setup_version``: the version of its setup
    description; ``manifest_extra``: keys of its own, :func:`ioa_synth.runs.manifest.new_manifest`),
    and written again with ``finished_at`` when the body ends without an exception.
    With ``in_kind`` instead (a command working in a folder of that kind whose manifest
    another command owns: ``regenerate`` in a build directory, ``belief reask``, ``meeting
    probe``) a folder of another kind is refused the same way, and the folder is given a
    manifest only when it has none (a folder written without one is migrated:
    :func:`ioa_synth.runs.folder_kinds.claim_folder`).

    ``summary["tokens"]`` is the token counter's total when the counter counted a call or
    the body set no ``tokens`` (a body may set the key early to fix its place in the summary).

    ``check`` runs twice: first on the setup as far as it is known before anything starts
    (:func:`check_before_start`), then on the opened endpoints.

    Raises:
        FolderKindMismatch: (``kind``, ``in_kind``) the folder is of another kind.
        ManifestError: (``in_kind``) the folder's ``run.json`` cannot be read.
        FingerprintMismatch (or a subclass raised by ``check``): a changed setup.
        EndpointError / LocalModelError: an endpoint cannot be used.
        SetupError, RunInterrupted: from the body, after the run row is finished.
    """
    if kind is not None or in_kind is not None:
        check_folder_kind(catalog.out_dir, kind or in_kind, catalog=catalog)  # type: ignore[arg-type]
    if in_kind is not None and (catalog.out_dir / MANIFEST_FILE).exists():
        read_manifest(catalog.out_dir, in_kind)  # one it cannot read is refused before anything starts
    if check is not None:  # a refused setup starts no server and contacts no endpoint
        check_before_start(catalog, components, config, local_model, describe=describe, check=check, sources=sources)
    log_dir = catalog.out_dir / "logs"
    with open_endpoints(components, config, local_model, log_dir=log_dir, sources=sources) as eps:
        description = describe(eps)
        if check is not None:
            check(catalog, description)
        clients = {name: LLMClient(ep) for name, ep in eps.items()}
        guard = InterruptGuard() if interruptible else _NoGuard()
        ctx = RunContext(catalog, command, "", eps, clients, description, guard, args=args or {},  # type: ignore[arg-type]
                         setup_version=setup_version)
        try:
            if record:
                ctx.start()
            if kind is not None:
                fp = fingerprint(description)
                earlier = unfinished_start(catalog.out_dir, kind, fp)
                extra = dict(manifest_extra or {}) | ({"resumed_at": now_iso()} if earlier else {})
                ctx.manifest = new_manifest(kind, command, eps, ctx.args, description, fp,
                                            settings=settings, setup_version=setup_version, extra=extra)
                if earlier:  # the job started then: a resume (each --batch-dir wave is one) keeps its start
                    ctx.manifest = ctx.manifest.model_copy(update={"started_at": earlier})
                write_manifest(catalog.out_dir, ctx.manifest)
            elif in_kind is not None:
                claim_folder(catalog.out_dir, in_kind, command, catalog=catalog, args=ctx.args)
            with guard:
                for client in clients.values():
                    client.stop = guard.stop
                yield ctx
            if ctx.manifest is not None:
                ctx.manifest = finish_manifest(catalog.out_dir, ctx.manifest)
        except BaseException as exc:
            if isinstance(exc, RunInterrupted) and exc.stored_calls is None:  # the last line says what is kept
                exc.stored_calls = sum(r.stored_calls for r in ctx.recorders)
                exc.failed_tries = sum(r.failed_tries for r in ctx.recorders)
            ctx.summary["stopped"] = f"{type(exc).__name__}: {exc}"[:500]
            raise
        finally:
            for client in clients.values():
                client.close()
            if ctx.tokens.calls or "tokens" not in ctx.summary:
                ctx.summary["tokens"] = ctx.tokens.total
            if ctx.run_id:
                finish_run(catalog, ctx.run_id, ctx.summary)


class _NoGuard:
    """A stand-in for :class:`InterruptGuard` off the main thread (no signal handler)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.interrupted = False
        self.grace = GRACE_SECONDS

    def __enter__(self) -> "_NoGuard":
        return self

    def __exit__(self, *exc: object) -> None:
        return None
