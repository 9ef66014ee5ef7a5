"""The report on hand-made records: Pass@1 per configuration over its own tasks, deltas and
paired tests over the tasks both configurations ran, rates as fractions."""

from __future__ import annotations

import json

import pytest

from ioa_synth.collab.records import parse_record
from ioa_synth.collab.report import ReportError, build_report, markdown, read_records, record_path


def rec(task, config, passed, triggered=None, extra=0):
    return {"task_id": task, "config": config, "turns": [], "final": {}, "passed": passed, "triggered": triggered,
            "extra_rounds": extra, "bench": "bcb"}


def typed(records):
    return [parse_record(r) for r in records]


RECORDS = [rec("t1", "discussion", False), rec("t2", "discussion", True), rec("t3", "discussion", False),
           rec("t1", "mcq:a", True, True, 1), rec("t2", "mcq:a", True, False), rec("t3", "mcq:a", False, True, 1),
           rec("t4", "mcq:a", True, True, 1), rec("t1", "single", False)]


def test_hand_counts():
    r = build_report(typed(RECORDS))
    assert r["n_tasks"] == 4 and r["tasks_per_config"] == {"single": 1, "discussion": 3, "mcq:a": 4}
    assert r["pass_at_1"] == {"single": 0.0, "discussion": pytest.approx(1 / 3), "mcq:a": 0.75}
    # paired over t1-t3 only: (1 - 0) + (1 - 1) + (0 - 0) = 1 of 3
    assert r["delta_vs_discussion"] == {"single": pytest.approx(-0.0), "discussion": 0.0, "mcq:a": pytest.approx(1 / 3)}
    assert r["trigger_rate"] == {"single": None, "discussion": None, "mcq:a": 0.75}
    assert r["extra_rounds"] == {"single": None, "discussion": None, "mcq:a": 0.75}
    comp = r["comparisons"]["discussion vs mcq:a"]
    assert comp["n"] == 3 and comp["diff"] == pytest.approx(1 / 3) and comp["p_permutation"] == 1.0
    assert r["comparisons"]["single vs discussion"]["n"] == 1 and r["comparisons"]["single vs discussion"]["ci"] is None
    md = markdown(r)
    assert "| mcq:a | 4 | 75.0 |" in md and "| mcq:a | 75.0 | +0.75 | +33.3 |" in md


def test_read_records_walks_task_folders(tmp_path):
    for r in RECORDS[:2] + [rec("BigCodeBench/13", "single", True)]:
        path = record_path(tmp_path, r["task_id"], r["config"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(r))
    assert (tmp_path / "tasks" / "BigCodeBench" / "13__single.json").is_file()
    assert {r.task_id for r in read_records(tmp_path)} == {"t1", "t2", "BigCodeBench/13"}
    (tmp_path / "tasks" / "t9__single.json").write_text('{"task_id": "t9"}')
    with pytest.raises(ReportError, match="not a task record"):
        read_records(tmp_path)
    with pytest.raises(ReportError, match="no finished task"):
        read_records(tmp_path / "none")
