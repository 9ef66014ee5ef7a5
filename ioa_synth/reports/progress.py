"""Rich progress bar of a build: done / accepted / discarded / failed and tokens."""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class BuildProgress:
    """Context manager showing one bar over the cases of a run (thread-safe)."""

    def __init__(self, console: Console, total: int, label: str = "cases") -> None:
        self._lock = threading.Lock()
        self.counts = {"accepted": 0, "discarded": 0, "failed": 0}
        self._tokens = 0
        self._progress = Progress(
            TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(), console=console, transient=False, disable=total == 0)
        self._task = self._progress.add_task(label, total=total, stats=self._stats())

    def _stats(self) -> str:
        c = self.counts
        return (f"[green]{c['accepted']} accepted[/] [yellow]{c['discarded']} discarded[/] "
                f"[red]{c['failed']} failed[/] {self._tokens:,} tokens")

    def advance(self, status: str) -> None:
        """Count one finished case with ``status``."""
        with self._lock:
            self.counts[status] = self.counts.get(status, 0) + 1
            self._progress.update(self._task, advance=1, stats=self._stats())

    def grow(self, n: int) -> None:
        """Add ``n`` cases to the total (reserve draws)."""
        with self._lock:
            total = self._progress.tasks[0].total or 0
            self._progress.update(self._task, total=total + n)

    def tokens(self, total: int) -> None:
        """Show the running token total."""
        with self._lock:
            self._tokens = total
            self._progress.update(self._task, stats=self._stats())

    def __enter__(self) -> "BuildProgress":
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(*exc)
