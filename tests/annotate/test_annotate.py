"""``ioa-synth annotate export|import|report``: a stratified score-blind sample, forms
generated from the rubric, a round trip through a Label Studio export and a filled CSV,
all-or-nothing rejection of bad input, and statistics checked against hand-computed
values."""

from __future__ import annotations

import json
import random
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl
import pytest
from conftest import real_seed_tuples
from ioa_helpers import KEY, one_line_error, q
from typer.testing import CliRunner

from ioa_synth.annotate.sample import draw
from ioa_synth.build.builddir import AcceptedCase
from ioa_synth.protocol.cells import cells
from ioa_synth.cli import app
from ioa_synth.protocol.rubric import load_rubric
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output
from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer, valid_stage1, valid_stage2

RUBRIC = load_rubric()
STAGE1 = [d.name for d in RUBRIC.stage(1).dimensions]
STAGE2 = [d.name for d in RUBRIC.stage(2).dimensions]


@pytest.fixture(scope="module")
def master(tmp_path_factory) -> Path:
    """One build of 10 accepted law cases (2 in each of the 5 law cells), made once."""
    root = tmp_path_factory.mktemp("annotate")
    seeds = root / "seeds.jsonl"
    seeds.write_text("".join(json.dumps(s) + "\n" for s in real_seed_tuples(10, domains=("law",))))
    with ScriptedServer(ProtocolResponder()) as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_BASE_URL", server.base_url)
        mp.setenv("OPENAI_API_KEY", KEY)
        res = CliRunner().invoke(app, ["build", "--seeds", str(seeds), "--split", "test", "--out", str(root / "out")])
    assert res.exit_code == 0, res.output
    return root / "out"


@pytest.fixture
def out(master, tmp_path) -> Path:
    """A private copy of the build (record paths in the catalog still point to the master's files)."""
    return Path(shutil.copytree(master, tmp_path / "out"))


def export(cli, out, fmt="label-studio", *extra):
    res = cli("annotate", "export", "--out", out, "--split", "test", "--per-cell", "1", "--calibration", "2",
              "--rng-seed", "7", "--format", fmt, *extra)
    assert res.exit_code == 0, res.output
    return res


def folder(out: Path) -> Path:
    return out / "annotation" / "test"


def n_annotations(out: Path) -> int:
    exists = q(out, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'annotations'")[0][0]
    return q(out, "SELECT count(*) FROM annotations")[0][0] if exists else 0


# -- export ------------------------------------------------------------------------------------

def test_label_studio_export_is_stratified_blind_and_generated_from_the_rubric(cli, out):
    res = export(cli, out)
    paths = [folder(out) / n for n in ("tasks.json", "calibration_tasks.json", "labeling_config.xml", "manifest.json")]
    for p in paths:
        assert str(p) in res.stdout and p.is_file()
    tasks = json.loads(paths[0].read_text())
    calib = json.loads(paths[1].read_text())
    assert len(tasks) == 5 and len(calib) == 2
    assert sorted((t["data"]["domain"], t["data"]["task_type"]) for t in tasks) == sorted(c for c in cells() if c[0] == "law")
    assert not {t["data"]["case_id"] for t in tasks} & {t["data"]["case_id"] for t in calib}
    for text in (paths[0].read_text(), paths[1].read_text()):  # blind to the judge
        for leak in ("quality", "ma_scores", "dialogue_scores", "No changes needed", "overall_feedback"):
            assert leak not in text

    root = ET.fromstring(paths[2].read_text())
    ratings = {r.get("name"): r for r in root.iter("Rating")}
    want = {f"{m}_{d}" for m in ("MA1", "MA2") for d in STAGE1} | {f"dialogue_{d}" for d in STAGE2}
    assert set(ratings) == want
    objects = {e.get("name") for e in root.iter() if e.tag in ("Text", "Paragraphs")}
    for _, dim in RUBRIC.all_dimensions():
        for name, r in ratings.items():
            if name.split("_", 1)[1] == dim.name:
                assert r.get("maxRating") == str(dim.max) and r.get("toName") in objects
    headers = " ".join(h.get("value") for h in root.iter("Header"))
    for _, dim in RUBRIC.all_dimensions():
        assert dim.question in headers and all(level in headers for level in dim.levels.values())
    variables = {e.get("value")[1:] for e in root.iter() if (e.get("value") or "").startswith("$")}
    for t in tasks + calib:
        assert variables <= set(t["data"])
        assert all(set(turn) == {"author", "text"} for turn in t["data"]["turns"])
        assert "frozen in the team bucket" in t["data"]["point_MA1"] and "seed 17" in t["data"]["point_MA1"]

    export(cli, out)  # same seed, same sample
    assert json.loads(paths[0].read_text()) == tasks


def test_csv_export_has_one_row_per_item_with_empty_scores(cli, out):
    export(cli, out, "csv")
    items = pl.read_csv(folder(out) / "items.csv", infer_schema=False)
    assert items.height == 5 * 3  # two points and one dialogue per sampled case
    assert items["item_id"].n_unique() == 15
    assert items.filter(pl.col("stage") == "2")["item"].to_list() == ["dialogue"] * 5
    for dim in STAGE1 + STAGE2:
        assert items[dim].null_count() + (items[dim] == "").sum() == 15
    assert pl.read_csv(folder(out) / "calibration_items.csv").height == 2 * 3
    guide = (folder(out) / "guidelines.md").read_text()
    assert all(level in guide for _, d in RUBRIC.all_dimensions() for level in d.levels.values())


def test_a_re_export_replaces_its_own_forms_but_never_a_filled_in_one(cli, out):
    export(cli, out, "csv")
    export(cli, out, "csv", "--rng-seed", "8")  # its own forms, unchanged since: replaced
    items = folder(out) / "items.csv"
    filled = items.read_text() + "extra,row,an,annotator,added\n"
    items.write_text(filled)
    res = cli("annotate", "export", "--out", out, "--split", "test", "--per-cell", "1", "--calibration", "2",
              "--rng-seed", "9", "--format", "csv")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert res.stderr.startswith("error: ") and "items.csv was changed since it was exported" in res.stderr
    assert items.read_text() == filled


def synthetic_case(case_id: str, domain: str, task_type: str) -> AcceptedCase:
    return AcceptedCase(case_id, "test", domain, task_type, Path(f"{case_id}.json"), {},
                        Stage1Output.model_validate(valid_stage1()), Stage2Output.model_validate(valid_stage2()), 1, 1)


def test_full_test_split_gives_60_dialogues_and_5_held_out():
    accepted = [synthetic_case(f"test/{d}/{k}_{i:03d}", d, k) for d, k in cells() for i in range(10)]
    random.Random(1).shuffle(accepted)
    m = draw(accepted, "test", per_cell=2, rng_seed=0, calibration=5)
    sample, calib = m.of_set("sample"), m.of_set("calibration")
    assert len(sample) == 60 and sum(len(c.ma_ids) for c in sample) == 120
    assert {(c.domain, c.task_type) for c in sample} == set(cells())
    assert all(sum((c.domain, c.task_type) == cell for c in sample) == 2 for cell in cells())
    assert len(calib) == 5 and not {c.case_id for c in calib} & {c.case_id for c in sample}
    assert m.short_cells == {}
    again = draw(list(reversed(accepted)), "test", per_cell=2, rng_seed=0, calibration=5)
    assert [c.case_id for c in again.cases] == [c.case_id for c in m.cases]
    other = draw(accepted, "test", per_cell=2, rng_seed=1, calibration=5)
    assert [c.case_id for c in other.cases] != [c.case_id for c in m.cases]


def test_export_bad_input(cli, out, tmp_path):
    one_line_error(cli("annotate", "export", "--out", out, "--split", "test", "--format", "xml"), "--format")
    one_line_error(cli("annotate", "export", "--out", out, "--split", "dev", "--format", "csv"), "--split")
    one_line_error(cli("annotate", "export", "--out", out, "--split", "val", "--format", "csv"), "no accepted case")
    one_line_error(cli("annotate", "export", "--out", tmp_path / "x", "--split", "test", "--format", "csv"),
                   "not a build directory")
    assert not (out / "annotation").exists()


# -- import: a Label Studio export and a filled CSV, then the report ----------------------------

#: Dialogue naturalness given by the two annotators to the 5 sampled dialogues (task order).
NAT_A = [1, 2, 3, 3, 2]
NAT_B = [1, 2, 3, 2, 2]


def ls_result(name: str, to_name: str, rating) -> dict:
    return {"id": f"r-{name}", "from_name": name, "to_name": to_name, "type": "rating",
            "value": {"rating": rating}, "origin": "manual"}


def ls_export(tasks: list[dict], naturalness: list[int], annotator_id: int = 3) -> list[dict]:
    """What Label Studio writes for a project whose tasks were all annotated once."""
    out = []
    for n, (task, nat) in enumerate(zip(tasks, naturalness), start=1):
        result = [ls_result(f"{m}_{d}", f"text_{m}", 3 if d == "subtlety" else 2) for m in ("MA1", "MA2") for d in STAGE1]
        result += [ls_result(f"dialogue_{d}", "dialogue", nat if d == "naturalness" else (2 if d == "coverage" else 3))
                   for d in STAGE2]
        out.append({"id": 100 + n, "data": task["data"], "meta": {}, "created_at": "2026-11-29T10:00:00Z",
                    "annotations": [{"id": n, "completed_by": annotator_id, "result": result, "was_cancelled": False,
                                     "ground_truth": False, "lead_time": 42.0, "task": 100 + n}],
                    "predictions": [], "project": 1})
    return out


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data))
    return path


def fill_csv(out: Path, naturalness: list[int], case_order: list[str], tmp_path: Path) -> Path:
    items = pl.read_csv(folder(out) / "items.csv", infer_schema=False)
    nat = dict(zip(case_order, (str(v) for v in naturalness)))
    point, dialogue = pl.col("stage") == "1", pl.col("stage") == "2"
    filled = items.with_columns(
        pl.when(point).then(pl.lit("3")).otherwise(pl.lit("")).alias("subtlety"),
        pl.when(point).then(pl.lit("2")).otherwise(pl.lit("")).alias("specificity"),
        pl.when(point).then(pl.lit("2")).otherwise(pl.lit("")).alias("believability"),
        pl.when(dialogue).then(pl.col("case_id").replace_strict(nat, default="")).otherwise(pl.lit("")).alias("naturalness"),
        pl.when(dialogue).then(pl.lit("3")).otherwise(pl.lit("")).alias("implicitness"),
        pl.when(dialogue).then(pl.lit("2")).otherwise(pl.lit("")).alias("coverage"),
        pl.when(dialogue).then(pl.lit("3")).otherwise(pl.lit("")).alias("profile_consistency"))
    # annotator B leaves the subtlety of the last point empty
    last = filled.filter(point)["item_id"][-1]
    filled = filled.with_columns(pl.when(pl.col("item_id") == last).then(pl.lit("")).otherwise(pl.col("subtlety"))
                                 .alias("subtlety"))
    path = tmp_path / "filled.csv"
    filled.write_csv(path)
    return path


def test_round_trip_and_report_match_hand_computed_statistics(cli, out, tmp_path):
    export(cli, out)
    tasks = json.loads((folder(out) / "tasks.json").read_text())
    calib = json.loads((folder(out) / "calibration_tasks.json").read_text())
    order = [t["data"]["case_id"] for t in tasks]
    res = cli("annotate", "import", write_json(tmp_path / "a.json", ls_export(tasks, NAT_A)), "--out", out,
              "--annotator", "ann_a")
    assert res.exit_code == 0, res.output
    assert "imported 50 scores (50 sample)" in res.stdout  # 5 x (2 x 3 + 4)
    assert cli("annotate", "import", write_json(tmp_path / "cal.json", ls_export(calib, [3, 3])), "--out", out,
               "--annotator", "ann_a").exit_code == 0
    export(cli, out, "csv")  # same seed: the same sample, now as a CSV for the second annotator
    res = cli("annotate", "import", fill_csv(out, NAT_B, order, tmp_path), "--out", out, "--annotator", "ann_b")
    assert res.exit_code == 0, res.output
    assert "imported 49 scores" in res.stdout
    assert q(out, "SELECT item_set, count(*) FROM annotations GROUP BY ALL ORDER BY 1") == [
        ("calibration", 20), ("sample", 99)]

    res = cli("annotate", "report", "--out", out, "--split", "test")
    assert res.exit_code == 0, res.output
    report = json.loads((out / "reports" / "annotation_test.json").read_text())
    assert report["annotators"] == ["ann_a", "ann_b"]
    assert report["items"] == {"points": 10, "dialogues": 5}
    d = {r["dimension"]: r for r in report["dimensions"]}
    nat = d["naturalness"]
    # human per-dialogue means 1, 2, 3, 2.5, 2 against the judge's 3 everywhere
    assert nat["n"] == 5 and nat["llm_mean"] == 3.0
    assert nat["human_mean"] == pytest.approx((1 + 2 + 3 + 2.5 + 2) / 5)
    assert nat["within_0_5"] == pytest.approx(2 / 5) and nat["within_1"] == pytest.approx(4 / 5)
    # quadratic kappa by hand, weights (i-j)^2/4: observed disagreement 1 pair (3,2) -> 0.25/5;
    # expected from margins A{1:1,2:2,3:2}, B{1:1,2:3,3:1}: sum r_i c_j w_ij / 25 = 6.25/25
    assert nat["kappa"] == pytest.approx(1 - (0.25 / 5) / (6.25 / 25)) and nat["kappa_pairs"] == 5
    # ordinal alpha by hand: coincidences o22=4, o23=o32=1, o11=2, o33=2; n1=2, n2=5, n3=3, n=10;
    # delta^2(2,3)=((5+3)/2)^2=16, delta^2(1,2)=3.5^2, delta^2(1,3)=(10-2.5)^2;
    # alpha = 1 - (n-1) * sum o*d / sum n_c n_k d = 1 - 9*32 / (2*(2*5*12.25 + 2*3*56.25 + 5*3*16))
    assert nat["alpha"] == pytest.approx(1 - 9 * 32 / 1400)
    sub = d["subtlety"]  # both give 3 everywhere (B skipped one point): agreement undefined, means exact
    assert sub["n"] == 10 and sub["human_mean"] == 3.0 and sub["within_0_5"] == 1.0
    assert sub["alpha"] is None and sub["kappa"] is None and sub["kappa_pairs"] == 9
    assert "naturalness" in res.stdout and "0.800" in res.stdout and "annotation_test.json" in res.stdout


# -- bad input: nothing half-imported -----------------------------------------------------------

def test_bad_imports_are_rejected_whole(cli, out, tmp_path):
    early = [{"data": {"case_id": "test/law/planning_000"},
              "annotations": [{"completed_by": 1, "result": [ls_result("dialogue_coverage", "dialogue", 2)]}]}]
    one_line_error(cli("annotate", "import", write_json(tmp_path / "x.json", early), "--out", out, "--annotator", "a"),
                   "manifest.json not found", "annotate export")
    export(cli, out)
    one_line_error(cli("annotate", "import", write_json(tmp_path / "x.json", []), "--out", out, "--annotator", "a"),
                   "no scores found")
    tasks = json.loads((folder(out) / "tasks.json").read_text())

    def rejected(data, *needles, name="bad.json", annotator="a"):
        path = tmp_path / name
        path.write_text(data if isinstance(data, str) else json.dumps(data))
        before = n_annotations(out)
        one_line_error(cli("annotate", "import", path, "--out", out, "--annotator", annotator), *needles)
        assert n_annotations(out) == before

    good = ls_export(tasks, NAT_A)
    out_of_range = json.loads(json.dumps(good))
    out_of_range[-1]["annotations"][0]["result"][-1]["value"]["rating"] = 4  # profile_consistency 1-3
    rejected(out_of_range, "profile_consistency", "not an integer in 1-3")
    unknown_point = json.loads(json.dumps(good))
    unknown_point[2]["annotations"][0]["result"].append(ls_result("MA3_subtlety", "text_MA3", 3))
    rejected(unknown_point, "unknown item", "#MA3")
    unknown_case = json.loads(json.dumps(good))
    unknown_case[0]["data"]["case_id"] = "test/law/planning_999"
    rejected(unknown_case, "unknown item", "test/law/planning_999")
    unknown_control = json.loads(json.dumps(good))
    unknown_control[1]["annotations"][0]["result"].append(ls_result("comment", "dialogue", 2))
    rejected(unknown_control, "unknown rating control")
    duplicate = json.loads(json.dumps(good))
    duplicate[3]["annotations"][0]["result"].append(ls_result("dialogue_coverage", "dialogue", 1))
    rejected(duplicate, "duplicate", "coverage")
    two = json.loads(json.dumps(good))
    two[0]["annotations"].append({**two[0]["annotations"][0], "completed_by": {"id": 9, "email": "b@x.org"}})
    rejected(two, "2 annotations", "b@x.org")
    rejected({"tasks": good}, "expected a list of tasks")
    rejected("[{", "invalid JSON")
    rejected("whatever", "expected a Label Studio JSON export", name="scores.txt")
    empty_name = tmp_path / "ok.json"
    one_line_error(cli("annotate", "import", write_json(empty_name, good), "--out", out, "--annotator", " "),
                   "--annotator")

    assert cli("annotate", "import", write_json(tmp_path / "ok.json", good), "--out", out,
               "--annotator", "a").exit_code == 0
    n = n_annotations(out)
    rejected(good, "already imported", "'a'")
    assert n_annotations(out) == n == 50

    export(cli, out, "csv")
    items = pl.read_csv(folder(out) / "items.csv", infer_schema=False)
    csv_bad = tmp_path / "bad.csv"
    items.with_columns(pl.when(pl.col("stage") == "1").then(pl.lit("abc")).otherwise(pl.lit("")).alias("subtlety")
                       ).write_csv(csv_bad)
    rejected(csv_bad.read_text(), "subtlety", "'abc'", "not an integer", name="b1.csv", annotator="b")
    items.with_columns(pl.when(pl.col("stage") == "1").then(pl.lit("3")).otherwise(pl.lit("")).alias("naturalness")
                       ).write_csv(csv_bad)
    rejected(csv_bad.read_text(), "naturalness does not apply", "#MA1", name="b2.csv", annotator="b")
    rejected("a,b\n1,2\n", "no item_id column", name="b3.csv", annotator="b")


def test_report_bad_input(cli, out, tmp_path):
    one_line_error(cli("annotate", "report", "--out", out), "no annotations imported")
    one_line_error(cli("annotate", "report", "--out", out, "--split", "val"), "no annotations imported")
    one_line_error(cli("annotate", "report", "--out", tmp_path / "nothing"), "not a build directory")
    assert not (out / "reports").exists()


# -- the statistics themselves ------------------------------------------------------------------

def test_stats_against_hand_and_published_values():
    from ioa_synth.stats.agreement import ordinal_alpha, quadratic_kappa

    a, b = NAT_A, NAT_B
    assert quadratic_kappa(a, b, [1, 2, 3]) == pytest.approx(1 - (0.25 / 5) / (6.25 / 25))
    assert ordinal_alpha([a, b], [1, 2, 3]) == pytest.approx(1 - 9 * 32 / 1400)
    # identical raters agree perfectly; reversed raters disagree systematically
    assert quadratic_kappa(a, a, [1, 2, 3]) == pytest.approx(1.0)
    # by hand: sum w*O = 2 (two pairs at weight 1); E = 1*1/2 in each corner, sum w*E = 1 -> 1 - 2/1
    assert quadratic_kappa([1, 3], [3, 1], [1, 2, 3]) == pytest.approx(-1.0)
    # Krippendorff's (2011) worked example, 4 observers x 12 units with gaps: ordinal alpha 0.815
    n = None
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
            [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n]]
    assert ordinal_alpha(data, [1, 2, 3, 4, 5]) == pytest.approx(0.815, abs=5e-4)
    # undefined cases are None, not NaN
    assert ordinal_alpha([[1, 2, 3]], [1, 2, 3]) is None
    assert ordinal_alpha([[1, n], [n, 2]], [1, 2]) is None
    assert ordinal_alpha([[3, 3], [3, 3]], [1, 2, 3]) is None
    assert quadratic_kappa([], [], [1, 2]) is None
