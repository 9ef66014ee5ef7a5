"""Folders written by the release before every folder kind carried a typed manifest (commit
f6698bf; ``tests/fixtures/folders_r0``, made by its ``make.py`` with that release's code): a
build directory, an evaluate, a belief run and a collab run results folder, a meeting session
and a reward catalog folder. Each is told and read by the new code without being written
(``status`` writes nothing); the first command that writes one gives it its manifest
(atomically, ``migrated_from`` for a folder that had none) and resumes it as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from evaluate.conftest import trio  # noqa: F401 - the scripted prober, simulator and filter
from evaluate.eval_helpers import STUDY_1, Study
from meetings.conftest import meeting_server, write_detectors  # noqa: F401

from ioa_synth.cli.common import _kinds
from ioa_synth.runs.manifest import MANIFEST_FILE, NO_MANIFEST, read_manifest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "folders_r0"


def release_folder(name: str, tmp_path: Path) -> Path:
    """A copy of the fixture folder ``name`` with its catalog rebuilt from the export. What is
    tested is the folder's format, not that today's templates equal the release's: the stored
    setups are forgotten, so no changed fingerprint refuses a resume."""
    folder = tmp_path / name
    shutil.copytree(FIXTURES / name, folder, ignore=lambda d, names: ["catalog"] if Path(d) == FIXTURES / name else [])
    if (FIXTURES / name / "catalog").is_dir():
        con = duckdb.connect(str(folder / "catalog.duckdb"))
        con.execute(f"IMPORT DATABASE '{FIXTURES / name / 'catalog'}'")
        con.execute("UPDATE runs SET fingerprint_json = NULL")
        con.close()
    return folder


def contents(folder: Path) -> dict[str, bytes]:
    """Every file but the catalog (which a read-only open may touch), by relative path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith("catalog.")}


@pytest.mark.parametrize("name, by", [("build", "layout"), ("evaluate", "run.json"), ("belief", "run.json"),
                                      ("collab", "run.json"), ("meeting", "layout"), ("reward", "layout")])
def test_a_folder_of_the_release_is_told_and_read_without_being_written(cli, tmp_path, name, by):
    folder = release_folder(name, tmp_path)
    before = contents(folder)
    kinds = _kinds()
    found = kinds.detect_folder(folder)
    assert (found.kind, found.by) == (name, by)
    manifest = kinds.folder_manifest(folder)
    assert manifest.kind == name and type(manifest.settings) is kinds.settings_model(name)
    if by == "layout":  # none on disk: the one its first writer will store
        assert manifest.model_extra["migrated_from"] == NO_MANIFEST and not (folder / MANIFEST_FILE).exists()
    res = cli("status", "--out", folder, "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report.get("kind", "build") == name
    assert contents(folder) == before  # a reader writes nothing


def test_typed_settings_of_the_release_s_manifests(tmp_path):
    ev = read_manifest(release_folder("evaluate", tmp_path), "evaluate")
    assert (ev.settings.mode, ev.settings.access, ev.settings.rollouts, ev.settings.permute_seed) == \
        ("mcq", "public", 1, None)
    bel = read_manifest(release_folder("belief", tmp_path), "belief")
    assert (bel.settings.agents, bel.settings.attackers, bel.settings.rounds, bel.settings.labelling) == \
        (4, [1], 2, "judge")
    col = read_manifest(release_folder("collab", tmp_path), "collab")
    assert col.settings.bench == "hidden-profile" and col.settings.max_extra_rounds == 8
    # written back, each keeps the keys it had (no default added)
    raw = json.loads((tmp_path / "belief" / MANIFEST_FILE).read_text())
    assert bel.to_json()["settings"] == raw["settings"]


def test_a_build_of_the_release_resumes_and_gets_its_manifest(cli, tmp_path, endpoint):
    folder = release_folder("build", tmp_path)
    case = folder / "test" / "ml_research" / "planning_000.json"
    record = case.read_bytes()
    server = endpoint()
    res = cli("build", "--seeds", FIXTURES / "build_seeds.jsonl", "--split", "test", "--out", folder)
    assert res.exit_code == 0, res.output
    assert server.requests == [] and case.read_bytes() == record  # its one case was done: nothing asked again
    manifest = read_manifest(folder, "build")
    assert (manifest.command, manifest.settings.split, manifest.finished_at is not None) == ("build", "test", True)
    again = release_folder("build", tmp_path / "2")  # a command without a run of its own migrates it too
    papers = tmp_path / "papers.jsonl"
    papers.write_text(Path(FIXTURES.parents[2] / "seeds" / "snapshot.jsonl").read_text().splitlines()[0] + "\n")
    res = cli("seeds", "import", papers, "--out", again)
    assert res.exit_code == 0, res.output
    migrated = read_manifest(again, "build")
    assert (migrated.command, migrated.model_extra["migrated_from"]) == ("build", NO_MANIFEST)
    assert cli("show", "--out", again).exit_code == 0


def test_an_evaluate_folder_of_the_release_resumes(cli, tmp_path, trio):  # noqa: F811
    t = trio(Study(STUDY_1))
    folder = release_folder("evaluate", tmp_path)
    record = (folder / "records" / "law" / "planning_000.json").read_bytes()
    res = cli("evaluate", "--data", FIXTURES / "data", "--out", folder)
    assert res.exit_code == 0, res.output
    assert t.prober.requests == [] and (folder / "records" / "law" / "planning_000.json").read_bytes() == record
    manifest = read_manifest(folder, "evaluate")
    assert manifest.versions.toolkit and manifest.settings.mode == "mcq"


def test_a_reward_folder_of_the_release_replays_its_calls(tmp_path, trio):  # noqa: F811
    from ioa_synth.train.reward import RewardScorer

    t = trio(Study(STUDY_1))
    folder = release_folder("reward", tmp_path)
    record = json.loads((FIXTURES / "evaluate" / "records" / "law" / "planning_000.json").read_text())
    completion = json.dumps({"questions": [{"question": q["question"], "options": q["options"]}
                                           for q in record["questions"]]})
    with RewardScorer(FIXTURES / "data", out=folder, workers=1) as reward:
        result = reward.score_many(["law/planning_000"], [completion])[0]
    assert result.error is None and result.f1 == pytest.approx(record["metrics"]["f1"], abs=5e-5)
    assert t.simulator.requests == [] and t.validity_filter.requests == []  # every call replayed
    manifest = read_manifest(folder, "reward")
    assert manifest.command == "train reward" and manifest.settings.rollouts == 1


def test_a_meeting_session_of_the_release_is_probed_and_refused_by_build(cli, tmp_path, meeting_server,  # noqa: F811
                                                                        seeds_file):
    session = release_folder("meeting", tmp_path)
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", session)
    assert res.exit_code == 2 and "is a live-meeting session folder, not a build directory" in res.stderr
    assert not (session / MANIFEST_FILE).exists()  # refused: nothing written
    res = cli("meeting", "probe", session, *write_detectors(tmp_path / "detectors"), "--seed", 1)
    assert res.exit_code == 0, res.output
    manifest = read_manifest(session, "meeting")
    assert manifest.model_extra["migrated_from"] == NO_MANIFEST and manifest.argv == []
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", session)
    assert res.exit_code == 2 and "is a live-meeting session folder, not a build directory" in res.stderr


@pytest.mark.parametrize("command", [("belief", "report"), ("collab", "report")])
def test_belief_and_collab_folders_of_the_release_are_reported(cli, tmp_path, command):
    folder = release_folder(command[0], tmp_path)
    res = cli(*command, folder)
    assert res.exit_code == 0, res.output


def test_a_new_build_directory_has_a_manifest_that_is_no_case(cli, tmp_path):
    """``build import`` gives a new build directory its manifest; read as a folder of cases
    (``evaluate --data``, ``build import``) the directory's cases are read, not its run.json."""
    from ioa_synth.evaluate.inputs import load_cases

    sample = FIXTURES.parents[2] / "samples" / "evaluate" / "test"
    built = tmp_path / "b"
    assert cli("build", "import", sample, "--split", "test", "--out", built).exit_code == 0
    manifest = read_manifest(built, "build")
    assert (manifest.command, manifest.args["split"], "migrated_from" in manifest.model_extra) == \
        ("build import", "test", False)
    n = len(list(sample.rglob("*.json")))
    assert len(load_cases(built)) == n
    res = cli("build", "import", built, "--split", "test", "--out", tmp_path / "again")
    assert res.exit_code == 0, res.output


def test_a_run_json_that_does_not_read_is_refused_by_a_writer_in_one_line(cli, tmp_path):
    """A folder's manifest is never written over one that cannot be read: the command that
    would give it one stops with one line naming the file, before anything is written."""
    sample = FIXTURES.parents[2] / "samples" / "evaluate" / "test"
    out = tmp_path / "b"
    out.mkdir()
    (out / MANIFEST_FILE).write_text('{"kind": "build", ')
    res = cli("build", "import", sample, "--split", "test", "--out", out)
    assert res.exit_code == 2
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(out / MANIFEST_FILE) in lines[0]
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST_FILE]
    assert (out / MANIFEST_FILE).read_text() == '{"kind": "build", '
