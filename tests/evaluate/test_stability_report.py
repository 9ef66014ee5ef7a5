"""``report`` of a ``--rollouts`` run gives the simulator's stability (paper App. C.1,
Table 13: rollouts agreeing with the modal answer, per participant P1/P2)."""

from __future__ import annotations

import json

import pytest

from .eval_helpers import STUDY_1, STUDY_2, STUDY_3, Study, released_case, write_case


def test_table13_agreement_with_the_modal_answer(cli, trio, tmp_path):
    root = tmp_path / "data" / "test"
    write_case(root, "business/troubleshooting_010.json", released_case(tag=" STUDY1"))
    study = Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2})
    study.flips = {"M2": 2}  # M2's second rollout picks another option on every question
    trio(study)
    out = tmp_path / "r"
    res = cli("evaluate", "--data", root, "--out", out, "--workers", "1", "--rollouts", "3")
    assert res.exit_code == 0, res.output
    rep = json.loads(cli("report", out, "--json").stdout)
    # 5 questions x 3 rollouts = 15 picks per participant; M1 always picks the modal option
    # (15/15), M2 picks it in rollouts 1 and 3 only (10/15)
    assert rep["stability"] == {"rollouts": 3, "participants": {
        "M1": {"answers": 5, "picks": 15, "agreeing": 15, "agreement": 1.0},
        "M2": {"answers": 5, "picks": 15, "agreeing": 10, "agreement": pytest.approx(10 / 15)}}}
    text = cli("report", out).stdout
    assert "Simulator stability (Table 13)" in text and "66.7%" in text
    assert "Table 13" in (out / "reports" / "report_domain.md").read_text()


def test_one_rollout_has_no_stability_block(cli, trio, tmp_path):
    root = tmp_path / "data" / "test"
    write_case(root, "business/troubleshooting_010.json", released_case(tag=" STUDY1"))
    trio(Study(STUDY_3, {"STUDY1": STUDY_1}))
    out = tmp_path / "r"
    assert cli("evaluate", "--data", root, "--out", out, "--workers", "1").exit_code == 0
    assert json.loads(cli("report", out, "--json").stdout)["stability"] is None
