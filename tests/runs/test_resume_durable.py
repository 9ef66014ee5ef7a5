"""A reply is stored before the next request of its unit goes out: a build killed with
SIGKILL the moment that next request reaches the endpoint asks none of its answered calls
again on resume (only the call in flight, whose reply had not arrived)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

from ioa_helpers import settled
from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer, chat_reply, request_kind

#: Spaces after the stage-1 judge's JSON (still the same JSON): its ``llm_calls`` row then
#: takes the client milliseconds to encode and write, far longer than the endpoint takes to
#: see the next request, so a reply journaled only after that request is sent is reliably
#: caught unstored by the kill below.
PADDING = 4_000_000


def test_kill_9_as_the_next_request_arrives_repeats_no_answered_call(seeds_file, tmp_path):
    seeds, out = seeds_file(2), tmp_path / "out"
    base = ProtocolResponder()
    killed: dict[str, Any] = {"pid": None, "at": None}

    def respond(body: dict[str, Any], headers: dict[str, str]):
        kind = request_kind(body)
        if kind == "stage2_generator" and killed["pid"] is not None and killed["at"] is None:
            # the case's stage-1 generator and judge calls are answered, its next call is on
            # the wire: kill the build before answering it
            killed["at"] = len(server.requests)
            os.kill(killed["pid"], signal.SIGKILL)
        reply = base(body, headers)
        if kind == "stage1_judge" and killed["at"] is None:
            return chat_reply(reply.body["choices"][0]["message"]["content"] + " " * PADDING)
        return reply

    with ScriptedServer(respond) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-durable-test-0000"}
        cmd = [sys.executable, "-m", "ioa_synth", "build", "--seeds", str(seeds), "--split", "train",
               "--out", str(out), "--workers", "1"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        killed["pid"] = proc.pid
        try:
            proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()
        first = settled(lambda: len(server.requests))
        answered = [json.dumps(r["body"]["messages"]) for r in server.requests[:killed["at"] - 1]]
        assert [request_kind(r["body"]) for r in server.requests[:killed["at"]]] == [
            "stage1_generator", "stage1_judge", "stage2_generator"]

        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        again = [json.dumps(r["body"]["messages"]) for r in server.requests[first:]]
    repeated = [request_kind({"messages": json.loads(m)}) for m in answered if m in again]
    assert repeated == [], f"answered before the kill and asked again on resume: {repeated}"
    assert "2 stored replies reused" in done.stderr, done.stderr
