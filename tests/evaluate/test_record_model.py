"""One record model for ``RESULTS/records/<case_id>.json``: records written by the release
before it (``released_records/``: made by ``ioa-synth evaluate`` at commit 69a4637 against
this folder's scripted servers, each ``calls`` list cut to a few entries) read, and written
back byte for byte; the analyses, ``train sft`` and the resume check read it; a bad file
is one line naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ioa_synth.evaluate.analysis.results import load_results
from ioa_synth.evaluate.record_model import RecordError
from ioa_synth.evaluate.records import read_eval_record, read_record
from ioa_synth.evaluate.scoring import summarize

RELEASED = Path(__file__).resolve().parent / "released_records"
FILES = sorted(RELEASED.glob("*.json"))

#: docs/evaluate.md: the keys of a record, in the order of the files.
KEYS = ["case_id", "source_file", "domain", "task_type", "status", "mode", "access", "rollouts", "permute_seed",
        "misalignment_points", "expressions", "error", "questions", "metrics", "c_breakdown", "permutation", "calls"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_a_released_record_reads_and_writes_back_byte_for_byte(path):
    raw = path.read_bytes()
    record = read_eval_record(path)
    assert record.to_json_bytes() == raw
    keys = list(json.loads(raw))
    assert keys == [k for k in KEYS if k in keys]  # no key moved
    assert ("error" in keys) == (record.status == "failed") and ("metrics" in keys) == (record.status == "scored")


def test_the_fixtures_cover_every_optional_part():
    records = {p.stem: read_eval_record(p) for p in FILES}
    assert records["ambiguity"].expressions and records["ambiguity"].expressions[0].overlaps_ma is not None
    assert records["permuted"].permutation is not None and records["permuted"].permute_seed == 7
    assert {q.kind for q in records["direct"].questions} == {"item"}
    assert records["failed"].status == "failed" and any(c.error for c in records["failed"].calls)
    assert any(c.replayed for c in records["resumed"].calls)
    assert all(not c.replayed for c in records["mcq"].calls)


def test_analyses_and_summary_read_the_released_records(tmp_path):
    folder = tmp_path / "results"
    (folder / "records" / "x").mkdir(parents=True)
    distinct = ("ambiguity", "direct", "failed", "mcq")  # four case ids (the others repeat two of them)
    for name in distinct:
        shutil.copy(RELEASED / f"{name}.json", folder / "records" / "x" / f"{name}.json")
    (folder / "run.json").write_text(json.dumps({"command": "evaluate", "args": {"mode": "mcq"}}), encoding="utf-8")
    results = load_results(folder)
    assert len(results.scored) == 3 and results.failed == ["law/planning_000"]
    records = [read_eval_record(RELEASED / f"{name}.json") for name in distinct]
    summary = summarize(records, len(records), {"mode": "mcq"})
    assert summary["cases"] == {"requested": 4, "scored": 3, "failed": 1}
    assert summary["expressions"]["selected"] == len(records[0].expressions)


def test_the_resume_check_reads_a_record_and_retries_a_broken_one(tmp_path):
    (tmp_path / "records" / "law").mkdir(parents=True)
    shutil.copy(RELEASED / "failed.json", tmp_path / "records" / "law" / "planning_000.json")
    assert read_record(tmp_path, "law/planning_000").status == "failed"
    (tmp_path / "records" / "law" / "planning_000.json").write_text('{"case_id": "law/planning_000", "status": "scored"}',
                                                                  encoding="utf-8")
    assert read_record(tmp_path, "law/planning_000") is None  # no metrics: evaluated again
    assert read_record(tmp_path, "law/none") is None


@pytest.mark.parametrize("text, needle", [
    ('{"status": "scored"', "line 1"),
    ('{"status": "failed"}', "case_id: missing field"),
    ('[1, 2]', "(top level)"),
])
def test_a_bad_record_is_one_line_naming_the_file(tmp_path, text, needle):
    path = tmp_path / "r.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RecordError) as err:
        read_eval_record(path)
    assert str(err.value).startswith(str(path)) and needle in str(err.value) and "\n" not in str(err.value)
