"""Counts in user-facing messages agree with their number: "1 case", "2 cases", never
"1 cases" (one helper, ioa_synth.text.plural)."""

from __future__ import annotations

import json

from evaluate.eval_helpers import released_case, write_case
from ioa_synth.text.plural import plural
from tests.belief.helpers import sample_items


def test_plural():
    assert [plural(n, "case") for n in (0, 1, 2)] == ["0 cases", "1 case", "2 cases"]
    assert plural(1, "try", "tries") == "1 try" and plural(3, "try", "tries") == "3 tries"
    assert plural(12345, "token") == "12,345 tokens"


def test_messages_with_one_thing_say_it_in_the_singular(cli, tmp_path):
    data = tmp_path / "data" / "train"
    write_case(data, "law/planning_000.json", released_case())
    res = cli("train", "prompts", "--data", data, "--out", tmp_path / "grpo")
    assert res.exit_code == 0, res.output
    assert "wrote 1 prompt to" in res.stderr
    res = cli("train", "score", "--data", data, "--case-id", "law/planning_999", "--completion", tmp_path / "x",
              "--out", tmp_path / "reward")
    assert res.exit_code == 2 and "(1 case, e.g. 'law/planning_000')" in res.stderr
    items = tmp_path / "one.jsonl"
    items.write_text(sample_items(tmp_path, 1).read_text())
    res = cli("belief", "items", "import", items, "--format", "jsonl", "--out", tmp_path / "out.jsonl")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("1 item written to") and "items" not in res.stdout.split(" to ")[0]
    rows = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(rows) == 1
