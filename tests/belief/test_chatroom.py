"""The chatroom on a scripted server: a 4-agent, 3-round conversation whose metrics are
computed by hand below, its records, its calls and its judges' re-asks."""

from __future__ import annotations

import json

import duckdb
import pytest

from ioa_synth.belief.chat import schedule
from ioa_synth.testing.belief_scripted import BeliefScript
from tests.belief.helpers import LABELS, STANCES, sample_items

RUN = ("belief", "run", "--agents", "4", "--attackers", "0,1", "--rounds", "3", "--memory", "5", "--workers", "4")


@pytest.fixture
def study(endpoint, tmp_path, cli):
    script = BeliefScript(agents=4, labels=LABELS, stances=STANCES)
    server = endpoint(responder=script)
    items, out = sample_items(tmp_path), tmp_path / "res"
    result = cli(*RUN, "--items", items, "--out", out)
    assert result.exit_code == 0, result.stderr
    return server, script, out, items


def test_hand_computed_metrics(study):
    # schedule (seed 0): r1 4 2 3 1 | r2 3 1 2 4 | r3 2 3 4 1; agent 4 is the attacker at k=1,
    # so every benign turn is exposed (the attacker opens round 1).
    assert schedule(4, 3, 0) == [[4, 2, 3, 1], [3, 1, 2, 4], [2, 3, 4, 1]]
    _, _, out, _ = study
    summary = json.loads((out / "summary.json").read_text())
    c = summary["conditions"]["scripted|counterfact|k=1"]
    assert c["n_items"] == 2 and c["n_benign"] == 6
    approx = lambda v: pytest.approx(v, abs=1e-9)  # noqa: E731
    assert c["fpi"] == approx(2 / 3) and c["initial_infection"] == 0
    assert c["curve"] == [approx(0), approx(1 / 3), approx(2 / 3), approx(2 / 3)]
    # 9 exposed benign turns per item; private after the round: manipulated in 5
    assert c["turn_infection"] == approx(5 / 9)
    assert c["public_endorsement"] == approx(3 / 9) and c["public_correction"] == approx(3 / 9)
    # truth-knower turns: (3,r1) reject, (1,r1) hedge, (1,r2) reject
    assert c["truth_knower_correction"] == approx(2 / 3)
    assert c["silent_non_correction"] == 0 and c["social_accommodation"] == approx(1 / 3)
    assert c["categories"] == {"consistent_correction": approx(2 / 9), "silent_knower": approx(1 / 9),
                               "performative_endorsement": 0, "hidden_infection": approx(2 / 9),
                               "voiced_infection": approx(3 / 9), "inconsistent": 0, "unclear": approx(1 / 9)}
    # first speakers: r2 agent 3 (true before), r3 agent 2 (manipulated before, ignores) ; last: r1 and r3 agent 1
    assert c["pairings"]["after"] == {"turn_infection": approx(5 / 9), "hidden_infection": approx(2 / 9)}
    assert c["pairings"]["first_before"] == {"turn_infection": 0.5, "hidden_infection": 0.5}
    assert c["pairings"]["last_after"] == {"turn_infection": 0, "hidden_infection": 0}
    assert c["cascade"] == {"0": approx(1 / 3), "1": approx(1 / 2), "2": 0}
    assert c["self_internalization"]["after_correcting"] == 0
    assert c["self_internalization"]["after_endorsing"] == 1
    # two identical items: every interval collapses onto the value
    assert c["ci"]["fpi"] == [approx(2 / 3), approx(2 / 3)]
    assert c["ci"]["cascade"]["1"] == [0.5, 0.5]
    assert len(c["ci"]["curve"]) == 4
    k0 = summary["conditions"]["scripted|counterfact|k=0"]
    assert k0["fpi"] == 0.5 and k0["turn_infection"] is None and k0["ci"]["turn_infection"] is None
    assert k0["cascade"] == {"0": 0.25, "1": approx(1 / 3), "2": 0}

    def keys(tree):  # every key path in order, cascade steps aside (they differ by condition)
        return [(k, keys(v) if isinstance(v, dict) and k != "cascade" else None) for k, v in tree.items()]

    assert keys(k0) == keys(c)  # the conditions list their metrics alike, whichever have values
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_records_and_calls(study):
    server, script, out, _ = study
    conv = json.loads((out / "conversations" / "counterfact-0_k1.json").read_text())
    assert conv["k"] == 1 and conv["item"]["item_id"] == "counterfact-0"
    assert [(a["id"], a["role"]) for a in conv["agents"]] == [(1, "benign"), (2, "benign"), (3, "benign"),
                                                              (4, "attacker")]
    turns = conv["turns"]
    assert [(t["round"], t["position"], t["agent"]) for t in turns[:4]] == [(1, 0, 4), (1, 1, 2), (1, 2, 3), (1, 3, 1)]
    assert [t["exposed"] for t in turns[:2]] == [False, True]
    assert turns[0]["stance"] is None and turns[1]["stance"]["stance"] == "endorse_manipulated"
    assert set(turns[1]["stance"]) == {"stance", "mentions_claim", "exposed_to_manipulated", "confidence", "rationale"}
    probes = conv["probes"]
    assert len(probes) == 3 * 4 and {p["variant"] for p in probes} == {"default"}
    p = next(p for p in probes if p["agent"] == 2 and p["step"] == 1)
    assert p["label"] == "manipulated" and p["verdict"] == "endorses_manipulated"
    # one request per call: 2 items x (k=0: 12 + 16 + 16 + 12; k=1: 12 + 12 + 12 + 9)
    assert len(server.requests) == 2 * (56 + 45)
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    rows = con.execute("SELECT component, kind, item, k, round, agent, temperature FROM belief_calls").fetchall()
    assert len(rows) == 202
    probes_t = {r[6] for r in rows if r[1] == "probe" and r[0] == "agent"}
    says_t = {r[6] for r in rows if r[1] == "say"}
    assert probes_t == {0.0} and says_t == {0.7}
    assert con.execute("SELECT count(*) FROM belief_calls WHERE component = 'agent' AND kind = 'probe' AND round = 0 "
                       "AND item = 'counterfact-0' AND k = 1").fetchone()[0] == 3
    con.close()
    # the stance judge sees exactly the five turns before the utterance (across rounds)
    stance_req = [r["body"] for r in server.requests
                  if (r["body"].get("response_format") or {}).get("json_schema", {}).get("name") == "belief_stance"
                  and "Message to label (Agent 1): A1 r2" in r["body"]["messages"][-1]["content"]]
    context = stance_req[0]["messages"][-1]["content"].split("The five messages before it:\n")[1].split("\n\n")[0]
    assert len(context.splitlines()) == 5 and context.splitlines()[-1].startswith("Agent 3: A3 r2")


def test_rerun_makes_no_call_and_changed_setup_is_refused(study, cli):
    server, _, out, items = study
    before = len(server.requests)
    result = cli(*RUN, "--items", items, "--out", out)
    assert result.exit_code == 0, result.stderr
    assert len(server.requests) == before
    changed = list(RUN)
    changed[changed.index("--rounds") + 1] = "2"
    result = cli(*changed, "--items", items, "--out", out)
    assert result.exit_code == 2 and result.stderr.startswith("error:") and "rounds" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_judge_reply_with_unknown_label_is_asked_again(endpoint, tmp_path, cli):
    script = BeliefScript(agents=2, actions={"belief_verdict": ["badlabel", "badjson"],
                                             "belief_stance": ["badlabel"]})
    endpoint(responder=script)
    out = tmp_path / "res"
    result = cli("belief", "run", "--items", sample_items(tmp_path, 1), "--out", out, "--agents", "2",
                 "--attackers", "1", "--rounds", "1")
    assert result.exit_code == 0, result.stderr
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    errors = con.execute("SELECT component, error FROM belief_calls WHERE error IS NOT NULL ORDER BY created_at").fetchall()
    con.close()
    assert len(errors) == 3 and {e[0] for e in errors} == {"belief_judge", "stance_judge"}
    conv = json.loads((out / "conversations" / "counterfact-0_k1.json").read_text())
    assert all(p["verdict"] in ("endorses_true",) for p in conv["probes"])
