"""The call pool of ``collab run`` (in-flight efficiency, scripts/bench_collab.py): while
units wait to start, the calls of the units started first go first; once the last unit has
started, those of the units with the most steps left, calls queued before then included,
so that no unit runs its chain alone at the end."""

from __future__ import annotations

import threading
import time

from ioa_synth.collab.call_pool import PriorityPool
from ioa_synth.collab.protocol import expected_steps
from ioa_synth.collab.run import RecordedCaller
from ioa_synth.collab.team import Ask, CollabSettings
from ioa_synth.core.templates import Prompt
from ioa_synth.testing.collab_scripted import CollabScript

from .helpers import HP, hp_tasks


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
    assert old.rank() < young.rank()
    endgame.set()
    assert young.rank() < old.rank()


def test_a_priority_given_as_a_function_is_read_again_at_reorder():
    gate, ran, rule = threading.Event(), [], {"x": 1, "y": 2}
    with PriorityPool(1, "t") as pool:
        first = pool.submit(0, gate.wait)
        futures = [pool.submit(lambda n=name: rule[n], ran.append, name) for name in ("x", "y")]
        rule.update(x=3, y=-1)
        pool.reorder()
        gate.set()
        first.result()
        for f in futures:
            f.result()
    assert ran == ["y", "x"]


class _Spy(RecordedCaller):
    """A unit whose calls only say that they ran (scheduling only, no endpoint)."""

    ran: list[str]

    def _call(self, ask: Ask) -> None:
        self.ran.append(self.task_id)


def test_a_call_queued_before_the_endgame_is_ranked_by_its_units_steps_left():
    # before: a call queued while units still waited to start kept its start-order rank
    # (>= 0) behind every call queued in the endgame (< 0), so its unit ran its whole chain
    # alone once the others had ended (bench_collab: ~5 s of ~11 calls in flight, 0.91)
    endgame, gate, ran = threading.Event(), threading.Event(), []
    ask = Ask("discusser", 1, "say:Agent1", Prompt([{"role": "user", "content": "hi"}], "0" * 64))
    with PriorityPool(1, "t") as pool:
        held = pool.submit(0, gate.wait)
        long = _Spy(None, {}, pool, "long", "discussion", steps=30, endgame=endgame, order=5)
        long.ran = ran
        waiting = threading.Thread(target=long.one, args=(ask,))
        waiting.start()
        deadline = time.monotonic() + 10
        while not pool._heap and time.monotonic() < deadline:  # noqa: SLF001 - queued behind the held thread
            time.sleep(0.001)
        endgame.set()
        pool.reorder()  # what collab run does when its last unit is queued
        short = _Spy(None, {}, pool, "short", "discussion", steps=3, endgame=endgame, order=0)
        short.ran = ran
        queued = threading.Thread(target=short.one, args=(ask,))
        queued.start()
        while len(pool._heap) < 2 and time.monotonic() < deadline:  # noqa: SLF001
            time.sleep(0.001)
        gate.set()
        held.result()
        waiting.join(10)
        queued.join(10)
    assert ran == ["long", "short"]


def test_the_run_ranks_the_queued_calls_again_when_its_last_unit_is_queued(cli, endpoint, tmp_path, monkeypatch):
    reorders: list[int] = []
    reorder = PriorityPool.reorder

    def spy(pool: PriorityPool) -> None:
        reorders.append(1)
        reorder(pool)

    monkeypatch.setattr(PriorityPool, "reorder", spy)
    endpoint(responder=CollabScript(tasks=hp_tasks(), latency=0.005))
    res = cli("collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", tmp_path / "res",
              "--configs", "discussion", "--workers", "1")
    assert res.exit_code == 0, res.output
    assert reorders == [1]


def test_expected_steps_count_the_longest_run():
    settings = CollabSettings(bench="hidden-profile")
    task = next(t for t in hp_tasks() if t.agents == 4)
    assert expected_steps(task, "discussion", settings) == 8 * 4 + 1
    # the re-discussion at its cap: every round's turns and stop-votes, but the last round's vote
    assert expected_steps(task, "self-reflection", settings) == 8 * 4 + 1 + (8 * (4 + 1) - 1) + 1
    one = CollabSettings(bench="hidden-profile", max_extra_rounds=1)
    assert expected_steps(task, "self-reflection", one) == 8 * 4 + 1 + 4 + 1
    assert expected_steps(task, "mcq:d", one) == 8 * 4 + 2 + 4 + 1
