"""Ctrl-C on a real ``build`` subprocess: with polars imported (it replaces the
SIGINT handler), the first SIGINT stops new calls and exits 130 within seconds, keeping
every call that completed; a second SIGINT exits at once; the run resumes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from ioa_helpers import SlowCounting, q, stored_ok
from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer


def start_build(server, seeds, out):
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-sigint-test-0000",
           "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [sys.executable, "-m", "ioa_synth", "build", "--seeds", str(seeds), "--split", "test", "--out", str(out),
           "--workers", "2"]
    return cmd, env, subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_requests(server, proc, n):
    deadline = time.monotonic() + 60
    while len(server.requests) < n and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "build ended before it could be interrupted"


def stop_after_requests(server, proc, n, signum) -> str:
    """Send ``signum`` once ``n`` requests arrived; the build must exit 130 within 10 s with
    the resume line last. Returns its stderr."""
    wait_for_requests(server, proc, n)
    sent_at = time.monotonic()
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=30)
    elapsed = time.monotonic() - sent_at
    assert elapsed < 10, elapsed
    assert proc.returncode == 130, stderr
    assert "run the same command again to resume" in stderr.strip().splitlines()[-1]
    return stderr


def test_first_sigint_exits_130_keeping_completed_calls(seeds_file, tmp_path):
    seeds, out = seeds_file(8), tmp_path / "out"
    responder = SlowCounting(ProtocolResponder(), 0.4)
    with ScriptedServer(responder) as server:
        cmd, env, proc = start_build(server, seeds, out)
        stop_after_requests(server, proc, 5, signal.SIGINT)
        answered = responder.answered
        time.sleep(0.5)
        assert len(server.requests) == responder.answered  # nothing sent after the exit
        assert stored_ok(out) == answered  # every completed call was recorded
        assert answered < 8 * 4  # it did stop early

        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert stored_ok(out) == 8 * 4 == responder.answered  # the re-run paid only what was missing


def test_sigterm_ends_the_run_like_ctrl_c(seeds_file, tmp_path):
    """``timeout`` or a job scheduler stops a run with SIGTERM: it exits 130 within seconds,
    the calls that completed and the run's end are stored, and the run resumes."""
    seeds, out = seeds_file(8), tmp_path / "out"
    responder = SlowCounting(ProtocolResponder(), 0.4)
    with ScriptedServer(responder) as server:
        cmd, env, proc = start_build(server, seeds, out)
        stop_after_requests(server, proc, 5, signal.SIGTERM)
        assert stored_ok(out) == responder.answered
        assert q(out, "SELECT count(*) FROM runs WHERE finished_at IS NULL")[0][0] == 0
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert stored_ok(out) == 8 * 4


def test_sigint_line_counts_the_failed_tries_stored(seeds_file, tmp_path):
    """The last line counts every call stored, the failed tries too, and says which is
    which (it counted only the replies, so the catalog held more calls than it said)."""
    seeds, out = seeds_file(8), tmp_path / "out"
    responder = SlowCounting(ProtocolResponder(script={"stage1_generator": ["badjson", "badjson"]}), 0.4)
    with ScriptedServer(responder) as server:
        _, _, proc = start_build(server, seeds, out)
        wait_for_requests(server, proc, 6)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 130, stderr
    last = stderr.strip().splitlines()[-1]
    got = re.fullmatch(r"error: interrupted: (\d+) cases? finished, (\d+) model calls stored \((\d+) repl(?:y|ies) "
                       r"the next run reuses, 2 failed tries\); run the same command again to resume", last)
    assert got, last
    calls, replies = int(got[2]), int(got[3])
    assert replies == stored_ok(out) and calls == replies + 2
    assert q(out, "SELECT count(*) FROM llm_calls")[0][0] == calls


@pytest.mark.parametrize("args, line", [
    ((0, 0, "case", 0), "interrupted: 0 cases finished, no model call stored"),
    ((1, 0, "case", 1), "interrupted: 1 case finished, 1 model call stored (the next run reuses its reply)"),
    ((3, 1, "case", 10, 2), "interrupted: 3 cases finished, 12 model calls stored (10 replies the next run reuses, "
                            "2 failed tries); 1 case still running was abandoned"),
    ((2, 0, "conversation", 0, 1), "interrupted: 2 conversations finished, 1 model call stored (0 replies the next run "
                                   "reuses, 1 failed try)"),
    ((2, 2, "item"), "interrupted: 2 items finished; 2 items still running were abandoned"),
])
def test_interrupted_line_wording(args, line):
    from ioa_synth.runs.interrupt import RunInterrupted

    assert str(RunInterrupted(*args)) == line


def test_second_sigint_exits_at_once(seeds_file, tmp_path):
    seeds, out = seeds_file(4), tmp_path / "out"
    with ScriptedServer(SlowCounting(ProtocolResponder(), 3.0)) as server:
        _, _, proc = start_build(server, seeds, out)
        wait_for_requests(server, proc, 2)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        sent_at = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        assert time.monotonic() - sent_at < 2.5  # not waiting for the 3 s replies
        assert proc.returncode == 130
        assert "interrupted again: exiting now" in stderr
