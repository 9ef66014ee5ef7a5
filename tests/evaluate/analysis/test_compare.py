"""``ioa-synth compare``: pairing and refusal, bootstrap numbers, Table-12/§E.2 side by side,
and outcome consistency of a re-run (Table 14) on folders differing in known questions."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from ioa_helpers import one_line_error
from ioa_synth.evaluate.analysis.consistency import outcome_consistency
from ioa_synth.evaluate.analysis.results import load_results

from .factory import Case, case_studies, markdown_rows, write_results

F1_CASE1 = 2 * 0.8 * 1.0 / (0.8 + 1.0)


def permuted_rerun(root, **run):
    """Run A's cases re-run with a permutation: question 5 of troubleshooting_010 now diverges
    (and is accepted for MA4), question 1 of design_review_001 no longer diverges; the question
    numbers of troubleshooting_010 are reversed. 2 of 22 outcomes change."""
    c1, c2, c3 = case_studies()
    c1 = replace(c1, questions=c1.questions[:4] + ["A:MA4"], reverse=True)
    c3 = replace(c3, questions=["C:not_diverging"] + c3.questions[1:])
    return write_results(root, [c1, c2, c3], **({"permute_seed": 7} | run))


def test_refuses_different_case_sets_naming_them(run_a, cli, tmp_path):
    c1, c2, _ = case_studies()
    run_b = write_results(tmp_path / "run_b", [c1, c2, Case("law/planning_002", [("MA1", "scopal")], ["A:MA1"]),
                                               Case("law/coordination_004", [("MA1", "scopal")], status="failed")])
    out = tmp_path / "cmp"
    err = one_line_error(cli("compare", run_a, run_b, "--out", out), "medicine/design_review_001",
                         "law/planning_002", "--intersect")
    assert "law/coordination_004" not in err  # failed in B and absent from A: in neither scored set
    assert not out.exists()
    res = cli("compare", run_a, run_b, "--out", out, "--intersect", "--json")
    assert res.exit_code == 0, res.output
    result = json.loads(res.stdout)
    assert result["pairing"] == {"paired": 2, "intersect": True, "only_a": ["medicine/design_review_001"],
                                 "only_b": ["law/planning_002"], "different_inputs": [], "unverified": []}
    assert result == json.loads((out / "compare.json").read_text())


def test_a_case_failed_in_b_is_named(run_a, cli, tmp_path):
    c1, c2, c3 = case_studies()
    run_b = write_results(tmp_path / "run_b", [c1, c2, replace(c3, status="failed")])
    one_line_error(cli("compare", run_a, run_b, "--out", tmp_path), f"only in {run_a} (1): medicine/design_review_001")


def test_permuted_rerun_consistency_bootstrap_and_tables(run_a, cli, tmp_path, monkeypatch):
    run_b = permuted_rerun(tmp_path / "run_b")
    monkeypatch.chdir(tmp_path)
    res = cli("compare", run_a, run_b)
    assert res.exit_code == 0, res.output
    result = json.loads((tmp_path / "compare.json").read_text())
    assert result["rerun"] == {"kind": "permute_seed", "why": "same data, permute_seed none -> 7"}
    c = result["consistency"]
    assert (c["matched"], c["only_a"], c["only_b"]) == (22, 0, 0)
    assert c["outcome_unchanged"] == pytest.approx(20 / 22)
    assert c["answers_unchanged"] == pytest.approx({"M1": 1.0, "M2": 20 / 22})
    assert {(x["case_id"], x["number_a"], x["number_b"]) for x in c["changed"]} == {
        ("business/troubleshooting_010", 5, 1), ("medicine/design_review_001", 1, 1)}
    # F1 per dialogue (planning_003, troubleshooting_010, design_review_001): A .5, 8/9, 0; B .5, 1, 0
    assert c["delta_f1"] == pytest.approx((1 - F1_CASE1) / 3)
    boot = result["bootstrap"]
    assert (boot["resamples"], boot["seed"]) == (10_000, 20260516)
    f1 = boot["metrics"]["f1"]
    assert f1["mean_a"] == pytest.approx((0.5 + F1_CASE1) / 3) and f1["mean_b"] == pytest.approx(1.5 / 3)
    # resampled mean of the differences (0, 1/9, 0) is 0 with probability (2/3)^3 and 1/9 with (1/3)^3 > 2.5%
    assert (f1["ci_low"], f1["ci_high"]) == (0.0, pytest.approx(1 - F1_CASE1))
    assert f1["p"] == pytest.approx(2 * (2 / 3) ** 3, abs=0.03)
    assert boot["metrics"]["precision"]["diff"] == pytest.approx((1 - 0.8) / 3)
    assert boot["metrics"]["recall"]["diff"] == 0.0 and boot["metrics"]["recall"]["p"] == 1.0
    assert result["means"]["a"]["mean_k"] == pytest.approx(22 / 3) == result["means"]["b"]["mean_k"]
    assert (result["means"]["a"]["mean_b"], result["means"]["b"]["mean_b"]) == (pytest.approx(4 / 3), 1.0)
    assert result["c_breakdown"]["b"]["not_diverging"] == {"count": 6, "share": 0.5}
    rows = markdown_rows((tmp_path / "compare.md").read_text())
    assert ["divergent outcome unchanged", "90.9%"] in rows
    assert ["M2 answer unchanged", "90.9%"] in rows
    # sign flips of (0, 1/9, 0): every pattern is as far from 0 as the observed mean
    assert f1["p_permutation"] == 1.0
    assert ["f1", "0.463", "0.500", "+0.037", "[+0.000, +0.111]", f"{f1['p']:.3f}", "1.000"] in rows
    assert ["|B| (Category B)", "1.33", "1.00", "-0.33"] in rows
    assert "Outcome consistency" in res.stdout and "90.9%" in res.stdout


def test_type_recall_and_c_shares_side_by_side_without_rerun(run_a, cli, tmp_path):
    c1, c2, c3 = case_studies()
    c2 = replace(c2, questions=["A:MA4", "A:MA3", "B", "C:not_diverging", "C:not_diverging"])
    run_b = write_results(tmp_path / "run_b", [c1, c2, c3])
    res = cli("compare", run_a, run_b, "--out", tmp_path / "cmp", "--resamples", "200", "--seed", "5")
    assert res.exit_code == 0, res.output
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert result["consistency"] is None and result["rerun"]["kind"] is None
    assert result["bootstrap"]["resamples"] == 200 and result["bootstrap"]["seed"] == 5
    tr = result["type_recall"]
    assert (tr["definitional"]["a"]["hit"], tr["definitional"]["b"]["hit"]) == (2, 1)  # of 4 definitional MAs
    assert (tr["scopal"]["a"]["recall"], tr["scopal"]["b"]["recall"]) == (0.5, 1.0)
    assert list(tr) == ["definitional", "referential", "criterial", "scopal", "procedural", "untyped"]
    cb = result["c_breakdown"]["b"]
    # B: C questions are 1 + 2 + 9 = 12 again, now 8 not diverging (1 + 2 + 5)
    assert cb["not_diverging"] == {"count": 8, "share": pytest.approx(8 / 12)}
    assert cb["not_meaningful"]["share"] == pytest.approx(2 / 12)
    rows = markdown_rows((tmp_path / "cmp" / "compare.md").read_text())
    assert ["definitional", "2/4", "50.0%", "1/4", "25.0%"] in rows
    assert ["not diverging", "6", "50.0%", "8", "66.7%"] in rows
    assert "Outcome consistency" not in res.stdout


def test_rollouts_rerun_is_recognised(run_a, cli, tmp_path):
    run_b = write_results(tmp_path / "run_b", case_studies(), rollouts=5)
    res = cli("compare", run_a, run_b, "--out", tmp_path, "--json")
    result = json.loads(res.stdout)
    assert result["rerun"]["kind"] == "rollouts"
    assert result["consistency"]["outcome_unchanged"] == 1.0 and result["consistency"]["delta_f1"] == 0.0


def test_questions_in_one_run_only_are_counted_not_matched(run_a, tmp_path):
    c1, c2, c3 = case_studies()
    stems = [f"{c2.case_id} question {i + 1}" for i in range(5)]
    c2 = replace(c2, stems=stems[:4] + ["a question the other run never asked"])
    b = load_results(write_results(tmp_path / "run_b", [c1, c2, c3], permute_seed=3))
    a = load_results(run_a)
    c = outcome_consistency(a.scored, b.scored, sorted(a.scored))
    assert (c["matched"], c["only_a"], c["only_b"]) == (21, 1, 1)
    assert c["outcome_unchanged"] == 1.0
