"""The next case's first prober prompt is made ahead while this case's calls run: the
requests are the ones made on the spot (an ``evaluate`` run against the scripted servers)."""

from __future__ import annotations

import json
import threading

from evaluate.conftest import trio  # noqa: F401 - the scripted prober, simulator and filter
from evaluate.eval_helpers import released_case, write_case
from ioa_synth.probing import probers
from ioa_synth.llm.ahead import RequestsAhead


def _prober_bodies(cli, trio, data, out):
    servers = trio()
    res = cli("evaluate", "--data", data, "--out", out, "--workers", "1")
    assert res.exit_code == 0, res.output
    return [json.dumps(r["body"], sort_keys=True) for r in servers.prober.requests]


def test_first_prober_prompts_made_ahead_equal_those_made_on_the_spot(cli, trio, tmp_path, monkeypatch):
    data = tmp_path / "data"
    for i in range(3):
        write_case(data, f"law/planning_{i:03d}.json", released_case())
    made: list[str] = []
    real = probers.first_prompt

    def spy(template, case, access):
        made.append(threading.current_thread().name.split("_")[0])
        return real(template, case, access)

    monkeypatch.setattr(probers._AHEAD, "_prepare", spy)
    ahead = _prober_bodies(cli, trio, data, tmp_path / "a")
    assert made.count("ahead") == 2  # the second and third cases' prompts
    monkeypatch.setattr(RequestsAhead, "start", lambda self, key, *inputs: None)
    on_the_spot = _prober_bodies(cli, trio, data, tmp_path / "b")
    assert len(ahead) == 3 and ahead == on_the_spot
