"""``ioa-synth evaluate`` on real endpoints and terminals (setup errors, Ctrl-C and progress),
modelled on tests/runs/test_sigint.py and tests/llm/test_real_endpoints.py: Ctrl-C on a real
subprocess, a setup error that stops the run and a reconfigured component that resumes,
``<think>``-prefixed replies, plain progress lines and exit statuses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


from .eval_helpers import KEYS, STUDY_1, STUDY_2, STUDY_3, Study, released_case, toolkit_case, write_case
from ioa_helpers import SlowCounting, one_line_error, q, stored_ok
from ioa_synth.testing.scripted_server import Reply, ScriptedServer
from ioa_synth.text.plural import plural

UNSUPPORTED = ("Unsupported value: 'temperature' does not support 0.2 with this model. "
               "Only the default (1) value is supported.")
COMPONENTS = ("prober", "simulator", "validity_filter")


def split_of(root, n: int):
    """``n`` released-format cases (study 1: 4 calls each) under ``root``."""
    for i in range(n):
        write_case(root, f"law/planning_{i:03d}.json", released_case())
    return root


def evaluate(cli, data, out, *extra):
    return cli("evaluate", "--data", data, "--out", out, "--workers", "2", *extra)


def test_first_sigint_exits_130_keeping_completed_calls_then_resumes(tmp_path):
    data, out = split_of(tmp_path / "data", 8), tmp_path / "results"
    study = Study(STUDY_1)
    wrapped = {c: SlowCounting(r, 0.4) for c, r in (("prober", study.prober), ("simulator", study.simulator),
                                                    ("validity_filter", study.filter))}
    with ScriptedServer(wrapped["prober"]) as p, ScriptedServer(wrapped["simulator"]) as s, \
            ScriptedServer(wrapped["validity_filter"]) as f:
        servers = {"prober": p, "simulator": s, "validity_filter": f}
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        for comp, server in servers.items():
            env[f"{comp.upper()}_BASE_URL"], env[f"{comp.upper()}_API_KEY"] = server.base_url, KEYS[comp]

        def sent() -> int:
            return sum(len(x.requests) for x in servers.values())

        def answered() -> int:
            return sum(w.answered for w in wrapped.values())

        cmd = [sys.executable, "-m", "ioa_synth", "evaluate", "--data", str(data), "--out", str(out), "--workers", "2"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while sent() < 5 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "evaluate ended before it could be interrupted"
        sent_at = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        assert time.monotonic() - sent_at < 10
        assert proc.returncode == 130, stderr
        assert "interrupted: no new calls" in stderr
        assert "run the same command again to resume" in stderr.strip().splitlines()[-1]
        first = answered()
        time.sleep(0.5)
        assert sent() == answered() == first  # nothing was sent after the exit
        assert stored_ok(out) == first  # every completed call was recorded
        assert first < 8 * 4  # it did stop early
        summary = json.loads((out / "summary.json").read_text())
        assert summary["complete"] is False
        records = [json.loads(p.read_text()) for p in (out / "records").rglob("*.json")]
        assert all(r["status"] == "scored" for r in records)  # cases cut short got no failed record
        assert summary["cases"]["scored"] == len(records) < 8
        # the last line says what is kept: finished cases and every finished, stored call
        assert (f"interrupted: {plural(len(records), 'case')} finished, {plural(first, 'model call')} stored "
                f"(the next run reuses {'its reply' if first == 1 else 'their replies'})") in stderr.strip().splitlines()[-1]

        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert stored_ok(out) == 8 * 4 == answered() == sent()  # the re-run paid only what was missing
        assert json.loads((out / "summary.json").read_text())["cases"] == {"requested": 8, "scored": 8, "failed": 0}


def refuse_temperature(responder):
    def respond(body, headers):
        if "temperature" in body:
            return Reply(status=400, body={"error": {"message": UNSUPPORTED, "type": "invalid_request_error",
                                                     "param": "temperature", "code": "unsupported_value"}})
        return responder(body, headers)
    return respond


def test_simulator_refusing_temperature_stops_then_null_temperature_resumes(cli, trio, tmp_path):
    data, out = split_of(tmp_path / "data", 4), tmp_path / "results"
    t = trio(Study(STUDY_1))
    t.simulator.responder = refuse_temperature(t.study.simulator)
    res = evaluate(cli, data, out)
    assert res.exit_code == 2
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error: simulator: HTTP 400") and "Unsupported value: 'temperature'" in last
    assert '"temperature": null for simulator' in last
    assert res.stderr.strip().splitlines() == [last]  # a run stopped by a setup error prints only its error
    assert 1 <= len(t.simulator.requests) <= 2  # one per case in flight, none after the first refusal
    assert len(t.prober.requests) <= 3 and t.validity_filter.requests == []
    assert not (out / "records").exists() or not any((out / "records").rglob("*.json"))  # no failed records
    assert json.loads((out / "summary.json").read_text())["cases"] == {"requested": 4, "scored": 0, "failed": 0}
    stored_prober = q(out, "SELECT count(*) FROM llm_calls WHERE role = 'prober' AND error IS NULL")[0][0]
    assert stored_prober == len(t.prober.requests) >= 1
    assert "stopped" in json.loads(q(out, "SELECT summary_json FROM runs")[0][0])

    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"simulator": {"temperature": None}}))
    t.simulator.responder = refuse_temperature(t.study.simulator)  # still refuses any temperature
    before = t.counts()
    res = evaluate(cli, data, out, "--config", cfg)
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["f1"] == 0.8889
    # the prober calls of the first run were replayed, not paid again
    assert len(t.prober.requests) - before[0] == 4 - stored_prober
    assert len(t.simulator.requests) - before[1] == 8
    assert all("temperature" not in r["body"] for r in t.simulator.requests[before[1]:])
    assert len(q(out, "SELECT DISTINCT fingerprint FROM runs")) == 2  # runs keeps both setups
    assert json.loads((out / "run.json").read_text())["components"]["simulator"]["temperature"] is None

    # now every component has results: a changed component or protocol setting is refused
    cfg.write_text(json.dumps({"simulator": {"temperature": None}, "prober": {"temperature": 0.9}}))
    one_line_error(evaluate(cli, data, out, "--config", cfg), "prober.temperature: 0.7 -> 0.9", "use a new --out")
    cfg.write_text(json.dumps({"simulator": {"temperature": None}}))
    for extra, name in ((("--access", "thoughts"), "access"), (("--rollouts", "2"), "rollouts"),
                        (("--permute-seed", "3"), "permute_seed")):
        one_line_error(evaluate(cli, data, out, "--config", cfg, *extra), name, "use a new --out")
    write_case(data, "law/planning_009.json", released_case(tag=" extra"))
    one_line_error(evaluate(cli, data, out, "--config", cfg), "inputs", "use a new --out")


def test_reconfiguring_a_component_without_results_is_allowed_but_not_one_with_results(cli, trio, tmp_path):
    """A component's setup is refused only once it has results: the filter never answered (500s) -> its model may change."""
    data, out = split_of(tmp_path / "data", 1), tmp_path / "results"
    t = trio(Study(STUDY_1))
    t.validity_filter.responder = lambda body, headers: Reply(status=500, body={"error": {"message": "down"}})
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"validity_filter": {"max_retries": 0}}))
    res = evaluate(cli, data, out, "--config", cfg)
    assert res.exit_code == 1 and "run the same command again to retry them" in res.stderr
    t.validity_filter.responder = t.study.filter
    cfg.write_text(json.dumps({"validity_filter": {"max_retries": 0, "model": "filter-v2"}}))
    before = t.counts()
    res = evaluate(cli, data, out, "--config", cfg)
    assert res.exit_code == 0, res.output
    assert t.counts()[:2] == before[:2]  # prober and simulator replayed
    assert [r["body"]["model"] for r in t.validity_filter.requests[before[2]:]] == ["filter-v2"]
    assert json.loads((out / "summary.json").read_text())["complete"] is True
    # now the filter has a result: changing it again is refused
    cfg.write_text(json.dumps({"validity_filter": {"max_retries": 0, "model": "filter-v3"}}))
    one_line_error(evaluate(cli, data, out, "--config", cfg), "1 successful validity_filter call(s)",
                   "validity_filter.model: 'filter-v2' -> 'filter-v3'")


def test_think_prefixed_prober_replies_are_used_without_extra_requests(cli, trio, tmp_path):
    data, out = split_of(tmp_path / "data", 2), tmp_path / "results"
    t = trio(Study(STUDY_1))

    def think(body, headers):
        reply = t.study.prober(body, headers)
        msg = reply.body["choices"][0]["message"]
        msg["content"] = "<think>\nThe user wants questions. {\"questions\": []}\n</think>\n\n" + msg["content"]
        return reply

    t.prober.responder = think
    res = evaluate(cli, data, out)
    assert res.exit_code == 0, res.output
    assert t.counts() == (2, 4, 2)  # no re-request
    rec = json.loads((out / "records/law/planning_000.json").read_text())
    assert rec["metrics"]["f1"] == 0.8889 and rec["calls"][0]["response"].startswith("<think>")
    assert q(out, "SELECT DISTINCT reply_field FROM llm_calls WHERE role = 'prober'") == [("content",)]


def test_plain_progress_lines_off_a_terminal(cli, trio, tmp_path):
    data = tmp_path / "data"
    write_case(data, "business/troubleshooting_010.json", released_case(tag=" STUDY1"))
    write_case(data, "law/planning_003.json", released_case(tag=" STUDY2"))
    write_case(data, "ml_research/planning_000.json", toolkit_case())
    trio(Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2}))
    res = cli("evaluate", "--data", data, "--out", tmp_path / "r", "--workers", "1")
    assert res.exit_code == 0, res.output
    lines = res.stderr.splitlines()
    case_lines = [ln for ln in lines if ln.startswith("[")]
    assert [ln.split(",")[0] for ln in case_lines] == ["[1/3] business/troubleshooting_010 scored",
                                                       "[2/3] law/planning_003 scored",
                                                       "[3/3] ml_research/planning_000 scored"]
    assert all(ln.endswith(" tokens") for ln in case_lines)
    # 4 calls of 150 scripted tokens each for the first case
    assert case_lines[0] == "[1/3] business/troubleshooting_010 scored, 600 tokens"
    assert any(ln.startswith("evaluate: 3/3 done: 3 scored, 0 failed; ") for ln in lines)


def test_second_sigint_exits_at_once(tmp_path):
    data, out = split_of(tmp_path / "data", 4), tmp_path / "results"
    study = Study(STUDY_1)
    with ScriptedServer(SlowCounting(study.prober, 3.0)) as p, ScriptedServer(study.simulator) as s, \
            ScriptedServer(study.filter) as f:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        for comp, server in (("prober", p), ("simulator", s), ("validity_filter", f)):
            env[f"{comp.upper()}_BASE_URL"], env[f"{comp.upper()}_API_KEY"] = server.base_url, KEYS[comp]
        cmd = [sys.executable, "-m", "ioa_synth", "evaluate", "--data", str(data), "--out", str(out), "--workers", "2"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(p.requests) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        sent_at = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        assert time.monotonic() - sent_at < 2.5  # not waiting for the 3 s prober replies
        assert proc.returncode == 130
        assert "interrupted again: exiting now" in stderr


def test_unreachable_simulator_names_the_url_and_leaves_cases_to_do(cli, trio, tmp_path, monkeypatch):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    data, out = split_of(tmp_path / "data", 3), tmp_path / "results"
    trio(Study(STUDY_1))
    monkeypatch.setenv("SIMULATOR_BASE_URL", url)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"simulator": {"model": "m", "max_retries": 0}}))
    res = evaluate(cli, data, out, "--config", cfg)
    assert res.exit_code == 2
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: simulator: cannot reach {url}") and "SIMULATOR_BASE_URL" in last
    assert list(out.glob("records/**/*.json")) == []  # no case was marked failed
