"""Ctrl-C stops a belief run within seconds (exit 130) and a re-run finishes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from ioa_synth.testing.belief_scripted import BeliefScript
from ioa_synth.testing.scripted_server import ScriptedServer
from tests.belief.helpers import sample_items


def test_ctrl_c_then_resume(tmp_path):
    items, out = sample_items(tmp_path, 3), tmp_path / "res"
    with ScriptedServer(BeliefScript(agents=4, latency=0.2)) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-int-test-0000"}
        cmd = [sys.executable, "-m", "ioa_synth", "belief", "run", "--items", str(items), "--out", str(out),
               "--agents", "4", "--attackers", "1", "--rounds", "3", "--workers", "4"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(server.requests) < 10 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert time.monotonic() - t0 < 15
        assert "run the same command again to resume" in err
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
    assert len(list((out / "conversations").glob("*.json"))) == 3
