"""Progress of a run over cases: a rich bar on a terminal, plain log lines otherwise.

On a terminal (stderr is a TTY): one bar with done/total, the per-status counts, tokens,
elapsed time, the model calls in flight and the latest note (e.g. a rate-limit wait),
refreshed every second. Otherwise (CI, ``nohup``, a log file): one line per finished
case (``[3/10] <case id> accepted, 4,210 tokens``), each note on its own line, and a
summary line every ``summary_every`` seconds and at the end. Both show that work is
happening before any case finishes: the calls in flight and how long each has run,
failed, timed-out and retried tries, and tokens streamed with their rate once a client
reports streamed tokens (:class:`~ioa_synth.llm.activity.CallActivity`, shared with
the run's clients by :meth:`BuildProgress.watch`).
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ioa_synth.llm.activity import CallActivity

#: Redraws of the bar per second: each costs about a millisecond of CPU, which rich's
#: default of 10 made a visible share of the toolkit's work per call; the counts change once
#: per finished case and the elapsed time once per second.
REFRESH_PER_SECOND = 1

STATUS_COLOURS = {"accepted": "green", "discarded": "yellow", "failed": "red", "scored": "green"}


class BuildProgress:
    """Context manager reporting the cases of a run (thread-safe).

    Args:
        console: where to write (normally stderr).
        total: cases expected (grows with :meth:`grow`).
        label: what is counted (``cases``, ``regenerate``, ``audit``).
        statuses: the outcome names counted, in display order.
        plain: force plain lines (``True``) or the bar (``False``); default: plain
            unless ``console`` is a terminal.
        summary_every: seconds between plain summary lines.
        detail: text on the work inside the cases (e.g. ``calls 412/1,230; ETA 14 min``),
            asked at each redraw and summary line, for runs whose cases finish late.
        earlier: cases an earlier run of the same job finished (a resumed run): counted in
            the total and as done, so that a resumed run numbers its cases out of the whole
            job (``[5/6]``, not ``[1/2]``), and shown as ``N earlier``.
    """

    def __init__(self, console: Console, total: int, label: str = "cases",
                 statuses: tuple[str, ...] = ("accepted", "discarded", "failed"), plain: bool | None = None,
                 summary_every: float = 30.0, detail: Callable[[], str] | None = None, earlier: int = 0) -> None:
        self._detail = detail
        self._lock = threading.Lock()
        self.console, self.label, self.total = console, label, total + earlier
        self.counts = {s: 0 for s in statuses}
        self.earlier = earlier
        self.done = earlier
        self._tokens = 0
        self._note = ""
        self.plain = (not console.is_terminal) if plain is None else plain
        self.summary_every = summary_every
        self._start = time.monotonic()
        self._stop_summaries = threading.Event()
        self._ticker: threading.Thread | None = None
        self.activity = CallActivity()
        self._progress = Progress(
            TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(), console=console, transient=False, disable=self.plain or total == 0,
            refresh_per_second=REFRESH_PER_SECOND)
        self._task = self._progress.add_task(label, total=self.total, completed=earlier, stats=self._stats())
        self._running = total

    def _stats(self) -> str:
        parts = [f"[{STATUS_COLOURS.get(s, 'white')}]{n} {s}[/]" for s, n in self.counts.items()]
        parts += [f"[dim]{self.earlier} earlier[/]"] if self.earlier else []
        note = f" [dim]{escape(self._note)}[/]" if self._note else ""
        activity = self.activity.describe()
        activity = f" [cyan]{escape(activity)}[/]" if activity else ""
        detail = f" [magenta]{escape(self._detail())}[/]" if self._detail else ""
        return " ".join(parts) + detail + f" {self._finished_tokens()}" + activity + note

    def _finished_tokens(self) -> str:
        return f"{self._tokens:,} tokens in finished calls"

    def _line(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def summary_line(self) -> str:
        """``cases: 3/10 done: 2 accepted, 1 discarded, 0 failed; 12,345 tokens in finished calls; 83 s elapsed``
        (with ``detail``'s text after the counts),
        then what the calls are doing (``; 2 calls in flight: generator 312 s, judge 45 s;
        ...``, see :meth:`CallActivity.describe`)."""
        counts = ", ".join([f"{n} {s}" for s, n in self.counts.items()]
                           + ([f"{self.earlier} done by an earlier run"] if self.earlier else []))
        activity = self.activity.describe()
        detail = f"; {self._detail()}" if self._detail else ""
        return (f"{self.label}: {self.done}/{self.total} done: {counts}{detail}; {self._finished_tokens()}; "
                f"{time.monotonic() - self._start:.0f} s elapsed" + (f"; {activity}" if activity else ""))

    def watch(self, *clients: object) -> None:
        """Show the waits and the calls of ``clients`` (LLM clients): their notes go to
        :meth:`note`, their tries are counted in :attr:`activity`."""
        for client in clients:
            client.on_wait = self.note  # type: ignore[attr-defined]
            client.activity = self.activity  # type: ignore[attr-defined]

    def advance(self, status: str, case_id: str | None = None, tokens: int | None = None) -> None:
        """Count one finished case with ``status`` (plain mode: one line naming
        ``case_id`` and its ``tokens`` of this run; on a terminal the bar moves at once and
        its text of counts at the next redraw, as for :meth:`tokens`)."""
        with self._lock:
            self.counts[status] = self.counts.get(status, 0) + 1
            self.done += 1
            if self.plain:
                what = f" {case_id}" if case_id else ""
                tok = f", {tokens:,} tokens" if tokens is not None else ""
                self._line(f"[{self.done}/{self.total}]{what} {status}{tok}")
            else:  # the counts join the bar's text at its next redraw, within a second
                self._progress.update(self._task, advance=1)

    def grow(self, n: int) -> None:
        """Add ``n`` cases to the total (reserve draws)."""
        with self._lock:
            self.total += n
            self._running += n
            self._progress.update(self._task, total=self.total)

    def tokens(self, total: int) -> None:
        """Take the running token total (called after every call): the bar shows it at its
        next redraw, within a second, and plain summary lines as they come, so that no call
        formats the bar's text (tens of microseconds, with the calls in flight described)."""
        with self._lock:
            self._tokens = total

    def note(self, text: str) -> None:
        """Show a passing note (a rate-limit wait...): in the bar, or as its own line."""
        with self._lock:
            self._note = text
            if self.plain:
                self._line(text)
            else:
                self._progress.update(self._task, stats=self._stats())

    def _tick(self) -> None:
        every = self.summary_every if self.plain else 1.0
        while not self._stop_summaries.wait(every):
            with self._lock:
                if self.plain:
                    self._line(self.summary_line())
                else:  # the seconds of the calls in flight move on
                    self._progress.update(self._task, stats=self._stats())

    def __enter__(self) -> "BuildProgress":
        self._progress.__enter__()
        if self._running:
            self._ticker = threading.Thread(target=self._tick, name="progress-summary", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop_summaries.set()
        if not self.plain:
            with self._lock:  # the bar left on screen shows the final totals
                self._progress.update(self._task, stats=self._stats())
        self._progress.__exit__(*exc)
        if self.plain and self._running and exc[0] is None:  # a run stopped by an error shows only the error
            with self._lock:
                self._line(self.summary_line())
