"""``ioa-synth build import``: IoA-Suite records (the shipped sample, a released data folder,
one record file) become accepted cases marked ``imported``, with no judge score, on which
``check``, ``show``, ``status``, ``export``, ``audit`` and ``annotate`` work; bad input is one
error line, exit 2, nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from ioa_helpers import one_line_error, q, rescoring

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "evaluate" / "test"
SAMPLE_ID = "software_engineering/troubleshooting_001"


def sample_record() -> dict:
    return json.loads((SAMPLE / f"{SAMPLE_ID}.json").read_text(encoding="utf-8"))


def write_record(path: Path, record: dict | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record or sample_record(), indent=2), encoding="utf-8")
    return path


def released(root: Path) -> Path:
    """A folder in the released layout: train (1 case), validation (2), test (1)."""
    write_record(root / "train" / "business" / "planning_004.json")
    write_record(root / "validation" / "law" / "coordination_000.json")
    write_record(root / "validation" / "medicine" / "design_review_002.json")
    write_record(root / "test" / f"{SAMPLE_ID}.json")
    return root


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def imported(cli, tmp_path) -> Path:
    out = tmp_path / "b"
    res = cli("build", "import", SAMPLE, "--split", "test", "--out", out)
    assert res.exit_code == 0, res.output
    assert "1 case imported into split test" in res.stdout
    return out


def test_the_shipped_sample_becomes_an_accepted_imported_case(cli, imported):
    case_id = f"test/{SAMPLE_ID}"
    assert q(imported, "SELECT case_id, status, stage1_attempts, stage2_attempts, case_index FROM cases") == [
        (case_id, "accepted", 0, 0, 1)]
    assert q(imported, "SELECT count(*) FROM scores")[0][0] == 0  # no judge score invented
    assert q(imported, "SELECT count(*) FROM llm_calls")[0][0] == 0
    assert q(imported, "SELECT case_id, split FROM imported_cases") == [(case_id, "test")]
    assert q(imported, "SELECT command FROM runs") == [("build import",)]
    copy = json.loads((imported / f"{case_id}.json").read_text())
    assert copy["provenance"]["kind"] == "imported" and "quality" not in copy
    assert copy["profiles"] == sample_record()["profiles"] and copy["dialogue"] == sample_record()["dialogue"]
    res = cli("build", "import", SAMPLE, "--split", "test", "--out", imported)  # again: nothing changes
    assert res.exit_code == 0 and "0 cases imported" in res.stdout and "1 case imported before, unchanged" in res.stdout
    assert q(imported, "SELECT count(*) FROM cases")[0][0] == 1

    view = json.loads(cli("show", "--out", imported, "--json").stdout)
    assert view["case_id"] == case_id and view["imported"]["source"].endswith(f"{SAMPLE_ID}.json")
    assert [p["type"] for p in view["stage1"]["output"]["misalignment_points"]] == ["not given"] * 3
    assert len(view["stage2"]["output"]["turns"]) == sample_record()["dialogue"]["num_turns"]
    assert "imported from" in cli("show", case_id, "--out", imported).stdout
    status = json.loads(cli("status", "--out", imported, "--json").stdout)
    assert status["imported"] == {"test": 1} and status["totals"]["accepted"] == 1
    assert status["ma_types"]["test"]["untyped"] == 3 and status["pass_rates"] == {}
    assert "Imported cases" in cli("status", "--out", imported).stdout
    res = cli("check", "--out", imported, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["accepted_cases"] == 1


def test_export_publishes_the_imported_record_as_given(cli, imported, tmp_path):
    datasets = pytest.importorskip("datasets")
    res = cli("export", "--out", imported, "--to", tmp_path / "hub", "--splits", "test")
    assert res.exit_code == 0, res.output
    (row,) = datasets.load_dataset(str(tmp_path / "hub"), split="test")
    given = sample_record()
    assert row["case_id"] == f"test/{SAMPLE_ID}" and row["profiles"]["conversation_outline"] == []
    assert [p["type"] for p in row["profiles"]["misalignment_points"]] == [None] * 3
    assert [t["utterance"] for t in row["dialogue"]["turns"]] == [t["utterance"] for t in given["dialogue"]["turns"]]
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "1 case(s) of split test were brought in from IoA-Suite records" in card
    assert "3 imported points without a type left out" in card


def test_audit_and_annotate_score_imported_cases_afresh(cli, imported, endpoint):
    endpoint(responder=rescoring("audit-model", lambda kind, data: None), models=["audit-model"], env="AUDIT_JUDGE")
    res = cli("audit", "--out", imported, "--split", "test")
    assert res.exit_code == 0, res.output
    assert q(imported, "SELECT DISTINCT stage, attempt, judge_role FROM scores ORDER BY 1") == [
        (1, 0, "audit_judge"), (2, 0, "audit_judge")]
    report = json.loads((imported / "reports" / "audit_test.json").read_text())
    subtlety = next(r for r in report["dimensions"] if r["dimension"] == "subtlety")
    assert report["audited_cases"] == 1 and subtlety["n"] == 0 and subtlety["mean_build"] is None
    assert subtlety["audit_items"] == 3 and subtlety["mean_audit_all"] == 3.0  # the audit judge's own mean
    res = cli("annotate", "export", "--out", imported, "--split", "test", "--per-cell", "1", "--calibration", "0",
              "--format", "csv")
    assert res.exit_code == 0, res.output
    items = (imported / "annotation" / "test" / "items.csv").read_text()
    assert "MA3 [not given] topic" in items
    import polars as pl

    rows = pl.read_csv(imported / "annotation" / "test" / "items.csv", infer_schema=False)
    ratings = {"subtlety": "2", "specificity": "2", "believability": "1", "naturalness": "3", "implicitness": "2",
               "coverage": "2", "profile_consistency": "3"}
    stage1 = pl.col("stage") == "1"
    filled = rows.with_columns(*(pl.when(stage1 if dim in ("subtlety", "specificity", "believability") else ~stage1)
                                 .then(pl.lit(v)).otherwise(pl.lit("")).alias(dim) for dim, v in ratings.items()))
    filled.write_csv(imported / "filled.csv")
    res = cli("annotate", "import", imported / "filled.csv", "--out", imported, "--annotator", "ann_a")
    assert res.exit_code == 0, res.output
    # by default the humans are paired with the audit judge, which scored the imported cases
    res = cli("annotate", "report", "--out", imported, "--split", "test")
    assert res.exit_code == 0, res.output
    report = json.loads((imported / "reports" / "annotation_test.json").read_text())
    dims = {r["dimension"]: r for r in report["dimensions"]}
    assert report["judge"]["role"] == "audit_judge" and report["judge"]["default"]
    assert dims["subtlety"]["n"] == 3 and dims["subtlety"]["llm_mean"] == 3.0
    # the build judge never scored an imported case: nothing to pair with it
    res = cli("annotate", "report", "--out", imported, "--split", "test", "--judge", "build")
    assert res.exit_code == 0, res.output
    report = json.loads((imported / "reports" / "annotation_test.json").read_text())
    dims = {r["dimension"]: r for r in report["dimensions"]}
    assert dims["subtlety"]["n"] == 0 and dims["subtlety"]["llm_mean"] is None
    assert dims["subtlety"]["human_items"] == 3 and dims["subtlety"]["human_mean_all"] == 2.0
    assert dims["naturalness"]["human_items"] == 1 and dims["naturalness"]["human_mean_all"] == 3.0


def test_a_released_folder_a_split_folder_and_one_file(cli, tmp_path):
    data = released(tmp_path / "data")
    out = tmp_path / "b"
    res = cli("build", "import", data, "--split", "val", "--out", out)
    assert res.exit_code == 0, res.output
    assert q(out, "SELECT case_id FROM cases ORDER BY 1") == [("val/law/coordination_000",),
                                                            ("val/medicine/design_review_002",)]
    assert cli("build", "import", data / "train", "--split", "train", "--out", out).exit_code == 0
    assert cli("build", "import", data / "test" / f"{SAMPLE_ID}.json", "--split", "test", "--out", out).exit_code == 0
    assert q(out, "SELECT split, count(*) FROM cases GROUP BY 1 ORDER BY 1") == [("test", 1), ("train", 1), ("val", 2)]


def _bad_cases(tmp_path: Path, cli, endpoint, seeds_file) -> dict[str, tuple[list, str]]:
    """name -> (import arguments, what the error line says)."""
    data = released(tmp_path / "data")
    no_train = released(tmp_path / "data2")
    shutil.rmtree(no_train / "train")
    seeds = write_record(tmp_path / "x" / "business" / "planning_000.json")
    seeds.write_text(seeds_file(2).read_text())  # a seed JSONL, not a record
    write_record(tmp_path / "y" / "law" / "planning_001.json", {"profiles": {"members": []}})
    write_record(tmp_path / "z" / "notes" / "meeting.json")
    other = dict(sample_record(), case_id=f"train/{SAMPLE_ID}")
    tagged = write_record(tmp_path / "w" / f"{SAMPLE_ID}.json", other)
    (tmp_path / "empty").mkdir()
    return {
        "seed file": ([seeds, "--split", "test"], "invalid JSON"),
        "no profiles": ([tmp_path / "y", "--split", "test"], "not an IoA-Suite record"),
        "odd path": ([tmp_path / "z", "--split", "test"], "not a record path"),
        "empty folder": ([tmp_path / "empty", "--split", "test"], "no record file"),
        "missing": ([tmp_path / "none", "--split", "test"], "no such file or folder"),
        "wrong split folder": ([data / "test", "--split", "train"], "give --split test"),
        "wrong split file": ([data / "validation" / "law" / "coordination_000.json", "--split", "test"],
                             "give --split val"),
        "split not in data": ([no_train, "--split", "train"], "no train folder here"),
        "case id of another split": ([tagged, "--split", "test"], "give --split train"),
        "bad split option": ([SAMPLE, "--split", "dev"], "--split must be one of"),
    }


@pytest.mark.parametrize("name", ["seed file", "no profiles", "odd path", "empty folder", "missing",
                                  "wrong split folder", "wrong split file", "split not in data",
                                  "case id of another split", "bad split option"])
def test_bad_input_is_one_error_line_and_writes_nothing(cli, endpoint, seeds_file, tmp_path, name):
    args, needle = _bad_cases(tmp_path, cli, endpoint, seeds_file)[name]
    out = tmp_path / "b"
    res = cli("build", "import", *args, "--out", out)
    assert res.exit_code == 2 and "Traceback" not in res.stderr
    one_line_error(res, needle)
    assert not out.exists()


def test_a_case_built_here_is_never_replaced(cli, endpoint, seeds_file, tmp_path):
    endpoint()
    out = tmp_path / "b"
    assert cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out).exit_code == 0
    ((case_id,),) = q(out, "SELECT case_id FROM cases")
    write_record(tmp_path / "recs" / (case_id.split("/", 1)[1] + ".json"))
    fresh = write_record(tmp_path / "recs" / "law" / "planning_009.json")
    before = tree(out)
    res = cli("build", "import", tmp_path / "recs", "--split", "test", "--out", out)
    one_line_error(res, case_id, "is a case built here")
    assert res.exit_code == 2 and tree(out) == before and fresh.exists()
    assert q(out, "SELECT count(*) FROM cases")[0][0] == 1
    changed = dict(sample_record(), dialogue={**sample_record()["dialogue"], "num_turns": 99})
    assert cli("build", "import", SAMPLE, "--split", "test", "--out", tmp_path / "c").exit_code == 0
    write_record(tmp_path / "other" / f"{SAMPLE_ID}.json", changed)
    res = cli("build", "import", tmp_path / "other", "--split", "test", "--out", tmp_path / "c")
    one_line_error(res, "was imported from other content")


def test_help_names_the_subcommand(cli):
    res = cli("build", "import", "--help")
    assert res.exit_code == 0 and res.stdout.splitlines()[0].endswith(" build import [OPTIONS] RECORDS")
    assert "build import RECORDS" in " ".join(cli("build", "--help").stdout.split())
    res = cli("build", "import", SAMPLE)
    one_line_error(res, "--split")


def test_an_export_folder_is_named_as_such_and_its_hidden_files_are_never_records(cli, imported, tmp_path):
    """A researcher who imports (or evaluates) what `export` wrote is told what the folder is and
    where the records are, not that its hidden file list or croissant.json is "not a record path";
    a hidden file beside real records is skipped."""
    hub = tmp_path / "hub"
    assert cli("export", "--out", imported, "--to", hub, "--splits", "test").exit_code == 0
    for argv in (("build", "import", hub, "--split", "test", "--out", tmp_path / "b9"),
                 ("evaluate", "--data", hub, "--out", tmp_path / "r")):
        res = cli(*argv)
        assert res.exit_code == 2 and "Traceback" not in res.stderr
        one_line_error(res, "'ioa-synth export' dataset folder", "data/test.jsonl", "<split> folder")
    assert not (tmp_path / "b9").exists() and not (tmp_path / "r").exists()
    records = tmp_path / "records"
    shutil.copytree(SAMPLE, records)
    (records / ".editor-backup.json").write_text("{}", encoding="utf-8")
    res = cli("build", "import", records, "--split", "test", "--out", tmp_path / "b2")
    assert res.exit_code == 0, res.stderr


def test_a_record_missing_a_field_is_named_without_python_class_names(cli, tmp_path):
    bad = tmp_path / "rec" / "ml_research" / "planning_000.json"
    bad.parent.mkdir(parents=True)
    source = json.loads(next(SAMPLE.rglob("*.json")).read_text())
    del source["profiles"]["misalignment_points"]
    bad.write_text(json.dumps(source))
    res = cli("build", "import", bad.parent.parent, "--split", "test", "--out", tmp_path / "out")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert "KeyError" not in res.stderr and "Error:" not in res.stderr.removeprefix("error: "), res.stderr
