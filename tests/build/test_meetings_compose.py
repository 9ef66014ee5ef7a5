"""``build --meetings 2`` composed with ``--type-mix`` and ``--language`` at the HTTP boundary.

The two-person series in two meetings (:mod:`ioa_synth.testing.scripted_series`,
``meetings=2``): MA1 "the held-out set" planted in 1, surfacing in 2; MA2 "rerun the
baseline" planted in 1; MA3 "good enough to ship" planted in 2; neither of these surfaces.

The German series (tests/fixtures/languages/de_case.json cut after turn 2): meeting 1 is
turns 1-2 (MA1 "die Testdaten aus dem Herbst"), meeting 2 turns 3-6 (MA2 "der Start im
November" first said in turn 3); neither point surfaces.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from conftest import real_seed_tuples
from ioa_helpers import q

from ioa_synth.protocol.planting import load_type_mix, plant_types
from ioa_synth.protocol.plan import points_for
from ioa_synth.testing.scripted_series import SeriesResponder
from ioa_synth.testing.scripted_server import request_kind

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"


def _build(cli, seeds: Path, out: Path, *extra: str):
    return cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1", *extra)


def _bodies(server, kind: str) -> list[dict]:
    return [r["body"] for r in server.requests if request_kind(r["body"]) == kind]


def _record(out: Path) -> dict:
    ((status, path),) = q(out, "SELECT status, path FROM cases")
    assert status == "accepted"
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _seeds_of_three_points(path: Path) -> Path:
    """A seeds file of the first real seed tuple planned with three points (the series' count)."""
    seed = next(s for s in real_seed_tuples(30) if points_for(s["seed_id"]) == 3)
    path.write_text(json.dumps(seed) + "\n", encoding="utf-8")
    return path


def test_a_two_meeting_series_plants_the_splits_type_mix_and_is_accepted(cli, endpoint, tmp_path):
    seeds = _seeds_of_three_points(tmp_path / "seeds.jsonl")
    seed_id = json.loads(seeds.read_text().splitlines()[0])["seed_id"]
    planned = plant_types([("x", 3)], load_type_mix("uniform"))["x"]
    assert planned[0] == "definitional" and len(set(planned)) == 3  # uniform: three different types
    responder = SeriesResponder(meetings=2, read_types=True)
    server = endpoint(responder=responder)
    out = tmp_path / "out"
    res = _build(cli, seeds, out, "--meetings", "2", "--type-mix", "uniform")
    assert res.exit_code == 0, res.output
    ((stored,),) = q(out, "SELECT types_json FROM planned_types")
    assert tuple(json.loads(stored)) == planned
    # the series' plan is asked for the planned types, as constants of its schema and in the prompt
    (s1,) = _bodies(server, "stage1_generator")
    points = s1["response_format"]["json_schema"]["schema"]["properties"]["misalignment_points"]
    assert [p["properties"]["type"].get("const") for p in points["prefixItems"]] == list(planned)
    assert points["minItems"] == points["maxItems"] == 3
    assert all(p["properties"]["planted_in"]["maximum"] == 2 for p in points["prefixItems"])
    assert "The kind of each point is planned" in s1["messages"][-1]["content"]
    # the judge read every point as planned: accepted on the first attempt, no type mismatch
    record = _record(out)
    assert [p["type"] for p in record["profiles"]["misalignment_points"]] == list(planned)
    assert q(out, "SELECT stage1_attempts, stage2_attempts FROM cases") == [(1, 1)]
    judged = q(out, "SELECT item, feedback FROM scores WHERE dimension = 'judged_type' ORDER BY item")
    assert judged == [(ma, t) for ma, t in sorted(responder.written_types.items())]
    assert [(p["planted_in"], p["surfaces_in"]) for p in record["profiles"]["misalignment_points"]] == [
        (1, 2), (1, None), (2, None)]
    assert [t["meeting"] for t in record["dialogue"]["turns"]] == [1, 1, 1, 1, 2, 2, 2, 2, 2]
    report = json.loads(cli("status", "--out", out, "--json").stdout)["type_mix"]["test"]
    assert report["cases"] == 1 and report["mismatched"] == 0 and report["judged"] == 3
    rows = {r["type"]: r for r in report["rows"]}
    assert {t for t, r in rows.items() if r["accepted"]} == set(planned)


def german_series() -> tuple[dict, list[dict]]:
    """The German case as a series of two meetings (see the module's docstring)."""
    data = json.loads((CASES / "de_case.json").read_text(encoding="utf-8"))
    plan = copy.deepcopy(data["stage1"])
    for point, planted in zip(plan["misalignment_points"], (1, 2)):
        point["planted_in"], point["surfaces_in"] = planted, None
    for turn in plan["conversation_outline"]:
        turn["meeting"] = 1 if turn["turn"] <= 2 else 2
    turns = data["stage2"]["turns"]
    meetings = [{"turns": [dict(t, turn_idx=i) for i, t in enumerate(part, start=1)]}
                for part in (turns[:2], turns[2:])]
    return plan, meetings


@pytest.mark.parametrize("english_turn", [False, True])
def test_a_german_two_meeting_series_passes_the_language_gate(cli, endpoint, seeds_file, tmp_path, english_turn):
    pytest.importorskip("lingua")
    plan, meetings = german_series()
    if english_turn:  # meeting 2's first line in English: the language gate reads the whole series
        meetings[1]["turns"][0]["utterance"] = "Good. Then we plan the launch in November, as agreed with sales."
    server = endpoint(responder=SeriesResponder(case=(plan, meetings)))
    out = tmp_path / "out"
    res = _build(cli, seeds_file(1), out, "--meetings", "2", "--language", "de", "--type-mix", "none")
    assert res.exit_code == 0, res.output
    if english_turn:
        ((status, reason),) = q(out, "SELECT status, discard_reason FROM cases")
        assert status == "discarded"
        assert reason.count("text not written in German in turn 3.utterance (English)") == 2
        return
    record = _record(out)
    assert record["language"] == "de"
    assert [t["meeting"] for t in record["dialogue"]["turns"]] == [1, 1, 2, 2, 2, 2]
    assert record["dialogue"]["turns"][2]["utterance"].startswith("Gut. Dann planen wir den Start im November")
    gens = _bodies(server, "stage2_generator")
    assert len(gens) == 2
    second = "\n".join(m["content"] for m in gens[1]["messages"])
    assert "Write every text value in German" in second and "meeting 2 of a series of 2" in second
    assert "Für den Vergleich nehmen wir wieder die Testdaten aus dem Herbst" in second  # meeting 1's lines
