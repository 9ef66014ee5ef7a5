"""``ioa-synth export``: a folder that ``datasets.load_dataset`` loads as train/validation/test
with the paper's record shape plus case_id, domain, task_type and seed; a dataset card with
its YAML header and the build's provenance; a Croissant file that ``mlcroissant`` validates;
seed papers whose licence forbids redistribution referenced by id only."""

from __future__ import annotations

import json

import pytest
import yaml

datasets = pytest.importorskip("datasets")
mlc = pytest.importorskip("mlcroissant")

from conftest import real_seed_tuples  # noqa: E402

from ioa_synth.export.records import redistributable  # noqa: E402

CLOSED = "arXiv.org perpetual, non-exclusive license (http://arxiv.org/licenses/nonexclusive-distrib/1.0/)"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A scripted build of train (3 cases), val (2) and test (2), exported; one test seed
    carries a licence that forbids redistributing its abstract."""
    from typer.testing import CliRunner

    from ioa_helpers import KEY
    from ioa_synth.cli import app
    from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer

    tmp = tmp_path_factory.mktemp("export")
    seeds = real_seed_tuples(7)
    seeds[5]["license"] = CLOSED
    runner = CliRunner()
    out = tmp / "build"
    mp = pytest.MonkeyPatch()
    with ScriptedServer(ProtocolResponder()) as server:
        mp.setenv("OPENAI_BASE_URL", server.base_url)
        mp.setenv("OPENAI_API_KEY", KEY)
        for split, part in (("train", seeds[:3]), ("val", seeds[3:5]), ("test", seeds[5:])):
            path = tmp / f"{split}.jsonl"
            path.write_text("".join(json.dumps(s) + "\n" for s in part))
            res = runner.invoke(app, ["build", "--seeds", str(path), "--split", split, "--out", str(out)])
            assert res.exit_code == 0, res.output
    mp.undo()
    to = tmp / "hub"
    res = runner.invoke(app, ["export", "--out", str(out), "--to", str(to)])
    assert res.exit_code == 0, res.output
    return out, to, seeds, res


def test_load_dataset_returns_the_splits_with_nested_fields(exported):
    _, to, seeds, res = exported
    ds = datasets.load_dataset(str(to))
    assert {k: len(v) for k, v in ds.items()} == {"train": 3, "validation": 2, "test": 2}
    row = ds["test"][0]
    assert set(row) == {"case_id", "domain", "task_type", "seed", "profiles", "dialogue"}
    assert row["case_id"].startswith("test/") and row["domain"] in row["case_id"]
    profiles = row["profiles"]
    assert set(profiles) == {"meeting_scenario", "members", "misalignment_points", "conversation_outline"}
    assert [m["id"] for m in profiles["members"]] == ["M1", "M2"]
    assert len(profiles["members"][0]["hidden_assumptions"]) == 3
    assert profiles["misalignment_points"][0]["type"] == "definitional"
    assert row["dialogue"]["num_turns"] == len(row["dialogue"]["turns"]) == 4
    assert set(row["dialogue"]["turns"][0]) == {"turn_idx", "speaker_id", "speaker_name", "inner_thought", "utterance"}
    features = ds["train"].features
    assert isinstance(features["dialogue"]["turns"], list) or hasattr(features["dialogue"]["turns"], "feature")
    lines = (to / "data" / "train.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["case_id"].startswith("train/") for line in lines)


def test_a_closed_licence_seed_is_referenced_by_id_only(exported):
    _, to, seeds, _ = exported
    rows = {r["seed"]["seed_id"]: r["seed"] for r in datasets.load_dataset(str(to))["test"]}
    closed = rows[seeds[5]["seed_id"]]
    assert closed["title"] is None and closed["abstract"] is None and closed["text_redistributed"] is False
    assert closed["license"] == CLOSED
    open_ = rows[seeds[6]["seed_id"]]
    assert open_["abstract"] == seeds[6]["abstract"] and open_["text_redistributed"] is True
    assert seeds[5]["abstract"][:60] not in (to / "data" / "test.jsonl").read_text()


@pytest.mark.parametrize("licence,ok", [("CC0-1.0 (arXiv metadata, incl. abstracts)", True), ("CC-BY-4.0", True),
                                        ("CC-BY (version not stated)", True), ("public-domain", True),
                                        ("CC BY-NC 4.0", False), (None, False), (CLOSED, False),
                                        ("http://creativecommons.org/licenses/by-sa/4.0/", True)])
def test_redistribution_rule(licence, ok):
    assert redistributable(licence) is ok


def test_the_card_has_the_hub_header_and_the_provenance(exported):
    _, to, _, _ = exported
    text = (to / "README.md").read_text()
    assert text.startswith("---\n")
    header = yaml.safe_load(text.split("---\n")[1])
    assert header["license"] == "cc-by-4.0"
    assert header["size_categories"] == ["n<1K"] and "question-answering" in header["task_categories"]
    assert "hidden-disagreement" in header["tags"]
    files = {f["split"]: f["path"] for f in header["configs"][0]["data_files"]}
    assert files == {"train": "data/train.jsonl", "validation": "data/validation.jsonl", "test": "data/test.jsonl"}
    body = text.split("---\n", 2)[2]
    for needle in ("## Seed papers and licences", "| arxiv |", "id only", "## Models and settings", "| generator |",
                   "protocol", "θ1", "subtlety ≥ 3", "pass at first attempt", "Discard reasons", "Judge health",
                   "paper (Table 10)", "24.2%", "## Near-duplicates", "spanning two splits"):
        assert needle in body, needle


def test_croissant_file_validates(exported):
    _, to, _, _ = exported
    meta = json.loads((to / "croissant.json").read_text())
    assert meta["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    dataset = mlc.Dataset(jsonld=str(to / "croissant.json"))  # raises on a validation error
    assert not dataset.metadata.ctx.issues.errors and not dataset.metadata.ctx.issues.warnings
    assert {rs.name for rs in dataset.metadata.record_sets} == {"train", "validation", "test"}
    records = list(dataset.records(record_set="test"))
    assert len(records) == 2
    assert {r["test/case_id"].decode() for r in records} == {f"test/{c}" for c in _case_ids(to, "test")}
    assert all(r["test/dialogue"]["test/dialogue/num_turns"] == 4 for r in records)


def _case_ids(to, split):
    return [json.loads(line)["case_id"].split("/", 1)[1] for line in (to / "data" / f"{split}.jsonl").open()]


def test_export_refuses_a_folder_with_other_files_and_bad_splits(exported, cli, tmp_path):
    out, _, _, _ = exported
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    res = cli("export", "--out", out, "--to", busy)
    assert res.exit_code == 2 and res.stderr.startswith("error: ") and "not an earlier export" in res.stderr
    assert (busy / "notes.txt").read_text() == "mine"
    (busy / "notes.txt").unlink()
    assert cli("export", "--out", out, "--to", busy).exit_code == 0  # an empty folder is fine
    res = cli("export", "--out", out, "--to", tmp_path / "x", "--splits", "train,dev")
    assert res.exit_code == 2 and "--splits" in res.stderr
    res = cli("export", "--out", out, "--to", tmp_path / "t", "--splits", "test")
    assert res.exit_code == 0
    assert json.loads((tmp_path / "t" / "croissant.json").read_text())["name"]
    assert sorted(p.name for p in (tmp_path / "t" / "data").iterdir()) == ["test.jsonl"]


def _tree(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() if p.is_file() else None for p in folder.rglob("*")}


@pytest.mark.parametrize("change", ["add data/mine.jsonl", "add notes/x.txt", "edit README.md", "no list"])
def test_export_never_replaces_a_file_it_did_not_write(exported, cli, tmp_path, change):
    import shutil

    from ioa_synth.export.run import FILE_LIST

    out, to, _, _ = exported
    dest = tmp_path / "hub"
    shutil.copytree(to, dest)
    listed = json.loads((dest / FILE_LIST).read_text())["files"]
    assert sorted(listed) == ["README.md", "croissant.json", "data/test.jsonl", "data/train.jsonl",
                              "data/validation.jsonl"]
    assert cli("export", "--out", out, "--to", dest).exit_code == 0  # an untouched earlier export is replaced
    if change == "edit README.md":
        (dest / "README.md").write_text((dest / "README.md").read_text() + "\nMy notes.\n")
    elif change == "no list":
        (dest / FILE_LIST).unlink()
    else:
        rel = change.split()[1]
        (dest / rel).parent.mkdir(exist_ok=True)
        (dest / rel).write_text("my own file")
    before = _tree(dest)
    res = cli("export", "--out", out, "--to", dest)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: --to ") and len(res.stderr.splitlines()) == 1, res.stderr
    assert _tree(dest) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hub"]  # no temporary folder left


def test_the_card_reports_the_audit_when_there_is_one(cli, endpoint, seeds_file, tmp_path):
    from ioa_helpers import rescoring

    endpoint()
    out = tmp_path / "out"
    assert cli("build", "--seeds", seeds_file(2), "--split", "test", "--out", out).exit_code == 0
    endpoint(responder=rescoring("audit-model", lambda kind, data: None), models=["audit-model"], env="AUDIT_JUDGE")
    assert cli("audit", "--out", out, "--split", "test").exit_code == 0
    res = cli("export", "--out", out, "--to", tmp_path / "hub", "--splits", "test")
    assert res.exit_code == 0, res.output
    body = (tmp_path / "hub" / "README.md").read_text()
    assert "## Audit by a second judge" in body and "re-scored by audit-model" in body
    assert "| 1 | subtlety | 4 | 3.00 | 3.00 | 100.0% | 100.0% |" in body
    assert "## Human annotation" not in body
