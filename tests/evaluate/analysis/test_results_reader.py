"""The results-folder reader: the agreed format is read, malformed folders give one line
naming the file (through the CLI too)."""

from __future__ import annotations

import json

import pytest

from ioa_helpers import one_line_error
from ioa_synth.evaluate.analysis.results import ResultsError, load_results

from .factory import Case, case_studies, write_results


def test_reads_records_metrics_and_run_args(run_a):
    res = load_results(run_a)
    assert sorted(res.scored) == ["business/planning_003", "business/troubleshooting_010",
                                  "medicine/design_review_001"]
    rec = res.scored["business/troubleshooting_010"]
    assert (rec.metrics.a, rec.metrics.c, rec.metrics.k) == (4, 1, 5)
    assert rec.metrics.f1 == pytest.approx(2 * 0.8 * 1.0 / 1.8)
    assert [q.number for q in rec.questions] == [1, 2, 3, 4, 5]
    assert res.run.settings.mode == "mcq" and res.run.settings.permute_seed is None  # typed settings
    assert res.summary.complete is True and res.failed == []


def test_failed_cases_are_read_but_not_scored(tmp_path):
    cases = case_studies() + [Case("law/planning_002", [("MA1", "scopal")], status="failed")]
    res = load_results(write_results(tmp_path / "r", cases))
    assert res.failed == ["law/planning_002"]
    assert "law/planning_002" not in res.scored and len(res.records) == 4


@pytest.mark.parametrize("breakage, expected", [
    (lambda r: r["metrics"].update(f1="high"), "metrics.f1"),
    (lambda r: r["questions"][0].update(category="D"), "questions.0.category"),
    (lambda r: r.pop("metrics"), "scored record needs 'metrics'"),
    (lambda r: r["c_breakdown"].update(too_vague=2), "c_breakdown.too_vague"),
])
def test_malformed_record_is_one_line_naming_the_file(run_a, cli, breakage, expected):
    path = run_a / "records" / "business" / "planning_003.json"
    rec = json.loads(path.read_text())
    breakage(rec)
    path.write_text(json.dumps(rec))
    with pytest.raises(ResultsError, match=expected) as err:
        load_results(run_a)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    one_line_error(cli("report", run_a), str(path), expected)


def test_broken_json_missing_run_json_and_duplicate_ids(run_a, cli, tmp_path):
    path = run_a / "records" / "medicine" / "design_review_001.json"
    good = path.read_text()
    path.write_text(good[:-20])
    one_line_error(cli("report", run_a), str(path), "invalid JSON at line ")
    path.write_text(good)
    copy = run_a / "records" / "medicine" / "copy.json"
    copy.write_text(good)
    with pytest.raises(ResultsError, match="also in"):
        load_results(run_a)
    copy.unlink()
    (run_a / "run.json").unlink()
    one_line_error(cli("compare", run_a, run_a), str(run_a / "run.json"), "missing")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "run.json").write_text((tmp_path / "run_a" / "summary.json").read_text())
    one_line_error(cli("report", tmp_path / "empty"), "run.json", "command")
