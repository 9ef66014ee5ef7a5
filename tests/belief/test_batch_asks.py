"""``belief reask`` and ``belief screen`` with ``--batch`` against a scripted OpenAI Batch API
and ``--batch-dir`` with ``vllm run-batch``-shaped output files: the records are a live
run's on the same scripted answers; a kill -9 while a batch is in flight does not submit it
again; both batch options together are refused (as ``belief run`` refuses them, and so do
the estimates); ``estimate belief reask|screen`` is within 10% of what the run then spends."""

from __future__ import annotations

import json
import shutil
import sys

from ioa_helpers import kill_9_mid_batch_then_resume, q

from ioa_synth.testing.belief_scripted import BeliefScript
from ioa_synth.testing.scripted_batches import ScriptedBatches, run_batch_file
from ioa_synth.testing.scripted_replies import CountedUsage
from ioa_synth.testing.scripted_server import ScriptedServer
from tests.belief.helpers import LABELS, STANCES, sample_items

KEY = "sk-test-belief-batch-asks-0123456789"
STUDY = ["--agents", "4", "--attackers", "1", "--rounds", "3", "--workers", "3"]
REASK = ["--variant", "anonymized", "--steps", "1,3", "--workers", "3"]
SCREEN = ["--samples", "3", "--workers", "3"]
#: Per item question: Canberra and Ankara are named (string match), the others go to the judge.
ANSWERS = {"Australia": "It is Canberra.", "Canada": "I do not know.", "Turkey": "Ankara.", "Brazil": "No idea."}
CALLS = "SELECT case_id, stage, role, attempt, response_text FROM llm_calls WHERE error IS NULL ORDER BY ALL"


def script() -> BeliefScript:
    return BeliefScript(agents=4, labels=LABELS, stances=STANCES,
                        screen_answers=lambda user: next(a for c, a in ANSWERS.items() if c in user))


def serve(monkeypatch, batches: ScriptedBatches | None = None, responder=None) -> ScriptedServer:
    srv = ScriptedServer(responder or script(), batches=batches).__enter__()
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("IOA_SYNTH_BATCH_POLL_SECONDS", "0.05")
    return srv


def named_config(tmp_path):
    """Every component's model named: --batch-dir never asks the endpoint for it."""
    path = tmp_path / "models.json"
    path.write_text(json.dumps({c: {"model": "scripted"} for c in
                                ("agent", "belief_judge", "stance_judge", "screener")}))
    return path


def probes(out) -> dict[str, list]:
    return {p.name: json.loads(p.read_text())["probes"] for p in sorted((out / "conversations").glob("*.json"))}


def by_files(cli, command: list, bdir, check_calls_folder=None) -> int:
    """Run ``command`` with ``--batch-dir bdir`` wave by wave, answering each input file as
    ``vllm run-batch`` would; return the number of waves."""
    responder, waves = script(), 0
    while True:
        res = cli(*command, "--batch-dir", bdir)
        if res.exit_code == 0:
            return waves
        assert res.exit_code == 75, res.output
        waves += 1
        line = res.stderr.strip().splitlines()[-1]
        assert line.startswith("batch: process ") and f"{bdir / f'wave-{waves}'}.input.jsonl" in line, res.stderr
        run_batch_file(bdir / f"wave-{waves}.input.jsonl", bdir / f"wave-{waves}.output.jsonl", responder)
        assert waves < 10


def belief_results(cli, monkeypatch, tmp_path, n_items=1, responder=None):
    """A finished ``belief run`` (live) in ``tmp_path/res`` with every model named."""
    cfg = named_config(tmp_path)
    srv = serve(monkeypatch, responder=responder)
    out = tmp_path / "res"
    assert cli("belief", "run", "--items", sample_items(tmp_path, n_items), "--out", out, *STUDY,
               "--config", cfg).exit_code == 0
    srv.__exit__(None, None, None)
    return out, cfg


def test_reask_by_batch_and_by_files_writes_the_live_answers(cli, monkeypatch, tmp_path):
    res_dir, cfg = belief_results(cli, monkeypatch, tmp_path)
    a, b, c = (tmp_path / x for x in "ABC")
    for d in (a, b, c):
        shutil.copytree(res_dir, d)
    live = serve(monkeypatch)
    assert cli("belief", "reask", a, *REASK, "--config", cfg).exit_code == 0
    assert len(live.requests) == 2 * 3 * 2  # probe + label, 3 benign agents, 2 steps
    batched = serve(monkeypatch, ScriptedBatches())
    res = cli("belief", "reask", b, *REASK, "--config", cfg, "--batch")
    assert res.exit_code == 0, res.output
    assert not batched.requests  # every call went through the Batch API
    waves = q(b, "SELECT wave, n_requests FROM batches ORDER BY wave")
    assert waves == [(1, 6), (2, 6)]  # the probes, then their labels
    files = serve(monkeypatch)
    assert by_files(cli, ["belief", "reask", c, *REASK, "--config", cfg], tmp_path / "vllm") == 2
    assert not files.requests
    assert probes(a) == probes(b) == probes(c)
    assert sum(p["variant"] == "anonymized" for ps in probes(a).values() for p in ps) == 6
    assert q(a, CALLS) == q(b, CALLS) == q(c, CALLS)
    assert json.loads((a / "summary.json").read_text())["conditions"] == \
        json.loads((b / "summary.json").read_text())["conditions"]
    for s in (live, batched, files):
        s.__exit__(None, None, None)


def test_screen_by_batch_and_by_files_keeps_the_live_items(cli, monkeypatch, tmp_path):
    items, cfg = sample_items(tmp_path, 4), named_config(tmp_path)
    outs = {x: tmp_path / x / "screened.jsonl" for x in "ABC"}
    for out in outs.values():
        out.parent.mkdir()
    live = serve(monkeypatch)
    assert cli("belief", "screen", "--items", items, "--out", outs["A"], *SCREEN, "--config", cfg).exit_code == 0
    assert len(live.requests) == 4 * 3 + 2 * 3  # every answer, and a label of those naming no answer
    batched = serve(monkeypatch, ScriptedBatches())
    res = cli("belief", "screen", "--items", items, "--out", outs["B"], *SCREEN, "--config", cfg, "--batch")
    assert res.exit_code == 0, res.output
    assert not batched.requests
    assert q(tmp_path / "B" / "screened.calls", "SELECT wave, n_requests FROM batches ORDER BY wave") == \
        [(1, 12), (2, 6)]
    files = serve(monkeypatch)
    command = ["belief", "screen", "--items", items, "--out", outs["C"], *SCREEN, "--config", cfg]
    assert by_files(cli, command, tmp_path / "vllm") == 2 and not files.requests
    kept = {x: out.read_text() for x, out in outs.items()}
    reports = {x: (out.parent / "screened.screen.json").read_text() for x, out in outs.items()}
    assert kept["A"] == kept["B"] == kept["C"] and kept["A"].count("\n") == 2  # Canberra, Ankara
    assert reports["A"] == reports["B"] == reports["C"]
    calls = {x: q(out.parent / "screened.calls", CALLS) for x, out in outs.items()}
    assert calls["A"] == calls["B"] == calls["C"]
    for s in (live, batched, files):
        s.__exit__(None, None, None)


def test_kill_9_between_submit_and_completion_polls_the_same_batch(cli, monkeypatch, tmp_path):
    res_dir, cfg = belief_results(cli, monkeypatch, tmp_path)
    srv = serve(monkeypatch, ScriptedBatches(["hold"]))
    cmd = [sys.executable, "-m", "ioa_synth", "belief", "reask", str(res_dir), *REASK, "--config", str(cfg), "--batch"]
    kill_9_mid_batch_then_resume(cmd, srv, res_dir)
    assert sum(p["variant"] == "anonymized" for ps in probes(res_dir).values() for p in ps) == 6
    srv.__exit__(None, None, None)
    items, out = sample_items(tmp_path, 2), tmp_path / "s" / "screened.jsonl"
    out.parent.mkdir()
    srv = serve(monkeypatch, ScriptedBatches(["hold"]))
    cmd = [sys.executable, "-m", "ioa_synth", "belief", "screen", "--items", str(items), "--out", str(out), *SCREEN,
           "--batch"]
    kill_9_mid_batch_then_resume(cmd, srv, out.parent / "screened.calls")
    assert out.read_text().count("\n") == 1
    srv.__exit__(None, None, None)


def test_both_batch_options_are_refused_alike_and_nothing_is_written(cli, monkeypatch, tmp_path):
    res_dir, _ = belief_results(cli, monkeypatch, tmp_path)
    items = sample_items(tmp_path, 1)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: no call may be made
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    for command in (["belief", "reask", res_dir, *REASK], ["belief", "screen", "--items", items, "--out",
                                                            tmp_path / "new" / "s.jsonl", *SCREEN]):
        for prefix in ([], ["estimate"]):
            res = cli(*prefix, *command, "--batch", "--batch-dir", tmp_path / "b")
            lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
            assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error:"), res.stderr
            assert "give one" in lines[0]
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before  # nothing written


def _spent(folder) -> tuple[int, int, int]:
    return q(folder, "SELECT sum(prompt_tokens), sum(completion_tokens), count(*) FROM llm_calls WHERE run_id = "
                     "(SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1)")[0]


def _within_10_percent(est: dict, spent: tuple[int, int, int], calls_made: int) -> None:
    prompt, completion, calls = spent
    assert calls == calls_made
    total = est["total"]
    assert abs(total["calls"] - calls) <= 0.10 * calls, (total, calls)
    assert abs(total["prompt_tokens"] - prompt) <= 0.10 * prompt, (total, prompt)
    tokens = total["prompt_tokens"] + total["completion_tokens"]
    assert abs(tokens - (prompt + completion)) <= 0.10 * (prompt + completion), (total, prompt, completion)
    print(f"estimate {total}; spent prompt {prompt} completion {completion} calls {calls}")


def test_estimates_within_10_percent_of_what_the_runs_spend(cli, monkeypatch, tmp_path):
    from ioa_synth.llm.tokens import chars_counter

    billed = CountedUsage(script(), chars_counter())  # usage as a server bills it
    res_dir, cfg = belief_results(cli, monkeypatch, tmp_path, n_items=2, responder=billed)
    srv = serve(monkeypatch, responder=billed)
    # belief reask: the run's own probes and labels measure the completions (no pilot)
    before = sorted(p.name for p in res_dir.rglob("*"))
    res = cli("estimate", "belief", "reask", res_dir, *REASK, "--config", cfg, "--tokenizer", "chars", "--json")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in res_dir.rglob("*")) == before  # nothing written
    est = json.loads(res.stdout)
    assert est["assumptions"]["reasks"] == 12 and est["assumptions"]["already_done"] == 0
    table = cli("estimate", "belief", "reask", res_dir, *REASK, "--config", cfg, "--tokenizer", "chars")
    assert table.exit_code == 0 and "estimate: ioa-synth belief reask" in table.stdout, table.output
    sent = len(srv.requests)
    assert cli("belief", "reask", res_dir, *REASK, "--config", cfg).exit_code == 0
    _within_10_percent(est, _spent(res_dir), len(srv.requests) - sent)
    # belief screen: a pilot on two items measures the answers and the share the judge labels
    items, out = sample_items(tmp_path, 4), tmp_path / "s" / "screened.jsonl"
    out.parent.mkdir()
    pilot = tmp_path / "pilot.jsonl"
    rows = items.read_text().splitlines()
    pilot.write_text(rows[0] + "\n" + rows[1] + "\n")  # Canberra (matched) and Ottawa (judged)
    assert cli("belief", "screen", "--items", pilot, "--out", out, *SCREEN).exit_code == 0
    res = cli("estimate", "belief", "screen", "--items", items, "--out", out, *SCREEN, "--tokenizer", "chars", "--json")
    assert res.exit_code == 0, res.output
    est = json.loads(res.stdout)
    assert est["assumptions"]["already_done"] == 6 and est["assumptions"]["judged_share"] == 0.5
    table = cli("estimate", "belief", "screen", "--items", items, "--out", out, *SCREEN, "--tokenizer", "chars")
    assert table.exit_code == 0 and "0.50 of the screener answers reach the judge (measured" in table.stdout, table.output
    sent = len(srv.requests)
    assert cli("belief", "screen", "--items", items, "--out", out, *SCREEN).exit_code == 0
    _within_10_percent(est, _spent(out.parent / "screened.calls"), len(srv.requests) - sent)
    srv.__exit__(None, None, None)
