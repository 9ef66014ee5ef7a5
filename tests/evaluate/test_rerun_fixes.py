"""``evaluate`` re-runs and empty summaries: a call whose tries all failed draws a new seed
on the re-run (the seed counts the failed tries stored for its key), and a summary with
nothing scored has no P/R/F1 (null, shown as n/a) instead of 0.0."""

from __future__ import annotations

import json

from .eval_helpers import released_case, write_case
from ioa_synth.testing.scripted_server import chat_reply
from ioa_synth.runs.recorder import call_seed

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


def test_nothing_scored_has_no_precision_recall_f1(cli, trio, tmp_path):
    _, _, out, res = failed_run(cli, trio, tmp_path)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cases"] == {"requested": 1, "scored": 0, "failed": 1}
    assert {k: summary[k] for k in ("precision", "recall", "f1", "mean_k", "mean_b")} == dict.fromkeys(
        ("precision", "recall", "f1", "mean_k", "mean_b"))
    assert '"f1": null' in (out / "summary.json").read_text()
    row = next(line for line in res.stdout.splitlines() if line.strip("│ ").startswith("all"))
    assert row.count("n/a") == 3 and "0.0%" not in res.stdout
    assert "mean K n/a" in res.stdout
