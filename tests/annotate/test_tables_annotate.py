"""``ioa-synth table ioa-9`` (Table 9) on a released-format case brought in by ``build
import``, annotated by two annotators and re-scored by a scripted audit judge (the fixture
and numbers of test_annotate_judge.py): subtlety, human means 2.5 on the first point and 2
elsewhere against the audit's 2 everywhere; naturalness, one dialogue, (3 + 2) / 2 = 2.5
against 2 (|0.5| is within ±0.5)."""

from __future__ import annotations

import io

import polars as pl
from .test_annotate_judge import AUDIT_MODEL, _annotate, harsher, imported  # noqa: F401  (imported: a fixture)
from ioa_helpers import rescoring


def test_human_vs_audit_judge(cli, endpoint, imported, tmp_path):  # noqa: F811
    out = imported
    points = pl.read_csv(out / "annotation" / "test" / "items.csv", infer_schema=False).filter(
        pl.col("stage") == "1").height
    res = cli("table", "ioa-9", out)  # nothing imported yet
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "no annotations imported" in res.stderr
    _annotate(cli, out, tmp_path, "ann_a", ["2"] * points, "3")
    _annotate(cli, out, tmp_path, "ann_b", ["3"] + ["2"] * (points - 1), "2")
    endpoint(responder=rescoring(AUDIT_MODEL, harsher), models=[AUDIT_MODEL], env="AUDIT_JUDGE")
    assert cli("audit", "--out", out, "--split", "test").exit_code == 0

    res = cli("table", "ioa-9", out, "--format", "csv")
    assert res.exit_code == 0, res.output
    rows = {r["dimension"]: r for r in pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()}
    sub = rows["subtlety"]
    assert (sub["n"], sub["LLM mean"], sub["within ±0.5 (%)"], sub["within ±1 (%)"]) == (str(points), "2.00", "100.0", "100.0")
    assert sub["human mean"] == f"{(2.5 + 2 * (points - 1)) / points:.2f}"
    assert rows["naturalness"] == {"dimension": "naturalness", "n": "1", "human mean": "2.50", "LLM mean": "2.00",
                                   "within ±0.5 (%)": "100.0", "within ±1 (%)": "100.0"}
    assert AUDIT_MODEL in cli("table", "ioa-9", out, "--format", "md").stdout
