"""A second judge relabels private answers: agreement, kappa, corrected FPI."""

from __future__ import annotations

import json

import pytest
from sklearn.metrics import cohen_kappa_score

from ioa_synth.testing.belief_scripted import BeliefScript
from ioa_synth.testing.scripted_server import ScriptedServer, chat_reply
from tests.belief.helpers import LABELS, STANCES, sample_items


def test_agreement_with_a_second_judge(endpoint, tmp_path, cli, monkeypatch):
    endpoint(responder=BeliefScript(agents=4, labels=LABELS, stances=STANCES))
    out = tmp_path / "res"
    assert cli("belief", "run", "--items", sample_items(tmp_path, 1), "--out", out, "--agents", "4",
               "--attackers", "1", "--rounds", "3").exit_code == 0

    # the second judge calls every answer "manipulated" except the mixed one, which it calls true
    def second(body, headers):
        answer = body["messages"][-1]["content"].split("Answer to label: ")[1]
        verdict = "endorses_true" if answer.startswith("[mixed]") else "endorses_manipulated"
        return chat_reply(json.dumps({"verdict": verdict, "confidence": 1.0, "rationale": "second"}))

    with ScriptedServer(second, models=["judge-two"]) as server:
        monkeypatch.setenv("BELIEF_JUDGE_BASE_URL", server.base_url)
        cfg = tmp_path / "judge.json"
        cfg.write_text(json.dumps({"belief_judge": {"model": "judge-two"}}))
        result = cli("belief", "agreement", out, "--judge-config", cfg, "--sample", "200")
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == 12
    res = json.loads((out / "agreement.json").read_text())
    first = [s["first"] for s in res["sample"]]
    second_labels = [s["second"] for s in res["sample"]]
    assert res["n"] == 12 and first.count("manipulated") == 5 and first.count("mixed") == 1
    assert res["agreement"] == pytest.approx(5 / 12)
    assert res["kappa"] == pytest.approx(cohen_kappa_score(first, second_labels))
    # P(m | m) = 1, P(m | not m) = 6/7 (the 6 true answers flipped; the mixed one relabelled true)
    c = res["conditions"]["scripted|counterfact|k=1"]
    assert c["fpi_corrected"] == pytest.approx(2 / 3 + (1 / 3) * 6 / 7)
