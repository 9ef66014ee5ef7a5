"""``ioa-synth train prompts``: GRPO prompts exactly as ``evaluate`` sends them to the prober,
in TRL's JSONL and verl's parquet layouts."""

from __future__ import annotations

import json

import polars as pl
import pytest
from ioa_helpers import one_line_error


def test_trl_rows_are_what_evaluate_sent(cli, teacher, tmp_path):
    out = tmp_path / "grpo"
    res = cli("train", "prompts", "--data", teacher.data, "--out", out)
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    assert [r["case_id"] for r in rows] == ["business/troubleshooting_010", "law/planning_003",
                                            "medicine/design_review_001", "ml_research/planning_000"]
    assert all(set(r) == {"prompt", "case_id", "split"} and r["split"] == "train" for r in rows)
    sent = sorted(json.dumps(r["body"]["messages"]) for r in teacher.trio.prober.requests)
    assert sorted(json.dumps(r["prompt"]) for r in rows) == sent


def test_verl_parquet_layout(cli, teacher, tmp_path):
    out = tmp_path / "grpo"
    res = cli("train", "prompts", "--data", teacher.data, "--out", out, "--format", "verl", "--access", "private")
    assert res.exit_code == 0, res.output
    df = pl.read_parquet(out / "train.parquet")
    assert df.columns == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    row = df.row(1, named=True)
    assert row["data_source"] == "ioa-suite"
    assert row["reward_model"] == {"style": "rule", "ground_truth": "law/planning_003"}
    assert row["extra_info"] == {"case_id": "law/planning_003", "split": "train", "index": 1}
    assert [m["role"] for m in row["prompt"]] == ["system", "user"]
    assert "Private agenda" in row["prompt"][1]["content"]  # --access private: full profiles


def test_bad_input(cli, tmp_path):
    out = tmp_path / "grpo"
    one_line_error(cli("train", "prompts", "--data", tmp_path / "missing", "--out", out), "is not a folder")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.json").write_text("{}")
    one_line_error(cli("train", "prompts", "--data", tmp_path / "bad", "--out", out), "missing field")
    one_line_error(cli("train", "prompts", "--data", tmp_path / "bad", "--out", out, "--format", "csv"), "--format")
    assert not out.exists()


@pytest.mark.parametrize("command", ["prompts", "sft"])
def test_a_read_only_out_is_one_error_line(cli, teacher, read_only, command):
    ro = read_only()
    given = ("--data", teacher.data) if command == "prompts" else ("--results", teacher.results)
    for out in (ro, ro / "grpo"):
        res = cli("train", command, *given, "--out", out)
        assert res.exit_code == 2 and "Traceback" not in res.stderr
        one_line_error(res, str(out), "read-only")
    assert list(ro.iterdir()) == []


def test_an_output_file_that_cannot_be_written_is_one_error_line(cli, teacher, tmp_path):
    out = tmp_path / "grpo"
    (out / "train.jsonl").mkdir(parents=True)  # a folder where the file goes
    res = cli("train", "prompts", "--data", teacher.data, "--out", out)
    assert res.exit_code == 2 and "Traceback" not in res.stderr
    one_line_error(res, "train.jsonl")
    assert (out / "train.jsonl").is_dir() and sorted(p.name for p in out.iterdir()) == ["train.jsonl"]
