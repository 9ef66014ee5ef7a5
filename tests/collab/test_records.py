"""Task records are typed on the way in and out: a record the protocol got wrong is never
written, a hand-edited one is named by file and field, and every reader (report, status,
estimate) finds records at any depth (BigCodeBench ids put them in tasks/BigCodeBench/)."""

from __future__ import annotations

import json

import pytest

from ioa_synth.collab.estimate import _figures
from ioa_synth.collab.records import RecordError, read_records, record_path, write_record
from ioa_synth.collab.run import RunJob
from ioa_synth.collab.team import CollabSettings


def bcb(task_id, config, rounds, triggered=None, extra=0):
    turns = [{"phase": "initial", "round": r, "agent": a, "text": "..."} for r in range(1, rounds + 1)
             for a in ("Agent1", "Agent2")]
    return {"task_id": task_id, "config": config, "bench": "bcb", "agents": ["Agent1", "Agent2"], "turns": turns,
            "stop_votes": [], "probes": [], "reflections": [], "triggered": triggered, "extra_rounds": extra,
            "extra_end": None, "final": {"agent": "Agent1", "code": "def f(): pass", "reply": "..."},
            "passed": False, "check": {"status": "fail", "details": "AssertionError"}}


def test_a_record_is_written_as_the_protocol_made_it_and_read_back_typed(tmp_path):
    record = bcb("BigCodeBench/13", "discussion", 2)
    typed = write_record(tmp_path, record)
    path = record_path(tmp_path, "BigCodeBench/13", "discussion")
    assert path == tmp_path / "tasks" / "BigCodeBench" / "13__discussion.json"
    assert list(json.loads(path.read_text())) == list(record)  # the protocol's key order
    back = read_records(tmp_path)
    assert back == [typed] and back[0].unit == "BigCodeBench/13__discussion" and back[0].turns[-1].round == 2
    assert back[0].model_extra["check"]["status"] == "fail" and back[0].has_extra_end()


def test_a_record_missing_its_score_is_never_written(tmp_path):
    record = bcb("t1", "discussion", 1)
    del record["passed"]
    with pytest.raises(RecordError, match="not a task record \\(passed: missing field\\)"):
        write_record(tmp_path, record)
    assert not (tmp_path / "tasks").exists()


def test_a_hand_edited_record_is_named_by_file_and_field(tmp_path):
    path = record_path(tmp_path, "t1", "discussion")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(bcb("t1", "discussion", 1) | {"extra_rounds": "two"}))
    with pytest.raises(RecordError, match="t1__discussion.json: not a task record \\(extra_rounds: "):
        read_records(tmp_path)


def test_the_estimate_measures_bigcodebench_records_in_their_task_folders(tmp_path):
    """Rounds and re-discussion rounds per triggered run are measured from the records,
    BigCodeBench's among them (tasks/BigCodeBench/<n>__<config>.json)."""
    for n, rounds in ((13, 1), (14, 3)):
        write_record(tmp_path, bcb(f"BigCodeBench/{n}", "discussion", rounds))
    write_record(tmp_path, bcb("BigCodeBench/13", "mcq:probe", 2, triggered=True, extra=2))
    job = RunJob(tasks=[], all_tasks=[], configs=["discussion", "mcq:probe"], settings=CollabSettings(bench="bcb"))
    figures = _figures(tmp_path, job)
    assert figures["bcb_rounds"] == pytest.approx((1 + 3 + 2) / 3)
    assert figures["extra_rounds"] == 2 and figures["triggered"] == {"mcq:probe": 1.0}
    assert figures["sources"]["bcb_rounds"] == figures["sources"]["extra_rounds"] == "measured"
