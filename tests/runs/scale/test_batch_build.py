"""``build --batch`` against a scripted Batch API, and ``--batch-dir`` with a
``vllm run-batch``-shaped output file: the records are the live run's."""

from __future__ import annotations

import json

import pytest

from ioa_helpers import kill_9_mid_batch_then_resume, q

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



def test_kill_9_between_submit_and_completion_polls_the_same_batch(server, seeds_file, tmp_path):
    import sys

    responder = KeyedResponder(fail_share=0.2)
    seeds, out = seeds_file(4), tmp_path / "out"
    srv = server(responder, outcomes=["hold"])
    cmd = [sys.executable, "-m", "ioa_synth", "build", "--seeds", str(seeds), "--split", "test", "--out", str(out),
           "--batch"]
    kill_9_mid_batch_then_resume(cmd, srv, out)
    assert q(out, "SELECT count(*) FROM cases WHERE status = 'pending'") == [(0,)]


@pytest.mark.parametrize("outcome", ["expire:3", "errors:2"])
def test_unanswered_and_failed_lines_go_into_the_next_wave(cli, server, seeds_file, tmp_path, outcome):
    responder = KeyedResponder()
    seeds = seeds_file(6)
    server(responder)
    assert build(cli, seeds, tmp_path / "live").exit_code == 0
    srv = server(responder, outcomes=[outcome])
    res = build(cli, seeds, tmp_path / "batch", "--batch")
    assert res.exit_code == 0, res.output
    assert records(tmp_path / "live") == records(tmp_path / "batch")
    first = q(tmp_path / "batch", "SELECT status, n_requests FROM batches WHERE wave = 1")
    assert first == [("expired" if outcome.startswith("expire") else "completed", 6)]
    failed = q(tmp_path / "batch", "SELECT case_id, error FROM llm_calls WHERE error IS NOT NULL")
    assert len(failed) == 3  # lines 4-6 (expired) or 2, 4, 6 (HTTP 500): failed sends, stored as failed tries
    assert all(e.startswith("batch line failed") for _, e in failed)
    second = q(tmp_path / "batch", "SELECT component, n_requests FROM batches WHERE wave = 2")
    assert second == [("generator+judge", 6)]  # the 3 re-sent generations and the 3 judges of the others
    assert srv.batches.submissions == q(tmp_path / "batch", "SELECT count(*) FROM batches")[0][0]


def test_failed_batch_stops_the_run_and_a_rerun_sends_again(cli, server, seeds_file, tmp_path):
    seeds, out = seeds_file(2), tmp_path / "out"
    srv = server(KeyedResponder(), outcomes=["fail"])
    res = build(cli, seeds, out, "--batch")
    assert res.exit_code == 2
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]  # after the progress lines
    assert len(errors) == 1 and "scripted validation failure" in errors[0], res.stderr
    assert res.stderr.strip().splitlines()[-1] == errors[0]
    res = build(cli, seeds, out, "--batch")
    assert res.exit_code == 0, res.output
    assert q(out, "SELECT status FROM batches ORDER BY wave, submitted_at")[0] == ("failed",)
    assert q(out, "SELECT count(*) FROM cases WHERE status = 'accepted'") == [(2,)]
    assert srv.batches.submissions == 5


def test_batch_dir_stops_with_75_and_reads_vllm_output(cli, server, seeds_file, tmp_path, monkeypatch):
    responder = KeyedResponder(fail_share=0.25)
    seeds, bdir = seeds_file(5), tmp_path / "vllm"
    named = tmp_path / "models.json"  # --batch-dir never asks the endpoint for its model
    named.write_text(json.dumps({c: {"model": "scripted"} for c in ("generator", "judge")}))
    server(responder)
    assert build(cli, seeds, tmp_path / "live", "--config", named).exit_code == 0
    srv = server(responder)
    waves = 0
    while True:
        res = build(cli, seeds, tmp_path / "batch", "--batch-dir", bdir, "--config", named)
        if res.exit_code == 0:
            break
        assert res.exit_code == 75, res.output
        line = res.stderr.splitlines()[-1]  # after the progress lines (and a note on missing answers)
        assert line.startswith("batch: process "), res.stderr
        waves += 1
        name = f"wave-{waves}"
        assert f"{bdir / name}.input.jsonl" in line and f"{bdir / name}.output.jsonl" in line, line
        if waves == 2:
            assert "1 request without an answer; asked again in the next wave" in res.stderr
        again = build(cli, seeds, tmp_path / "batch", "--batch-dir", bdir, "--config", named)  # no output: same line
        assert again.exit_code == 75 and not (bdir / f"wave-{waves + 1}.input.jsonl").exists()
        run_batch_file(bdir / f"{name}.input.jsonl", bdir / f"{name}.output.jsonl", responder,
                       skip=1 if waves == 1 else 0)
    assert not srv.requests and waves >= 4
    assert records(tmp_path / "live") == records(tmp_path / "batch")
    assert q(tmp_path / "batch", "SELECT count(*) FROM llm_calls WHERE error LIKE 'batch line failed: no reply%'") == [(1,)]


def test_batch_refuses_the_embedded_model_and_an_unwritable_batch_dir(cli, seeds_file, tmp_path, monkeypatch):
    seeds = seeds_file(1)
    for extra in (["--batch"], ["--batch-dir", tmp_path / "b"]):
        res = build(cli, seeds, tmp_path / "out", *extra)
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and "embedded model" in lines[0], res.stderr
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for bad, needle in ((blocker, "is not a folder"), (blocker / "sub", "cannot create")):
        res = build(cli, seeds, tmp_path / "out", "--batch-dir", bad)
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and needle in lines[0], res.stderr
    assert not (tmp_path / "out").exists()


def test_ctrl_c_while_a_batch_is_in_flight_keeps_it_for_the_next_run(server, seeds_file, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    seeds, out = seeds_file(3), tmp_path / "out"
    srv = server(KeyedResponder(), outcomes=["hold"])
    cmd = [sys.executable, "-m", "ioa_synth", "build", "--seeds", str(seeds), "--split", "test", "--out", str(out),
           "--batch"]
    proc = subprocess.Popen(cmd, env={**os.environ}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while srv.batches.retrieves < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "wave 1: 3 requests sent in 1 batch" in err and "batch_0001 (generator) in_progress" in err, err
    last = err.strip().splitlines()[-1]
    # the last line says the batch runs on, is billed, and is collected (not sent again) by the next run
    assert last.startswith("error: interrupted: 0 cases finished, no model call stored; batch batch_0001 "
                           "(wave 1, generator, 3 requests, in_progress 0/3) is still running at the provider "
                           f"({srv.base_url}) and is billed: the next run collects its answers rather than "
                           "submitting it again"), err
    assert last.endswith("; run the same command again to resume"), err
    srv.batches.release()
    done = subprocess.run(cmd, env={**os.environ}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert q(out, "SELECT batch_id FROM batches WHERE wave = 1") == [("batch_0001",)]
    assert srv.batches.submissions == q(out, "SELECT count(*) FROM batches")[0][0] == 4


def test_a_run_killed_between_creating_a_batch_and_storing_its_id_adopts_it(cli, server, seeds_file, tmp_path,
                                                                             monkeypatch):
    from ioa_synth.llm.batch_api import ProviderBatches

    seeds, out = seeds_file(2), tmp_path / "out"
    srv = server(KeyedResponder())
    create = ProviderBatches.create

    def create_then_die(self, input_file_id, metadata):
        create(self, input_file_id, metadata)
        raise KeyboardInterrupt  # the process dies before the batch id is journaled

    monkeypatch.setattr(ProviderBatches, "create", create_then_die)
    res = build(cli, seeds, out, "--batch")
    assert res.exit_code == 130 and srv.batches.submissions == 1
    assert q(out, "SELECT batch_id, status FROM batches") == [(f"uploaded:{srv.batches.batches['batch_0001'].input_file_id}",
                                                               "uploaded")]
    monkeypatch.setattr(ProviderBatches, "create", create)
    res = build(cli, seeds, out, "--batch")
    assert res.exit_code == 0, res.output
    assert q(out, "SELECT batch_id, status FROM batches WHERE wave = 1") == [("batch_0001", "completed")]
    assert srv.batches.submissions == q(out, "SELECT count(*) FROM batches")[0][0]


def test_ctrl_c_of_a_batch_dir_run_names_the_files_waiting_and_the_answers_kept(cli, server, seeds_file, tmp_path,
                                                                                monkeypatch):
    """Ctrl-C while a --batch-dir wave is written says which input file waits for which
    output; Ctrl-C once an output is read says its answers are stored for the next run."""
    import os
    import signal

    from ioa_synth.llm.batch_api import FileBatches

    responder = KeyedResponder()
    seeds, out, bdir = seeds_file(3), tmp_path / "out", tmp_path / "vllm"
    named = tmp_path / "models.json"  # --batch-dir never asks the endpoint for its model
    named.write_text(json.dumps({c: {"model": "scripted"} for c in ("generator", "judge")}))
    server(responder)
    write, results = FileBatches.write, FileBatches.results

    def write_then_ctrl_c(self, wave, lines):
        path = write(self, wave, lines)
        os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, once the file is written
        return path

    monkeypatch.setattr(FileBatches, "write", write_then_ctrl_c)
    res = build(cli, seeds, out, "--batch-dir", bdir, "--config", named)
    assert res.exit_code == 130, res.output
    wave1 = bdir / "wave-1"
    assert res.stderr.strip().splitlines()[-1] == (
        f"error: interrupted: 0 cases finished, no model call stored; {wave1}.input.jsonl (3 requests) is written "
        f"and waits for its output {wave1}.output.jsonl: the next run reads that output rather than writing the "
        "wave again; run the same command again to resume"), res.stderr
    monkeypatch.setattr(FileBatches, "write", write)

    run_batch_file(f"{wave1}.input.jsonl", f"{wave1}.output.jsonl", responder)

    def read_then_ctrl_c(self, wave):
        found = results(self, wave)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the output is read
        return found

    monkeypatch.setattr(FileBatches, "results", read_then_ctrl_c)
    res = build(cli, seeds, out, "--batch-dir", bdir, "--config", named)
    assert res.exit_code == 130, res.output
    assert "no model call stored; 3 batch answers are stored and not used yet: the next run uses them rather " \
        "than sending their requests again; run the same command again to resume" in res.stderr, res.stderr
    assert not (bdir / "wave-2.input.jsonl").exists()  # stopped before the next wave
    monkeypatch.setattr(FileBatches, "results", results)
    res = build(cli, seeds, out, "--batch-dir", bdir, "--config", named)
    assert res.exit_code == 75 and (bdir / "wave-2.input.jsonl").exists(), res.output
    assert q(out, "SELECT count(*) FROM llm_calls WHERE via = 'batch'") == [(3,)]  # wave 1's answers, used once
