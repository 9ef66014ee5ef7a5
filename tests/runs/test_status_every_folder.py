"""``status`` reads every kind of folder the toolkit writes, and a build while it runs; its
errors say what is wrong with the folder (a damaged catalog is not a write error, a file
is not a results folder)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from ioa_helpers import build, one_line_error

ROOT = Path(__file__).resolve().parents[2]


def test_a_damaged_catalog_is_said_to_be_unreadable_not_unwritable(cli, tmp_path):
    out = tmp_path / "b"
    out.mkdir()
    (out / "catalog.duckdb").write_bytes(b"not a duckdb file " * 400)
    for extra in ((), ("--json",)):
        line = one_line_error(cli("status", "--out", out, *extra), "cannot read", "catalog.duckdb", "damaged")
        assert "cannot write" not in line


def test_a_mistyped_folder_is_said_not_to_exist(cli, tmp_path):
    """A typo in --out is 'no such folder', not 'no catalog.duckdb here', which reads as if the
    folder were there but of the wrong kind; nothing is created."""
    for args in (("status", "--out", tmp_path / "dmeo"), ("status", "--out", tmp_path / "dmeo", "--json"),
                 ("sql", tmp_path / "dmeo", "SELECT 1")):
        res = cli(*args)
        assert res.exit_code == 2
        line = one_line_error(res, "dmeo", "no such folder")
        assert "catalog.duckdb" not in line
    assert not (tmp_path / "dmeo").exists()


@pytest.mark.parametrize("command", [("collab", "report"), ("belief", "report")])
def test_a_report_of_a_file_says_it_is_a_file(cli, tmp_path, command):
    afile = tmp_path / "results.txt"
    afile.write_text("x\n")
    line = one_line_error(cli(*command, afile), str(afile), "is not a folder")
    assert "no such" not in line
    one_line_error(cli(*command, tmp_path / "missing"), "no such results folder")


def test_status_reads_a_build_while_its_process_writes_it(cli, seeds_file, tmp_path):
    """A real ``build`` process holds the catalog (DuckDB lets one process open it for
    writing, and refuses even a read-only open meanwhile): status reads a copy of the
    catalog and its journal, with the rows of the run's last seconds, and leaves the run
    alone (it finishes with every case)."""
    import os
    import time

    import duckdb

    from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer

    seeds, out = seeds_file(6), tmp_path / "out"
    with ScriptedServer(ProtocolResponder(latency=0.1)) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-status-test-0000"}
        cmd = [sys.executable, "-m", "ioa_synth", "build", "--seeds", str(seeds), "--split", "test",
               "--out", str(out), "--workers", "1"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 120
            while len(server.requests) < 12 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            assert proc.poll() is None, "the build finished before status could read it"
            with pytest.raises(duckdb.IOException, match="lock"):  # the writer's lock is real
                duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
            res = cli("status", "--out", out, "--json")
            assert res.exit_code == 0, res.output
            report = json.loads(res.stdout)
            shown = cli("status", "--out", out)
            case = cli("show", "--out", out, "--json")  # show reads the running build's snapshot too
            counted = cli("sql", out, "SELECT count(*) AS n FROM cases", "--json")  # and sql
            assert proc.poll() is None, "the build finished while status read it"
        finally:
            _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]
    assert report["catalog"] == "snapshot" and report["totals"]["total"] == 6
    # the journal's rows not yet committed are read too: every call made so far (but those in flight)
    calls = sum(r["calls"] for r in report["tokens"])
    assert calls >= 11
    assert shown.exit_code == 0 and "a run is writing this folder" in shown.stdout and "Cases per cell" in shown.stdout
    assert case.exit_code == 0, case.output
    assert counted.exit_code == 0 and json.loads(counted.stdout) == [{"n": 6}], counted.output
    assert json.loads(case.stdout)["case_id"].startswith("test/")
    assert not list(tmp_path.glob("**/ioa-status-*"))
    final = json.loads(cli("status", "--out", out, "--json").stdout)
    assert final["catalog"] == "read" and final["totals"]["accepted"] + final["totals"]["discarded"] == 6


def _scripted_run(tmp_path, kind: str) -> Path:
    """A finished collab or belief run against a scripted server, in a subprocess."""
    import os

    sys.path.insert(0, str(ROOT / "tests"))
    from ioa_synth.testing.scripted_server import ScriptedServer

    out = tmp_path / kind
    if kind == "collab":
        from collab.helpers import HP, hp_tasks

        from ioa_synth.testing.collab_scripted import CollabScript

        script = CollabScript(tasks=hp_tasks(2))
        cmd = ["collab", "run", "--bench", "hidden-profile", "--tasks", str(HP), "--configs", "discussion",
               "--limit", "2"]
    else:
        from belief.helpers import LABELS, STANCES, sample_items

        from ioa_synth.testing.belief_scripted import BeliefScript

        script = BeliefScript(agents=4, labels=LABELS, stances=STANCES)
        cmd = ["belief", "run", "--items", str(sample_items(tmp_path, 2)), "--agents", "4", "--attackers", "1",
               "--rounds", "3"]
    with ScriptedServer(script) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-status-test-0000"}
        done = subprocess.run([sys.executable, "-m", "ioa_synth", *cmd, "--out", str(out)], env=env,
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return out


@pytest.mark.parametrize("kind, unit, group, calls", [("collab", "task run", "discussion", 63),
                                                       ("belief", "conversation", "counterfact k=1", 90)])
def test_status_reads_collab_and_belief_results(cli, tmp_path, kind, unit, group, calls):
    out = _scripted_run(tmp_path, kind)
    res = cli("status", "--out", out, "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["kind"] == kind and report["progress"]["unit"] == unit
    assert (report["progress"]["done"], report["progress"]["total"]) == (2, 2)
    assert [g["name"] for g in report["progress"]["groups"]] == [group]
    assert sum(r["calls"] for r in report["tokens"]) == calls and report["catalog"] == "read"
    # a run stopped half-way: one record gone, the total stays what the run set out to do
    records = sorted((out / ("tasks" if kind == "collab" else "conversations")).rglob("*.json"))
    records[0].unlink()
    report = json.loads(cli("status", "--out", out, "--json").stdout)
    assert (report["progress"]["done"], report["progress"]["total"]) == (1, 2)
    shown = cli("status", "--out", out)
    assert shown.exit_code == 0 and "1/2" in shown.stdout and "Tokens per component" in shown.stdout


def test_status_reads_an_export_and_a_meeting_session(cli, tmp_path):
    sample = ROOT / "samples" / "evaluate" / "test"
    built, published = tmp_path / "b", tmp_path / "hub"
    assert cli("build", "import", sample, "--split", "test", "--out", built).exit_code == 0
    assert cli("export", "--out", built, "--to", published, "--splits", "test").exit_code == 0
    report = json.loads(cli("status", "--out", published, "--json").stdout)
    n = len(list(sample.rglob("*.json")))
    assert report["kind"] == "export" and report["progress"]["groups"] == [
        {"name": "test", "done": n, "total": n, "statuses": {"as exported": 1, "changed since": 0}}]
    session = tmp_path / "s"
    assert cli("meeting", "import", ROOT / "samples" / "meetings" / "standup.txt", "--out", session).exit_code == 0
    res = cli("status", "--out", session)
    assert res.exit_code == 0, res.output
    assert "live-meeting session" in res.stdout and "not probed" in res.stdout


def test_status_reads_a_reward_catalog(cli, tmp_path):
    """A folder told by its catalog alone (``train reward``'s, no run.json): its calls."""
    import ioa_synth.train  # noqa: F401 - registers the reward kind
    from ioa_synth.runs.catalog import Catalog
    from ioa_synth.runs.run_rows import finish_run, start_run

    out = tmp_path / "reward"
    with Catalog(out) as cat:
        finish_run(cat, start_run(cat, "train reward", {}, None), {})
    res = cli("status", "--out", out, "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["kind"] == "reward" and report["tokens"] == [] and report["catalog"] == "read"
    shown = cli("status", "--out", out)
    assert shown.exit_code == 0 and "reward catalog folder" in shown.stdout and "(no calls yet)" in shown.stdout


def test_an_unreadable_record_is_one_line(cli, tmp_path):
    folder = tmp_path / "bel"
    (folder / "conversations").mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"kind": "belief", "command": "belief run"}))
    (folder / "conversations" / "x_k1.json").write_text("{not json")
    one_line_error(cli("status", "--out", folder), "x_k1.json")
