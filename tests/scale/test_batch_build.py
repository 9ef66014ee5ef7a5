"""``build --batch`` against a scripted Batch API, and ``--batch-dir`` with a
``vllm run-batch``-shaped output file: the records are the live run's."""

from __future__ import annotations

import json

import pytest

from ioa_helpers import q

from ioa_synth.testing.scripted_batches import ScriptedBatches, run_batch_file
from ioa_synth.testing.scripted_server import ScriptedServer

from .scale_helpers import KeyedResponder, records

KEY = "sk-test-batch-0123456789"


@pytest.fixture
def server(monkeypatch):
    started = []

    def start(responder, outcomes=None, steps=1):
        srv = ScriptedServer(responder, batches=ScriptedBatches(outcomes, steps=steps)).__enter__()
        started.append(srv)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("IOA_SYNTH_BATCH_POLL_SECONDS", "0.05")
        return srv

    yield start
    for s in started:
        s.__exit__(None, None, None)


def build(cli, seeds, out, *extra):
    return cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "3", *extra)


def test_batch_build_makes_the_live_records(cli, server, seeds_file, tmp_path):
    responder = KeyedResponder(fail_share=0.3, badjson_share=0.25)
    seeds = seeds_file(8)
    live = server(responder)
    res = build(cli, seeds, tmp_path / "live")
    assert res.exit_code == 0, res.output
    batched = server(responder)
    res = build(cli, seeds, tmp_path / "batch", "--batch")
    assert res.exit_code == 0, res.output
    assert not batched.requests  # no chat request: every call went through a batch
    assert records(tmp_path / "live") == records(tmp_path / "batch")
    assert len(records(tmp_path / "live")) >= 3
    sql = ("SELECT case_id, stage, role, attempt, try_index, request_json, response_text, error FROM llm_calls "
           "ORDER BY ALL")
    assert q(tmp_path / "live", sql) == q(tmp_path / "batch", sql)
    assert {v for (v,) in q(tmp_path / "batch", "SELECT DISTINCT via FROM llm_calls")} == {"batch"}
    assert {v for (v,) in q(tmp_path / "live", "SELECT DISTINCT via FROM llm_calls")} == {"live"}
    waves = q(tmp_path / "batch", "SELECT wave, status, n_requests FROM batches ORDER BY wave")
    assert all(status == "completed" for _, status, _ in waves)
    assert batched.batches.submissions == len(waves) >= 4
    assert len(live.requests) == sum(n for _, _, n in waves)

