"""Re-ask: the default probe rebuilt from the log equals the stored one byte for byte."""

from __future__ import annotations

import json

import pytest

from ioa_synth.belief.chat import Agent, probe_prompt
from ioa_synth.belief.items import Item
from ioa_synth.belief.reask import stored_probe_messages
from ioa_synth.testing.belief_scripted import BeliefScript
from ioa_synth.runs.catalog import Catalog
from tests.belief.helpers import LABELS, STANCES, sample_items


@pytest.fixture
def results(endpoint, tmp_path, cli):
    script = BeliefScript(agents=4, labels=LABELS, stances=STANCES)
    server = endpoint(responder=script)
    out = tmp_path / "res"
    assert cli("belief", "run", "--items", sample_items(tmp_path, 1), "--out", out, "--agents", "4", "--attackers",
               "1", "--rounds", "3").exit_code == 0
    return server, out


def test_rebuilt_default_probe_is_byte_identical(results):
    _, out = results
    conv = json.loads((out / "conversations" / "counterfact-0_k1.json").read_text())
    item = Item.model_validate(conv["item"])
    with Catalog(out) as cat:
        for a in conv["agents"][:3]:
            agent = Agent(a["id"], a["name"], a["role"], a["trait"])
            for step in range(4):
                rebuilt = probe_prompt(agent, item, conv["turns"], step, 5).messages
                stored = stored_probe_messages(cat, item.item_id, 1, agent.id, step)
                assert json.dumps(rebuilt, ensure_ascii=False).encode() == json.dumps(stored, ensure_ascii=False).encode()


def test_reask_variants(results, cli):
    server, out = results
    n = len(server.requests)
    result = cli("belief", "reask", out, "--variant", "anonymized", "--steps", "1,3")
    assert result.exit_code == 0, result.stderr
    assert len(server.requests) == n + 2 * 3 * 2  # probe + judge, 3 benign agents, 2 steps
    asked = [r["body"]["messages"][-1]["content"] for r in server.requests[n:] if "Conversation so far" in
             r["body"]["messages"][-1]["content"]]
    assert asked and all("You:" not in text for text in asked)  # own turns anonymized
    conv = json.loads((out / "conversations" / "counterfact-0_k1.json").read_text())
    assert sum(p["variant"] == "anonymized" for p in conv["probes"]) == 6
    summary = json.loads((out / "summary.json").read_text())
    # agents 2 (steps 1, 3) and 3 (step 3) were infected; the scripted variant answers the same
    assert summary["conditions"]["scripted|counterfact|k=1"]["reask"]["anonymized"]["retention"] == 1.0
    assert cli("belief", "reask", out, "--variant", "anonymized", "--steps", "1,3").exit_code == 0
    assert len(server.requests) == n + 12  # replayed


def test_reask_refuses_a_tampered_log(results, cli):
    _, out = results
    path = out / "conversations" / "counterfact-0_k1.json"
    conv = json.loads(path.read_text())
    conv["turns"][0]["utterance"] += " (edited)"
    path.write_text(json.dumps(conv))
    result = cli("belief", "reask", out, "--variant", "own", "--steps", "1")
    assert result.exit_code == 2 and "differs from the stored request" in result.stderr


def test_steps_beyond_the_run_are_bad_input(results, cli):
    from ioa_helpers import one_line_error

    server, out = results  # a 3-round run
    n = len(server.requests)
    before = (out / "conversations" / "counterfact-0_k1.json").read_bytes()
    for steps in ("99", "1,4", "-1"):
        result = cli("belief", "reask", out, "--variant", "own", "--steps", steps)
        assert result.exit_code == 2
        one_line_error(result, "--steps", "3 rounds", "from 0 to 3")
    assert len(server.requests) == n  # nothing asked, nothing written
    assert (out / "conversations" / "counterfact-0_k1.json").read_bytes() == before


def test_default_steps_are_clipped_to_the_run_with_a_line_saying_so(results, cli):
    server, out = results
    n = len(server.requests)
    result = cli("belief", "reask", out, "--variant", "own")
    assert result.exit_code == 0, result.stderr
    assert "note: the run has 3 rounds: re-asking at step(s) 1 (default steps 4,8,16 dropped)" in result.stderr
    assert len(server.requests) == n + 2 * 3  # probe + judge, 3 benign agents, step 1 only
    conv = json.loads((out / "conversations" / "counterfact-0_k1.json").read_text())
    assert sorted({p["step"] for p in conv["probes"] if p["variant"] == "own"}) == [1]
