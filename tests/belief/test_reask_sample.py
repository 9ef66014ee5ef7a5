"""``belief reask --sample N --seed S``: the variant is asked in a random N of the
conversations, stratified by (item source, attacker count k)."""

from __future__ import annotations

import json

from ioa_helpers import one_line_error
from ioa_synth.belief.report import read_conversations
from ioa_synth.protocol.sample import stratified_sample
from ioa_synth.testing.belief_scripted import BeliefScript
from tests.belief.helpers import LABELS, STANCES, sample_items


def test_reask_sample_one_conversation_per_cell(endpoint, tmp_path, cli):
    endpoint(responder=BeliefScript(agents=4, labels=LABELS, stances=STANCES))
    out = tmp_path / "res"
    assert cli("belief", "run", "--items", sample_items(tmp_path, 2), "--out", out, "--agents", "4", "--attackers",
               "1,2", "--rounds", "1").exit_code == 0  # 2 items x 2 k: 4 conversations in 2 cells
    expected = stratified_sample(read_conversations(out), lambda c: (c["item"]["source"], c["k"]), 2, 3)
    assert sorted(c["k"] for c in expected) == [1, 2]
    res = cli("belief", "reask", out, "--variant", "own", "--steps", "1", "--sample", "2", "--seed", "3")
    assert res.exit_code == 0, res.stderr
    asked = {(c["item"]["item_id"], c["k"]) for c in read_conversations(out)
             if any(p.get("variant") == "own" for p in c["probes"])}
    assert asked == {(c["item"]["item_id"], c["k"]) for c in expected}
    assert "own" in json.loads((out / "summary.json").read_text())["conditions"]["scripted|counterfact|k=1"]["reask"]
    one_line_error(cli("belief", "reask", out, "--variant", "own", "--steps", "1", "--sample", "5"),
                   "--sample 5 asks for more conversations than the 4")
