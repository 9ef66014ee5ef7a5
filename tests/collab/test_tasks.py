"""Task files: the shipped samples load; a file in neither format, the other bench's file,
a task without tests and a broken scenario are refused with one line naming the place."""

from __future__ import annotations

import json

import pytest

from ioa_synth.collab.tasks import BcbTask, HiddenProfileTask, TasksError, load_tasks, tasks_digest
from ioa_synth.collab.team import agent_names, block_order, persona
from .helpers import BCB, HP, bcb_tasks, hp_tasks


def test_samples_load_in_both_formats():
    bcb, hp = bcb_tasks(), hp_tasks()
    assert 6 <= len(bcb) <= 10 and all(isinstance(t, BcbTask) for t in bcb)
    assert 4 <= len(hp) <= 6 and all(isinstance(t, HiddenProfileTask) for t in hp)
    assert {t.agents for t in hp} == {3, 4}
    assert all(t.prompt == t.instruct_prompt.strip() and "TestCases" in t.test for t in bcb)


def test_other_bench_and_neither_format_are_refused(tmp_path):
    with pytest.raises(TasksError, match="hidden-profile scenario file, not --bench bcb"):
        load_tasks(HP, "bcb")
    with pytest.raises(TasksError, match="BigCodeBench JSONL, not --bench hidden-profile"):
        load_tasks(BCB, "hidden-profile")
    other = tmp_path / "items.jsonl"
    other.write_text('{"item_id": "x", "question": "q"}\n', encoding="utf-8")
    with pytest.raises(TasksError, match="neither BigCodeBench"):
        load_tasks(other, "bcb")
    other.write_text('{"item_id": "x"}\n{"item_id": "y"}\n', encoding="utf-8")
    with pytest.raises(TasksError, match="items.jsonl:1: neither a BigCodeBench record"):
        load_tasks(other, "bcb")
    prose = tmp_path / "notes.txt"
    prose.write_text("just some notes\n", encoding="utf-8")
    with pytest.raises(TasksError, match="invalid JSON"):
        load_tasks(prose, "bcb")


def test_a_task_without_tests_is_named(tmp_path):
    rows = [json.loads(x) for x in BCB.read_text(encoding="utf-8").splitlines()]
    rows[2]["test"] = ""
    path = tmp_path / "bcb.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(TasksError) as err:
        load_tasks(path, "bcb")
    assert f"{path}:3 (sample-bcb-03)" in str(err.value) and "no test" in str(err.value)


def test_broken_scenarios_are_refused(tmp_path):
    doc = json.loads(HP.read_text(encoding="utf-8"))
    doc["scenarios"][1]["answer"] = "Z"
    path = tmp_path / "hp.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(TasksError, match="scenario 2 \\(hp-sample-2\\): answer 'Z' is not one of the options"):
        load_tasks(path, "hidden-profile")
    doc["scenarios"][1]["answer"] = "C"
    doc["scenarios"][1]["private"] = ["only one", "two"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(TasksError, match="private"):
        load_tasks(path, "hidden-profile")


def test_jsonl_scenarios_and_the_digest():
    hp = hp_tasks()
    assert tasks_digest(hp) == tasks_digest(hp_tasks()) != tasks_digest(hp[:-1])


def test_blocks_are_shuffled_by_a_hash_of_the_task_id():
    task = hp_tasks()[0]
    order = block_order(task.task_id, task.agents)
    assert sorted(order) == list(range(task.agents)) and order == block_order(task.task_id, task.agents)
    orders = {tuple(block_order(f"t{i}", 4)) for i in range(30)}
    assert len(orders) > 5  # not one fixed order
    for agent, block in zip(agent_names(task), order):
        text = persona(task, agent)
        assert task.private[block] in text and task.shared in text
        assert all(task.private[b] not in text for b in range(task.agents) if b != block)
