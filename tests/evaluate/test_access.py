"""Information access (paper Table 16): a distinct token planted in every
profile field, inner thought, utterance, misalignment-point field, the scenario and the
outline; per component and per ``--access`` setting, exactly the allowed tokens reach
the requests the scripted servers receive."""

from __future__ import annotations

import json
import re

import pytest

from .eval_helpers import write_case

FIELDS = ("name", "role", "expertise", "background", "private_state")
MA_FIELDS = ("topic", "surface_form", "member_a_understanding", "member_b_understanding", "why_undetected")
TURNS = 4


def tok(*parts: object) -> str:
    return "<<" + "_".join(str(p) for p in parts).upper() + ">>"


def planted_case() -> dict:
    members = [{"id": m, **{f: tok(m, f) for f in FIELDS},
                "hidden_assumptions": [tok(m, "assumption", i) for i in (1, 2, 3)]} for m in ("M1", "M2")]
    mas = [{"id": f"MA{i}", "type": "definitional", **{f: tok(f"MA{i}", f) for f in MA_FIELDS}} for i in (1, 2, 3, 4)]
    turns = [{"turn_idx": t, "speaker_id": "M1" if t % 2 else "M2", "inner_thought": tok("turn", t, "thought"),
              "utterance": tok("turn", t, "utterance")} for t in range(1, TURNS + 1)]
    return {"profiles": {"meeting_scenario": tok("scenario"), "members": members, "misalignment_points": mas,
                         "conversation_outline": [{"turn": 1, "speaker": "M1", "description": tok("outline"),
                                                   "ma_ids": ["MA1"]}]},
            "dialogue": {"turns": turns}}


def public(m: str) -> set[str]:
    return {tok(m, f) for f in ("name", "role", "expertise", "background")}


def private(m: str) -> set[str]:
    return {tok(m, "private_state")} | {tok(m, "assumption", i) for i in (1, 2, 3)}


def thoughts(*speakers: str) -> set[str]:
    return {tok("turn", t, "thought") for t in range(1, TURNS + 1) if ("M1" if t % 2 else "M2") in speakers}


UTTERANCES = {tok("turn", t, "utterance") for t in range(1, TURNS + 1)}
MA_TOKENS = {tok(f"MA{i}", f) for i in (1, 2, 3, 4) for f in MA_FIELDS}

PROBER_SEES = {
    "public": public("M1") | public("M2") | UTTERANCES,
    "thoughts": public("M1") | public("M2") | UTTERANCES | thoughts("M1", "M2"),
    "private": public("M1") | public("M2") | private("M1") | private("M2") | UTTERANCES,
    "private+thoughts": public("M1") | public("M2") | private("M1") | private("M2") | UTTERANCES | thoughts("M1", "M2"),
}
SIMULATOR_SEES = {
    "M1": public("M1") | private("M1") | thoughts("M1") | public("M2") | UTTERANCES,
    "M2": public("M2") | private("M2") | thoughts("M2") | public("M1") | UTTERANCES,
}
FILTER_SEES = public("M1") | public("M2") | private("M1") | private("M2") | MA_TOKENS | UTTERANCES


def seen(request: dict) -> set[str]:
    """Planted tokens anywhere in a request body (messages, schema, options)."""
    return set(re.findall(r"<<[A-Z0-9_]+>>", json.dumps(request["body"])))


@pytest.mark.parametrize("access", list(PROBER_SEES))
def test_each_component_sees_exactly_its_fields(access, cli, trio, tmp_path):
    data = tmp_path / "data"
    write_case(data, "law/planning_001.json", planted_case())
    t = trio()
    res = cli("evaluate", "--data", data, "--out", tmp_path / "out", "--access", access)
    assert res.exit_code == 0, res.output
    assert t.counts() == (1, 2, 1)

    assert seen(t.prober.requests[0]) == PROBER_SEES[access]
    by_participant = {re.search(r"You are (M[12])\.", r["body"]["messages"][1]["content"]).group(1): seen(r)
                      for r in t.simulator.requests}
    assert by_participant == SIMULATOR_SEES  # unchanged across --access settings
    assert seen(t.validity_filter.requests[0]) == FILTER_SEES
    # nobody sees the scenario or the outline
    everything = set().union(*(seen(r) for s in (t.prober, t.simulator, t.validity_filter) for r in s.requests))
    assert tok("scenario") not in everything and tok("outline") not in everything
    rec = json.loads((tmp_path / "out/records/law/planning_001.json").read_text())
    assert rec["status"] == "scored" and rec["access"] == access
