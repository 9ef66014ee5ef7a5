"""Generator requests made ahead (while a judge call is on the wire) are exactly the
requests made on the spot: same bodies, same order, only the CPU moves."""

from __future__ import annotations

import json
import threading

from ioa_synth.llm.ahead import RequestsAhead, requests_sent
from ioa_synth.build import pipeline
from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer


def test_a_job_is_handed_over_only_for_the_very_same_inputs():
    made: list[tuple] = []
    done = threading.Event()

    def prepare(*inputs):
        made.append((threading.current_thread().name.split("_")[0], inputs))
        done.set()
        return list(inputs)

    ahead = RequestsAhead(prepare)
    a, b = object(), object()
    ahead.start(("c1", 2, 1), a)
    assert not done.wait(0.2) and made == []  # nothing runs before this thread's request is sent
    requests_sent()
    done.wait(5)
    assert ahead.get(("c1", 2, 1), a) == [a]  # the helper's result, not made again
    assert [who for who, _ in made] == ["ahead"]
    done.clear()
    ahead.start(("c1", 2, 1), a)
    requests_sent()
    done.wait(5)
    assert ahead.get(("c1", 2, 1), b) == [b]  # other inputs (a regenerated stage 1): made now
    assert made[-1][0] != "ahead" and made[-1][1] == (b,)
    ahead.start(("c2", 1, 1), a)
    ahead.forget("c2")
    requests_sent()
    assert ahead.get(("c2", 1, 1), a) == [a]
    ahead.start(("c3", 1, 1), a)  # asked for before any request went out: made on the spot
    assert ahead.get(("c3", 1, 1), a) == [a] and made[-1][0] != "ahead"
    requests_sent()  # the job was taken: nothing is started for it
    assert not any(who == "ahead" and inputs == (a,) for who, inputs in made[2:])


def _build_bodies(cli, seeds, out, monkeypatch, ahead: bool) -> list[dict]:
    if not ahead:
        monkeypatch.setattr(RequestsAhead, "start", lambda self, key, *inputs: None)
    # each reply takes 0.2 s, as an endpoint's does: the helper's job starts while the judge call
    # is out even on a loaded machine (a job not started when it is wanted is made on the spot)
    latency = 0.2 if ahead else 0.0
    with ScriptedServer(ProtocolResponder(script={"stage1_judge": ["low"]}, latency=latency)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-ahead-test-0000")
        res = cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1")
        assert res.exit_code == 0, res.output
        return [r["body"] for r in server.requests if r["path"].rstrip("/").endswith("/chat/completions")]


def test_requests_made_ahead_equal_the_ones_made_on_the_spot(cli, seeds_file, tmp_path, monkeypatch):
    seeds = seeds_file(3)  # the first case's stage 1 is judged low once: its stage 2 uses the second attempt
    made_ahead: list[str] = []
    real = pipeline.Pipeline._generation_request

    def spy(self, case, stage, *rest):
        made_ahead.append(threading.current_thread().name.split("_")[0])
        return real(self, case, stage, *rest)

    monkeypatch.setattr(pipeline.Pipeline, "_generation_request", spy)
    with_ahead = _build_bodies(cli, seeds, tmp_path / "a", monkeypatch, ahead=True)
    assert made_ahead.count("ahead") >= 4  # stage 2 of each case, stage 1 of the next ones
    on_the_spot = _build_bodies(cli, seeds, tmp_path / "b", monkeypatch, ahead=False)
    assert len(with_ahead) == len(on_the_spot) == 3 * 4 + 2
    assert [json.dumps(b, sort_keys=True) for b in with_ahead] == [json.dumps(b, sort_keys=True) for b in on_the_spot]


def _in_thread(fn) -> None:
    t = threading.Thread(target=fn)
    t.start()
    t.join()


def test_a_job_waits_while_another_worker_answers_its_reply_and_is_never_waited_for():
    """A helper job does not take turns with a worker that has a reply to answer: it starts
    when that worker's next request is sent. The worker that wants a job still held back
    makes it itself, at once."""
    from ioa_synth.llm import on_wire

    made: list[str] = []
    started = threading.Event()

    def prepare(x):
        made.append(threading.current_thread().name.split("_")[0])
        started.set()
        return x

    ahead = RequestsAhead(prepare)
    other_has_reply = threading.Event()
    other_may_send = threading.Event()

    def other_worker():
        on_wire.reply_received()
        other_has_reply.set()
        other_may_send.wait(5)
        requests_sent()

    other = threading.Thread(target=other_worker)
    other.start()
    other_has_reply.wait(5)
    ahead.start(("c1",), "x")
    requests_sent()  # this worker's request is on the wire; the other is still answering
    assert not started.wait(0.02) and made == []
    other_may_send.set()
    other.join()
    assert started.wait(5) and made == ["ahead"]
    assert ahead.get(("c1",), "x") == "x"

    # held back, then wanted: made by the worker, no waiting for the other one
    started.clear()
    other_has_reply.clear()
    other_may_send.clear()
    other = threading.Thread(target=other_worker)
    other.start()
    other_has_reply.wait(5)
    ahead.start(("c2",), "y")
    requests_sent()
    assert ahead.get(("c2",), "y") == "y"
    assert made[-1] != "ahead"
    other_may_send.set()
    other.join()


def test_a_worker_whose_item_ended_without_a_request_holds_nothing_back():
    """``answered`` (the worker pool calls it when an item ends) and the time limit both let
    held jobs go: a worker that stopped sending cannot keep the helpers idle."""
    from ioa_synth.llm import on_wire
    from ioa_synth.runs.scheduler import worker_pool

    ran: list[int] = []
    with worker_pool(1, "case") as pool:
        pool.submit(on_wire.reply_received).result()  # its item ends with a reply answered, no request
    on_wire.when_idle(lambda: ran.append(1))
    assert ran == [1]

    _in_thread(on_wire.reply_received)  # a thread gone without saying so
    on_wire.when_idle(lambda: ran.append(2))
    assert ran == [1]
    import time
    time.sleep(on_wire.BUSY_LIMIT_S * 1.5)
    requests_sent()
    assert ran == [1, 2]
