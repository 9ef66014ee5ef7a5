"""Stage-2 gates on whose mind a thought or line speaks from (protocol/gates_thoughts.py),
on a case the embedded demo model wrote and its 1.5B judge accepted at the maximum."""

import json
from pathlib import Path

from ioa_synth.protocol.gates import stage2_gate_failures
from ioa_synth.protocol.gates_text import in_language
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output
from ioa_synth.testing.scripted_case import valid_stage1, valid_stage2

CASE = json.loads((Path(__file__).parents[1] / "fixtures" / "demo_cases" / "business_crossed_thoughts.json").read_text())


def _failures(profiles: dict, dialogue: dict) -> list[str]:
    return stage2_gate_failures(Stage2Output.model_validate(dialogue), Stage1Output.model_validate(profiles))


def test_a_thought_holding_the_other_members_reading_or_premise_fails():
    failures = _failures(CASE["profiles"], CASE["dialogue"])
    # turn 3: M1 thinks "I am not familiar with deep learning techniques", M2's hidden assumption;
    # turn 4: M2 thinks M1's reading of MA2 word for word
    assert "turn 3: the inner thought of M1 holds M2.hidden_assumptions[1], which is M2's" in failures[0]
    assert "turn 4: the inner thought of M2 holds MA2.member_a_understanding, which is M1's" in failures[1]


def test_a_phrase_followed_by_what_it_means_is_defined_aloud():
    failures = _failures(CASE["profiles"], CASE["dialogue"])
    # "The degree of correctness in forecasting refers to how accurate our model can be ..."
    assert any(f.startswith("turn 3: MA2's phrase is defined aloud") for f in failures)


def test_a_thought_of_the_speakers_own_reading_and_a_phrase_used_in_a_sentence_pass():
    profiles = CASE["profiles"]
    dialogue = json.loads(json.dumps(CASE["dialogue"]))
    turns = dialogue["turns"]
    turns[2]["utterance"] = "The degree of correctness in forecasting is what the board will look at first."
    turns[2]["inner_thought"] = "I read it as the probability of correctly predicting future outcomes."
    turns[3]["inner_thought"] = ("To me it is the ability to identify patterns and make informed decisions "
                                 "based on past data.")
    assert not [f for f in _failures(profiles, dialogue) if "inner thought of" in f or "defined aloud" in f]


def test_the_scripted_valid_case_passes_and_other_languages_have_no_defined_aloud_rule():
    assert _failures(valid_stage1(), valid_stage2()) == []
    with in_language("de"):
        from ioa_synth.protocol.gates_thoughts import defined_aloud
        assert defined_aloud(Stage2Output.model_validate(CASE["dialogue"]),
                             Stage1Output.model_validate(CASE["profiles"])) == []
