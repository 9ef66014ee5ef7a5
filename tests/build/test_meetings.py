"""Series of meetings (``build --meetings K``) at the HTTP boundary.

The two-person series (:mod:`ioa_synth.testing.scripted_series`), K = 3:

| point | planted_in | surfaces_in |
| --- | --- | --- |
| MA1 the held-out set | 1 | 3 |
| MA2 rerun the baseline | 1 | null |
| MA3 good enough to ship | 2 | null |

Live after meeting k = planted_in <= k and (surfaces_in null or > k), worked by hand:
after 1: MA1 (1 <= 1, 3 > 1), MA2 (1 <= 1, null); MA3 not yet (2 > 1) -> {MA1, MA2};
after 2: MA1 (3 > 2), MA2, MA3 (2 <= 2) -> {MA1, MA2, MA3};
after 3: MA1 surfaced (3 > 3 is false), MA2, MA3 -> {MA2, MA3}.
"""

from __future__ import annotations

import json

import pytest
from ioa_helpers import one_line_error, q

from ioa_synth.protocol.series import ages_after, live_after
from ioa_synth.testing.scripted_series import SeriesResponder, series_stage1

from .build_helpers import accepted_records, bodies, build_cli


def test_live_sets_and_ages_by_hand():
    points = series_stage1()["misalignment_points"]
    assert [live_after(points, k) for k in (1, 2, 3)] == [["MA1", "MA2"], ["MA1", "MA2", "MA3"], ["MA2", "MA3"]]
    # ages k - planted_in: after 2, MA1 and MA2 planted in 1 are 1 old, MA3 planted in 2 is new
    assert ages_after(points, 2) == {"MA1": 1, "MA2": 1, "MA3": 0}
    assert ages_after(points, 3) == {"MA2": 2, "MA3": 1}


def test_a_three_meeting_series_plants_and_surfaces_each_point_in_its_meeting(cli, endpoint, seeds_file, tmp_path):
    server = endpoint(responder=SeriesResponder())
    out = tmp_path / "out"
    res = build_cli(cli, seeds_file(1), out, "--meetings", "3")
    assert res.exit_code == 0, res.output
    (record,) = accepted_records(out)
    plan = {p["id"]: (p["planted_in"], p["surfaces_in"]) for p in record["profiles"]["misalignment_points"]}
    assert plan == {"MA1": (1, 3), "MA2": (1, None), "MA3": (2, None)}
    turns = record["dialogue"]["turns"]
    assert [t["meeting"] for t in turns] == [1, 1, 1, 1, 2, 2, 3, 3, 3]
    assert [t["turn_idx"] for t in turns] == list(range(1, 10)) and record["dialogue"]["num_turns"] == 9
    assert [t["meeting"] for t in record["profiles"]["conversation_outline"]] == [1, 1, 1, 1, 2, 2, 3, 3, 3]
    # one generator call per meeting; meeting k is shown the earlier meetings' lines
    gens = bodies(server, "stage2_generator")
    assert len(gens) == 3
    assert "meeting 1 of a series of 3" in gens[0]["messages"][0]["content"]
    assert "earlier meetings" not in gens[0]["messages"][-1]["content"]
    third = gens[2]["messages"][-1]["content"]
    assert "Meeting 1:" in third and "Meeting 2:" in third and "let MA1 come to light" in third
    assert "good enough to ship" in gens[1]["messages"][-1]["content"]  # MA3 is planted in meeting 2
    assert "good enough to ship" not in gens[0]["messages"][-1]["content"]  # and not shown before it
    # the schema and the judges see the series
    (s1,) = bodies(server, "stage1_generator")
    point = s1["response_format"]["json_schema"]["schema"]["properties"]["misalignment_points"]["prefixItems"][0]
    assert point["properties"]["planted_in"]["maximum"] == 3
    (j2,) = bodies(server, "stage2_judge")
    assert "meeting 3: turns 7 to 9" in j2["messages"][-1]["content"]
    roles = q(out, "SELECT role, tags->>'meeting' FROM llm_calls WHERE stage = 2 AND role LIKE 'generator%' "
                   "ORDER BY role")
    assert roles == [("generator", "1"), ("generator:meeting2", "2"), ("generator:meeting3", "3")]
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["meetings"] == 3 and manifest["args"]["meetings"] == 3
    again = build_cli(cli, seeds_file(1), out, "--meetings", "2")  # another series length: a changed setup
    one_line_error(again, "meetings")


@pytest.mark.parametrize("action, said", [
    ("early", "MA3: its surface form 'good enough to ship' is said in meeting 1 (turn 4), before meeting 2"),
    ("no_surface", "MA1 does not surface in meeting 3"),
    ("leak", "in meeting 1, but MA1 stays latent until meeting 3")])
def test_a_point_planted_early_or_not_surfacing_fails_the_series_gates(cli, endpoint, seeds_file, tmp_path,
                                                                       action, said):
    server = endpoint(responder=SeriesResponder(script={"stage2_generator": [action, "ok", "ok", "ok"]}))
    out = tmp_path / "out"
    res = build_cli(cli, seeds_file(1), out, "--meetings", "3")
    assert res.exit_code == 0, res.output
    ((status,),) = q(out, "SELECT status FROM cases")
    assert status == "accepted"  # the regeneration fixed it
    regen = bodies(server, "stage2_generator")[3]["messages"][-1]["content"]
    assert said in regen


def test_a_two_meeting_series_of_three_people_passes(cli, endpoint, seeds_file, tmp_path):
    endpoint(responder=SeriesResponder(three=True))
    out = tmp_path / "out"
    res = build_cli(cli, seeds_file(1), out, "--meetings", "2", "--participants", "3")
    assert res.exit_code == 0, res.output
    (record,) = accepted_records(out)
    points = record["profiles"]["misalignment_points"]
    assert [(p["planted_in"], p["surfaces_in"]) for p in points] == [(1, None), (1, None), (2, None)]
    assert points[0]["between"] == {"a": ["M1", "M3"], "b": ["M2"]}
    assert [t["meeting"] for t in record["dialogue"]["turns"]] == [1, 1, 1, 1, 2, 2, 2, 2]


@pytest.mark.parametrize("k", ["0", "6", "x"])
def test_a_bad_meeting_count_is_one_error_line(cli, seeds_file, tmp_path, k):
    out = tmp_path / "out"
    res = build_cli(cli, seeds_file(1), out, "--meetings", k)
    one_line_error(res, "--meetings")
    assert not out.exists()


def test_estimate_prices_one_stage2_generator_call_per_meeting(cli, seeds_file, tmp_path):
    args = ("estimate", "build", "--seeds", seeds_file(2), "--split", "test", "--out", tmp_path / "o",
            "--type-mix", "none", "--tokenizer", "chars", "--json")
    one = json.loads(cli(*args).stdout)
    assert json.loads(cli(*args, "--meetings", "1").stdout) == one
    three = json.loads(cli(*args, "--meetings", "3").stdout)
    one_gen, three_gen = (e["components"]["generator"]["calls"] for e in (one, three))
    assert three_gen > one_gen  # stage 2 asked once per meeting (and no thoughts pass)
    assert three["components"]["generator"]["prompt_tokens"] > one["components"]["generator"]["prompt_tokens"]
    assert three["components"]["judge"]["prompt_tokens"] > one["components"]["judge"]["prompt_tokens"]
    res = cli(*args, "--meetings", "6")
    assert res.exit_code == 2 and "--meetings" in res.stderr and not (tmp_path / "o").exists()


def test_series_kinds_ask_stage2_once_per_meeting():
    from ioa_synth.build.estimate_series import judge_carried, series_kinds
    from ioa_synth.runs.spend import CallKind

    kinds = [CallKind("generator", "stage 1 generator", 4, 1000, 800),
             CallKind("generator", "stage 2 generator", 2, 1500, 600),
             CallKind("judge", "stage 2 judge", 2, 2000, 100)]
    assert series_kinds(kinds, 1, 600) == kinds
    s1, s2, j2 = series_kinds(kinds, 3, 600)
    assert s1 == kinds[0] and j2 == kinds[2]
    # 3 meetings: 2 * 3 calls; meeting k shows the k-1 earlier meetings' lines, half of a
    # meeting's 600 tokens each: (0 + 300 + 600) / 3 = 300 more per call on average
    assert (s2.label, s2.calls, s2.prompt) == ("stage 2 generator (3 meetings)", 6, 1800)
    # the judge is shown the plan (800) and three meetings of 600
    assert judge_carried(800, 600, 3) == 2600 and judge_carried(800, 600, 1) == 1400


def test_the_series_note_is_counted_on_every_prompt():
    from types import SimpleNamespace

    from ioa_synth.build.estimate_series import note_texts, with_series_notes
    from ioa_synth.llm.tokens import chars_counter

    notes = note_texts(3)
    # the notes the build appends: the plan's rules, each meeting's instructions, the judges' plan
    assert "plan 3 meetings of the same members" in notes["s1g"][1]
    assert "- MA1: first said in meeting 1; meant to come to light in meeting 3" in notes["s1j"][1]
    assert "- meeting 3: turns 7 to 9" in notes["s2j"][1] and "- meeting" not in notes["s1j"][1]
    assert sum("This dialogue is meeting" in t for t in notes["s2g"]) == 3  # one note per meeting
    sizes = {k: sum(map(len, v)) for k, v in notes.items()}
    assert 500 <= sizes["s1g"] <= 1500 and 400 <= sizes["s1j"] <= 1500 and 500 <= sizes["s2j"] <= 1500
    setup = SimpleNamespace(counter=chars_counter())
    skeletons = [{"s1g": 1000, "s1j": 1000, "s2g": 1000, "s2j": 1000, "s2t": 0}]
    assert with_series_notes(skeletons, 1, setup, setup) == skeletons
    (counted,) = with_series_notes(skeletons, 3, setup, setup)
    # one token per 4 characters of each note text; a meeting's writer: the mean over the meetings
    assert counted["s1g"] == 1000 + sum(len(t) // 4 for t in notes["s1g"] if t)
    assert counted["s2g"] == pytest.approx(1000 + sum(len(t) // 4 for t in notes["s2g"] if t) / 3)
    assert counted["s2t"] == 0


@pytest.mark.parametrize("command", [("regenerate", "--stage", "2"), ("audit", "--split", "test")])
def test_regenerate_and_audit_refuse_a_series_build_in_one_line(cli, endpoint, seeds_file, tmp_path, command):
    server = endpoint(responder=SeriesResponder())
    out = tmp_path / "out"
    assert build_cli(cli, seeds_file(1), out, "--meetings", "2").exit_code == 0
    asked = len(server.requests)
    res = cli(*command[:1], "--out", out, *command[1:])
    one_line_error(res, "series of 2 meetings")
    assert len(server.requests) == asked
