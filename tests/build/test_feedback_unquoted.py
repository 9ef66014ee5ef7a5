"""Under the scaffold plan a regeneration request names each gate failure without the
snippet of rejected text it quotes (docs/plan-modes.md, plan version 11); the protocol plan,
the discard reason and ``show`` keep it whole."""

import json

import pytest
from ioa_helpers import build

from ioa_synth.build.stages import DIALOGUE, PROFILES, shown_gate_failures
from ioa_synth.protocol.plan_text import unquoted
from ioa_synth.protocol.schemas import Stage1Output
from ioa_synth.testing.scripted_case import valid_stage1
from ioa_synth.testing.scripted_server import request_kind

#: The run-on failure the demo model copied into its regeneration (a clean-clone run, 2026-12-07).
RUN_ON = ("words or sentences run together (or punctuation run on) in turn 3.utterance ('ata. e.g.... using'), "
          "turn 5.utterance ('sts. e.g.... we be'); write every word apart")


def test_quoted_snippets_of_the_rejected_text_are_dropped_and_the_rest_kept():
    assert unquoted(RUN_ON) == ("words or sentences run together (or punctuation run on) in turn 3.utterance, "
                                "turn 5.utterance; write every word apart")
    assert unquoted("turn 4.utterance (702 chars, ends 'insights into the key') is cut off") == \
        "turn 4.utterance (702 chars) is cut off"
    assert unquoted('turn 2 has stray punctuation ("it\'s ]]"); the outline\'s turn') == \
        "turn 2 has stray punctuation; the outline's turn"
    # apostrophes of the message itself are not quotes; a kept phrase stays quoted
    assert unquoted("the outline's description of the speaker's turn") == "the outline's description of the speaker's turn"
    assert unquoted("turn 2 ('rerun the baseline') and ('xyz')", keep={"rerun the baseline"}) == \
        "turn 2 ('rerun the baseline') and"


def test_only_the_scaffold_plan_hides_the_snippets_and_a_case_surface_form_stays():
    profiles = Stage1Output.model_validate(valid_stage1())
    form = profiles.misalignment_points[0].surface_form
    failures = [RUN_ON, f"turn 2: a surface form is pasted onto the utterance ({form!r})"]
    protocol = shown_gate_failures(DIALOGUE, failures, None, profiles, "protocol")
    scaffold = shown_gate_failures(DIALOGUE, failures, None, profiles, "scaffold")
    assert protocol == failures
    assert "'ata. e.g.... using'" not in scaffold[0] and "turn 3.utterance, turn 5.utterance" in scaffold[0]
    assert scaffold[1] == failures[1]  # the phrase the line must say is the case's, not rejected text
    stage1 = shown_gate_failures(PROFILES, ["placeholder instead of content in MA1.why_undetected ('...')"],
                                 profiles, None, "scaffold")
    assert stage1 == ["placeholder instead of content in MA1.why_undetected"]


@pytest.mark.parametrize("plan, shown", [("scaffold", False), ("protocol", True)])
def test_the_regeneration_request_of_a_build_quotes_the_snippet_only_under_the_protocol_plan(
        cli, endpoint, seeds_file, tmp_path, plan, shown):
    server = endpoint({"stage1_generator": ["dots"]})
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"generator": {"plan": plan}}))
    out = tmp_path / "out"
    build(cli, seeds_file(1), out, "--config", cfg)
    first, second = [r["body"]["messages"][-1]["content"] for r in server.requests
                     if request_kind(r["body"]) == "stage1_generator"][:2]
    failed = second.split("What failed:")[1]
    assert "placeholder instead of content in MA1.member_a_understanding" in failed
    assert ("('...')" in failed) is shown
    # the discard-side record of the failure is whole in both modes
    res = cli("show", "--out", out, "--json")
    assert res.exit_code == 0, res.output
