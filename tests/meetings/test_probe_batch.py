"""``meeting probe`` with ``--batch`` against a scripted OpenAI Batch API and ``--batch-dir``
with ``vllm run-batch``-shaped output files: the blinded sets are a live run's on the same
scripted answers; a kill -9 while a batch is in flight does not submit it again; both batch
options together are refused (and so does the estimate); ``estimate meeting probe`` is
within 10% of what the probe then spends."""

from __future__ import annotations

import json
import sys

from ioa_helpers import kill_9_mid_batch_then_resume, q

from ioa_synth.testing.scripted_batches import ScriptedBatches, run_batch_file
from ioa_synth.testing.scripted_replies import CountedUsage
from ioa_synth.testing.scripted_server import ScriptedServer

from .conftest import DETECTORS, SAMPLES, MeetingResponder, write_detectors

KEY = "sk-test-meeting-batch-0123456789"
CALLS = "SELECT case_id, stage, role, attempt, response_text FROM llm_calls WHERE error IS NULL ORDER BY ALL"


def serve(monkeypatch, batches: ScriptedBatches | None = None, responder=None) -> ScriptedServer:
    srv = ScriptedServer(responder or MeetingResponder(), models=list(DETECTORS.values()), batches=batches).__enter__()
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("IOA_SYNTH_BATCH_POLL_SECONDS", "0.05")
    return srv


def session(cli, tmp_path, name: str):
    out = tmp_path / name
    res = cli("meeting", "import", SAMPLES / "sample.vtt", "--out", out)
    assert res.exit_code == 0, res.output
    return out


def test_probe_by_batch_and_by_files_writes_the_live_sets(cli, monkeypatch, tmp_path):
    specs = write_detectors(tmp_path / "detectors")  # each config names its model
    a, b, c = (session(cli, tmp_path, x) for x in "ABC")
    live = serve(monkeypatch)
    assert cli("meeting", "probe", a, *specs, "--seed", 1).exit_code == 0
    batched = serve(monkeypatch, ScriptedBatches())
    res = cli("meeting", "probe", b, *specs, "--seed", 1, "--batch")
    assert res.exit_code == 0, res.output
    assert not batched.requests  # both calls went through the Batch API
    assert q(b, "SELECT wave, n_requests, status FROM batches ORDER BY wave") == [(1, 1, "completed"),
                                                                                   (2, 1, "completed")]
    files, bdir, waves = serve(monkeypatch), tmp_path / "vllm", 0
    while True:
        res = cli("meeting", "probe", c, *specs, "--seed", 1, "--batch-dir", bdir)
        if res.exit_code == 0:
            break
        assert res.exit_code == 75, res.output
        waves += 1
        line = res.stderr.strip().splitlines()[-1]
        assert line.startswith("batch: process ") and f"{bdir / f'wave-{waves}'}.input.jsonl" in line, res.stderr
        run_batch_file(bdir / f"wave-{waves}.input.jsonl", bdir / f"wave-{waves}.output.jsonl", MeetingResponder())
        assert waves < 5
    assert waves == 2 and not files.requests  # one wave per detector, nothing sent
    for name in ("sets.json", "private/blinding.json"):
        assert (a / name).read_text() == (b / name).read_text() == (c / name).read_text(), name
    assert q(a, CALLS) == q(b, CALLS) == q(c, CALLS)
    for s in (live, batched, files):
        s.__exit__(None, None, None)


def test_kill_9_between_submit_and_completion_polls_the_same_batch(cli, monkeypatch, tmp_path):
    specs = [str(x) for x in write_detectors(tmp_path / "detectors")]
    out = session(cli, tmp_path, "s")
    srv = serve(monkeypatch, ScriptedBatches(["hold"]))
    cmd = [sys.executable, "-m", "ioa_synth", "meeting", "probe", str(out), *specs, "--batch"]
    kill_9_mid_batch_then_resume(cmd, srv, out)
    assert sorted(json.loads((out / "sets.json").read_text())["sets"]) == ["A", "B"]
    srv.__exit__(None, None, None)


def test_both_batch_options_are_refused_alike_and_nothing_is_written(cli, monkeypatch, tmp_path):
    specs = write_detectors(tmp_path / "detectors")
    out = session(cli, tmp_path, "s")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: no call may be made
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    for prefix in ([], ["estimate"]):
        res = cli(*prefix, "meeting", "probe", out, *specs, "--batch", "--batch-dir", tmp_path / "b")
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error:"), res.stderr
        assert "give one" in lines[0]
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before  # nothing written
    monkeypatch.delenv("OPENAI_BASE_URL")
    for prefix in ([], ["estimate"]):  # the embedded model has no batch mode: refused alike
        res = cli(*prefix, "meeting", "probe", out, *specs, "--batch")
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.exit_code == 2 and len(lines) == 1 and "embedded model" in lines[0], res.stderr
    res = cli("estimate", "meeting", "serve", out)
    assert res.exit_code == 2 and "estimate meeting probe" in res.stderr


def test_estimate_meeting_probe_within_10_percent_of_what_the_probe_spends(cli, monkeypatch, tmp_path):
    from ioa_synth.llm.tokens import chars_counter

    folder = tmp_path / "detectors"
    folder.mkdir()
    specs = []
    for name, model in DETECTORS.items():  # no pilot is possible (a session is probed once): max_tokens stands in
        path = folder / f"{name}.json"
        path.write_text(json.dumps({"prober": {"model": model, "request_options": {"max_tokens": 100}}}))
        specs += ["--detector", f"{name}={path}"]
    out = session(cli, tmp_path, "s")
    srv = serve(monkeypatch, responder=CountedUsage(MeetingResponder(), chars_counter()))
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    res = cli("estimate", "meeting", "probe", out, *specs, "--tokenizer", "chars", "--json")
    assert res.exit_code == 0, res.output
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before and not srv.requests  # nothing written or sent
    est = json.loads(res.stdout)
    assert est["assumptions"]["detectors"] == 2 and est["assumptions"]["already_done"] == 0
    table = cli("estimate", "meeting", "probe", out, *specs, "--tokenizer", "chars")
    assert table.exit_code == 0 and "detector:alphadetector" in table.stdout, table.output
    assert cli("meeting", "probe", out, *specs).exit_code == 0
    prompt, completion, calls = q(out, "SELECT sum(prompt_tokens), sum(completion_tokens), count(*) FROM llm_calls")[0]
    total = est["total"]
    assert calls == len(srv.requests) == total["calls"] == 2
    assert abs(total["prompt_tokens"] - prompt) <= 0.10 * prompt, (total, prompt)
    tokens = total["prompt_tokens"] + total["completion_tokens"]
    assert abs(tokens - (prompt + completion)) <= 0.10 * (prompt + completion), (total, prompt, completion)
    print(f"estimate {total}; spent prompt {prompt} completion {completion} calls {calls}")
