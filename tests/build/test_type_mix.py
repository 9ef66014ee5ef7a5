"""Type-controlled planting: a split's planned mix follows the target (paper's Table 10,
uniform, or a file) as closely as one definitional point per case allows; the generator is
asked for each type; the stage-1 judge's reading of a type that differs from the plan
fails the stage and triggers the one regeneration; status shows planned vs accepted vs
target and the mismatch share."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from conftest import real_seed_tuples
from ioa_helpers import kinds, q

from ioa_synth.testing.scripted_server import ProtocolResponder, chat_reply, request_kind
from ioa_synth.protocol.cells import MA_TYPES
from ioa_synth.protocol.plan import points_for
from ioa_synth.protocol.planting import attainable_counts, load_type_mix, plant_types


def _check_within_one(planned: dict[str, tuple[str, ...]], target: dict[str, float]) -> None:
    counts = Counter(t for types in planned.values() for t in types)
    points = sum(counts.values())
    aim = attainable_counts(points, len(planned), target)
    for t in MA_TYPES:
        assert abs(counts[t] - aim[t]) <= 1, (t, counts[t], aim[t])
    assert all(types[0] == "definitional" for types in planned.values())


@pytest.mark.parametrize("mix", ["paper", "uniform", "file"])
def test_planted_mix_over_a_30_case_split_is_within_one_case_per_type(mix, tmp_path):
    if mix == "file":
        path = tmp_path / "mix.json"
        path.write_text(json.dumps({"criterial": 3, "scopal": 1, "procedural": 1, "definitional": 1}))
        mix = str(path)
    target = load_type_mix(mix)
    seeds = [s["seed_id"] for s in real_seed_tuples(30)]
    _check_within_one(plant_types([(s, points_for(s)) for s in seeds], target), target)


def test_definitional_share_is_bounded_below_by_one_per_case():
    seeds = [s["seed_id"] for s in real_seed_tuples(30)]
    planned = plant_types([(s, points_for(s)) for s in seeds], load_type_mix("paper"))
    counts = Counter(t for types in planned.values() for t in types)
    assert counts["definitional"] == 30  # above Table 10's 24.2% of the points, by the protocol's rule
    assert counts["definitional"] / sum(counts.values()) > 0.242


def test_bad_type_mix_is_one_error_line(cli, seeds_file, tmp_path):
    bad = tmp_path / "mix.json"
    bad.write_text(json.dumps({"definitional": 1, "sarcastic": 2}))
    for value, needle in ((str(bad), "sarcastic"), (str(tmp_path / "none.json"), "not 'paper', 'uniform' or 'none'")):
        res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", tmp_path / "o", "--type-mix", value)
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and needle in res.stderr, res.stderr


def test_a_30_case_build_plants_the_mix_and_status_reports_it(cli, endpoint, seeds_file, tmp_path):
    server = endpoint()
    out = tmp_path / "out"
    res = cli("build", "--seeds", seeds_file(30), "--split", "test", "--out", out, "--workers", "4",
              "--type-mix", "uniform")
    assert res.exit_code == 0, res.output
    planned = {cid: tuple(json.loads(t)) for cid, t in q(out, "SELECT case_id, types_json FROM planned_types")}
    assert len(planned) == 30
    _check_within_one(planned, load_type_mix("uniform"))
    # each generator request asks for the planned types, in the prompt and as schema constants
    first = next(r["body"] for r in server.requests if request_kind(r["body"]) == "stage1_generator")
    consts = [p["properties"]["type"]["const"]
              for p in first["response_format"]["json_schema"]["schema"]["properties"]["misalignment_points"]["prefixItems"]]
    assert consts[0] == "definitional" and "The kind of each point is planned" in first["messages"][-1]["content"]
    report = json.loads(cli("status", "--out", out, "--json").stdout)
    mix = report["type_mix"]["test"]
    assert mix["type_mix"] == "uniform" and mix["cases"] == 30
    rows = {r["type"]: r for r in mix["rows"]}
    assert sum(r["planned"] for r in rows.values()) == sum(len(t) for t in planned.values())
    assert rows["other"]["target_share"] == pytest.approx(1 / 7)
    assert sum(r["accepted"] for r in rows.values()) > 0  # scripted replies keep the schema's types
    table = cli("status", "--out", out).stdout
    assert "Planted disagreement types, test" in table and "attainable" in table
    # a re-run keeps every case's planned types
    cli("build", "--seeds", seeds_file(30), "--split", "test", "--out", out, "--type-mix", "paper")
    again = {cid: tuple(json.loads(t)) for cid, t in q(out, "SELECT case_id, types_json FROM planned_types")}
    assert again == planned


class MisreadingJudge:
    """Answers like :class:`ProtocolResponder`; its stage-1 judge reads MA2's type as
    ``reading`` for the first ``times`` verdicts and as planned afterwards."""

    def __init__(self, reading: str, times: int) -> None:
        self.base, self.reading, self.times, self.verdicts = ProtocolResponder(), reading, times, 0

    def __call__(self, body, headers):
        reply = self.base(body, headers)
        if request_kind(body) != "stage1_judge":
            return reply
        data = json.loads(reply.body["choices"][0]["message"]["content"])
        schema = body["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["ma_scores"]["properties"]["MA1"]["properties"]["type"]["enum"] == list(MA_TYPES)
        planned = self.planned
        for ma, block in data["ma_scores"].items():
            block["type"] = planned.get(ma, "definitional")
        if self.verdicts < self.times:
            data["ma_scores"]["MA2"]["type"] = self.reading
        self.verdicts += 1
        return chat_reply(json.dumps(data))

    planned: dict = {}


def _one_case_build(cli, endpoint, seeds_file, tmp_path, times):
    responder = MisreadingJudge("other", times)
    server = endpoint(responder=responder)
    out = tmp_path / "out"
    seeds = seeds_file(1)
    # the plan of the single case: learn it by planting, as the build will
    seed_id = json.loads(seeds.read_text().splitlines()[0])["seed_id"]
    types = plant_types([("x", points_for(seed_id))], load_type_mix("paper"))["x"]
    responder.planned = {f"MA{i + 1}": t for i, t in enumerate(types)}
    res = cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1")
    assert res.exit_code == 0, res.output
    return server, out


def test_a_judged_type_mismatch_triggers_the_regeneration(cli, endpoint, seeds_file, tmp_path):
    server, out = _one_case_build(cli, endpoint, seeds_file, tmp_path, times=1)
    assert kinds(server) == ["stage1_generator", "stage1_judge", "stage1_generator", "stage1_judge",
                             "stage2_generator", "stage2_judge"]
    regen = server.requests[2]["body"]["messages"][-1]["content"]
    assert "MA2: a reviewer reads it as other" in regen
    assert q(out, "SELECT status, stage1_attempts FROM cases") == [("accepted", 2)]
    judged = q(out, "SELECT attempt, item, feedback FROM scores WHERE dimension = 'judged_type' ORDER BY 1, 2")
    assert ("1", "MA2", "other") in [(str(a), i, f) for a, i, f in judged]
    report = json.loads(cli("status", "--out", out, "--json").stdout)["type_mix"]["test"]
    assert report["mismatched"] == 1 and report["judged"] == 4 and report["mismatch_share"] == 0.25


def test_a_second_mismatch_discards_the_case_with_that_reason(cli, endpoint, seeds_file, tmp_path):
    server, out = _one_case_build(cli, endpoint, seeds_file, tmp_path, times=2)
    (status, reason), = q(out, "SELECT status, discard_reason FROM cases")
    assert status == "discarded" and "judged type differs from plan: MA2 planned" in reason and "judged other" in reason
    report = json.loads(cli("status", "--out", out, "--json").stdout)
    assert report["discards"]["test"]["discarded"] == {"stage 1: judged type differs from plan": 1}


def test_regenerate_asks_again_for_the_planted_types_in_the_same_plan_mode(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_judge": ["low", "low"]})
    out = tmp_path / "out"
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out, "--workers", "1")
    assert res.exit_code == 0 and q(out, "SELECT status FROM cases") == [("discarded",)]
    (planned,), = q(out, "SELECT types_json FROM planned_types")
    start = len(server.requests)
    res = cli("regenerate", "--out", out, "--workers", "1")
    assert res.exit_code == 0, res.output
    assert q(out, "SELECT status FROM cases") == [("accepted",)]
    body = next(r["body"] for r in server.requests[start:] if request_kind(r["body"]) == "stage1_generator")
    schema = body["response_format"]["json_schema"]["schema"]["properties"]
    consts = [p["properties"]["type"]["const"] for p in schema["misalignment_points"]["prefixItems"]]
    assert consts == json.loads(planned)
    assert "pattern" not in schema["misalignment_points"]["prefixItems"][0]["properties"]["surface_form"]


def test_type_mix_none_plans_no_type_and_the_judge_reads_none(cli, endpoint, seeds_file, tmp_path):
    # the paper's own stage 1: one definitional point (checked after parsing), the other types the
    # generator's; the judge is
    # not asked for a type, so no "judged type differs" can discard a case; status shows no mix
    server = endpoint(responder=ProtocolResponder())
    out = tmp_path / "out"
    res = cli("build", "--seeds", seeds_file(2), "--split", "test", "--out", out, "--workers", "1",
              "--type-mix", "none")
    assert res.exit_code == 0, res.output
    gens = [r for r in server.requests if request_kind(r["body"]) == "stage1_generator"]
    judges = [r for r in server.requests if request_kind(r["body"]) == "stage1_judge"]
    assert gens and judges
    for r in gens:
        assert "The kind of each point is planned" not in r["body"]["messages"][-1]["content"]
        points = r["body"]["response_format"]["json_schema"]["schema"]["properties"]["misalignment_points"]
        assert all("const" not in p["properties"]["type"] for p in points["prefixItems"][1:])
    for r in judges:
        assert "the kind of disagreement you read" not in r["body"]["messages"][-1]["content"]
    assert q(out, "SELECT count(*) FROM scores WHERE dimension = 'judged_type'") == [(0,)]
    assert {t for (t,) in q(out, "SELECT types_json FROM planned_types")} == {"[]"}
    report = json.loads(cli("status", "--out", out, "--json").stdout)
    assert report["type_mix"] == {}
    assert q(out, "SELECT count(*) FROM cases WHERE status = 'accepted'") == [(2,)]
