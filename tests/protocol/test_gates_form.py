"""Form gates (the gaps a fresh user of the README demo found): each failure recorded
from the embedded Qwen demo fails with its own reason, while careful, realistic text that
comes close to each rule passes. Thresholds: ``GateThresholds`` (docs/build.md, "Content gates")."""

from __future__ import annotations

import copy

import pytest

import ioa_synth.build  # noqa: F401 - registers the build's templates and their instructions with the gates
from ioa_synth.core.templates import template_prose
from ioa_synth.testing.scripted_server import valid_stage1, valid_stage2
from ioa_synth.protocol.gates import load_gates, stage1_gate_failures, stage2_gate_failures
from ioa_synth.protocol.gates_form import field_limits, has_json_syntax, is_question, is_stock_name
from ioa_synth.protocol.gates_text import scannable
from ioa_synth.protocol.schemas import LONG, MEDIUM, SHORT, SURFACE, Stage1Output, Stage2Output

from .test_gates import DPA, DPA_DIALOGUE, SEPSIS

# Recorded from the demo (arxiv:2504.04520 and arxiv:2602.15248), cut by the llama.cpp grammar at maxLength.
CUT_SURFACE = ("the full Hessian of perplexity that John computes with PyTorch autograd on the 124M GPT-2 "
               "checkpoint for every layer")[:SHORT - 13] + ", while Jane,"
CUT_DESCRIPTION = ("John opens by summarising the invoice dilution results from the two stage XGBoost model and the "
                   "KAN baseline, explaining that the leakage free split kept every invoice of a buyer in one fold, "
                   "then asks Jane whether the finance team's dilution labels for the 2023 quarter include credit "
                   "notes issued after the maturity date, because the model's recall on late credit notes looked "
                   "suspiciously high compared with the earlier quarters and the validation report mentions a "
                   "reconciliation step that")[:MEDIUM]
JSON_ASSUMPTION = "member_b_understanding':'The paper discusses the Hessian of perplexity for large language models"
JSON_ASSUMPTION_2 = "why_undetected':'Both assume the other has read the paper"


def stage1(**change) -> dict:
    data = copy.deepcopy(SEPSIS)
    for path, value in change.items():
        target = data
        *head, last = path.split("__")
        for part in head:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value
    return data


def fails(data: dict) -> list[str]:
    return stage1_gate_failures(Stage1Output.model_validate(data))


def test_limits_come_from_the_request_schema():
    limits = field_limits()
    assert limits["surface_form"] == SURFACE and limits["description"] == MEDIUM
    assert limits["hidden_assumptions"] == MEDIUM and limits["utterance"] == LONG


def test_text_cut_at_its_length_limit_fails_and_long_finished_text_passes():
    assert len(CUT_SURFACE) == SHORT and len(CUT_DESCRIPTION) == MEDIUM
    failures = fails(stage1(misalignment_points__0__topic=CUT_SURFACE,
                            conversation_outline__0__description=CUT_DESCRIPTION))
    assert len(failures) == 1, failures
    cut = failures[0]
    assert cut.startswith("text cut off at its length limit in MA1.topic (120 chars")
    assert "outline turn 1.description (400 chars" in cut and "write it shorter" in cut
    # a long but finished sentence, ending well short of the limit, passes
    long_ok = CUT_DESCRIPTION[:300].rsplit(" ", 1)[0] + "."
    assert fails(stage1(conversation_outline__0__description=long_ok)) == []
    # and so does one that reaches the limit with its full stop
    at_limit = CUT_DESCRIPTION[:MEDIUM - 1] + "."
    assert len(at_limit) == MEDIUM and fails(stage1(conversation_outline__0__description=at_limit)) == []


def test_members_with_the_same_private_state_or_assumptions_fail():
    m1 = SEPSIS["members"][0]
    failures = fails(stage1(members__1__private_state=m1["private_state"],
                            members__1__hidden_assumptions=list(m1["hidden_assumptions"])))
    assert failures == [
        "M1 and M2 have (nearly) the same private_state (100% shared content words); each member's goals are their own",
        "M1 and M2 share (nearly) the same hidden assumptions (M1[0]~M2[0], M1[1]~M2[1], M1[2]~M2[2]); "
        "each member takes different things for granted"]
    # one shared assumption reworded by a colleague is still the same premise
    reworded = ["nurses always chart the vitals promptly", "audit-log timestamps are exact", "consensus wins"]
    assert "M1[0]~M2[0]" in fails(stage1(members__1__hidden_assumptions=reworded))[0]


def test_a_name_swapped_copy_fails_but_a_negated_or_different_premise_passes():
    # recorded from the demo: M2's premise is M1's with the name swapped
    data = stage1(members__0__hidden_assumptions=["Priya believes that these algorithms are more effective than the "
                                                  "deterministic model", "chart review is the gold standard",
                                                  "cardiac ICU runs its own protocols"],
                  members__1__hidden_assumptions=["Tomás believes that these algorithms are more effective than the "
                                                  "deterministic model", "audit-log timestamps are exact",
                                                  "the data feed defines the study population"])
    assert fails(data) == ["M1 and M2 share (nearly) the same hidden assumptions (M1[0]~M2[0]); "
                           "each member takes different things for granted"]
    # recorded from the demo: the same object, opposite or different premises
    m1 = ["M1 believes that the current implementation of SCALAR is accurate enough",
          "M1 assumes that the manually-curated oracle of identifier names and their grammar patterns is reliable",
          "cardiac ICU runs its own protocols"]
    m2 = ["M2 believes that the current implementation of SCALAR may not be accurate enough",
          "M2 assumes that the manually-curated oracle of identifier names and their grammar patterns may need to "
          "be updated", "the data feed defines the study population"]
    assert fails(stage1(members__0__hidden_assumptions=m1, members__1__hidden_assumptions=m2)) == []


def test_field_names_and_json_syntax_inside_text_fail_but_quotes_and_colons_in_prose_pass():
    failures = fails(stage1(members__0__hidden_assumptions=[JSON_ASSUMPTION, JSON_ASSUMPTION_2, "plain premise here"]))
    assert failures == ["field names or JSON syntax inside the text of M1.hidden_assumptions[0], "
                        "M1.hidden_assumptions[1]; each value is plain prose about its own field"]
    gates = load_gates()
    assert has_json_syntax('{"turn": 3, "speaker": "M1"}', gates)
    assert has_json_syntax('the plan", "description": "M2 agrees', gates)
    # debris with no quoted key, from the lines of a demo case the gates accepted (2026-12-07)
    for debris in ("costs and resources.m.{}},  {   }     ]}  fine.", "```obj['turns'] = turns  # Re.",
                   "we will look at obj['turns'] later"):
        assert has_json_syntax(debris, gates), debris
    for prose in ('Her "definition of done": tests pass and the docs are merged.',
                  "He calls it 'the gold set': 400 invoices labelled by hand.",
                  "Section 3: results; the private state of the market is unknown.",
                  "Both know the term 'why undetected' from the paper's appendix",
                  "We call `fit()` on the held-out set [as agreed] and log the F1."):
        assert not has_json_syntax(prose, gates), prose


@pytest.mark.parametrize("surface, question", [
    ("What is the Hessian matrix?", True), ("the Hessian matrix?", True), ("Does the audit cover Q4", True),
    ("the Hessian matrix", False), ("time zero", False), ("which-way test", False), ("Q4 invoices", False),
])
def test_surface_form_that_is_a_question_fails(surface, question):
    assert is_question(surface, load_gates()) is question
    failures = fails(stage1(misalignment_points__0__surface_form=surface))
    assert any("is a question" in f for f in failures) is question


@pytest.mark.parametrize("surface, reason", [
    ("the ratio of the number of tokens predicted correctly", "has 9 words"),  # recorded from the demo model
    ("the ratio of the number of tokens predicted correctly by the model divided", "has 13 words"),
    ("an identifier is a name", "is a statement"), ("a function is reusable code", "is a statement"),
    ("the part-of-speech tagger used in the paper", "has 7 words"), ("the sign-off", None), ("the metric used to assess the", "ends on 'the'"),
    ("the accuracy and completeness of", "ends on 'of'"), ("the effective teamwork and clear communication", None),
    ("the presence of legal nuance and", "ends on 'and'"), ("the deterministic algorithm used alone", None),
    ("the correct tag", None), ("the scikit-learn version we're using", None), ("our March release", None), ("the evaluation criteria for the LLMs", None),
    ("an artificial intelligence system designed toenerateHuman-like,._.,", "has stray punctuation (',._.,')"),  # recorded
    ("the R&D budget", None), ("the U.S. market", None), ("the v2.1 release.", None), ("the A/B test,", "(',')"),
])
def test_surface_form_that_is_a_definition_or_sentence_fails(surface, reason):
    failures = [f for f in fails(stage1(misalignment_points__0__surface_form=surface)) if "surface_form" in f]
    if reason is None:
        assert failures == []
    else:
        assert len(failures) == 1 and reason in failures[0], failures


def test_the_same_why_undetected_on_every_point_fails():
    why = "Both members assume the other has read the same paper and uses the term the same way."
    data = stage1(**{f"misalignment_points__{i}__why_undetected": why for i in range(3)})
    assert fails(data) == [
        "MA2.why_undetected repeats MA1's (100% shared content words); give each point its own reason",
        "MA3.why_undetected repeats MA1's (100% shared content words); give each point its own reason",
        "MA3.why_undetected repeats MA2's (100% shared content words); give each point its own reason"]


@pytest.mark.parametrize("name, stock", [("John Doe", True), ("Jane Smith", True), ("Dr. Jane Doe", True),
                                         ("Alice", True), ("Jane Smithers", False), ("Priya Raman", False),
                                         ("John Okafor", False)])
def test_stock_placeholder_names_fail(name, stock):
    assert is_stock_name(name, load_gates()) is stock
    failures = fails(stage1(members__0__name=name))
    assert (failures == [f"M1.name {name!r} is a stock placeholder name; give a realistic, specific name"]) is stock


def test_careful_cases_still_pass_and_a_cut_utterance_fails_in_stage2():
    p = Stage1Output.model_validate(DPA)
    assert stage1_gate_failures(p) == [] and stage2_gate_failures(Stage2Output.model_validate(DPA_DIALOGUE), p) == []
    p2 = Stage1Output.model_validate(valid_stage1(2))
    d = valid_stage2(6)
    d["turns"][2]["utterance"] = (d["turns"][2]["utterance"] + " " + "and then we would also check " * 40)[:LONG]
    d["turns"][3]["inner_thought"] = 'She means {"scope": "all units"} I think'
    failures = stage2_gate_failures(Stage2Output.model_validate(d), p2)
    assert failures[0].startswith("text cut off at its length limit in turn 3.utterance (700 chars")
    assert failures[1] == ("field names or JSON syntax inside the text of turn 4.inner_thought; "
                           "each value is plain prose about its own field")


def test_text_that_drifts_into_another_script_fails():
    # recorded from the embedded Qwen 1.5B under a presence penalty
    failures = fails(stage1(misalignment_points__1__topic="a collection of data points used to train模型"))
    assert failures == ["text switches into another script in MA2.topic; write every field in English"]
    assert fails(stage1(members__0__name="Ugo Dvořák")) == []  # accented Latin names are fine


def test_a_member_id_said_aloud_fails_and_names_pass():
    # recorded from the embedded Qwen 1.5B demo: "Yes, M1. Can you please tell me which exact version ..."
    p = Stage1Output.model_validate(valid_stage1(2))
    d = valid_stage2(6)
    assert stage2_gate_failures(Stage2Output.model_validate(d), p) == []
    d["turns"][1]["utterance"] = "Yes, M1. " + d["turns"][1]["utterance"]
    d["turns"][3]["utterance"] = d["turns"][3]["utterance"] + " Over to you, m2."
    failures = stage2_gate_failures(Stage2Output.model_validate(d), p)
    assert failures == ["turns 2, 4: a speaker says a member id (M1, M2) aloud; people call each other by name"]
    d = valid_stage2(6)
    d["turns"][1]["inner_thought"] = "M1 means the frozen set, I think."  # thoughts are the author's side
    assert stage2_gate_failures(Stage2Output.model_validate(d), p) == []


def test_text_copied_from_the_prompt_instructions_fails():
    # The embedded Qwen demo restated the system prompt in its scenario ("a research benchmark
    # about hidden disagreement"); the check compares with the templates as they stand.
    system = next(part for part in template_prose("build/stage1_generator.jinja2") if "JSON object" in part)
    copied = "Nadia and Bogdan meet. " + system.split(".")[0].replace("You plan", "They plan") + "."
    failures = fails(stage1(meeting_scenario=copied))
    assert failures == ["meeting_scenario copies the field description from the instructions; write the actual content"]
    assert fails(stage1(meeting_scenario="Nadia and Bogdan review the GDPR rule set before the audit.")) == []


def test_the_benchmarks_own_vocabulary_in_a_case_fails_but_outline_ids_do_not():
    # recorded from the embedded Qwen 1.5B demo (a fresh user's run): the plan restated in the
    # scenario, and the stage-2 prompt's "[MA1: say ...]" marker copied into an inner thought
    scenario = SEPSIS["meeting_scenario"] + " This case's plan involves exactly 3 misalignment points (MA1, MA2, MA3)."
    assert fails(stage1(meeting_scenario=scenario)) == [
        "the benchmark's own vocabulary inside the meeting in meeting_scenario ('MA1'); describe the meeting itself, "
        "never the plan or its misalignment points"]
    assert fails(stage1()) == []  # every outline turn lists its MA ids in ma_ids: no failure
    p = Stage1Output.model_validate(valid_stage1(2))
    d = valid_stage2(6)
    d["turns"][1]["inner_thought"] = "I agree with Ada but wonder how they plan to train these LLMs. [MA1: say 'the LLMs']"
    assert stage2_gate_failures(Stage2Output.model_validate(d), p) == [
        "the benchmark's own vocabulary inside the meeting in turn 2.inner_thought ('MA1'); describe the meeting "
        "itself, never the plan or its misalignment points"]


def test_an_utterance_ending_on_a_comma_is_unfinished():
    # recorded from the embedded Qwen 1.5B demo (a fresh user's run)
    p = Stage1Output.model_validate(valid_stage1(2))
    d = valid_stage2(6)
    d["turns"][4]["utterance"] = "As we begin our discussion on the paper's abstract,"
    failures = stage2_gate_failures(Stage2Output.model_validate(d), p)
    assert "unfinished sentence in turn 5.utterance (it ends on a comma, semicolon or colon); finish it" in failures
    d["turns"][4]["utterance"] = "As we begin, the March release is what matters: the rest can wait."
    assert not any("unfinished" in f for f in stage2_gate_failures(Stage2Output.model_validate(d), p))


def test_the_first_scan_of_all_texts_at_once_changes_no_verdict():
    # The form and copy checks first scan every text joined by line breaks, and look field by
    # field only when that scan finds something; a pattern with an anchor or a lookaround
    # could read the joined text differently, so it is always looked for field by field.
    assert scannable(load_gates().json_syntax) and scannable(load_gates().meta_terms)
    assert not scannable([r"^Note\b"]) and not scannable([r"\bMA(?=\d)"])
    # a quote ending one field and a colon opening the next match only across the two: no failure
    assert fails(stage1(members__0__hidden_assumptions=["the board signs off on the 'gold set'",
                                                        ": 400 invoices were labelled by hand", "plain premise here"])) == []
    # an anchored pattern still finds its match in a later field
    gates = load_gates().model_copy(update={"meta_terms": (r"^Note\b",)})
    data = stage1(members__1__background="Note the audit calendar before anything else.")
    assert stage1_gate_failures(Stage1Output.model_validate(data), gates) == [
        "the benchmark's own vocabulary inside the meeting in M2.background ('Note'); describe the meeting itself, "
        "never the plan or its misalignment points"]
