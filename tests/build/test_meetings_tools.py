"""``show``, ``check``, ``export`` (with its dataset card) and ``annotate export`` on a series
build (``build --meetings 3``) at the HTTP boundary: each keeps the series, the meeting of
each turn and each point's ``planted_in`` / ``surfaces_in``.

The scripted series (:mod:`ioa_synth.testing.scripted_series`): meetings of 4, 2 and 3
turns (turns 1-4, 5-6, 7-9); MA1 "the held-out set" planted in 1, surfacing in 3; MA2 "rerun
the baseline" planted in 1 and MA3 "good enough to ship" planted in 2, both hidden through 3.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from ioa_helpers import q

from ioa_synth.testing.scripted_series import SeriesResponder

PLAN = {"MA1": (1, 3), "MA2": (1, None), "MA3": (2, None)}
MEETINGS = [1, 1, 1, 1, 2, 2, 3, 3, 3]


@pytest.fixture
def series_build(cli, endpoint, seeds_file, tmp_path):
    """A build directory of one accepted series of three meetings (``seeds``: how many cases)."""
    def make(seeds: int = 1) -> Path:
        endpoint(responder=SeriesResponder())
        out = tmp_path / "out"
        res = cli("build", "--seeds", seeds_file(seeds), "--split", "test", "--out", out, "--workers", "1",
                  "--type-mix", "none", "--meetings", "3")
        assert res.exit_code == 0, res.output
        assert {s for (s,) in q(out, "SELECT status FROM cases")} == {"accepted"}
        return out
    return make


def test_show_joins_the_meetings_and_checks_the_series_as_the_build_did(cli, series_build):
    out = series_build()
    res = cli("show", "--out", out, "--json")
    assert res.exit_code == 0, res.output
    view = json.loads(res.stdout)
    s2 = view["stage2"]
    # the three generator calls of the attempt shown as one series, not meeting 1 alone
    assert [t["meeting"] for t in s2["output"]["turns"]] == MEETINGS
    assert [t["turn_idx"] for t in s2["output"]["turns"]] == list(range(1, 10))
    assert s2["problems"] == [] and s2["gate_failures"] == []  # meeting 1 alone lacks MA3: not reported
    points = {p["id"]: (p["planted_in"], p["surfaces_in"]) for p in view["stage1"]["output"]["misalignment_points"]}
    assert points == PLAN
    assert [t["meeting"] for t in view["stage1"]["output"]["conversation_outline"]] == MEETINGS
    text = cli("show", "--out", out)
    assert text.exit_code == 0, text.output
    shown = text.stdout
    assert "planted in 1, surfaces in 3" in shown and "planted in 2, hidden through 3" in shown
    rules = [line.strip("─ ") for line in shown.splitlines() if line.strip("─ ").startswith("meeting ")]
    assert rules == ["meeting 1", "meeting 2", "meeting 3"]  # a rule before each meeting's lines
    assert shown.index("meeting 2") < shown.index("[5] Ada Okafor") < shown.index("meeting 3") < shown.index("[7] Ada")
    assert "rule and gate failures" not in shown


def test_show_reports_a_meeting_that_broke_the_series_gates(cli, endpoint, seeds_file, tmp_path):
    endpoint(responder=SeriesResponder(script={"stage2_generator": ["early", "ok", "ok", "early", "ok", "ok"]}))
    out = tmp_path / "out"
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out, "--workers", "1",
              "--type-mix", "none", "--meetings", "3")
    assert res.exit_code == 0, res.output
    assert q(out, "SELECT status FROM cases") == [("discarded",)]
    view = json.loads(cli("show", "--out", out, "--json", "--attempt", "1").stdout)
    (failure,) = view["stage2"]["gate_failures"]
    assert failure.startswith("MA3: its surface form 'good enough to ship' is said in meeting 1 (turn 4)")


def test_check_reads_the_whole_series(cli, series_build):
    out = series_build(2)  # two seeds, the same scripted series: near-duplicates of each other
    res = cli("check", "--out", out, "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    (pair,) = report["pairs"]
    assert pair["similarity"] == 1.0


def test_export_keeps_the_series_and_the_card_describes_it(cli, series_build, tmp_path):
    out = series_build()
    hub = tmp_path / "hub"
    res = cli("export", "--out", out, "--to", hub, "--splits", "test")
    assert res.exit_code == 0, res.output
    (line,) = (hub / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(line)
    assert {p["id"]: (p["planted_in"], p["surfaces_in"]) for p in record["profiles"]["misalignment_points"]} == PLAN
    assert [t["meeting"] for t in record["dialogue"]["turns"]] == MEETINGS
    assert [t["meeting"] for t in record["profiles"]["conversation_outline"]] == MEETINGS
    card = (hub / "README.md").read_text(encoding="utf-8")
    assert "name: planted_in" in card and "name: surfaces_in" in card
    assert len(re.findall(r"name: meeting$", card, re.M)) == 2  # the outline's and the dialogue's turns
    assert "Each generated case is a series of 3 meetings" in card and "`surfaces_in`" in card
    from datasets import load_dataset

    loaded = load_dataset(str(hub), split="test")[0]
    assert loaded["profiles"]["misalignment_points"][1]["surfaces_in"] is None
    assert loaded["profiles"]["misalignment_points"][0]["surfaces_in"] == 3
    assert loaded["dialogue"]["turns"][6]["meeting"] == 3


def test_a_one_meeting_export_has_no_series_fields(cli, endpoint, seeds_file, tmp_path):
    endpoint()
    out = tmp_path / "out"
    assert cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out, "--workers", "1").exit_code == 0
    assert cli("export", "--out", out, "--to", tmp_path / "hub", "--splits", "test").exit_code == 0
    card = (tmp_path / "hub" / "README.md").read_text(encoding="utf-8")
    assert "planted_in" not in card and "series of" not in card
    assert not re.search(r"name: meeting$", card, re.M)
    record = json.loads((tmp_path / "hub" / "data" / "test.jsonl").read_text(encoding="utf-8"))
    assert "meeting" not in record["dialogue"]["turns"][0]


@pytest.mark.parametrize("fmt", ["csv", "label-studio"])
def test_annotate_export_shows_each_turns_meeting_and_each_points_plan(cli, series_build, fmt):
    out = series_build()
    res = cli("annotate", "export", "--out", out, "--split", "test", "--per-cell", "1", "--calibration", "0",
              "--format", fmt)
    assert res.exit_code == 0, res.output
    if fmt == "csv":
        (items,) = out.rglob("items.csv")
        rows = {r["item"]: r for r in csv.DictReader(items.open(encoding="utf-8"))}
        assert "Series of 3 meetings: first said in meeting 1; comes to light in meeting 3 (as planned)" in \
            rows["MA1"]["point"]
        assert "first said in meeting 2; stays hidden through meeting 3" in rows["MA3"]["point"]
        dialogue = rows["dialogue"]["dialogue"].splitlines()
        assert [line for line in dialogue if line.startswith("---")] == [
            "--- meeting 1 ---", "--- meeting 2 ---", "--- meeting 3 ---"]
        assert dialogue[dialogue.index("--- meeting 3 ---") + 1].startswith("[7] Ada Okafor (M1) says:")
        return
    (tasks,) = [p for p in out.rglob("*.json") if p.name.startswith("tasks")]
    (task,) = json.loads(tasks.read_text(encoding="utf-8"))
    assert [t["author"].rsplit(", meeting ", 1)[1].rstrip(")") for t in task["data"]["turns"]] == \
        [str(m) for m in MEETINGS]
    assert "comes to light in meeting 3" in task["data"]["point_MA1"]
