"""Reading ``--data``: the released IoA-Suite shape, this toolkit's records, the shipped
sample, and files that are not cases (one error line naming file and field)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .eval_helpers import released_case, toolkit_case, write_case
from ioa_helpers import one_line_error
from ioa_synth.evaluate.inputs import InputError, load_cases

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "evaluate" / "test"


def test_released_and_toolkit_formats_read_sorted_by_path(tmp_path):
    released = released_case(n_mas=3)
    obj_form = released_case()
    obj_form["profiles"]["meeting_scenario"] = {"context": "ctx", "agenda": "agenda", "expected_outcome": "plan"}
    write_case(tmp_path, "law/planning_002.json", released)
    write_case(tmp_path, "law/brainstorming_001.json", obj_form)
    write_case(tmp_path, "odd/case.json", toolkit_case(domain="medicine", task="coordination"))
    cases = load_cases(tmp_path)
    assert [c.case_id for c in cases] == ["law/brainstorming_001", "law/planning_002", "odd/case"]
    a, b, c = cases
    assert (a.domain, a.task_type) == ("law", "brainstorming")  # from the path
    assert (c.domain, c.task_type) == ("medicine", "coordination")  # from the seed
    assert a.profiles.meeting_scenario.startswith("Context: ctx")
    assert [p.type for p in b.profiles.misalignment_points] == [None, None, None]
    assert c.profiles.misalignment_points[0].type == "definitional"
    assert len(a.sha256) == 64


def test_cell_unknown_without_seed_or_known_path(tmp_path):
    write_case(tmp_path, "x/y.json", released_case())
    (case,) = load_cases(tmp_path)
    assert (case.domain, case.task_type) == ("unknown", "unknown")


def test_shipped_sample_is_a_released_format_case():
    (case,) = load_cases(SAMPLE)
    assert case.case_id == "software_engineering/troubleshooting_001"
    assert case.ma_ids == ["MA1", "MA2", "MA3"] and all(p.type is None for p in case.profiles.misalignment_points)
    raw = json.loads((SAMPLE / f"{case.case_id}.json").read_text())
    assert isinstance(raw["profiles"]["meeting_scenario"], str) and "seed" not in raw and "quality" not in raw


@pytest.mark.parametrize("edit, needle", [
    (lambda d: d.pop("dialogue"), "missing field dialogue"),
    (lambda d: d["profiles"]["misalignment_points"][0].pop("surface_form"),
     "missing field profiles.misalignment_points.0.surface_form"),
    (lambda d: d["dialogue"]["turns"][2].pop("inner_thought"), "missing field dialogue.turns.2.inner_thought"),
    (lambda d: d["dialogue"]["turns"][0].update(speaker_id="M3"), "dialogue.turns.0.speaker_id"),
    (lambda d: d["profiles"]["misalignment_points"][0].update(type="vague"), "misalignment_points.0.type"),
])
def test_not_a_case(tmp_path, edit, needle):
    data = released_case()
    edit(data)
    write_case(tmp_path, "law/planning_001.json", data)
    with pytest.raises(InputError, match="law/planning_001.json") as exc:
        load_cases(tmp_path)
    assert needle in str(exc.value)


def test_cli_refuses_a_bad_input_set_before_any_call(cli, tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "notes.json").write_text("[1, 2]")
    one_line_error(cli("evaluate", "--data", tmp_path / "d", "--out", tmp_path / "o"), "notes.json", "not a JSON object")
    one_line_error(cli("evaluate", "--data", tmp_path / "none", "--out", tmp_path / "o"), "is not a folder")
    one_line_error(cli("evaluate", "--data", tmp_path / "d", "--out", tmp_path / "o", "--access", "all"), "--access")
    assert not (tmp_path / "o").exists()
