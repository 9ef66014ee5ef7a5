"""Generator requests made ahead (while a judge call is on the wire) are exactly the
requests made on the spot: same bodies, same order, only the CPU moves."""

from __future__ import annotations

import json
import threading

from ioa_synth.llm.ahead import RequestsAhead, requests_sent
from ioa_synth.build import pipeline
from ioa_synth.llm.scripted_server import ProtocolResponder, ScriptedServer


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
    with ScriptedServer(ProtocolResponder(script={"stage1_judge": ["low"]})) as server:
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
