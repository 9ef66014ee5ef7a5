"""A call whose tries all failed draws a new seed when the command is run again (the seed
counts the failed tries stored for its key), so a case that failed on a deterministic
sampler does not fail identically on the re-run the error line asks for; a key that
succeeded keeps its seed. Build and the belief study here; evaluate in
tests/evaluate/test_rerun_fixes.py."""

from __future__ import annotations

import json

from ioa_helpers import q

from ioa_synth.testing.belief_scripted import BeliefScript, schema_name
from ioa_synth.testing.scripted_server import request_kind
from ioa_synth.runs.recorder import call_seed
from tests.belief.helpers import sample_items

PLANNING = "test/ml_research/planning_000"


def seeds_by_messages(requests: list[dict], keep=lambda body: True) -> dict[str, list[int]]:
    """The seeds sent per distinct request (its messages), in order."""
    out: dict[str, list[int]] = {}
    for r in requests:
        if keep(r["body"]):
            out.setdefault(json.dumps(r["body"]["messages"]), []).append(r["body"].get("seed"))
    return out


def test_build_rerun_of_a_failed_call_draws_a_new_seed(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_generator": ["badjson"] * 3})  # every try of the first call is invalid JSON
    seeds, out = seeds_file(1), tmp_path / "out"
    first = cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1")
    assert first.exit_code == 1, first.output
    s = call_seed(0, (PLANNING, 1, "generator", 1))
    sent = [r["body"]["seed"] for r in server.requests if request_kind(r["body"]) == "stage1_generator"]
    assert sent == [s, s + 1, s + 2]  # content retries: the try index is added
    n = len(server.requests)
    again = cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1")
    assert again.exit_code == 0, again.output
    rerun = [r["body"]["seed"] for r in server.requests[n:] if request_kind(r["body"]) == "stage1_generator"]
    assert rerun == [s + 3]  # past the three failed tries: a new draw
    # the stored successful call holds the seed it was sent with; the judge never failed: same seed as always
    stored = q(out, "SELECT role, request_json FROM llm_calls WHERE error IS NULL AND stage = 1")
    assert {r: json.loads(b)["seed"] for r, b in stored} == {"generator": s + 3,
                                                             "judge": call_seed(0, (PLANNING, 1, "judge", 1))}
    # a fresh directory (no failure stored) sends the first seeds again: reproducible
    fresh = endpoint()
    assert cli("build", "--seeds", seeds, "--split", "test", "--out", tmp_path / "out2", "--workers", "1").exit_code == 0
    assert [r["body"]["seed"] for r in fresh.requests if request_kind(r["body"]) == "stage1_generator"] == [s]


def test_belief_rerun_of_a_failed_call_draws_a_new_seed(endpoint, tmp_path, cli):
    script = BeliefScript(agents=2, actions={"belief_verdict": ["badjson"] * 3})
    server = endpoint(responder=script)
    run = ("belief", "run", "--items", sample_items(tmp_path, 1), "--out", tmp_path / "res", "--agents", "2",
           "--attackers", "1", "--rounds", "1", "--workers", "1")
    assert cli(*run).exit_code == 1
    verdicts = lambda body: schema_name(body) == "belief_verdict"  # noqa: E731
    failed = [seeds for seeds in seeds_by_messages(server.requests, verdicts).values() if len(seeds) == 3]
    assert len(failed) == 1
    s = failed[0][0]
    assert failed[0] == [s, s + 1, s + 2]
    n = len(server.requests)
    result = cli(*run)
    assert result.exit_code == 0, result.stderr
    again = seeds_by_messages(server.requests[n:], verdicts)
    retried = [seeds for seeds in again.values() if s + 3 in seeds]
    assert retried == [[s + 3]]
    # any other request sent in both runs (a call the failure cut short) goes with the same seed
    earlier = seeds_by_messages(server.requests[:n])
    for messages, seeds in seeds_by_messages(server.requests[n:]).items():
        if messages in earlier and seeds != [s + 3]:
            assert seeds[0] == earlier[messages][0]
