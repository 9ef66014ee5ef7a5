"""``evaluate --sample N --seed S``: a reproducible random sample stratified by cell (paper
App. C.1 uses a random 30-case sample), against the scripted trio."""

from __future__ import annotations

import json

from .eval_helpers import STUDY_1, STUDY_2, STUDY_3, Study, released_case, toolkit_case, write_case
from ioa_helpers import one_line_error
from ioa_synth.evaluate.inputs import load_cases
from ioa_synth.protocol.sample import stratified_sample


def test_sample_evaluates_the_drawn_cases_and_status_counts_them(cli, trio, tmp_path):
    root = tmp_path / "data" / "test"
    # two cells: business/troubleshooting (2 cases) and law/planning (2 cases)
    write_case(root, "business/troubleshooting_010.json", released_case(tag=" STUDY1"))
    write_case(root, "business/troubleshooting_011.json", released_case(tag=" STUDY1"))
    write_case(root, "law/planning_003.json", released_case(tag=" STUDY2"))
    write_case(root, "law/planning_004.json", released_case(tag=" STUDY2"))
    trio(Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2}))
    out = tmp_path / "r"
    res = cli("evaluate", "--data", root, "--out", out, "--workers", "1", "--sample", "2", "--seed", "11")
    assert res.exit_code == 0, res.output
    done = sorted(p.relative_to(out / "records").with_suffix("").as_posix() for p in (out / "records").rglob("*.json"))
    expected = [c.case_id for c in stratified_sample(load_cases(root), lambda c: (c.domain, c.task_type), 2, 11)]
    assert done == expected and {d.split("/")[0] for d in done} == {"business", "law"}  # one per cell
    args = json.loads((out / "run.json").read_text())["args"]
    assert (args["sample"], args["seed"], args["sample_cases"]) == (2, 11, expected)
    status = json.loads(cli("status", "--out", out, "--json").stdout)
    assert status["cases"]["total"] == 2 and status["cases"]["to_do"] == 0


def test_sample_bad_input(cli, tmp_path):
    root = tmp_path / "data" / "test"
    write_case(root, "ml_research/planning_000.json", toolkit_case())
    res = cli("evaluate", "--data", root, "--out", tmp_path / "r", "--sample", "2")
    one_line_error(res, "--sample 2 asks for more cases than the 1")
    res = cli("evaluate", "--data", root, "--out", tmp_path / "r", "--sample", "1", "--limit", "1")
    one_line_error(res, "--sample and --limit")
    assert not (tmp_path / "r").exists()
