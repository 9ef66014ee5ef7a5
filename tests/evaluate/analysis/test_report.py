"""``ioa-synth report``: numbers against hand computation on the App. E.1 case studies
(paper App. E.1: A,A,A,A,C → P .80 R 1.00 F1 .89; A,A,B,C,C over 4 MAs → .50/.50/.50;
twelve questions none A → 0/0/0)."""

from __future__ import annotations

import json

import pytest

from ioa_helpers import one_line_error

from .factory import Case, markdown_rows, write_results

F1_CASE1 = 2 * 0.8 * 1.0 / (0.8 + 1.0)  # 0.888...
F1_CASE2 = 2 * 0.5 * 0.5 / (0.5 + 0.5)  # 0.5


def test_report_by_domain_matches_hand_computation(run_a, cli):
    res = cli("report", run_a, "--by", "domain")
    assert res.exit_code == 0, res.output
    report = json.loads((run_a / "reports" / "report_domain.json").read_text())
    groups = {g["group"]: g for g in report["groups"]}
    assert list(groups) == ["business", "medicine"]
    assert groups["business"]["cases"] == 2
    assert groups["business"]["precision"] == pytest.approx((0.8 + 0.5) / 2)
    assert groups["business"]["recall"] == pytest.approx((1.0 + 0.5) / 2)
    assert groups["business"]["f1"] == pytest.approx((F1_CASE1 + F1_CASE2) / 2)
    assert groups["business"]["mean_k"] == 5 and groups["business"]["mean_b"] == 0.5
    assert groups["medicine"]["f1"] == 0 and groups["medicine"]["mean_k"] == 12 and groups["medicine"]["mean_b"] == 3
    assert report["overall"]["f1"] == pytest.approx((F1_CASE1 + F1_CASE2 + 0) / 3)
    assert report["overall"]["precision"] == pytest.approx((0.8 + 0.5 + 0) / 3)
    # terminal table and Markdown carry the same rounded numbers
    # (P, R and F1 as percentages, as the paper's tables and evaluate's summary show them)
    assert "business" in res.stdout and f"{(F1_CASE1 + F1_CASE2) / 2 * 100:.1f}%" in res.stdout  # 69.4%
    md = (run_a / "reports" / "report_domain.md").read_text()
    rows = markdown_rows(md)
    assert ["domain", "dialogues", "P", "R", "F1", "K", "|B|"] in rows
    assert ["business", "2", "65.0%", "75.0%", "69.4%", "5.00", "0.50"] in rows  # (0.8+0.5)/2, (1+0.5)/2, ...
    assert ["all", "3", "43.3%", "50.0%", "46.3%", "7.33", "1.33"] in rows  # 1.3/3, 1.5/3, 22/3 questions, 4/3 B
    png = (run_a / "reports" / "report_domain.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000


def test_report_by_task_type_and_category_c_shares(run_a, cli):
    res = cli("report", run_a, "--by", "task_type", "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report == json.loads((run_a / "reports" / "report_task_type.json").read_text())
    f1 = {g["group"]: g["f1"] for g in report["groups"]}
    assert f1 == pytest.approx({"design_review": 0.0, "planning": F1_CASE2, "troubleshooting": F1_CASE1})
    # C questions: case 1 one not diverging; case 2 not meaningful + redundant; case 3 five not
    # diverging, two not meaningful, one not implicit, one redundant: 12 in all.
    c = report["c_breakdown"]
    assert {r: v["count"] for r, v in c.items()} == {"not_diverging": 6, "not_meaningful": 3, "not_implicit": 1,
                                                     "redundant": 2}
    assert c["not_diverging"]["share"] == pytest.approx(6 / 12) and c["redundant"]["share"] == pytest.approx(2 / 12)
    assert (run_a / "reports" / "report_task_type.png").exists()


def test_report_by_type_is_table_12_recall(run_a, cli):
    res = cli("report", run_a, "--by", "type")
    assert res.exit_code == 0, res.output
    groups = {g["group"]: g for g in json.loads((run_a / "reports" / "report_type.json").read_text())["groups"]}
    # definitional MAs: case 1 MA1 (hit), case 2 MA1 (missed) and MA2 (hit), case 3 MA1 (missed)
    assert (groups["definitional"]["hit"], groups["definitional"]["total"]) == (2, 4)
    assert groups["definitional"]["recall"] == 0.5
    assert {t: (g["hit"], g["total"]) for t, g in groups.items()} == {
        "definitional": (2, 4), "referential": (1, 1), "criterial": (1, 1), "scopal": (1, 2), "procedural": (1, 1),
        "untyped": (0, 1)}
    assert list(groups) == ["definitional", "referential", "criterial", "scopal", "procedural", "untyped"]
    md = (run_a / "reports" / "report_type.md").read_text()
    assert ["all", "10", "6", "60.0%"] in markdown_rows(md)


def test_report_refuses_unknown_grouping(run_a, cli):
    one_line_error(cli("report", run_a, "--by", "cell"), "--by must be one of domain, task_type, type")
    assert not (run_a / "reports").exists()


def test_report_refuses_a_run_without_scored_case(cli, tmp_path):
    run = write_results(tmp_path / "r", [Case("law/planning_002", [("MA1", "scopal")], status="failed")],
                        complete=False)
    one_line_error(cli("report", run), "no scored case to report (1 failed)")
    assert not (run / "reports").exists()
