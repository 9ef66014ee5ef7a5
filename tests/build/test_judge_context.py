"""Who sees what (after App. B.4): a distinct token is planted in every field
of the seed, the profiles and the dialogue; one build and one audit run against scripted
servers; the table of which prompt holds which token is asserted whole."""

from __future__ import annotations

import json
import re

from conftest import real_seed_tuples
from ioa_helpers import build

from ioa_synth.testing.scripted_server import ProtocolResponder, chat_reply, request_kind, valid_stage1, valid_stage2

PROMPTS = ("stage-1 generator", "stage-1 judge", "stage-2 generator", "stage-2 judge", "audit stage-1 judge",
           "audit stage-2 judge")
SEED = {"title", "abstract", "domain", "task_type"}
PROFILE = {"scenario", "name", "role", "expertise", "background", "private_state", "hidden_assumption",
           "topic", "surface_form", "understanding_a", "understanding_b", "why_undetected"}

# field -> the prompts that must hold its token (every other prompt must not)
WANT = {
    **{f: {"stage-1 generator", "stage-1 judge", "stage-2 judge", "audit stage-1 judge", "audit stage-2 judge"}
       for f in SEED},
    **{f: {"stage-1 judge", "stage-2 generator", "stage-2 judge", "audit stage-1 judge", "audit stage-2 judge"}
       for f in PROFILE},
    "outline": {"stage-2 generator", "stage-2 judge", "audit stage-2 judge"},
    "inner_thought": {"stage-2 judge", "audit stage-2 judge"},
    "utterance": {"stage-2 judge", "audit stage-2 judge"},
}


def tok(field: str) -> str:
    return "zq" + field.replace("_", "")


def planted_profiles() -> dict:
    data = valid_stage1(2)
    data["meeting_scenario"] = f"{tok('scenario')} {data['meeting_scenario']}"
    for m in data["members"]:
        for f in ("role", "expertise", "background", "private_state"):
            m[f] = f"{tok(f)} {m[f]}"
        m["name"] = f"{m['name']} {tok('name')}"
        m["hidden_assumptions"] = [f"{tok('hidden_assumption')} {a}" for a in m["hidden_assumptions"]]
    for p in data["misalignment_points"]:
        for f, key in (("topic", "topic"), ("surface_form", "surface_form"), ("understanding_a", "member_a_understanding"),
                       ("understanding_b", "member_b_understanding"), ("why_undetected", "why_undetected")):
            p[key] = f"{tok(f)} {p[key]}"
    for t in data["conversation_outline"]:
        t["description"] = f"{tok('outline')} {t['description']}"
    return data


def planted_dialogue(profiles: dict) -> dict:
    data = valid_stage2(4)
    names = {m["id"]: m["name"] for m in profiles["members"]}
    for t in data["turns"]:
        t["speaker_name"] = names[t["speaker_id"]]
        t["inner_thought"] = f"{tok('inner_thought')} {t['inner_thought']}"
        t["utterance"] = f"{tok('utterance')} {t['utterance']}"
    return data


def responder():
    base = ProtocolResponder()
    profiles = planted_profiles()

    def respond(body, headers):
        kind = request_kind(body)
        if kind == "stage1_generator":
            return chat_reply(json.dumps(profiles))
        if kind == "stage2_generator":
            return chat_reply(json.dumps(planted_dialogue(profiles)))
        return base(body, headers)

    return respond


def test_every_prompt_holds_exactly_its_fields(cli, endpoint, tmp_path):
    seed = real_seed_tuples(40, domains=("cross_disciplinary",))[2]
    seed.update(task_type="coordination", title=f"{tok('title')} {seed['title']}",
                abstract=f"{tok('abstract')} {seed['abstract']}")
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(json.dumps(seed) + "\n")
    build_server = endpoint(responder=responder())
    out = tmp_path / "out"
    build(cli, seeds, out)
    assert len(list(out.glob("test/**/*.json"))) == 1
    audit_server = endpoint(responder=ProtocolResponder(), env="AUDIT_JUDGE")
    assert cli("audit", "--out", out, "--split", "test").exit_code == 0

    texts: dict[str, str] = {}
    for server, prefix in ((build_server, ""), (audit_server, "audit ")):
        for r in server.requests:
            kind = request_kind(r["body"])
            name = prefix + kind.replace("stage1_", "stage-1 ").replace("stage2_", "stage-2 ")
            texts[name] = " ".join(m["content"] for m in r["body"]["messages"])
    assert set(texts) == set(PROMPTS)
    needles = {f: tok(f) for f in WANT} | {"domain": "cross_disciplinary", "task_type": "coordination"}
    table = {f: {p for p in PROMPTS if re.search(rf"\b{re.escape(needles[f])}\b", texts[p])} for f in WANT}
    assert table == WANT
