"""Each content gate in the build loop, black-box against the scripted server: a
gate-breaking reply is a stage failure before the judge is called, the regeneration
request names the failure, a repeat discards the case with the reason; a judge verdict
saying "No changes needed." under a low score is flagged."""

from __future__ import annotations

import json

import pytest
from ioa_helpers import build, q

from ioa_synth.testing.scripted_server import request_kind

GATES = [
    ("stage1_generator", "dots", "placeholder instead of content in MA1.member_a_understanding ('...')"),
    ("stage1_generator", "same_understanding", "MA1: the two understandings are (nearly) the same"),
    ("stage1_generator", "copied", "MA1.surface_form copies the field description from the instructions"),
    ("stage2_generator", "dots", "placeholder instead of content in turn 1.inner_thought ('...'), turn 1.utterance"),
    ("stage2_generator", "absent_ma", "MA2: its surface form 'rerun the baseline' appears in no utterance"),
    ("stage2_generator", "leak", "turn 2: the utterance states MA1.member_b_understanding aloud"),
    ("stage2_generator", "wrong_speaker", "turn 2: speaker M2 'Carol Diaz' does not match the profiles "
                                          "(M2 is 'Ben Lindqvist')"),
    ("stage2_generator", "outline_echo", "turn 1: the inner thought restates the outline's description of a turn"),
]


def bodies(server, kind: str) -> list[dict]:
    return [r["body"] for r in server.requests if request_kind(r["body"]) == kind]


def case(out):
    (row,) = q(out, "SELECT status, stage1_attempts, stage2_attempts, discard_reason FROM cases")
    return row


@pytest.mark.parametrize("kind, action, reason", GATES, ids=[f"{k[:6]}-{a}" for k, a, _ in GATES])
def test_gate_failure_is_regenerated_once_with_its_reason(cli, endpoint, seeds_file, tmp_path, kind, action, reason):
    server = endpoint({kind: [action]})
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    stage = int(kind[5])
    status, a1, a2, _ = case(out)
    assert (status, a1 if stage == 1 else a2) == ("accepted", 2)
    # the gated attempt was never judged: one judge call for the stage, at attempt 2
    assert len(bodies(server, f"stage{stage}_judge")) == 1
    assert q(out, "SELECT DISTINCT attempt FROM scores WHERE stage = ?", [stage]) == [(2,)]
    first, second = (b["messages"][-1]["content"] for b in bodies(server, kind))
    assert reason not in first and "What failed:" not in first
    assert "The output failed these content checks:" in second and reason in second.split("What failed:")[1]
    record = json.loads(next(out.glob("test/**/*.json")).read_text())
    assert "..." not in json.dumps(record) and record["quality"][f"stage{stage}"]["attempt"] == 2


@pytest.mark.parametrize("kind, action, reason", GATES, ids=[f"{k[:6]}-{a}" for k, a, _ in GATES])
def test_gate_failure_twice_discards_with_the_reason(cli, endpoint, seeds_file, tmp_path, kind, action, reason):
    server = endpoint({kind: [action, action]})
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    stage = int(kind[5])
    status, a1, a2, discard = case(out)
    assert status == "discarded" and (a1, a2) == ((2, 0) if stage == 1 else (1, 2))
    assert discard.startswith(f"stage {stage} failed twice (attempt 1: gate failures: ")
    assert discard.count(reason) == 2 and "attempt 2: gate failures: " in discard
    assert bodies(server, f"stage{stage}_judge") == []
    assert not list(out.glob("test/**/*.json"))
    res = cli("status", "--out", out, "--json")
    assert json.loads(res.stdout)["discards"] == {"test": {"discarded": {f"stage {stage}: content gates": 1},
                                                            "failed": {}}}


def test_regeneration_request_names_a_rejected_surface_form_without_quoting_it(cli, endpoint, seeds_file, tmp_path):
    # the 1.5B demo model copied every surface form quoted in the request into its next attempt
    question = "What version of the dataset did SCALAR use for training?"
    server = endpoint({"stage1_generator": ["question", "question"]})
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    status, _, _, discard = case(out)
    assert status == "discarded" and discard.count(f"MA1.surface_form {question!r} is a question") == 2
    second = bodies(server, "stage1_generator")[1]["messages"][-1]["content"]
    assert "MA1.surface_form is a question; give the noun phrase both members say" in second
    assert question not in second


def test_judge_saying_no_change_under_a_low_score_is_flagged(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage2_judge": ["inconsistent"]})
    out = tmp_path / "out"
    build(cli, seeds_file(1), out)
    assert case(out)[:3] == ("accepted", 1, 2)
    flags = q(out, "SELECT stage, attempt, item, score, feedback FROM scores WHERE dimension = 'judge_inconsistency'")
    assert len(flags) == 1 and flags[0][:4] == (2, 1, "dialogue", None)
    assert "naturalness 1" in flags[0][4] and "No changes needed." in flags[0][4]
    # the regeneration request still says what failed, the score first, then the judge's text
    second = bodies(server, "stage2_generator")[1]["messages"][-1]["content"].split("What failed:")[1]
    assert "- dialogue: naturalness 1/3" in second and "implicitness" not in second.split("Reviewer")[0]
    assert second.index("naturalness 1/3") < second.index("No changes needed.")
    health = json.loads(cli("status", "--out", out, "--json").stdout)["judge_health"]
    assert {(r["stage"], r["verdicts"], r["inconsistent"]) for r in health["inconsistency"]} == {(1, 2, 0), (2, 2, 1)}
    nat = next(r for r in health["dimensions"] if r["dimension"] == "naturalness")
    assert (nat["verdicts"], nat["at_max"], nat["share_at_max"]) == (2, 1, 0.5)
    text = cli("status", "--out", out).stdout
    assert "Judge health" in text and "1 flagged" in text and "inconsistent verdicts" in text
