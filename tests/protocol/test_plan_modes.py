"""Plan strictness per generator: the paper's own surface forms (App. E.1) and a closing turn
on all four points fit the protocol-mode request schema and not the scaffold one; a remote
generator defaults to protocol mode, the embedded model to scaffold; the mode is part of
the generator's fingerprint; the content gates apply in both modes."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from conftest import real_seed_tuples
from ioa_helpers import kinds, q

from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.client import Endpoint
from ioa_synth.testing.scripted_server import ProtocolResponder, chat_reply, request_kind, valid_stage1
from ioa_synth.protocol.gates import stage1_gate_failures
from ioa_synth.protocol.plan import points_for
from ioa_synth.protocol.plan_modes import outline_bounds, stage1_request_schema
from ioa_synth.protocol.schemas import Stage1Output
from ioa_synth.build.fingerprint import build_setup_description as setup_description

#: Surface forms of the paper's App. E.1 case studies that the scaffold's determiner-first
#: pattern rejects.
GOLD_SURFACE_FORMS = ("redundant output", "refresh the graph", "handle the dense clusters", "internal pilot",
                      "same signals", "clear economic gains", "attention model")
TYPES4 = ("definitional", "procedural", "criterial", "scopal")


def _seed_with(n: int) -> dict:
    return next(s for s in real_seed_tuples(60) if points_for(s["seed_id"]) == n)


def _surface_schema(schema: dict, i: int = 1) -> dict:
    return schema["properties"]["misalignment_points"]["prefixItems"][i]["properties"]["surface_form"]


def _validator(schema: dict):
    return jsonschema.Draft202012Validator(schema)


def gold_case(seed_id: str, n_turns: int = 10) -> dict:
    """A four-point case with gold surface forms and an outline whose closing turn touches
    every point (as the paper's Case 1 does)."""
    data = valid_stage1(4)
    for p, sf, kind in zip(data["misalignment_points"], GOLD_SURFACE_FORMS, TYPES4):
        p["surface_form"], p["type"] = sf, kind
    base = data["conversation_outline"]
    data["conversation_outline"] = [
        {"turn": i + 1, "speaker": "M1" if i % 2 == 0 else "M2", "description": base[i % len(base)]["description"],
         "ma_ids": [f"MA{1 + i % 4}"] if i < n_turns - 1 else ["MA1", "MA2", "MA3", "MA4"]}
        for i in range(n_turns)]
    return data


def test_gold_surface_forms_fit_the_protocol_schema_and_not_the_scaffold():
    seed = _seed_with(4)["seed_id"]
    protocol = _validator(_surface_schema(stage1_request_schema("protocol", seed, TYPES4)))
    scaffold = _validator(_surface_schema(stage1_request_schema("scaffold", seed, TYPES4)))
    for phrase in GOLD_SURFACE_FORMS:
        assert protocol.is_valid(phrase), phrase
        assert not scaffold.is_valid(phrase), phrase
    assert scaffold.is_valid("the held-out set") and protocol.is_valid("the held-out set")


def test_a_gold_case_with_a_four_id_closing_turn_fits_protocol_not_scaffold():
    seed = _seed_with(4)["seed_id"]
    case = gold_case(seed)
    protocol = stage1_request_schema("protocol", seed, TYPES4)
    _validator(protocol).validate(case)
    errors = [e.message for e in _validator(stage1_request_schema("scaffold", seed, TYPES4)).iter_errors(case)]
    assert any("is too long" in m for m in errors), errors  # the four-id turn (scaffold: at most two ids)
    assert any("does not match" in m for m in errors), errors  # the surface forms
    # the content gates see nothing wrong with the gold case
    assert stage1_gate_failures(Stage1Output.model_validate(case)) == []
    # the outline length is the model's within 2n+2..2n+8, nothing outside
    low, high = outline_bounds(4)
    for n in (low, high):
        _validator(protocol).validate(gold_case(seed, n))
    for n in (low - 1, high + 1):
        assert not _validator(protocol).is_valid(gold_case(seed, n))


def test_protocol_schema_fixes_count_ids_types_and_member_ids_only():
    seed = _seed_with(3)["seed_id"]
    props = stage1_request_schema("protocol", seed, ("definitional", "scopal", "referential"))["properties"]
    points = props["misalignment_points"]
    assert [p["properties"]["id"]["const"] for p in points["prefixItems"]] == ["MA1", "MA2", "MA3"]
    assert [p["properties"]["type"]["const"] for p in points["prefixItems"]] == ["definitional", "scopal",
                                                                                 "referential"]
    assert points["minItems"] == points["maxItems"] == 3
    members = props["members"]["prefixItems"]
    assert [m["properties"]["id"]["const"] for m in members] == ["M1", "M2"]
    assert all("const" not in m["properties"]["name"] for m in members)
    outline = props["conversation_outline"]
    assert (outline["minItems"], outline["maxItems"]) == (8, 14)
    assert outline["items"]["properties"]["ma_ids"]["maxItems"] == 3
    assert "const" not in json.dumps(outline)  # no fixed turn, speaker or anchor


def _endpoint(plan, embedded):
    cfg = ToolkitConfig.model_validate({"generator": {"plan": plan}} if plan else {})
    return Endpoint.from_config("generator", cfg.generator, "http://x/v1", "m", None, embedded)


def test_default_mode_follows_the_endpoint_and_is_fingerprinted():
    assert _endpoint(None, embedded=True).plan == "scaffold"
    assert _endpoint(None, embedded=False).plan == "protocol"
    assert _endpoint("scaffold", embedded=False).plan == "scaffold"
    judge = Endpoint.from_config("judge", ToolkitConfig().judge, "http://x/v1", "m", None, False)
    assert judge.plan is None and "plan" not in judge.identity()
    a = setup_description({"generator": _endpoint("scaffold", False)})["components"]["generator"]
    b = setup_description({"generator": _endpoint("protocol", False)})["components"]["generator"]
    assert a["plan"] == "scaffold" and b["plan"] == "protocol"


def test_bad_plan_value_is_one_error_line(cli, seeds_file, tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"generator": {"plan": "loose"}}))
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", tmp_path / "o", "--config", cfg)
    assert res.exit_code == 2 and res.stderr.startswith("error: ") and "generator.plan" in res.stderr


#: A ten-turn dialogue voicing the four gold surface forms, for :func:`gold_case`'s outline.
GOLD_TURNS = [
    ("So for the comparison we first strip the redundant output from the nightly logs, as agreed in March.",
     "Redundant output means the duplicated retrieval traces; the 2,400 March questions stay as they are."),
    ("Sure, the redundant output filter is already part of the loader, so that costs nothing.",
     "The loader drops every repeated answer string; that is what the filter was written for."),
    ("Good. After that we refresh the graph before anyone reads the new numbers.",
     "Refreshing means rebuilding the citation graph from the 2023 dump with the current tokenizer; two days."),
    ("Fine, I will refresh the graph on Thursday and we look at the clusters next.",
     "I will reload the cached January snapshot into the dashboard; an hour at most."),
    ("The clusters are where it gets tricky; we need to handle the dense clusters carefully.",
     "Handling them means splitting every cluster above 500 nodes by venue before scoring."),
    ("Agreed, we handle the dense clusters the usual way and keep the sparse ones untouched.",
     "The usual way is down-weighting them by 0.5 in the loss; nothing gets split."),
    ("Then the results go into the internal pilot with the Lisbon team.",
     "The internal pilot is the four-week study with the twelve Lisbon annotators and their sign-off."),
    ("Yes, the internal pilot can start once the dashboard shows the new scores.",
     "The internal pilot is our own team clicking through the dashboard for a day."),
    ("I will write the summary tonight and share it with Kofi before the review.",
     "Kofi needs the summary before Friday; the board meets on Monday."),
    ("Then we are set: filter, refresh, handle the dense clusters and the internal pilot, in that order.",
     "All four are clear; I can block out next week and be done by the 20th."),
]


def gold_dialogue() -> dict:
    names = ("Ada Okafor", "Ben Lindqvist")
    return {"turns": [{"turn_idx": i + 1, "speaker_id": f"M{1 + i % 2}", "speaker_name": names[i % 2],
                       "inner_thought": thought, "utterance": said} for i, (said, thought) in enumerate(GOLD_TURNS)]}


class GoldGenerator:
    """A scripted generator that writes :func:`gold_case` (with the planned types of the
    request schema), and answers every other request like :class:`ProtocolResponder`."""

    def __init__(self) -> None:
        self.base = ProtocolResponder()

    def __call__(self, body, headers):
        kind = request_kind(body)
        if kind == "stage2_generator":
            return chat_reply(json.dumps(gold_dialogue()))
        if kind != "stage1_generator":
            return self.base(body, headers)
        schema = body["response_format"]["json_schema"]["schema"]
        types = [p["properties"]["type"]["const"] for p in schema["properties"]["misalignment_points"]["prefixItems"]]
        case = gold_case("", n_turns=len(GOLD_TURNS))
        for p, planned in zip(case["misalignment_points"], types):
            p["type"] = planned
        _validator(schema).validate(case)  # the reply keeps to the protocol-mode request schema
        return chat_reply(json.dumps(case))


def test_scripted_generator_with_a_four_id_closing_turn_passes_in_protocol_mode(cli, endpoint, tmp_path):
    seed = _seed_with(4)
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(json.dumps(seed) + "\n")
    server = endpoint(responder=GoldGenerator())
    out = tmp_path / "out"
    res = cli("build", "--seeds", seeds, "--split", "test", "--out", out, "--workers", "1")
    assert res.exit_code == 0, res.output
    assert q(out, "SELECT status FROM cases") == [("accepted",)]
    assert kinds(server) == ["stage1_generator", "stage1_judge", "stage2_generator", "stage2_judge"]
    sent = server.requests[0]["body"]["response_format"]["json_schema"]["schema"]
    assert "pattern" not in _surface_schema(sent)  # protocol mode: the default for a remote endpoint
    record = json.loads((out / "test").rglob("*.json").__next__().read_text())
    assert record["profiles"]["conversation_outline"][-1]["ma_ids"] == ["MA1", "MA2", "MA3", "MA4"]
    assert [p["surface_form"] for p in record["profiles"]["misalignment_points"]] == list(GOLD_SURFACE_FORMS[:4])
    prompt = server.requests[0]["body"]["messages"][-1]["content"]
    assert "determiner" not in prompt and "name them yourself" in prompt


def test_scaffold_mode_on_a_remote_endpoint_sends_the_scaffold(cli, endpoint, seeds_file, tmp_path):
    server = endpoint()
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"generator": {"plan": "scaffold"}}))
    out = tmp_path / "out"
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out, "--workers", "1", "--config", cfg)
    assert res.exit_code == 0, res.output
    sent = server.requests[0]["body"]["response_format"]["json_schema"]["schema"]
    assert "pattern" in _surface_schema(sent, 0)
    assert "determiner" in server.requests[0]["body"]["messages"][-1]["content"]


@pytest.mark.parametrize("mode", ["scaffold", "protocol"])
def test_content_gates_apply_in_both_modes(cli, endpoint, seeds_file, tmp_path, mode):
    endpoint(script={"stage1_generator": ["question", "question"]})
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"generator": {"plan": mode}}))
    out = tmp_path / "out"
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out, "--workers", "1", "--config", cfg)
    assert res.exit_code == 0, res.output
    (status, reason), = q(out, "SELECT status, discard_reason FROM cases")
    assert status == "discarded" and "gate failures" in reason and "question" in reason


def test_gold_case_is_not_mutated_by_schema_building():
    seed = _seed_with(2)["seed_id"]
    a = stage1_request_schema("protocol", seed)
    b = copy.deepcopy(a)
    stage1_request_schema("protocol", seed)["properties"]["members"]["prefixItems"].clear()
    assert stage1_request_schema("protocol", seed) == b


def test_scaffold_with_types_leaves_the_plan_schema_untouched():
    from ioa_synth.protocol.plan import CasePlan

    seed = _seed_with(3)["seed_id"]
    plan = CasePlan.for_seed(seed)
    before = plan.stage1_schema()
    typed = stage1_request_schema("scaffold", seed, ("definitional", "scopal", "other"))
    points = typed["properties"]["misalignment_points"]["prefixItems"]
    assert [p["properties"]["type"]["const"] for p in points] == ["definitional", "scopal", "other"]
    assert plan.stage1_schema() == before


def test_without_planting_the_protocol_schema_leaves_every_type_open():
    seed = _seed_with(4)["seed_id"]
    case = gold_case(seed)
    case["misalignment_points"][0]["type"], case["misalignment_points"][2]["type"] = "criterial", "definitional"
    _validator(stage1_request_schema("protocol", seed)).validate(case)  # the definitional point is MA3 here


def test_scaffold_stage2_prompt_names_outline_points_by_surface_form_only():
    # the 1.5B model copied "[MA1: say ...]" markers from the outline into utterances, which
    # the vocabulary gate rejects: the scaffold prompt shows the phrase without the id, the
    # protocol prompt (a capable model) keeps the template's marker byte for byte
    import re

    from ioa_synth.build.stages import DIALOGUE
    from ioa_synth.seeds.tuples import SeedTuple

    seed = SeedTuple.model_validate(_seed_with(2))
    profiles = Stage1Output.model_validate(valid_stage1(2))
    first = profiles.misalignment_points[0].surface_form
    prompts = {mode: DIALOGUE.render("generator", **DIALOGUE.generator_context(seed, profiles, None, None, mode)).messages[-1]["content"]
               for mode in ("scaffold", "protocol")}
    outline = {mode: text.split("Outline")[1].split("Rules:")[0] for mode, text in prompts.items()}
    assert not re.search(r"\bMA\d", outline["scaffold"])
    assert f'[say "{first}" inside a sentence]' in outline["scaffold"]
    assert f'[MA1: say "{first}"]' in outline["protocol"]
    # the rest of the prompt is the same in both modes
    assert prompts["scaffold"].replace(outline["scaffold"], "") == prompts["protocol"].replace(outline["protocol"], "")
