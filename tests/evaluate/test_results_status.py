"""``evaluate`` records the estimate it starts from, and ``status --out RESULTS`` shows the
run: cases done / total, failed cases, tokens per component and that estimate beside what
was spent (scripted servers at the HTTP boundary, the shipped sample case)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from ioa_helpers import one_line_error, q

from .eval_helpers import STUDY_1, Study

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "evaluate" / "test"
#: App. E.1's first study without its MA4 question: the sample case plants three MAs.
SAMPLE_STUDY = [x for x in STUDY_1 if x.hit != "MA4"]
PRICES = {"prober": {"input": 2.5, "output": 10.0}, "simulator": {"input": 0.15, "output": 0.6},
          "validity_filter": {"input": 1.0, "output": 4.0}}


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({c: {"price_per_mtok": p} for c, p in PRICES.items()}))
    return path


def test_evaluate_records_its_estimate_and_status_shows_it_beside_the_spend(cli, trio, tmp_path):
    servers = trio(Study(SAMPLE_STUDY))
    out, config = tmp_path / "results", _config(tmp_path)
    res = cli("evaluate", "--data", SAMPLE, "--out", out, "--config", config, "--rollouts", "2", "--workers", "1")
    assert res.exit_code == 0, res.output
    assert servers.counts() == (1, 4, 1)
    (command, plan), = q(out, "SELECT command, plan_json FROM estimates")
    assert command == "evaluate" and json.loads(plan)["rollouts"] == 2 and "workers" not in json.loads(plan)

    report = json.loads(cli("status", "--out", out, "--json").stdout)
    assert report["kind"] == "evaluate"
    assert report["cases"] == {"total": 1, "scored": 1, "failed": 0, "to_do": 0} and report["failed_cases"] == []
    tokens = {t["component"]: t for t in report["tokens"]}
    assert {c: t["calls"] for c, t in tokens.items()} == {"prober": 1, "simulator": 4, "validity_filter": 1}
    assert tokens["simulator"]["prompt_tokens"] == 4 * 100  # as the scripted server billed
    spend = report["spend"]
    assert spend["command"] == "evaluate"
    est, spent = spend["estimate"], spend["spent"]
    assert est["assumptions"]["cases"] == 1 and est["assumptions"]["rollouts"] == 2
    calls = {c: (est["components"][c]["calls"], spent["components"][c]["calls"]) for c in PRICES}
    assert calls == {"prober": (1, 1), "simulator": (4, 4), "validity_filter": (1, 1)}
    assert spent["total"]["calls"] == est["total"]["calls"] == 6
    # priced with --config's price_per_mtok, the estimate and the spend alike
    p = spent["components"]["prober"]
    assert p["cost"] == (p["prompt_tokens"] * 2.5 + p["completion_tokens"] * 10.0) / 1e6
    assert est["components"]["prober"]["cost"] is not None and est["total"]["cost"] is not None

    text = cli("status", "--out", out)
    assert text.exit_code == 0, text.output
    assert "1/1 done" in text.stdout and "Tokens per component" in text.stdout
    assert "Estimated (when the run started" in text.stdout and "spent" in text.stdout

    # the same plan again (all scored: no call) keeps the estimate the job started from
    assert cli("evaluate", "--data", SAMPLE, "--out", out, "--config", config, "--rollouts", "2").exit_code == 0
    assert q(out, "SELECT count(*) FROM estimates") == [(1,)]
    # so do the same files named another way (a new user re-ran the demo with absolute paths,
    # and status lost the estimate), and a new plan that finds nothing left to do
    other = SAMPLE.parent / "test" / ".." / "test"
    assert cli("evaluate", "--data", other, "--out", out, "--config", tmp_path / "." / "config.json",
               "--rollouts", "2").exit_code == 0
    assert cli("evaluate", "--data", SAMPLE, "--out", out, "--config", config, "--rollouts", "2",
               "--limit", "1").exit_code == 0
    assert q(out, "SELECT count(*) FROM estimates") == [(1,)]
    assert json.loads(cli("status", "--out", out, "--json").stdout)["spend"]["estimate"]["total"]["calls"] == 6
    # and estimate evaluate reads a folder with records: nothing left to do
    res = cli("estimate", "evaluate", "--data", SAMPLE, "--out", out, "--rollouts", "2", "--tokenizer", "chars",
              "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["assumptions"]["already_scored"] == 1


def test_status_of_a_run_in_progress_shows_its_cases_and_calls(cli, trio, tmp_path):
    trio(Study(SAMPLE_STUDY))
    out = tmp_path / "results"
    assert cli("evaluate", "--data", SAMPLE, "--out", out).exit_code == 0
    holder = subprocess.Popen([sys.executable, "-c", "import sys; from ioa_synth.runs.catalog import Catalog; "
                               f"c = Catalog({str(out)!r}); print('open', flush=True); sys.stdin.read(); c.close()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"  # another process is the catalog's writer now
        report = json.loads(cli("status", "--out", out, "--json").stdout)
        # read from a copy of the catalog the other process holds
        assert report["catalog"] == "snapshot" and sum(r["calls"] for r in report["tokens"]) > 0
        assert report["cases"]["scored"] == 1
        res = cli("status", "--out", out)
        assert res.exit_code == 0 and "1/1 done" in res.stdout and "a run is writing this folder" in res.stdout
    finally:
        holder.communicate("", timeout=60)


def test_status_lists_the_failed_cases_of_a_limited_run(cli, trio, tmp_path):
    data = tmp_path / "data" / "test"
    for n in (1, 2, 3):
        dest = data / "software_engineering" / f"troubleshooting_00{n}.json"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE / "software_engineering" / "troubleshooting_001.json", dest)
    servers = trio(Study(SAMPLE_STUDY))
    servers.prober.responder = lambda body, headers: _bad_json(body)
    out = tmp_path / "results"
    res = cli("evaluate", "--data", data, "--out", out, "--limit", "2", "--workers", "1")
    assert res.exit_code == 1, res.output
    report = json.loads(cli("status", "--out", out, "--json").stdout)
    assert report["cases"] == {"total": 2, "scored": 0, "failed": 2, "to_do": 0}
    assert [f["case_id"] for f in report["failed_cases"]] == ["software_engineering/troubleshooting_001",
                                                              "software_engineering/troubleshooting_002"]
    assert all(f["error"] for f in report["failed_cases"])
    text = cli("status", "--out", out).stdout
    assert "0/2 done" not in text and "2/2 done" in text and "Failed cases" in text
    assert "troubleshooting_002" in text


def _bad_json(body):
    from ioa_synth.testing.scripted_server import chat_reply

    return chat_reply('{"questions": not json')


def test_status_reads_other_results_folders(cli, tmp_path):
    """Every folder kind is read (a run.json with nothing else: nothing done yet)."""
    for kind, command, unit in (("belief", "belief run", "conversation"), ("collab", "collab run", "task run")):
        folder = tmp_path / kind
        folder.mkdir()
        (folder / "run.json").write_text(json.dumps({"kind": kind, "command": command}))
        res = cli("status", "--out", folder, "--json")
        assert res.exit_code == 0, res.output
        report = json.loads(res.stdout)
        assert report["kind"] == kind and report["progress"]["unit"] == unit and report["progress"]["done"] == 0
        res = cli("status", "--out", folder)
        assert res.exit_code == 0 and f"an 'ioa-synth {command}' results folder" in res.stdout
    session = tmp_path / "session"
    assert cli("meeting", "import", "samples/meetings/standup.txt", "--out", session).exit_code == 0
    res = cli("status", "--out", session)
    assert res.exit_code == 0 and "a live-meeting session folder" in res.stdout and "meeting probe" in res.stdout



def test_a_meeting_session_counts_its_participants_forms_from_import_on(cli, tmp_path):
    """Right after import the participants are known: status names them and counts their
    forms (0 of one each), rather than "(no participant yet)"; ``all`` counts forms, not people."""
    session = tmp_path / "session"
    assert cli("meeting", "import", "samples/meetings/sample.vtt", "--out", session).exit_code == 0
    res = cli("status", "--out", session, "--json")
    progress = json.loads(res.stdout)["progress"]
    assert progress["unit"] == "form"
    assert [(g["name"], g["done"], g["total"]) for g in progress["groups"]] == [("answers", 0, 3), ("labels", 0, 3)]
    res = cli("status", "--out", session)
    assert "no participant yet" not in res.stdout and "3 participant(s): P1 = Avery, P2 = Blake, P3 = Casey" in res.stdout


def test_a_batch_dir_run_keeps_its_start_and_says_its_waves_are_written(cli, trio, tmp_path):
    """Each ``--batch-dir`` wave is a new invocation of the same job: run.json keeps the
    job's start (and says when it was last resumed), and the wave's files are said to be
    written, not sent."""
    import time

    trio(Study(SAMPLE_STUDY))
    out, bdir = tmp_path / "results", tmp_path / "files"
    named = tmp_path / "models.json"  # --batch-dir never asks the endpoint for its model
    named.write_text(json.dumps({c: {"model": "scripted"} for c in ("prober", "simulator", "validity_filter")}))
    first = cli("evaluate", "--data", SAMPLE, "--out", out, "--batch-dir", bdir, "--config", named)
    assert first.exit_code == 75, first.output
    assert f"wave 1: 1 request written to 1 file in {bdir}" in first.stderr and "sent" not in first.stderr
    started = json.loads((out / "run.json").read_text())["started_at"]
    time.sleep(1.1)  # run.json's times are to the second
    assert cli("evaluate", "--data", SAMPLE, "--out", out, "--batch-dir", bdir, "--config", named).exit_code == 75
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["started_at"] == started and manifest["resumed_at"] > started
    text = cli("status", "--out", out).stdout
    assert f"started {started} (last resumed {manifest['resumed_at']})" in text
