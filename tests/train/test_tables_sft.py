"""``ioa-synth table ioa-17`` (the SFT warm-start subset, IoA paper Table 17) on the folder
``train sft`` writes from the teacher fixture's run (conftest.py), cells by hand:

- business/troubleshooting_010 (study 1: A, A, A, A, C): 4 questions kept, 1 C removed;
- law/planning_003 (study 2: A, A, B, C, C): 3 kept, 2 removed;
- medicine/design_review_001 (every question C): dropped, not in sft.jsonl;
- ml_research/planning_000 (study 3: eleven C and one B): 1 kept, 11 removed.

All: 3 dialogues of 3 cells, 8 questions (8/3 = 2.7 per dialogue), 14 C removed.
"""

from __future__ import annotations

import io
import json

import polars as pl
from ioa_helpers import one_line_error

from ioa_synth.runs.folder_kinds import folder_kind


def table(cli, *args) -> list[dict[str, str]]:
    res = cli("table", "ioa-17", *args, "--format", "csv")
    assert res.exit_code == 0, res.output
    return pl.read_csv(io.StringIO(res.stdout), infer_schema=False).to_dicts()


def test_cells_of_the_warm_start_subset(cli, teacher, tmp_path):
    out = tmp_path / "sft"
    assert cli("train", "sft", "--results", teacher.results, "--out", out).exit_code == 0
    assert folder_kind(out) == "sft"
    rows = table(cli, out)
    # the protocol's order of domains: ml_research, ..., business, law
    assert [(r["domain"], r["task type"]) for r in rows[:-1]] == [
        ("ml_research", "planning"), ("business", "troubleshooting"), ("law", "planning")]
    assert rows[1] == {"split": "train", "domain": "business", "task type": "troubleshooting", "dialogues": "1",
                       "questions": "4", "questions / dialogue": "4.0", "C removed": "1"}
    assert (rows[0]["questions"], rows[0]["C removed"]) == ("1", "11")
    assert rows[-1] == {"split": "all", "domain": "3 cells", "task type": "", "dialogues": "3", "questions": "8",
                        "questions / dialogue": "2.7", "C removed": "14"}
    assert "prober-model" in cli("table", "ioa-17", out, "--format", "md").stdout  # the teacher, in the notes


def test_keep_c_and_prompt_completion_rows(cli, teacher, tmp_path):
    out = tmp_path / "sft"
    res = cli("train", "sft", "--results", teacher.results, "--out", out, "--keep-c", "--format", "prompt-completion")
    assert res.exit_code == 0
    rows = {r["domain"]: r for r in table(cli, out)}
    # every question kept: 5 + 5 + 3 + 12, none removed; the all-C dialogue is now in the file
    assert (rows["4 cells"]["dialogues"], rows["4 cells"]["questions"]) == ("4", "25")
    assert rows["medicine"]["questions"] == "3" and all(r["C removed"] == "0" for r in rows.values())


def test_refusals_are_one_line(cli, teacher, tmp_path):
    one_line_error(cli("table", "ioa-17", teacher.results), "is an 'ioa-synth evaluate' results folder; ioa-17 needs "
                                                            "1 × 'train sft' warm-start folder")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "sft.jsonl").write_text(json.dumps({"case_id": "law/planning_003", "split": "train",
                                               "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    one_line_error(cli("table", "ioa-17", bad), "sft.jsonl:1: the assistant turn holds no question set")
    (bad / "sft.jsonl").write_text('{"messages": []}\n')
    one_line_error(cli("table", "ioa-17", bad), "sft.jsonl:1: not a 'train sft' row (no case_id or split)")
    (bad / "sft.jsonl").write_text("{oops\n")
    one_line_error(cli("table", "ioa-17", bad), "sft.jsonl")
    (bad / "sft.jsonl").write_text("")
    one_line_error(cli("table", "ioa-17", bad), "sft.jsonl: no row")
