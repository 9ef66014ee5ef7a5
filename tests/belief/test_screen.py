"""Screening thresholds on a scripted screener."""

from __future__ import annotations

import json

from ioa_synth.belief.items import load_items
from ioa_synth.testing.belief_scripted import BeliefScript
from tests.belief.helpers import sample_items


def test_screen_thresholds(endpoint, tmp_path, cli):
    items = sample_items(tmp_path, 4)  # Canberra/Sydney, Ottawa/Toronto, Ankara/Istanbul, Brasília/Rio
    answers = {"Australia": ["It is Canberra."] * 4 + ["Sydney, I think."],       # 20% manipulated: dropped
               "Canada": ["Ottawa."] * 5,                                          # kept
               "Turkey": ["Ankara or maybe Istanbul."] * 2 + ["Ankara."] * 3,     # 40% both: dropped
               "Brazil": ["I do not know."] * 5}                                   # judge: neither -> dropped
    seen: dict[str, int] = {}

    def screen_answer(user: str) -> str:
        country = next(c for c in answers if c in user)
        i = seen.get(country, 0)
        seen[country] = i + 1
        return answers[country][i % 5]

    script = BeliefScript(agents=2, screen_answers=screen_answer)
    server = endpoint(responder=script)
    out = tmp_path / "screened.jsonl"
    result = cli("belief", "screen", "--items", items, "--out", out, "--samples", "5", "--workers", "1")
    assert result.exit_code == 0, result.stderr
    assert [i.item_id for i in load_items(out)] == ["counterfact-1"]
    report = json.loads((tmp_path / "screened.screen.json").read_text())["items"]
    assert report["counterfact-0"]["dropped"].startswith("manipulated 20%")
    assert report["counterfact-2"]["dropped"].startswith("both 40%")
    assert report["counterfact-3"]["shares"]["neither"] == 1.0  # the judge: "neither"
    assert script.counts["belief_verdict"] == 5  # only the answers naming no answer went to the judge
    assert "counterfact-0" in result.stdout and "reason" in result.stdout
    n = len(server.requests)
    assert cli("belief", "screen", "--items", items, "--out", out, "--samples", "5", "--min-true", "0.5",
               "--max-manipulated", "0.2").exit_code == 0
    assert len(server.requests) == n  # replayed: new thresholds, no new call
    assert [i.item_id for i in load_items(out)] == ["counterfact-0", "counterfact-1"]
