"""The scaffold plan writes stage 2 in two passes (lines without the private readings, then
inner thoughts without the outline); the protocol plan (the paper's method) keeps one call."""

from __future__ import annotations

import json
import re

import pytest
from ioa_helpers import q

from ioa_synth.protocol.plan_passes import DialogueLines, DialogueThoughts, combined, lines_schema, thoughts_schema
from ioa_synth.protocol.schemas import Stage1Output
from ioa_synth.testing.scripted_server import valid_stage1, valid_stage2


def _schema(req: dict) -> dict:
    return req["body"]["response_format"]["json_schema"]["schema"]


def _prompt(req: dict) -> str:
    return "\n".join(m["content"] for m in req["body"]["messages"])


def _stage2_requests(server) -> list[dict]:
    return [r for r in server.requests if "turns" in _schema(r).get("properties", {})]


def _build(cli, tmp_path, seeds_file, plan: str):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"generator": {"plan": plan}}))
    out = tmp_path / f"out-{plan}"
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out, "--workers", "1", "--config", cfg)
    assert res.exit_code == 0, res.output
    return out


def test_scaffold_stage2_is_lines_then_thoughts_each_without_what_it_must_not_copy(cli, endpoint, seeds_file,
                                                                                 tmp_path):
    server = endpoint()
    out = _build(cli, tmp_path, seeds_file, "scaffold")
    lines_req, thoughts_req = _stage2_requests(server)
    profiles = Stage1Output.model_validate(valid_stage1())

    line_item = _schema(lines_req)["properties"]["turns"]["prefixItems"][0]
    assert "inner_thought" not in line_item["properties"] and "inner_thought" not in line_item["required"]
    assert "utterance" in line_item["properties"]
    thought_items = _schema(thoughts_req)["properties"]["turns"]["prefixItems"]
    assert set(thought_items[0]["properties"]) == {"turn_idx", "inner_thought"}
    first_person = re.compile(thought_items[0]["properties"]["inner_thought"]["pattern"])
    assert first_person.match("I take the held-out set to mean the March release.")
    assert first_person.match("I'm sure Tomás means the same dashboard.")
    assert not first_person.match("Esra Yilmaz starts the meeting by introducing herself.")  # a narrator
    assert [t["properties"]["turn_idx"]["const"] for t in thought_items] == [1, 2, 3, 4]  # one per line written

    said = _prompt(lines_req)
    for p in profiles.misalignment_points:  # the lines pass never sees a reading ...
        assert p.surface_form in said
        assert p.member_a_understanding not in said and p.member_b_understanding not in said
    for m in profiles.members:  # ... a private state, or a member id
        assert m.private_state not in said and m.name in said
    assert "M1" not in said.split("Reply with")[0] and "MA1" not in said
    # ... nor the stage-1 descriptions (the demo model writes them as lines, which the pass copied):
    # a cue per turn instead, the phrase a turn uses with its topic
    assert all(t.description not in said for t in profiles.conversation_outline)
    p1 = profiles.misalignment_points[0]
    assert f'uses the phrase "{p1.surface_form}" (about {p1.topic})' in said
    thought = _prompt(thoughts_req)
    assert all(t.description not in thought for t in profiles.conversation_outline)  # no outline to retell
    assert profiles.misalignment_points[0].member_a_understanding in thought
    # nor the lines (it copied them, mostly the next one): per turn, its speaker and reading
    assert not any(t["utterance"] in thought for t in valid_stage2()["turns"])
    assert f'says "{p1.surface_form}", privately meaning: {p1.member_a_understanding}' in thought

    rows = q(out, "SELECT role, tags->>'component' FROM llm_calls WHERE stage = 2 AND role LIKE 'generator%' "
                  "ORDER BY role")
    assert rows == [("generator", None), ("generator:thoughts", "generator")]
    (status,), = q(out, "SELECT status FROM cases")
    assert status == "accepted"
    record = json.loads(next((out / "test").rglob("*.json")).read_text())
    turns = record.get("dialogue", record).get("turns") if isinstance(record.get("dialogue", record), dict) else None
    if turns is None:
        turns = record["dialogue"]
    assert [t["inner_thought"] for t in turns] == [t["inner_thought"] for t in valid_stage2()["turns"]]

    shown = cli("show", "--out", out, "--json")  # show joins the two passes' replies
    assert shown.exit_code == 0 and valid_stage2()["turns"][0]["inner_thought"] in shown.output

    before = len(server.requests)  # a re-run replays both passes
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out, "--workers", "1",
              "--config", tmp_path / "c.json")
    assert res.exit_code == 0, res.output
    assert len(server.requests) == before


def test_protocol_stage2_stays_one_call_with_thoughts_and_lines(cli, endpoint, seeds_file, tmp_path):
    server = endpoint()
    _build(cli, tmp_path, seeds_file, "protocol")
    (req,) = _stage2_requests(server)
    item = _schema(req)["properties"]["turns"]
    item = item.get("items") or item["prefixItems"][0]
    assert {"inner_thought", "utterance"} <= set(item["properties"])


def test_thoughts_join_their_lines_turn_by_turn_or_not_at_all():
    profiles = Stage1Output.model_validate(valid_stage1())
    lines = DialogueLines.model_validate(valid_stage2())
    thoughts = DialogueThoughts.model_validate(valid_stage2())
    joined = combined(lines, thoughts)
    assert joined.model_dump() == valid_stage2() | {"turns": joined.model_dump()["turns"]}
    assert [t.inner_thought for t in joined.turns] == [t["inner_thought"] for t in valid_stage2()["turns"]]
    with pytest.raises(ValueError):
        combined(lines, DialogueThoughts.model_validate({"turns": valid_stage2()["turns"][:3]}))
    assert "inner_thought" not in json.dumps(lines_schema(profiles))
    schema = thoughts_schema(profiles, lines)
    assert schema["properties"]["turns"]["minItems"] == schema["properties"]["turns"]["maxItems"] == 4
