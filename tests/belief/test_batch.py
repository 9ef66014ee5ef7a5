"""``belief run --batch`` against a scripted OpenAI Batch API and ``--batch-dir`` with
``vllm run-batch``-shaped output files: the conversations are a live run's on the same
scripted answers; a kill -9 while a batch is in flight does not submit it again; the
batch options are refused as ``build``'s are, and ``estimate belief run`` refuses alike."""

from __future__ import annotations

import json
import os
import signal
import sys
import time

from ioa_helpers import kill_9_mid_batch_then_resume, q

from ioa_synth.testing.belief_scripted import BeliefScript
from ioa_synth.testing.scripted_batches import ScriptedBatches, run_batch_file
from ioa_synth.testing.scripted_replies import CountedUsage
from ioa_synth.testing.scripted_server import ScriptedServer
from tests.belief.helpers import LABELS, STANCES, sample_items

KEY = "sk-test-belief-batch-0123456789"
STUDY = ["--agents", "4", "--attackers", "0,1", "--rounds", "3", "--workers", "3"]


def script() -> BeliefScript:
    return BeliefScript(agents=4, labels=LABELS, stances=STANCES)


def serve(monkeypatch, batches: ScriptedBatches | None = None) -> ScriptedServer:
    srv = ScriptedServer(script(), batches=batches).__enter__()
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("IOA_SYNTH_BATCH_POLL_SECONDS", "0.05")
    return srv


def conversations(out) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in sorted((out / "conversations").glob("*.json"))}


def run(cli, items, out, *extra):
    return cli("belief", "run", "--items", items, "--out", out, *STUDY, *extra)


def test_batch_run_writes_the_live_conversations(cli, monkeypatch, tmp_path):
    items = sample_items(tmp_path, 2)
    live = serve(monkeypatch)
    assert run(cli, items, tmp_path / "A").exit_code == 0
    batched = serve(monkeypatch, ScriptedBatches())
    res = run(cli, items, tmp_path / "B", "--batch")
    assert res.exit_code == 0, res.output
    assert not batched.requests  # every call went through the Batch API
    a, b = conversations(tmp_path / "A"), conversations(tmp_path / "B")
    assert a == b and len(a) == 4
    summary = json.loads((tmp_path / "B" / "summary.json").read_text())
    assert summary["conditions"] == json.loads((tmp_path / "A" / "summary.json").read_text())["conditions"]
    calls = "SELECT case_id, stage, role, attempt, response_text FROM llm_calls WHERE error IS NULL ORDER BY ALL"
    assert q(tmp_path / "A", calls) == q(tmp_path / "B", calls)
    assert q(tmp_path / "B", "SELECT DISTINCT via FROM llm_calls") == [("batch",)]
    waves = q(tmp_path / "B", "SELECT wave, n_requests FROM batches ORDER BY wave")
    assert len(live.requests) == sum(n for _, n in waves)  # no request asked twice
    # a wave holds every conversation's next utterance and the probes and labels ready beside it:
    # 12 utterances in a row make at most a few more waves than that
    assert 12 <= len(waves) <= 16, waves
    assert batched.batches.submissions == len(waves)
    rerun = run(cli, items, tmp_path / "B", "--batch")
    assert rerun.exit_code == 0 and batched.batches.submissions == len(waves)  # finished: nothing sent
    for s in (live, batched):
        s.__exit__(None, None, None)


def test_batch_dir_stops_with_75_and_reads_vllm_output(cli, monkeypatch, tmp_path):
    items, bdir = sample_items(tmp_path, 1), tmp_path / "vllm"
    named = tmp_path / "models.json"  # --batch-dir never asks the endpoint for its model
    named.write_text(json.dumps({c: {"model": "scripted"} for c in ("agent", "belief_judge", "stance_judge")}))
    live = serve(monkeypatch)
    assert run(cli, items, tmp_path / "A", "--config", named).exit_code == 0
    srv = serve(monkeypatch)
    responder, waves = script(), 0
    while True:
        res = run(cli, items, tmp_path / "B", "--batch-dir", bdir, "--config", named)
        if res.exit_code == 0:
            break
        assert res.exit_code == 75, res.output
        waves += 1
        name = f"wave-{waves}"
        line = res.stderr.strip().splitlines()[-1]
        assert line.startswith("batch: process ") and f"{bdir / name}.input.jsonl" in line, res.stderr
        run_batch_file(bdir / f"{name}.input.jsonl", bdir / f"{name}.output.jsonl", responder)
        assert waves < 40
    assert not srv.requests and waves >= 12
    assert conversations(tmp_path / "A") == conversations(tmp_path / "B")
    for s in (live, srv):
        s.__exit__(None, None, None)


def test_kill_9_between_submit_and_completion_polls_the_same_batch(monkeypatch, tmp_path):
    items, out = sample_items(tmp_path, 1), tmp_path / "out"
    srv = serve(monkeypatch, ScriptedBatches(["hold"]))
    cmd = [sys.executable, "-m", "ioa_synth", "belief", "run", "--items", str(items), "--out", str(out), *STUDY,
           "--batch"]
    kill_9_mid_batch_then_resume(cmd, srv, out)
    assert len(conversations(out)) == 2
    srv.__exit__(None, None, None)


def test_batch_options_are_refused_before_anything_is_contacted_or_written(cli, monkeypatch, tmp_path):
    items = sample_items(tmp_path, 1)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: no call may be made
    for command in (["belief", "run"], ["estimate", "belief", "run"]):
        base = [*command, "--items", items, "--out", tmp_path / "out", *STUDY]
        res = cli(*base, "--batch", "--batch-dir", tmp_path / "b")
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and "give one" in lines[0], res.stderr
        res = cli(*base, "--batch-dir", tmp_path / "b")
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and 'set "model"' in lines[0], res.stderr
        assert not (tmp_path / "out").exists() and not (tmp_path / "b").exists()
    monkeypatch.delenv("OPENAI_BASE_URL")
    for command in (["belief", "run"], ["estimate", "belief", "run"]):
        res = cli(*command, "--items", items, "--out", tmp_path / "out", *STUDY, "--batch")
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and "embedded model" in lines[0], res.stderr
    res = cli("estimate", "belief", "report", tmp_path / "out")
    assert res.exit_code == 2 and "estimate belief run" in res.stderr


def test_estimate_belief_run_within_10_percent_of_what_the_run_spends(cli, monkeypatch, tmp_path):
    from ioa_synth.llm.tokens import chars_counter

    items, out = sample_items(tmp_path, 4), tmp_path / "out"
    with ScriptedServer(CountedUsage(script(), chars_counter())) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        base = ["--items", items, "--out", out, *STUDY]
        assert cli("belief", "run", *base, "--limit", "1").exit_code == 0  # a pilot: the folder measures its calls
        before = sorted(p.name for p in out.rglob("*"))
        res = cli("estimate", "belief", "run", *base, "--tokenizer", "chars", "--json")
        assert res.exit_code == 0, res.output
        assert sorted(p.name for p in out.rglob("*")) == before  # nothing written
        est = json.loads(res.stdout)
        assert est["assumptions"]["conversations"] == 6 and est["assumptions"]["already_done"] == 2
        sent = len(srv.requests)
        assert cli("belief", "run", *base).exit_code == 0
        calls_made = len(srv.requests) - sent
    prompt, completion, calls = q(out, "SELECT sum(prompt_tokens), sum(completion_tokens), count(*) FROM llm_calls "
                                       "WHERE run_id = (SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1)")[0]
    assert calls == calls_made == 3 * (45 + 56)  # a conversation: 45 calls at k=1, 56 at k=0
    total = est["total"]
    assert abs(total["calls"] - calls) <= 0.10 * calls, (total, calls)
    tokens = total["prompt_tokens"] + total["completion_tokens"]
    assert abs(tokens - (prompt + completion)) <= 0.10 * (prompt + completion), (total, prompt, completion)
    assert abs(total["prompt_tokens"] - prompt) <= 0.10 * prompt, (total, prompt)
    print(f"estimate {total}; spent prompt {prompt} completion {completion} calls {calls}")
    res = cli("status", "--out", out, "--json")  # the run recorded the estimate it started from
    spend = json.loads(res.stdout)["spend"]
    assert spend["command"] == "belief run" and spend["estimate"]["assumptions"]["conversations"] == 6


def test_ctrl_c_while_a_batch_is_in_flight_names_it_and_the_next_run_collects_it(cli, monkeypatch, tmp_path):
    import threading

    items, out = sample_items(tmp_path, 1), tmp_path / "out"
    srv = serve(monkeypatch, ScriptedBatches(["hold"]))

    def ctrl_c_while_polled() -> None:
        deadline = time.monotonic() + 60
        while srv.batches.retrieves < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, to this process's run

    threading.Thread(target=ctrl_c_while_polled, daemon=True).start()
    res = run(cli, items, out, "--batch")
    assert res.exit_code == 130, res.output
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error: interrupted: 0 conversations finished") and "batch_0001 (wave 1" in last, last
    assert "is still running at the provider" in last and "run the same command again to resume" in last, last
    srv.batches.release()
    res = run(cli, items, out, "--batch")
    assert res.exit_code == 0, res.output
    assert q(out, "SELECT batch_id, status FROM batches WHERE wave = 1") == [("batch_0001", "completed")]
    assert len(conversations(out)) == 2
    srv.__exit__(None, None, None)
