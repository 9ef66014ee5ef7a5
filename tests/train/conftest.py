"""Fixtures of the training tests: the evaluation tests' scripted trio (prober, simulator,
validity filter at the HTTP boundary) and a teacher run on a train split."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from evaluate.conftest import trio  # noqa: F401 - the scripted servers, one per component
from evaluate.eval_helpers import STUDY_1, STUDY_2, STUDY_3, Q, Study, released_case, toolkit_case, write_case

#: Every question lands in Category C (no divergence, or rejected by the filter).
STUDY_ALL_C = [Q("C1 q1", "A", "A"), Q("C1 q2", "A", "B", meaningful=False), Q("C1 q3", "B", "B")]


def studies() -> Study:
    """Studies chosen by a marker in the member names of each case."""
    return Study(STUDY_3, {"STUDY1": STUDY_1, "STUDY2": STUDY_2, "ALLC": STUDY_ALL_C})


def write_split(root: Path) -> Path:
    """``root`` (a split folder): studies 1 and 2, an all-C case and a toolkit record (study 3)."""
    write_case(root, "business/troubleshooting_010.json", released_case(tag=" STUDY1"))
    write_case(root, "law/planning_003.json", released_case(tag=" STUDY2"))
    write_case(root, "medicine/design_review_001.json", released_case(n_mas=2, tag=" ALLC"))
    write_case(root, "ml_research/planning_000.json", toolkit_case())
    return root


@dataclass
class Teacher:
    data: Path
    results: Path
    trio: object

    def record(self, case_id: str) -> dict:
        return json.loads((self.results / "records" / f"{case_id}.json").read_text())


@pytest.fixture
def teacher(cli, trio, tmp_path):  # noqa: F811 - the fixture imported above
    """A teacher prober's evaluate run on a train split (scripted servers still up)."""
    t = trio(studies())
    data = write_split(tmp_path / "data" / "train")
    results = tmp_path / "teacher"
    res = cli("evaluate", "--data", data, "--out", results, "--workers", "2")
    assert res.exit_code == 0, res.output
    return Teacher(data, results, t)
