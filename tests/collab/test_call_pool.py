"""The call pool of ``collab run`` (in-flight efficiency, scripts/bench_collab.py): while
units wait to start, the calls of the units started first go first; once the last unit has
started, those of the units with the most steps left, so that no unit runs its chain alone
at the end."""

from __future__ import annotations

import threading

from ioa_synth.collab.call_pool import PriorityPool
from ioa_synth.collab.protocol import expected_steps
from ioa_synth.collab.run import RecordedCaller
from ioa_synth.collab.team import CollabSettings

from .helpers import hp_tasks


def test_lowest_priority_first_and_in_order_among_equals():
    gate, ran = threading.Event(), []
    with PriorityPool(1, "t") as pool:
        first = pool.submit(0, gate.wait)  # holds the one thread while the others queue
        futures = [pool.submit(p, ran.append, name) for p, name in [(5, "e"), (1, "b1"), (-3, "a"), (1, "b2")]]
        gate.set()
        first.result()
        for f in futures:
            f.result()
    assert ran == ["a", "b1", "b2", "e"]


def test_units_started_first_go_first_then_those_with_most_steps_left():
    endgame = threading.Event()
    old = RecordedCaller(None, {}, None, "t1", "discussion", steps=5, endgame=endgame, order=0)
    young = RecordedCaller(None, {}, None, "t2", "discussion", steps=30, endgame=endgame, order=7)
    assert old._priority() < young._priority()  # noqa: SLF001 - the scheduling rule itself
    endgame.set()
    assert young._priority() < old._priority()  # noqa: SLF001


def test_expected_steps_count_the_longest_run():
    settings = CollabSettings(bench="hidden-profile")
    task = next(t for t in hp_tasks() if t.agents == 4)
    assert expected_steps(task, "discussion", settings) == 8 * 4 + 1
    # the re-discussion at its cap: every round's turns and stop-votes, but the last round's vote
    assert expected_steps(task, "self-reflection", settings) == 8 * 4 + 1 + (8 * (4 + 1) - 1) + 1
    one = CollabSettings(bench="hidden-profile", max_extra_rounds=1)
    assert expected_steps(task, "self-reflection", one) == 8 * 4 + 1 + 4 + 1
    assert expected_steps(task, "mcq:d", one) == 8 * 4 + 2 + 4 + 1
