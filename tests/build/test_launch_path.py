"""What runs between ``ioa-synth build`` starting and its first request: no library the
build does not use is loaded (scikit-learn for a stop-word list, datasketch and scipy
without ``--dedup``), and the run's estimate builds its tokenizers only once the first
request is on the wire (``scripts/bench_launch.py`` measures the time; tests never do)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ioa_helpers import KEY, q

ROOT = Path(__file__).resolve().parents[2]
UNUSED = ("sklearn", "scipy", "pandas", "datasketch")


def _imported(stderr: str) -> set[str]:
    """Top-level package names in ``python -X importtime`` output."""
    return {line.rsplit("|", 1)[1].strip().split(".")[0] for line in stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def test_a_build_process_loads_no_library_it_does_not_use(endpoint, seeds_file, tmp_path):
    server = endpoint()
    config = tmp_path / "config.json"
    config.write_text(json.dumps({c: {"model": "scripted"} for c in ("generator", "judge")}))
    env = dict(os.environ, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY=KEY, PYTHONPATH=str(ROOT))
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "ioa_synth", "build", "--seeds", str(seeds_file(2)),
                          "--split", "test", "--out", str(tmp_path / "out"), "--config", str(config)],
                         env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    imported = _imported(res.stderr)
    assert "openai" in imported  # the parsing sees the imports
    assert not imported & set(UNUSED), sorted(imported & set(UNUSED))
    assert q(tmp_path / "out", "SELECT count(*) FROM cases WHERE status = 'accepted'")[0][0] == 2


def test_the_estimate_builds_its_tokenizers_after_the_first_request(cli, endpoint, seeds_file, tmp_path, monkeypatch):
    """The folder is read before the first call; the tokenizers and prompt counts, about a
    second, come once the first request is on the wire; the estimate is still dated before
    the run's first call, so status's "spent since" holds every call of the run."""
    import ioa_synth.build.estimate as estimate

    server = endpoint()
    requests_at_setup: list[int] = []
    real = estimate.component_setup

    def spy(*args, **kwargs):
        # "on the wire" is the client's side: the scripted server may record the request a
        # moment later, so give it that moment. Were the setup still on the path before the
        # first request, no request could arrive while it waits here, and 0 is recorded.
        deadline = time.monotonic() + 5
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        requests_at_setup.append(len(server.requests))
        return real(*args, **kwargs)

    monkeypatch.setattr(estimate, "component_setup", spy)
    out = tmp_path / "out"
    res = cli("build", "--seeds", seeds_file(3), "--split", "test", "--out", out, "--workers", "1")
    assert res.exit_code == 0, res.output
    assert requests_at_setup and min(requests_at_setup) >= 1, requests_at_setup
    spend = json.loads(cli("status", "--out", out, "--json").stdout)["spend"]
    assert spend["command"] == "build" and spend["estimate"]["assumptions"]["cases"] == 3
    assert spend["spent"]["total"]["calls"] == len(server.requests) == 12
