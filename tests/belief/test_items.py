"""Item import on the shipped real-format samples, the item writer, and bad input."""

from __future__ import annotations

import json

import pytest

from ioa_synth.belief.items import load_items
from ioa_synth.testing.belief_scripted import BeliefScript
from ioa_synth.belief.simpleqa import infer_relation
from ioa_synth.belief.sources import import_items
from tests.belief.helpers import SAMPLES


def test_counterfact_sample():
    drafts, dropped = import_items(SAMPLES / "counterfact.json", "counterfact")
    assert len(drafts) == 24 and dropped == {"subject contains an answer": 1}  # "Bank of Japan"
    d = drafts[0]
    assert (d.item_id, d.relation, d.question, d.true_answer, d.manipulated_answer) == (
        "counterfact-0", "P36", "What is the capital of Australia?", "Canberra", "Sydney")


def test_popqa_sample_borrows_an_answer_of_the_same_relation():
    drafts, _ = import_items(SAMPLES / "popqa.tsv", "popqa")
    assert len(drafts) == 24
    by_relation: dict[str, set[str]] = {}
    for d in drafts:
        by_relation.setdefault(d.relation, set()).add(d.true_answer)
    for d in drafts:
        assert d.manipulated_answer in by_relation[d.relation] and d.manipulated_answer != d.true_answer
        assert d.manipulated_answer.lower() not in d.question.lower()
    lake = next(d for d in drafts if d.item_id == "popqa-1010")  # Titicaca: Peru or Bolivia
    assert lake.true_aliases == ["Bolivia"] and lake.manipulated_answer not in ("Peru", "Bolivia")
    again, _ = import_items(SAMPLES / "popqa.tsv", "popqa")
    assert [d.manipulated_answer for d in again] == [d.manipulated_answer for d in drafts]  # seeded


def test_simpleqa_sample_relations_and_shapes():
    drafts, dropped = import_items(SAMPLES / "simpleqa.csv", "simpleqa")
    assert dropped == {"no fine-grained relation": 1, "no answer of the same topic and relation to borrow": 1}
    rel = {d.true_answer: (d.relation, d.manipulated_answer) for d in drafts}
    assert rel["1868"][0] == "year" and len(rel["1868"][1]) == 4 and rel["1868"][1].isdigit()
    assert rel["206"][0] == "count" and rel["206"][1].isdigit()
    assert rel["9 November 1989"][0] == "full_date"
    assert rel["Rembrandt van Rijn"][0] == "person" and " " in rel["Rembrandt van Rijn"][1]
    assert rel["Tokyo"][0] == "city"
    assert infer_relation("Which sport is played at Wimbledon?", "tennis") is None
    assert infer_relation("In what year did X happen?", "the late 1800s") is None  # answer shape checked


def test_shipped_items_file_is_complete():
    items = load_items(SAMPLES / "items.jsonl")
    assert len(items) >= 70 and {i.source for i in items[:3]} == {"counterfact", "popqa", "simpleqa"}


def test_import_writes_statements_with_the_item_writer(endpoint, tmp_path, cli):
    # the first reply leaks the answer into the seed: it is rejected and asked again
    script = BeliefScript(agents=2, actions={"belief_item_text": ["leak"]})
    server = endpoint(responder=script)
    out = tmp_path / "items.jsonl"
    result = cli("belief", "items", "import", SAMPLES / "simpleqa.csv", "--format", "simpleqa", "--out", out,
                 "--limit", "3")
    assert result.exit_code == 0, result.stderr
    items = load_items(out)
    assert len(items) == 3 and len(server.requests) == 4
    assert items[0].true_statement == "The answer is 1868." and "1868" not in items[0].discussion_seed
    assert (tmp_path / "items.calls" / "catalog.duckdb").is_file()
    again = cli("belief", "items", "import", SAMPLES / "simpleqa.csv", "--format", "simpleqa", "--out", out,
                "--limit", "3")
    assert again.exit_code == 0 and len(server.requests) == 4  # replayed


def _one_error(result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    return lines[0]


@pytest.mark.parametrize("content, needle", [
    ('{"item_id": "a"}\n', "missing field"),
    ("not json\n", "bad.jsonl:1: invalid JSON at column 1: Expecting value"),
])
def test_bad_items_file(tmp_path, cli, content, needle):
    items = tmp_path / "bad.jsonl"
    items.write_text(content)
    out = tmp_path / "res"
    assert needle in _one_error(cli("belief", "run", "--items", items, "--out", out))
    assert not out.exists()


def test_bad_options(tmp_path, cli):
    items, out = SAMPLES / "items.jsonl", tmp_path / "res"
    assert "--attackers" in _one_error(cli("belief", "run", "--items", items, "--out", out, "--agents", "3",
                                           "--attackers", "0,3"))
    assert "--rounds" in _one_error(cli("belief", "run", "--items", items, "--out", out, "--rounds", "0"))
    assert "--format" in _one_error(cli("belief", "items", "import", items, "--format", "csv", "--out",
                                        tmp_path / "x.jsonl"))
    assert not out.exists() and not (tmp_path / "x.jsonl").exists()
    bad = tmp_path / "cf.json"
    bad.write_text(json.dumps([{"requested_rewrite": {"subject": "X"}}]))
    assert "requested_rewrite needs" in _one_error(cli("belief", "items", "import", bad, "--format", "counterfact",
                                                       "--out", tmp_path / "y.jsonl"))
    assert not (tmp_path / "y.jsonl").exists()


@pytest.mark.parametrize("fmt", ["counterfact", "jsonl"])
def test_a_directory_or_a_missing_file_is_named_as_such(tmp_path, cli, fmt):
    out = tmp_path / "items.jsonl"
    line = _one_error(cli("belief", "items", "import", tmp_path, "--format", fmt, "--out", out))
    assert line == f"error: {tmp_path}: is a directory; give the items file in it"
    line = _one_error(cli("belief", "items", "import", tmp_path / "none.json", "--format", fmt, "--out", out))
    assert line == f"error: {tmp_path / 'none.json'}: no such file"
    assert not out.exists()
