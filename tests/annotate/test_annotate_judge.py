"""``annotate report --judge``: the humans are paired with the audit judge by default when the
split has audit scores, so the paper's human-vs-LLM table (App. B.3, Table 9) comes out on
cases brought in by ``build import`` (which have no build judge score). Numbers by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from ioa_helpers import one_line_error, rescoring

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "evaluate" / "test"
AUDIT_MODEL = "audit-model"


def harsher(kind: str, data: dict) -> None:
    """The audit judge: subtlety 2 on every point, naturalness 2 on the dialogue."""
    if kind == "stage1_judge":
        for scores in data["ma_scores"].values():
            scores["subtlety"] = 2
    else:
        data["dialogue_scores"]["naturalness"] = 2


def _annotate(cli, out: Path, tmp_path: Path, name: str, subtlety: list[str], naturalness: str) -> None:
    """Fill the exported CSV: subtlety per point in item order, naturalness of the dialogue,
    every other dimension 2; import it for annotator ``name``."""
    items = pl.read_csv(out / "annotation" / "test" / "items.csv", infer_schema=False)
    point, dialogue = pl.col("stage") == "1", pl.col("stage") == "2"
    ids = items.filter(point)["item_id"].to_list()
    filled = items.with_columns(
        *[pl.when(point).then(pl.lit("2")).otherwise(pl.lit("")).alias(d) for d in ("specificity", "believability")],
        *[pl.when(dialogue).then(pl.lit("2")).otherwise(pl.lit("")).alias(d)
          for d in ("implicitness", "coverage", "profile_consistency")],
        pl.when(dialogue).then(pl.lit(naturalness)).otherwise(pl.lit("")).alias("naturalness"),
        pl.col("item_id").replace_strict(dict(zip(ids, subtlety)), default="").alias("subtlety"))
    path = tmp_path / f"{name}.csv"
    filled.write_csv(path)
    res = cli("annotate", "import", path, "--out", out, "--annotator", name)
    assert res.exit_code == 0, res.output


@pytest.fixture
def imported(cli, endpoint, tmp_path):
    """One released-format case brought in by ``build import``, exported for annotation."""
    src = tmp_path / "ioa-suite" / "data"
    shutil.copytree(SAMPLE, src / "test")
    out = tmp_path / "out"
    res = cli("build", "import", src, "--split", "test", "--out", out)
    assert res.exit_code == 0, res.output
    res = cli("annotate", "export", "--out", out, "--split", "test", "--per-cell", "1", "--calibration", "0",
              "--format", "csv")
    assert res.exit_code == 0, res.output
    return out


def test_imported_records_are_paired_with_the_audit_judge(cli, endpoint, imported, tmp_path):
    out = imported
    points = pl.read_csv(out / "annotation" / "test" / "items.csv", infer_schema=False).filter(
        pl.col("stage") == "1").height
    assert points >= 2
    # annotator a: subtlety 2 on every point, b: 3 on the first point and 2 elsewhere; naturalness 3 and 2
    _annotate(cli, out, tmp_path, "ann_a", ["2"] * points, "3")
    _annotate(cli, out, tmp_path, "ann_b", ["3"] + ["2"] * (points - 1), "2")

    # before the audit: only the build judge, which never scored an imported case (nothing paired)
    res = cli("annotate", "report", "--out", out)
    assert res.exit_code == 0, res.output
    report = json.loads((out / "reports" / "annotation_test.json").read_text())
    assert report["judge"] == {"name": "build", "role": "judge", "models": [], "default": True}
    assert "the build judge" in res.stdout and "no audit score" in res.stdout
    assert all(d["n"] == 0 for d in report["dimensions"])
    one_line_error(cli("annotate", "report", "--out", out, "--judge", "audit"), "no audit judge scores", "audit")
    one_line_error(cli("annotate", "report", "--out", out, "--judge", "gpt"), "--judge must be one of audit, build")

    endpoint(responder=rescoring(AUDIT_MODEL, harsher), models=[AUDIT_MODEL], env="AUDIT_JUDGE")
    res = cli("audit", "--out", out, "--split", "test")
    assert res.exit_code == 0, res.output
    res = cli("annotate", "report", "--out", out)
    assert res.exit_code == 0, res.output
    report = json.loads((out / "reports" / "annotation_test.json").read_text())
    assert report["judge"] == {"name": "audit", "role": "audit_judge", "models": [AUDIT_MODEL], "default": True}
    assert f"the audit judge ({AUDIT_MODEL}; default: the split has audit scores)" in res.stdout
    d = {r["dimension"]: r for r in report["dimensions"]}
    sub = d["subtlety"]
    # human means per point: 2.5 on the first (|2.5 - 2| = 0.5: within ±0.5), 2 elsewhere; audit 2 everywhere
    assert sub["n"] == points and sub["llm_mean"] == 2.0
    assert sub["human_mean"] == pytest.approx((2.5 + 2 * (points - 1)) / points)
    assert sub["within_0_5"] == 1.0 and sub["within_1"] == 1.0
    nat = d["naturalness"]  # one dialogue: humans (3 + 2) / 2 = 2.5 against the audit's 2
    assert (nat["n"], nat["human_mean"], nat["llm_mean"], nat["within_0_5"]) == (1, 2.5, 2.0, 1.0)

    res = cli("annotate", "report", "--out", out, "--judge", "build")
    report = json.loads((out / "reports" / "annotation_test.json").read_text())
    assert res.exit_code == 0 and report["judge"]["name"] == "build" and report["judge"]["default"] is False
    assert "--judge" in res.stdout and all(d["n"] == 0 for d in report["dimensions"])
