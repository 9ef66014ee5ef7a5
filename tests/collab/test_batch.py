"""``collab run --batch`` against a scripted OpenAI Batch API and ``--batch-dir`` with
``vllm run-batch``-shaped output files: the task records are a live run's on the same
scripted answers (a detector's calls included); ``estimate collab run`` is within 10% of
what the run then spends and refuses what the command refuses; a kill -9 while a batch is in
flight does not submit it again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ioa_synth.testing.collab_scripted import CollabScript
from ioa_synth.testing.scripted_batches import ScriptedBatches, run_batch_file
from ioa_synth.testing.scripted_server import ScriptedServer

from .helpers import HP, detector_config, hp_tasks

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ioa_helpers import kill_9_mid_batch_then_resume, q  # noqa: E402

KEY = "sk-test-collab-batch-0123456789"
CONFIGS = "discussion,self-reflection,mcq:probe"


def script(**kw) -> CollabScript:
    tasks = hp_tasks()
    return CollabScript(tasks=tasks, diverge={tasks[0].task_id, tasks[1].task_id}, flag={tasks[2].task_id}, **kw)


def serve(monkeypatch, responder, batches: ScriptedBatches | None = None) -> ScriptedServer:
    srv = ScriptedServer(responder, batches=batches).__enter__()
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("IOA_SYNTH_BATCH_POLL_SECONDS", "0.05")
    return srv


def records(out: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in sorted((out / "tasks").glob("*.json"))}


def run(cli, tmp_path, out, *extra):
    det = detector_config(tmp_path)
    return cli("collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--configs", CONFIGS,
               "--detector", f"probe={det}", "--workers", "4", *extra)


def test_batch_run_writes_the_live_records(cli, monkeypatch, tmp_path):
    live = serve(monkeypatch, script())
    assert run(cli, tmp_path, tmp_path / "A").exit_code == 0
    batched = serve(monkeypatch, script(), ScriptedBatches())
    res = run(cli, tmp_path, tmp_path / "B", "--batch")
    assert res.exit_code == 0, res.output
    assert not batched.requests  # every call went through the Batch API
    a, b = records(tmp_path / "A"), records(tmp_path / "B")
    assert a == b and len(a) == 15
    assert json.loads((tmp_path / "A" / "report.json").read_text())["pass_at_1"] == \
        json.loads((tmp_path / "B" / "report.json").read_text())["pass_at_1"]
    calls = "SELECT case_id, stage, role, attempt, response_text FROM llm_calls WHERE error IS NULL ORDER BY ALL"
    assert q(tmp_path / "A", calls) == q(tmp_path / "B", calls)
    waves = q(tmp_path / "B", "SELECT wave, n_requests FROM batches ORDER BY wave")
    assert len(live.requests) == sum(n for _, n in waves)  # no request asked twice
    assert batched.batches.submissions == len(waves) == max(w for w, _ in waves)
    for s in (live, batched):
        s.__exit__(None, None, None)


def test_batch_dir_stops_with_75_and_reads_vllm_output(cli, monkeypatch, tmp_path):
    bdir, named = tmp_path / "vllm", tmp_path / "models.json"
    named.write_text(json.dumps({"discusser": {"model": "scripted"}}))  # the detector's config names its own
    live = serve(monkeypatch, script())
    assert run(cli, tmp_path, tmp_path / "A", "--config", named, "--limit", "2").exit_code == 0
    srv = serve(monkeypatch, script())
    responder, waves = script(), 0
    while True:
        res = run(cli, tmp_path, tmp_path / "B", "--batch-dir", bdir, "--config", named, "--limit", "2")
        if res.exit_code == 0:
            break
        assert res.exit_code == 75, res.output
        waves += 1
        line = res.stderr.strip().splitlines()[-1]
        assert line.startswith("batch: process ") and f"{bdir / f'wave-{waves}'}.input.jsonl" in line, res.stderr
        run_batch_file(bdir / f"wave-{waves}.input.jsonl", bdir / f"wave-{waves}.output.jsonl", responder)
        assert waves < 60
    assert not srv.requests and waves >= 9
    assert records(tmp_path / "A") == records(tmp_path / "B")
    for s in (live, srv):
        s.__exit__(None, None, None)


def test_batch_options_are_refused_before_anything_is_contacted_or_written(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: no call may be made
    det = detector_config(tmp_path, block={})  # a detector config without a model
    for command in (["collab", "run"], ["estimate", "collab", "run"]):
        base = [*command, "--bench", "hidden-profile", "--tasks", HP, "--out", tmp_path / "out", "--configs",
                "discussion,mcq:probe", "--detector", f"probe={det}"]
        res = cli(*base, "--batch", "--batch-dir", tmp_path / "b")
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and "give one" in lines[0], res.stderr
        res = cli(*base, "--batch-dir", tmp_path / "b")
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and 'set "model"' in lines[0], res.stderr
        assert "discusser, detector:probe" in lines[0], lines
        assert not (tmp_path / "out").exists() and not (tmp_path / "b").exists()
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("DISCUSSER_BASE_URL", "http://127.0.0.1:9/v1")
    for command in (["collab", "run"], ["estimate", "collab", "run"]):
        res = cli(*command, "--bench", "hidden-profile", "--tasks", HP, "--out", tmp_path / "out", "--configs",
                  "mcq:probe", "--detector", f"probe={det}", "--batch")
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and "detector:probe would run on the embedded model" in lines[0]
        assert "IOA_DETECTOR_PROBE_BASE_URL" in lines[0], lines
    assert not (tmp_path / "out").exists()


def test_estimate_collab_run_within_10_percent_of_what_the_run_spends(cli, monkeypatch, tmp_path):
    from ioa_synth.llm.tokens import chars_counter
    from ioa_synth.testing.scripted_replies import CountedUsage

    out, tasks = tmp_path / "out", hp_tasks()
    # the pilot's tasks are as the rest: every mcq run triggers, no self-reflection does
    responder = CountedUsage(CollabScript(tasks=tasks, diverge={t.task_id for t in tasks}), chars_counter())
    srv = serve(monkeypatch, responder)
    assert run(cli, tmp_path, out, "--limit", "1").exit_code == 0  # a pilot: the folder measures its calls
    before = sorted(p.name for p in out.rglob("*"))
    res = cli("estimate", "collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--configs",
              CONFIGS, "--detector", f"probe={detector_config(tmp_path)}", "--tokenizer", "chars", "--json")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.rglob("*")) == before  # nothing written
    est = json.loads(res.stdout)
    assert est["assumptions"]["runs"] == 12 and est["assumptions"]["already_done"] == 3
    assert est["assumptions"]["figures_source"]["triggered"] == {"self-reflection": "measured", "mcq:probe": "measured"}
    sent = len(srv.requests)
    assert run(cli, tmp_path, out).exit_code == 0
    calls_made = len(srv.requests) - sent
    srv.__exit__(None, None, None)
    prompt, completion, calls = q(out, "SELECT sum(prompt_tokens), sum(completion_tokens), count(*) FROM llm_calls "
                                       "WHERE run_id = (SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1)")[0]
    assert calls == calls_made
    total = est["total"]
    print(f"estimate {total}; spent prompt {prompt} completion {completion} calls {calls}")
    assert abs(total["calls"] - calls) <= 0.10 * calls, (total, calls)
    tokens = total["prompt_tokens"] + total["completion_tokens"]
    assert abs(tokens - (prompt + completion)) <= 0.10 * (prompt + completion), (total, prompt, completion)
    res = cli("status", "--out", out, "--json")  # the run recorded the estimate it started from
    spend = json.loads(res.stdout)["spend"]
    assert spend["command"] == "collab run" and spend["estimate"]["assumptions"]["runs"] == 12


def test_kill_9_between_submit_and_completion_polls_the_same_batch(monkeypatch, tmp_path):
    out = tmp_path / "out"
    srv = serve(monkeypatch, script(), ScriptedBatches(["hold"]))
    cmd = [sys.executable, "-m", "ioa_synth", "collab", "run", "--bench", "hidden-profile", "--tasks", str(HP),
           "--out", str(out), "--configs", CONFIGS, "--detector", f"probe={detector_config(tmp_path)}",
           "--workers", "4", "--batch"]
    kill_9_mid_batch_then_resume(cmd, srv, out)
    assert len(records(out)) == 15
    srv.__exit__(None, None, None)
