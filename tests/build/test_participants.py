"""Multi-party builds (``build --participants N``) at the HTTP boundary: a three-person build
records each point's sides by participant; a dialogue in which a participant off a side holds
that side's reading fails the gate (and so does a silent participant); bad counts are one
error line; a two-person build is the paper's, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ioa_helpers import one_line_error, q

from ioa_synth.build.fingerprint import build_setup_description
from ioa_synth.llm.client import Endpoint
from ioa_synth.llm.config import ComponentConfig
from ioa_synth.runs.fingerprint import fingerprint
from ioa_synth.testing.scripted_multi import MultiResponder

from .build_helpers import accepted_records, bodies, build_cli


def test_a_three_person_build_plants_sides_by_participant(cli, endpoint, seeds_file, tmp_path):
    server = endpoint(responder=MultiResponder())
    out = tmp_path / "out"
    res = build_cli(cli, seeds_file(1), out, "--participants", "3")
    assert res.exit_code == 0, res.output
    (record,) = accepted_records(out)
    members = [m["id"] for m in record["profiles"]["members"]]
    assert members == ["M1", "M2", "M3"]
    sides = {p["id"]: (p["between"], p["neutral"]) for p in record["profiles"]["misalignment_points"]}
    assert sides == {"MA1": ({"a": ["M1", "M3"], "b": ["M2"]}, []), "MA2": ({"a": ["M1"], "b": ["M2"]}, ["M3"]),
                     "MA3": ({"a": ["M3"], "b": ["M1", "M2"]}, [])}
    assert {t["speaker_id"] for t in record["dialogue"]["turns"]} == {"M1", "M2", "M3"}
    # the requests: N members and the sides in the stage-1 schema, the multi-party prompts
    (s1,) = bodies(server, "stage1_generator")
    schema = s1["response_format"]["json_schema"]["schema"]["properties"]
    assert [m["properties"]["id"]["const"] for m in schema["members"]["prefixItems"]] == ["M1", "M2", "M3"]
    point = schema["misalignment_points"]["prefixItems"][0]["properties"]
    assert point["between"]["properties"]["a"]["items"]["enum"] == ["M1", "M2", "M3"]
    assert "meeting of 3 people" in s1["messages"][-1]["content"]
    (j1,) = bodies(server, "stage1_judge")
    assert "side a (M1, M3) understands" in j1["messages"][-1]["content"]
    (j2,) = bodies(server, "stage2_judge")
    assert "neutral members included" in j2["messages"][-1]["content"]
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["participants"] == 3 and manifest["args"]["participants"] == 3
    # resuming with another meeting size is refused (the fingerprint has the size)
    again = build_cli(cli, seeds_file(1), out, "--participants", "4")
    one_line_error(again, "participants")


@pytest.mark.parametrize("first, second, status", [("wrong_side", "wrong_side", "discarded"),
                                                   ("wrong_side", "ok", "accepted"),
                                                   ("silent", "silent", "discarded")])
def test_a_participant_off_a_side_holding_its_reading_fails_the_gate(cli, endpoint, seeds_file, tmp_path,
                                                                    first, second, status):
    server = endpoint(responder=MultiResponder(script={"stage2_generator": [first, second]}))
    out = tmp_path / "out"
    res = build_cli(cli, seeds_file(1), out, "--participants", "3")
    assert res.exit_code == 0, res.output
    ((got, reason),) = q(out, "SELECT status, discard_reason FROM cases")
    assert got == status
    regen = bodies(server, "stage2_generator")[1]["messages"][-1]["content"]
    if first == "wrong_side":
        assert "turn 3: M3 (Chiara Zanetti) holds MA1's side-b reading" in regen
        assert "that reading is held only by M2" in regen
    else:
        assert "every participant must speak (M3 never does)" in regen
    if status == "discarded":
        assert "stage 2 failed twice" in reason
    assert len(bodies(server, "stage2_judge")) == (status == "accepted")  # no judge call for a failed gate


@pytest.mark.parametrize("value, needle", [("1", "--participants"), ("7", "--participants"),
                                           ("x", "--participants")])
def test_a_bad_participant_count_is_one_error_line_and_writes_nothing(cli, seeds_file, tmp_path, value, needle):
    out = tmp_path / "out"
    res = build_cli(cli, seeds_file(1), out, "--participants", value)
    assert res.exit_code == 2
    one_line_error(res, needle)
    assert not out.exists()


def test_two_participants_is_the_paper_build_byte_for_byte(cli, endpoint, seeds_file, tmp_path):
    endpoint()
    seeds = seeds_file(2)
    plain, two = tmp_path / "plain", tmp_path / "two"
    assert build_cli(cli, seeds, plain).exit_code == 0
    assert build_cli(cli, seeds, two, "--participants", "2").exit_code == 0
    for a, b in zip(accepted_records(plain), accepted_records(two), strict=True):
        assert a == b and all("between" not in p and "neutral" not in p for p in a["profiles"]["misalignment_points"])
    for folder in (plain, two):
        manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        assert "participants" not in manifest["settings"] and "participants" not in manifest["args"]
    prints = [q(f, "SELECT fingerprint FROM runs WHERE command = 'build'") for f in (plain, two)]
    assert prints[0] == prints[1]


def test_the_fingerprint_of_a_multi_party_setup_names_its_size_and_templates():
    eps = {c: Endpoint.from_config(c, ComponentConfig(), "http://host:9000/v1", "m", None, False)
           for c in ("generator", "judge")}
    two = build_setup_description(eps)
    assert build_setup_description(eps, participants=2) == two
    three = build_setup_description(eps, participants=3)
    assert fingerprint(three) != fingerprint(two) != fingerprint(build_setup_description(eps, participants=4))
    gen, judge = three["components"]["generator"], three["components"]["judge"]
    assert gen["participants"] == 3 and set(gen["multi_templates"]) == {"build_multi/stage1_generator.jinja2",
                                                                        "build_multi/stage2_generator.jinja2"}
    assert set(judge["multi_templates"]) == {"build_multi/stage1_judge.jinja2", "build_multi/stage2_judge.jinja2"}
    assert {k: v for k, v in gen.items() if k not in ("participants", "multi_templates", "multi_plan",
                                                       "multi_gates")} == two["components"]["generator"]


def test_estimate_prices_a_multi_party_build_from_its_own_prompts(cli, seeds_file, tmp_path):
    args = ("estimate", "build", "--seeds", seeds_file(2), "--split", "test", "--out", tmp_path / "o",
            "--type-mix", "none", "--tokenizer", "chars", "--json")
    two = json.loads(cli(*args).stdout)
    assert json.loads(cli(*args, "--participants", "2").stdout) == two
    three, six = (json.loads(cli(*args, "--participants", str(n)).stdout) for n in (3, 6))
    prompt = [e["components"]["judge"]["prompt_tokens"] for e in (two, three, six)]
    assert prompt[0] < prompt[1] < prompt[2]  # more members, sides and turns in every judge prompt
    assert six["components"]["generator"]["prompt_tokens"] > three["components"]["generator"]["prompt_tokens"]
    res = cli(*args, "--participants", "7")
    assert res.exit_code == 2 and "--participants" in res.stderr and not (tmp_path / "o").exists()


def test_regenerate_and_audit_of_a_three_person_build_keep_its_stages(cli, endpoint, seeds_file, tmp_path):
    server = endpoint(responder=MultiResponder(script={"stage2_generator": ["wrong_side", "wrong_side"]}))
    out = tmp_path / "out"
    assert build_cli(cli, seeds_file(1), out, "--participants", "3").exit_code == 0
    assert q(out, "SELECT status FROM cases") == [("discarded",)]
    res = cli("regenerate", "--out", out, "--workers", "1", "--stage", "2")
    assert res.exit_code == 0, res.output
    (record,) = accepted_records(out)
    assert record["profiles"]["misalignment_points"][0]["between"] == {"a": ["M1", "M3"], "b": ["M2"]}
    assert len(bodies(server, "stage2_generator")) == 3  # the regeneration: multi-party prompt and gates
    assert "meeting of 3 people" in bodies(server, "stage2_generator")[-1]["messages"][0]["content"]
    audit_server = endpoint(responder=MultiResponder(), env="AUDIT_JUDGE")
    res = cli("audit", "--out", out, "--split", "test", "--workers", "1")
    assert res.exit_code == 0, res.output
    prompts = [r["body"]["messages"][-1]["content"] for r in audit_server.requests]
    assert len(prompts) == 2 and "side a (M1, M3) understands" in prompts[0]
    assert "neutral members included" in prompts[1]




def _export(cli, out: Path, to: Path) -> list[dict]:
    """``check`` and ``export`` of the build directory ``out`` into ``to``: the exported records."""
    res = cli("check", "--out", out, "--json")
    assert res.exit_code == 0, res.output
    res = cli("export", "--out", out, "--to", to, "--splits", "test")
    assert res.exit_code == 0, res.output
    return [json.loads(line) for p in to.rglob("*.jsonl")
            for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_check_and_export_of_a_three_person_build_keep_each_points_sides(cli, endpoint, seeds_file, tmp_path):
    endpoint(responder=MultiResponder())
    out = tmp_path / "out"
    assert build_cli(cli, seeds_file(1), out, "--participants", "3").exit_code == 0
    (record,) = _export(cli, out, tmp_path / "hub")
    assert [m["id"] for m in record["profiles"]["members"]] == ["M1", "M2", "M3"]
    assert {t["speaker_id"] for t in record["dialogue"]["turns"]} == {"M1", "M2", "M3"}
    sides = [(p["between"], p["neutral"]) for p in record["profiles"]["misalignment_points"]]
    assert sides == [({"a": ["M1", "M3"], "b": ["M2"]}, []), ({"a": ["M1"], "b": ["M2"]}, ["M3"]),
                     ({"a": ["M3"], "b": ["M1", "M2"]}, [])]
    card = (tmp_path / "hub" / "README.md").read_text(encoding="utf-8")
    assert "Three-person work meetings" in card and "the members' public profiles" in card
    assert "name: between" in card and "name: neutral" in card  # the features in the card's header
    from datasets import load_dataset

    loaded = load_dataset(str(tmp_path / "hub"), split="test")
    assert loaded[0]["profiles"]["misalignment_points"][1]["neutral"] == ["M3"]


def test_a_two_person_export_has_no_sides(cli, endpoint, seeds_file, tmp_path):
    endpoint()
    out = tmp_path / "out"
    assert build_cli(cli, seeds_file(1), out).exit_code == 0
    (record,) = _export(cli, out, tmp_path / "hub")
    assert all(list(p) == ["id", "type", "topic", "surface_form", "member_a_understanding",
                           "member_b_understanding", "why_undetected"] for p in record["profiles"]["misalignment_points"])
    card = (tmp_path / "hub" / "README.md").read_text(encoding="utf-8")
    assert "Two-person work meetings" in card and "the two members' public profiles,\nprivate states" in card
    assert "between" not in card and "neutral" not in card


def test_annotate_export_and_show_name_each_readings_holders_in_a_three_person_build(cli, endpoint, seeds_file,
                                                                                     tmp_path):
    endpoint(responder=MultiResponder())
    out = tmp_path / "out"
    assert build_cli(cli, seeds_file(1), out, "--participants", "3").exit_code == 0
    res = cli("annotate", "export", "--out", out, "--split", "test", "--per-cell", "1", "--calibration", "0",
              "--format", "csv")
    assert res.exit_code == 0, res.output
    (items,) = out.rglob("items.csv")
    text = items.read_text(encoding="utf-8")
    assert "M1 (Ada Okafor), M3 (Chiara Zanetti) understand:" in text and "M2 (Ben Lindqvist) understands:" in text
    assert "Neutral (neither reading): M3 (Chiara Zanetti)" in text
    res = cli("show", "--out", out)
    assert res.exit_code == 0, res.output
    assert "side a" in res.stdout and "(M1, M3)" in res.stdout and "neutral: M3" in res.stdout
    assert "rule and gate failures" not in res.stdout  # read by the three-person rules, not the dyad's


def test_show_reports_the_side_gate_of_a_three_person_case(cli, endpoint, seeds_file, tmp_path):
    endpoint(responder=MultiResponder(script={"stage2_generator": ["wrong_side", "wrong_side"]}))
    out = tmp_path / "out"
    assert build_cli(cli, seeds_file(1), out, "--participants", "3").exit_code == 0
    res = cli("show", "--out", out)
    assert res.exit_code == 0, res.output
    shown = " ".join(res.stdout.replace("│", " ").split())
    assert "rule and gate failures" in shown and "holds MA1's side-b reading" in shown, shown
    assert "members must be" not in shown
