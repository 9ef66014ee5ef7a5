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


def test_val_prompts_written_and_used_by_default(cli, tmp_path):
    """Table 18: GRPO validates on the val split. ``train prompts --data DIR/train`` writes the
    val prompts too when DIR/val exists; the recipe validates on that file unless told not to."""
    import importlib.util
    from pathlib import Path

    from evaluate.eval_helpers import released_case, write_case

    root = tmp_path / "data"
    write_case(root / "train", "law/planning_001.json", released_case(tag=" One"))
    write_case(root / "val", "law/planning_001.json", released_case(tag=" Val"))  # same path, another dialogue
    write_case(root / "val", "medicine/planning_004.json", released_case(tag=" Four"))
    out = tmp_path / "grpo"
    res = cli("train", "prompts", "--data", root / "train", "--out", out)
    assert res.exit_code == 0, res.output
    val = [json.loads(line) for line in (out / "val.jsonl").read_text().splitlines()]
    assert [(r["case_id"], r["split"]) for r in val] == [("law/planning_001", "val"), ("medicine/planning_004", "val")]
    assert "Val" in json.dumps(val[0]["prompt"]) and "wrote 2 prompts to" in res.stderr
    only = tmp_path / "only-train"
    assert cli("train", "prompts", "--data", root / "train", "--out", only, "--no-val").exit_code == 0
    assert sorted(p.name for p in only.iterdir()) == ["train.jsonl"]
    res = cli("train", "prompts", "--data", root / "train", "--out", tmp_path / "v", "--format", "verl")
    assert res.exit_code == 0 and pl.read_parquet(tmp_path / "v" / "val.parquet").height == 2

    path = Path(__file__).resolve().parents[2] / "scripts" / "train_prober.py"
    spec = importlib.util.spec_from_file_location("train_prober", path)
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    grpo = ["grpo", "--model", "m", "--prompts", str(out / "train.jsonl"), "--data", "d", "--out", "o"]
    assert recipe.eval_prompts_of(recipe.parser().parse_args(grpo)) == str(out / "val.jsonl")
    assert recipe.eval_prompts_of(recipe.parser().parse_args([*grpo, "--no-eval"])) is None
    assert recipe.eval_prompts_of(recipe.parser().parse_args([*grpo, "--eval-prompts", "x.jsonl"])) == "x.jsonl"
    alone = ["grpo", "--model", "m", "--prompts", str(only / "train.jsonl"), "--data", "d", "--out", "o"]
    assert recipe.eval_prompts_of(recipe.parser().parse_args(alone)) is None
    config = recipe.grpo_config(recipe.parser().parse_args([*grpo, "--out", str(tmp_path / "ckpt"), "--no-bf16"]))
    assert config.eval_strategy == "epoch"


def test_a_record_in_another_language_gets_the_prompt_evaluate_sends_it(tmp_path):
    """A German record (tests/fixtures/languages) gets evaluate's language note; English rows
    are the prompt alone."""
    from pathlib import Path

    from ioa_synth.evaluate.inputs import load_cases
    from ioa_synth.probing.language import in_case_language
    from ioa_synth.probing.probers import PROBERS
    from ioa_synth.train.prompts import prompt_rows

    case = json.loads((Path(__file__).resolve().parents[1] / "fixtures/languages/de_case.json").read_text("utf-8"))
    record = {"profiles": case["stage1"], "dialogue": {"num_turns": 6, "turns": case["stage2"]["turns"]},
              "language": "de"}
    (tmp_path / "ml_research").mkdir()
    (tmp_path / "ml_research/planning_000.json").write_text(json.dumps(record), encoding="utf-8")
    [german] = load_cases(tmp_path)
    [row] = prompt_rows(tmp_path, [german])
    assert "Language of the meeting: German (de)" in row["prompt"][1]["content"]
    assert row["prompt"] == in_case_language(PROBERS["mcq"].prompt(german, "public"), "de", "prober").messages
    german.language = None  # read as English: the prompt alone
    assert prompt_rows(tmp_path, [german])[0]["prompt"] == PROBERS["mcq"].prompt(german, "public").messages
