"""``evaluate --batch`` against three scripted Batch APIs (one per component): the records
are the live run's, in three waves (prober, simulator of both participants and every
rollout, filter)."""

from __future__ import annotations

import json

from ioa_helpers import q

from ioa_synth.testing.scripted_batches import ScriptedBatches
from ioa_synth.testing.scripted_server import ScriptedServer

from evaluate.eval_helpers import KEYS, STUDY_1, STUDY_2, Study, released_case, toolkit_case, write_case


def servers(monkeypatch, study: Study) -> dict[str, ScriptedServer]:
    out = {}
    for comp, responder in (("prober", study.prober), ("simulator", study.simulator),
                            ("validity_filter", study.filter)):
        out[comp] = ScriptedServer(responder, models=[f"{comp}-model"], batches=ScriptedBatches()).__enter__()
        monkeypatch.setenv(f"{comp.upper()}_BASE_URL", out[comp].base_url)
        monkeypatch.setenv(f"{comp.upper()}_API_KEY", KEYS[comp])
    monkeypatch.setenv("IOA_SYNTH_BATCH_POLL_SECONDS", "0.05")
    return out


def test_batch_evaluate_writes_the_live_records(cli, monkeypatch, tmp_path):
    root = tmp_path / "data" / "test"
    typed = toolkit_case("business", "troubleshooting", n_mas=4)
    typed["profiles"]["members"][0]["name"] += " STUDY1"
    write_case(root, "business/troubleshooting_010.json", typed)
    write_case(root, "law/planning_003.json", released_case(tag=" STUDY2"))
    study = Study(STUDY_2, by_marker={"STUDY1": STUDY_1})
    live = servers(monkeypatch, study)
    res = cli("evaluate", "--data", root, "--out", tmp_path / "A", "--rollouts", "2")
    assert res.exit_code == 0, res.output
    batched = servers(monkeypatch, study)
    res = cli("evaluate", "--data", root, "--out", tmp_path / "B", "--rollouts", "2", "--batch")
    assert res.exit_code == 0, res.output
    for s in batched.values():
        assert not s.requests
    a = {p.name: json.loads(p.read_text()) for p in (tmp_path / "A" / "records").rglob("*.json")}
    b = {p.name: json.loads(p.read_text()) for p in (tmp_path / "B" / "records").rglob("*.json")}
    assert a == b and len(a) == 2 and all(r["status"] == "scored" for r in a.values())
    summary = json.loads((tmp_path / "B" / "summary.json").read_text())
    assert summary == json.loads((tmp_path / "A" / "summary.json").read_text())
    waves = q(tmp_path / "B", "SELECT wave, component, n_requests FROM batches ORDER BY wave")
    assert waves == [(1, "prober", 2), (2, "simulator", 8), (3, "validity_filter", 2)]
    assert sum(len(s.requests) for s in live.values()) == 12
    for s in (*live.values(), *batched.values()):
        s.__exit__(None, None, None)


def test_estimate_evaluate_counts_the_calls_a_run_makes(cli, monkeypatch, tmp_path):
    root = tmp_path / "data" / "test"
    write_case(root, "law/planning_003.json", released_case(tag=" STUDY2"))
    write_case(root, "law/planning_004.json", released_case(tag=" STUDY2"))
    study = Study(STUDY_2)
    live = servers(monkeypatch, study)
    args = ["--data", root, "--out", tmp_path / "A", "--rollouts", "3"]
    res = cli("estimate", "evaluate", *args, "--tokenizer", "chars", "--json")
    assert res.exit_code == 0, res.output
    est = json.loads(res.stdout)
    assert {c: v["calls"] for c, v in est["components"].items()} == {"prober": 2, "simulator": 12, "validity_filter": 2}
    assert not (tmp_path / "A").exists()
    assert cli("evaluate", *args).exit_code == 0
    assert [len(s.requests) for s in live.values()] == [2, 12, 2]
    for s in live.values():
        s.__exit__(None, None, None)


def test_ctrl_c_of_evaluate_batch_names_the_batch_still_running(cli, monkeypatch, tmp_path):
    """Ctrl-C while the prober's batch is in flight: exit 130, and the last line names the
    batch, says it runs on and is billed at the provider and that the next run collects it,
    which it does without submitting it again."""
    import os
    import signal
    import threading
    import time

    root = tmp_path / "data" / "test"
    write_case(root, "law/planning_003.json", released_case(tag=" STUDY2"))
    srv = servers(monkeypatch, Study(STUDY_2))
    prober = srv["prober"]
    prober.batches.outcomes = ["hold"]

    def ctrl_c_while_polled() -> None:
        deadline = time.monotonic() + 60
        while prober.batches.retrieves < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, to this process's run

    threading.Thread(target=ctrl_c_while_polled, daemon=True).start()
    res = cli("evaluate", "--data", root, "--out", tmp_path / "B", "--batch")
    assert res.exit_code == 130, res.output
    assert res.stderr.strip().splitlines()[-1] == (
        "error: interrupted: 0 cases finished, no model call stored; batch batch_0001 (wave 1, prober, 1 request, "
        f"in_progress 0/1) is still running at the provider ({prober.base_url}) and is billed: the next run "
        "collects its answers rather than submitting it again (cancelling it there stops the bill; the next run "
        "then sends the unanswered requests again); run the same command again to resume"), res.stderr
    prober.batches.release()
    res = cli("evaluate", "--data", root, "--out", tmp_path / "B", "--batch")
    assert res.exit_code == 0, res.output
    assert prober.batches.submissions == 1
    for s in srv.values():
        s.__exit__(None, None, None)
