"""A worker-pool run keeps what was set up before it out of the collector's scans, and
gives it back when it ends (nested runs: at the outermost end)."""

from __future__ import annotations

import gc
from collections import deque

from ioa_synth.runs.gc_setup import setup_frozen
from ioa_synth.runs.interrupt import InterruptGuard
from ioa_synth.runs.scheduler import run_interruptible, worker_pool


def test_setup_is_frozen_while_the_block_runs_and_given_back_after():
    assert gc.get_freeze_count() == 0
    setup = [object() for _ in range(10)] + [{"a": [1]}]  # tracked containers among them
    with setup_frozen():
        frozen = gc.get_freeze_count()
        assert frozen > len(setup)
        with setup_frozen():  # a run inside a run: the inner end unfreezes nothing
            pass
        assert frozen - 100 < gc.get_freeze_count() <= frozen  # still frozen (another test's lingering thread may free a few)
        made_during = [[i] for i in range(100)]
        assert gc.get_freeze_count() <= frozen  # new objects stay collectable: none joins the frozen ones
        del made_during
    assert gc.get_freeze_count() == 0


def test_run_interruptible_freezes_while_items_run_and_after_an_error():
    seen: list[int] = []

    def work(item: int) -> int:
        seen.append(gc.get_freeze_count())
        if item == 3:
            raise ValueError("boom")
        return item

    with InterruptGuard() as guard, worker_pool(2, "t") as pool:
        try:
            run_interruptible(lambda i: pool.submit(work, i), deque(range(4)), lambda i, r: None, 2, guard)
        except ValueError:
            pass
    assert seen and all(n > 0 for n in seen)
    assert gc.get_freeze_count() == 0
