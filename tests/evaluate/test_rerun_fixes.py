"""``evaluate`` re-runs: a call whose tries all failed draws a new seed on the re-run (the
seed counts the failed tries stored for its key)."""

from __future__ import annotations

import json

from .eval_helpers import released_case, write_case
from ioa_synth.llm.scripted_server import chat_reply
from ioa_synth.store.calls import call_seed

CASE = "law/planning_000"


def bad_json_first(responder, n: int):
    """``responder`` after ``n`` replies that are not JSON."""
    state = {"left": n}

    def respond(body, headers):
        if state["left"]:
            state["left"] -= 1
            return chat_reply('{"not": json')
        return responder(body, headers)

    return respond


def failed_run(cli, trio, tmp_path):
    """One case whose prober call gives invalid JSON on every try: the case fails."""
    data, out = tmp_path / "data", tmp_path / "results"
    write_case(data, f"{CASE}.json", released_case())
    servers = trio()
    servers.prober.responder = bad_json_first(servers.prober.responder, 3)
    res = cli("evaluate", "--data", data, "--out", out, "--workers", "1")
    assert res.exit_code == 1, res.output
    return servers, data, out, res


def test_rerun_of_a_failed_call_draws_a_new_seed(cli, trio, tmp_path):
    servers, data, out, _ = failed_run(cli, trio, tmp_path)
    s = call_seed(0, (CASE, 0, "prober", 1))
    assert [r["body"]["seed"] for r in servers.prober.requests] == [s, s + 1, s + 2]
    res = cli("evaluate", "--data", data, "--out", out, "--workers", "1")
    assert res.exit_code == 0, res.output
    assert [r["body"]["seed"] for r in servers.prober.requests[3:]] == [s + 3]  # a new draw, past the failed tries
    # the simulator never failed: each participant's call goes with its key's own seed
    sent = sorted(r["body"]["seed"] for r in servers.simulator.requests)
    assert sent == sorted(call_seed(0, (CASE, 1, f"simulator:{p}", 1)) for p in ("M1", "M2"))

