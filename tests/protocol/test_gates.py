"""The content gates: careful, human-written cases pass; the copied and
placeholder output of a small model fails, each gate with its own reason. The
thresholds are those of ``GateThresholds`` (docs/build.md, "Content gates")."""

from __future__ import annotations

import copy

import pytest

from ioa_synth.testing.scripted_server import valid_stage1, valid_stage2
from ioa_synth.protocol.gates import (GateThresholds, copies_description, is_placeholder, load_gates, overlap,
                                      stage1_gate_failures, stage2_gate_failures)
from ioa_synth.protocol.schemas import FIELD_DESCRIPTIONS, Stage1Output, Stage2Output, stage1_problems
from ioa_synth.protocol.gates_text import stems


def _member(mid, name, role, expertise, background, private, assumptions):
    return {"id": mid, "name": name, "role": role, "expertise": expertise, "background": background,
            "private_state": private, "hidden_assumptions": assumptions}


def _ma(i, kind, topic, surface, a, b, why):
    return {"id": f"MA{i}", "type": kind, "topic": topic, "surface_form": surface, "member_a_understanding": a,
            "member_b_understanding": b, "why_undetected": why}


def _dialogue(names, turns):
    return {"turns": [{"turn_idx": i + 1, "speaker_id": f"M{i % 2 + 1}", "speaker_name": names[i % 2],
                       "inner_thought": th, "utterance": said} for i, (said, th) in enumerate(turns)]}


# A careful medicine case, written as a frontier model (or a careful human) would.
SEPSIS = {
    "meeting_scenario": "An ICU attending and a clinical data scientist prepare the pilot of a sepsis early-warning "
                        "score. They must agree how lead time and alert yield are counted and where the pilot "
                        "starts, and leave with a go-live date.",
    "members": [
        _member("M1", "Priya Raman", "ICU attending physician", "critical care and sepsis management",
                "fifteen years at the bedside, chaired the hospital's sepsis bundle committee",
                "wants the pilot to show earlier antibiotics so she can argue for two more night nurses",
                ["nurses chart vitals promptly", "chart review is the gold standard", "cardiac ICU runs its own protocols"]),
        _member("M2", "Tomás Herrera", "clinical data scientist", "EHR data pipelines and model validation",
                "built the readmission model from audit-log data before moving to critical care",
                "needs a clean outcome label to publish the validation paper this year",
                ["audit-log timestamps are exact", "consensus definitions beat clinician judgement",
                 "the data feed defines the study population"]),
    ],
    "misalignment_points": [
        _ma(1, "definitional", "start of the sepsis episode", "time zero",
            "the moment the bedside nurse documents the first abnormal vital sign in the flowsheet",
            "the timestamp of the first blood culture order in the EHR audit log",
            "both use the term daily and each has only ever computed it one way"),
        _ma(2, "criterial", "what counts as a correct alert", "a positive alert",
            "an alert that leads to antibiotics within one hour and that the attending endorses on chart review",
            "any alert whose patient meets Sepsis-3 criteria within 48 hours, regardless of treatment",
            "both want rigour and hear the other's call for strictness as agreement"),
        _ma(3, "scopal", "pilot scope", "the pilot units",
            "the two medical ICUs on the fourth floor, excluding the cardiac ICU",
            "all five adult ICUs including cardiac and neuro, because the feed already covers them",
            "the phrase was used in the grant and nobody ever listed the units"),
    ],
    "conversation_outline": [
        {"turn": 1, "speaker": "M1", "description": "Priya anchors the lead-time analysis.", "ma_ids": ["MA1"]},
        {"turn": 2, "speaker": "M2", "description": "Tomás says the anchor is already computed.", "ma_ids": ["MA1"]},
        {"turn": 3, "speaker": "M1", "description": "Priya asks for strict counting of alerts.", "ma_ids": ["MA2"]},
        {"turn": 4, "speaker": "M2", "description": "Tomás agrees on a standard for alerts.", "ma_ids": ["MA2"]},
        {"turn": 5, "speaker": "M1", "description": "Priya proposes where and when to start.", "ma_ids": ["MA3"]},
        {"turn": 6, "speaker": "M2", "description": "Tomás confirms the start needs no integration work.",
         "ma_ids": ["MA3"]},
    ],
}
SEPSIS_DIALOGUE = _dialogue(("Priya Raman", "Tomás Herrera"), [
    ("Before we argue about thresholds, I want us anchored on time zero for every case, otherwise the lead-time "
     "numbers mean nothing.",
     "Time zero is when the nurse charts the first abnormal vital; that is the first moment anyone could act."),
    ("Agreed. I already compute time zero for each encounter, so lead time falls out of the same table.",
     "Time zero is the first culture order in the audit log, clean and stamped to the second."),
    ("Good. And when we count positive alerts, let's be strict, I don't want to inflate the yield for the committee.",
     "Strict means the alert changed care: antibiotics inside the hour, and I would sign it off on review."),
    ("Completely. A positive alert has to hold up against the consensus definition, not anyone's gut feeling.",
     "Sepsis-3 within two days is the only defensible label; treatment decisions are far too noisy."),
    ("Then we start in the pilot units next month and look at the numbers after six weeks.",
     "The two medical ICUs on four; cardiac has its own protocols and was never in scope."),
    ("Works for me. The feed is live in the pilot units already, so there's no extra integration.",
     "The feed covers all five adult ICUs, so that is where the pilot runs."),
    ("Perfect. I'll brief the nurse managers this week.",
     "Four-East and Four-West need a heads-up about the new banner."),
    ("And I'll send the first weekly report on the Monday after go-live.",
     "I will break the report out per unit, all five of them."),
])

# A careful law case, with a plural variant of a surface form in the dialogue.
DPA = {
    "meeting_scenario": "In-house counsel and a procurement manager review a data-sharing agreement with an analytics "
                        "vendor before phase one starts; they expect to leave with a signing plan.",
    "members": [
        _member("M1", "Hannah Weiss", "in-house counsel", "data protection law and contract negotiation",
                "former privacy associate at a law firm, negotiated the company's vendor addenda",
                "wants no transfer to happen before the privacy register is complete for the audit",
                ["pseudonymised identifiers are regulated", "the DPO approves every new transfer",
                 "her 2021 addendum governs all analytics vendors"]),
        _member("M2", "David Osei", "procurement manager", "vendor onboarding and purchasing systems",
                "ran purchasing for the sales organisation, where the CRM was the only customer data",
                "must close the purchase order this quarter to keep the negotiated discount",
                ["usage logs are anonymous", "a countersigned order form completes a purchase",
                 "clicked-through terms are binding agreements"]),
    ],
    "misalignment_points": [
        _ma(1, "definitional", "what data is regulated", "personal data",
            "anything identifying a person under GDPR Article 4, including pseudonymised customer IDs and IP addresses",
            "names, emails and phone numbers in the CRM export, the fields marked PII in the catalogue",
            "both treat the term as obvious and neither has seen the other's data inventory"),
        _ma(2, "procedural", "approval step", "sign-off",
            "written approval from the data protection officer recorded in the privacy register before signature",
            "the vendor's countersigned order form returned through the procurement portal",
            "each side's approval is routine in their own department"),
        _ma(3, "presuppositional", "governing terms", "the existing DPA",
            "the 2021 processing addendum she renegotiated, with the Standard Contractual Clauses annexed",
            "the vendor's standard online terms clicked through when the trial began",
            "both know an agreement exists and assume the other means the same document"),
    ],
    "conversation_outline": [
        {"turn": t, "speaker": "M1" if t % 2 else "M2", "description": "They walk through the next contract item.",
         "ma_ids": [f"MA{(t + 1) // 2}"]} for t in range(1, 7)],
}
DPA_DIALOGUE = _dialogue(("Hannah Weiss", "David"), [
    ("Let's keep personal data out of the first phase entirely; that makes the review much lighter.",
     "Pseudonymised IDs and IP addresses count too, so the usage logs cannot go in phase one."),
    ("Easy, the phase-one feed has no personal data in it, it's just usage logs.",
     "No names, emails or phone numbers; the CRM export isn't part of phase one."),
    ("Great. Then it only needs the usual sign-off before anything is transferred.",
     "The DPO has to approve it in the privacy register; that takes a week at least."),
    ("I'll chase the sign-offs myself so nothing stalls.",
     "The vendor just needs to countersign the order form in the portal; I can get that by Friday."),
    ("And we rely on the existing DPA for the transfer terms, so no new negotiation.",
     "My 2021 addendum with the clauses annexed covers this vendor; I negotiated it line by line."),
    ("Right, the existing DPA already covers them, so legal review is quick.",
     "They accepted the standard online terms when the trial started; that is our agreement."),
])

CAREFUL = [(SEPSIS, SEPSIS_DIALOGUE), (DPA, DPA_DIALOGUE), (valid_stage1(4), valid_stage2(6))]


@pytest.mark.parametrize("profiles, dialogue", CAREFUL, ids=["medicine", "law", "scripted"])
def test_careful_cases_pass_every_gate(profiles, dialogue):
    p = Stage1Output.model_validate(profiles)
    assert stage1_problems(p) == [] and stage1_gate_failures(p) == []
    assert stage2_gate_failures(Stage2Output.model_validate(dialogue), p) == []


# What a 1.5B model produced on the demo: the prompt's own example copied
# into a business case, identical understandings, "..." everywhere.
PARROTED = copy.deepcopy(valid_stage1(2))
PARROTED["misalignment_points"][0].update(
    surface_form="learn Torch first", member_a_understanding="Lua Torch vs PyTorch",
    member_b_understanding="Lua Torch vs PyTorch", why_undetected="...")
PARROTED["misalignment_points"][1].update(surface_form="learn Torch first", why_undetected="N/A")
PARROTED["members"][1]["background"] = "<text>"
PARROTED["conversation_outline"] = [dict(t, ma_ids=["MA1"]) for t in PARROTED["conversation_outline"]]


def test_parroted_stage1_fails_with_every_reason():
    failures = stage1_gate_failures(Stage1Output.model_validate(PARROTED))
    text = " | ".join(failures)
    assert "placeholder instead of content in M2.background ('<text>'), MA1.why_undetected ('...'), " \
           "MA2.why_undetected ('N/A')" in text
    assert "MA1.member_a_understanding has 4 words" in text
    assert "MA1: the two understandings are (nearly) the same (100% shared content words)" in text
    assert "MA2 has the same surface form as MA1 ('learn Torch first')" in text
    assert "MA2 is in no outline turn's ma_ids" in text


def test_all_dots_dialogue_fails():
    p = Stage1Output.model_validate(valid_stage1(2))
    d = valid_stage2(4)
    for t in d["turns"]:
        t["utterance"] = t["inner_thought"] = "..."
    d["turns"][1]["utterance"] = "…"
    failures = stage2_gate_failures(Stage2Output.model_validate(d), p)
    assert failures[0].startswith("placeholder instead of content in turn 1.inner_thought ('...'), turn 1.utterance")
    assert "turn 2.utterance ('…')" in failures[0]
    assert any("MA1: its surface form 'the held-out set' appears in no utterance" in f for f in failures)


@pytest.mark.parametrize("text", ["...", "…", " - ", "", "N/A", "TBD", "<text>", "{name}", "[utterance]", "None."])
def test_placeholders(text):
    assert is_placeholder(text)


@pytest.mark.parametrize("text", ["Agreed.", "OK, Friday then.", "So we'd... yeah, fine.", "Sure - go ahead."])
def test_short_real_speech_is_not_a_placeholder(text):
    assert not is_placeholder(text)


def test_text_copied_from_a_field_description_fails():
    data = valid_stage1(2)
    data["misalignment_points"][1]["member_b_understanding"] = FIELD_DESCRIPTIONS["member_b_understanding"]
    failures = stage1_gate_failures(Stage1Output.model_validate(data))
    assert failures == ["MA2.member_b_understanding copies the field description from the instructions; "
                        "write the actual content"]
    assert not copies_description(SEPSIS["misalignment_points"][0]["member_a_understanding"])


def test_copied_description_length_comes_from_the_thresholds_given():
    words = FIELD_DESCRIPTIONS["member_b_understanding"].split()
    three = "Our plan: " + " ".join(words[:3]) + " and nothing else."
    assert not copies_description(three)  # the shipped threshold needs a longer run of words
    strict = load_gates().model_copy(update={"copied_description_words": 3})
    assert copies_description(three, strict)
    data = valid_stage1(2)
    data["misalignment_points"][1]["member_b_understanding"] = three + " " + data["misalignment_points"][1]["member_b_understanding"]
    assert any("copies the field description" in f
               for f in stage1_gate_failures(Stage1Output.model_validate(data), strict))


def test_nearly_equal_understandings_fail_and_distinct_readings_of_one_term_pass():
    data = valid_stage1(2)
    p = data["misalignment_points"][0]
    p["member_b_understanding"] = p["member_a_understanding"].replace("2,400", "2,500")
    assert overlap(p["member_a_understanding"], p["member_b_understanding"]) >= load_gates().max_understanding_overlap
    assert any("MA1: the two understandings are (nearly) the same" in f
               for f in stage1_gate_failures(Stage1Output.model_validate(data)))
    for case, _ in CAREFUL:
        for m in case["misalignment_points"]:
            assert overlap(m["member_a_understanding"], m["member_b_understanding"]) < 0.35


def test_an_outline_naming_an_unknown_point_fails():
    data = valid_stage1(2)
    data["conversation_outline"][0]["ma_ids"] = ["MA1", "MA7"]
    assert stage1_gate_failures(Stage1Output.model_validate(data)) == [
        "outline ma_ids name MA7, which is not a misalignment point"]


def test_speaker_names_first_name_or_title_pass_other_member_fails():
    p = Stage1Output.model_validate(SEPSIS)
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    d["turns"][0]["speaker_name"] = "Dr. Raman"
    d["turns"][1]["speaker_name"] = "Tomás"
    assert stage2_gate_failures(Stage2Output.model_validate(d), p) == []
    d["turns"][2]["speaker_name"] = "Tomás Herrera"
    d["turns"][3]["speaker_id"] = "M3"
    assert stage2_gate_failures(Stage2Output.model_validate(d), p) == [
        "turn 3: speaker M1 'Tomás Herrera' does not match the profiles (M1 is 'Priya Raman')",
        "turn 4: speaker M3 'Tomás Herrera' does not match the profiles (speaker ids are M1, M2)"]


def test_utterance_stating_a_private_reading_fails_but_the_surface_form_alone_does_not():
    p = Stage1Output.model_validate(SEPSIS)
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    d["turns"][1]["utterance"] = ("Agreed, time zero is the first blood culture order in the EHR audit log, "
                                  "so lead time falls out of the same table.")
    assert stage2_gate_failures(Stage2Output.model_validate(d), p) == [
        "turn 2: the utterance states MA1.member_b_understanding aloud ('blood culture order ehr'); "
        "private readings belong in inner thoughts only"]
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    d["turns"][0]["utterance"] = "Honestly I just want the pilot to show earlier antibiotics, that's all."
    failures = stage2_gate_failures(Stage2Output.model_validate(d), p)
    assert failures and "M1.private_state" in failures[0]


def test_a_reading_s_wording_that_the_scenario_states_in_public_is_no_leak():
    """A run of words a reading shares with the plan's public text (here the scenario) says
    nothing private aloud; the reading's own words still do."""
    p = SEPSIS | {"meeting_scenario": SEPSIS["meeting_scenario"] + " Nurses chase each blood culture order in the EHR by hand."}
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    d["turns"][1]["utterance"] = "Agreed, and every blood culture order in the EHR gets chased by the nurses."
    assert stage2_gate_failures(Stage2Output.model_validate(d), Stage1Output.model_validate(SEPSIS)) == [
        "turn 2: the utterance states MA1.member_b_understanding aloud ('blood culture order ehr'); "
        "private readings belong in inner thoughts only"]
    assert stage2_gate_failures(Stage2Output.model_validate(d), Stage1Output.model_validate(p)) == []
    d["turns"][1]["utterance"] = ("Agreed, time zero is the first blood culture order in the EHR audit log, "
                                  "so lead time falls out of the same table.")
    assert stage2_gate_failures(Stage2Output.model_validate(d), Stage1Output.model_validate(p)) == [
        "turn 2: the utterance states MA1.member_b_understanding aloud ('culture order ehr audit'); "
        "private readings belong in inner thoughts only"]


def test_an_inner_thought_that_is_a_spoken_line_fails():
    """The demo model, writing thoughts beside a finished transcript (the scaffold's two
    passes), gave each turn the next turn's line as its thought (2026-12-06)."""
    p = Stage1Output.model_validate(SEPSIS)
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    n = len(d["turns"])
    for i in range(n - 1):
        d["turns"][i]["inner_thought"] = d["turns"][i + 1]["utterance"]
    failures = stage2_gate_failures(Stage2Output.model_validate(d), p)
    want = [t["turn_idx"] for t in d["turns"][:-1] if len(set(stems(t["inner_thought"]))) >= 4]
    assert want and failures == [
        "inner thoughts repeat a spoken line: "
        + ", ".join(f"turn {i} (repeats the line of turn {i + 1})" for i in want)
        + "; a thought says what its speaker keeps to themselves at that line"]
    d["turns"][0]["inner_thought"] = d["turns"][0]["utterance"]  # its own line, said again in the head
    assert "turn 1 (repeats the line of turn 1)" in stage2_gate_failures(Stage2Output.model_validate(d), p)[0]


def test_an_inner_thought_retelling_the_outline_fails_but_one_using_its_surface_form_does_not():
    # Recorded from the embedded Qwen 1.5B demo: the outline's description, retold as a thought.
    p = Stage1Output.model_validate(SEPSIS)
    p.conversation_outline[3].description = "M2 asks if there are any concerns related to the training process."
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    d["turns"][3]["inner_thought"] = "I asked if there are any concerns related to the training process of SCALAR."
    assert stage2_gate_failures(Stage2Output.model_validate(d), p) == [
        "turn 4: the inner thought restates the outline's description of a turn; write what the speaker "
        "privately thinks there: their own reading of the point at hand and what they assume the other means"]
    # The shared phrase itself is no retelling: an outline naming "a positive alert" and a
    # thought about what "a positive alert" is pass.
    p.conversation_outline[3].description = "Tomás agrees on a positive alert standard for the pilot units."
    d["turns"][3]["inner_thought"] = "A positive alert standard for the pilot units means Sepsis-3 within two days."
    failures = stage2_gate_failures(Stage2Output.model_validate(d), p)
    assert not any("inner thought" in f for f in failures)
    assert load_gates().thought_outline_words == 5


def test_a_stemmed_variant_of_the_surface_form_counts_and_its_absence_fails():
    p = Stage1Output.model_validate(DPA)
    assert "sign-offs" in DPA_DIALOGUE["turns"][3]["utterance"]  # the variant in the careful case above
    d = copy.deepcopy(DPA_DIALOGUE)
    d["turns"][2]["utterance"] = "Great. Then it only needs the usual approval before anything is transferred."
    d["turns"][3]["utterance"] = "I'll chase it myself so nothing stalls."
    assert stage2_gate_failures(Stage2Output.model_validate(d), p) == [
        "MA2: its surface form 'sign-off' appears in no utterance; a speaker must say it"]


def test_thresholds_are_one_typed_documented_model():
    gates = GateThresholds()
    for name, info in GateThresholds.model_fields.items():
        assert info.description, name
    assert gates == load_gates()
    stricter = gates.model_copy(update={"min_understanding_words": 40})
    p = Stage1Output.model_validate(SEPSIS)
    assert len(stage1_gate_failures(p, stricter)) == 6 and stage1_gate_failures(p) == []


def test_docs_document_every_threshold_with_its_default():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "docs" / "build.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip().strip("`"): line.split("|")[2].strip()
            for line in readme.splitlines() if line.startswith("| `") and line.count("|") == 4}
    for name, value in GateThresholds().model_dump().items():
        assert name in rows, name
        if not isinstance(value, tuple):
            assert rows[name] == str(value), name


# Recorded from the README demo on the embedded Qwen2.5-Coder-1.5B (seed arxiv:2504.04520):
# two wordings of one textbook definition, and a dialogue whose turns repeat one another.
QWEN_SAME_READING = ("The Hessian matrix is a square matrix that contains second-order partial derivatives of a "
                     "function.",
                     "The Hessian matrix is a square matrix that contains the second derivatives of a function with "
                     "respect to its parameters.")
QWEN_REPEAT = ("Yes, Jane. The full Hessian matrix is indeed a powerful tool for understanding the behavior of large "
               "language models, but the computation is infeasible due to its size.")


def test_two_wordings_of_one_definition_are_the_same_reading():
    data = valid_stage1(2)
    data["misalignment_points"][0].update(surface_form="the Hessian matrix",
                                          member_a_understanding=QWEN_SAME_READING[0],
                                          member_b_understanding=QWEN_SAME_READING[1])
    failures = stage1_gate_failures(Stage1Output.model_validate(data))
    assert failures == ["MA1: the two understandings are (nearly) the same (64% shared content words); "
                        "the members must mean different things"]


def test_repeated_utterances_fail_but_short_acknowledgements_do_not():
    p = Stage1Output.model_validate(valid_stage1(2))
    d = valid_stage2(6)
    d["turns"][3]["utterance"] += " " + QWEN_REPEAT
    d["turns"][4]["utterance"] = QWEN_REPEAT.replace("Yes, Jane.", "Right.")
    d["turns"][5]["utterance"] = QWEN_REPEAT
    assert stage2_gate_failures(Stage2Output.model_validate(d), p) == [
        "utterances repeat earlier ones: turn 6 (repeats turn 5); every turn must add something new"]
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    d["turns"][6]["utterance"] = d["turns"][7]["utterance"] = "Agreed, sounds good."
    assert stage2_gate_failures(Stage2Output.model_validate(d), Stage1Output.model_validate(SEPSIS)) == []


def test_stemming_is_safe_from_concurrent_worker_threads():
    # build runs cases in worker threads; a Snowball stemmer shared between them corrupts its
    # cursor (IndexError or wrong stems): each thread must stem with its own
    import threading

    from ioa_synth.protocol.gates import stems

    text = " ".join(["generalization regularization hospitalization internationalization"] * 50)
    want = stems(text)
    errors: list[str] = []

    def work() -> None:
        try:
            for _ in range(200):
                if stems(text) != want:
                    errors.append("wrong stems")
                    return
        except Exception as exc:  # noqa: BLE001 - any failure is the finding
            errors.append(repr(exc))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_understandings_that_name_different_quantities_are_different_readings():
    # recorded from the embedded Qwen demo (business case): many shared words, other numbers
    for a, b in (("a discount of .05 million dollars on each invoice", "a discount of .04 million dollars on each invoice"),
                 ("the audit covers over 1 million transactions across nine key fields",
                  "the audit covers only a few hundred transactions across five key fields")):
        p = copy.deepcopy(SEPSIS)
        p["misalignment_points"][0].update(member_a_understanding=a, member_b_understanding=b)
        assert stage1_gate_failures(Stage1Output.model_validate(p)) == [], (a, b)
    p = copy.deepcopy(SEPSIS)
    p["misalignment_points"][0].update(member_a_understanding="the two-week cohort of patients from ward nine",
                                       member_b_understanding="the cohort of patients from ward nine, two weeks")
    assert any("the two understandings are (nearly) the same" in f
               for f in stage1_gate_failures(Stage1Output.model_validate(p)))


def test_a_surface_form_pasted_onto_an_utterance_fails_and_one_said_in_a_sentence_passes():
    # Recorded from the embedded Qwen 1.5B demo (accepted before this gate): the stage-2 cue
    # [say "..."] appended to a line, opening a sentence in lower case or closing the utterance
    # without a full stop.
    p = Stage1Output.model_validate(SEPSIS)
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    d["turns"][1]["utterance"] = "Yes, that could enhance our lead-time numbers. Let's explore this idea. time zero"
    assert stage2_gate_failures(Stage2Output.model_validate(d), p) == [
        "turn 2: a surface form is pasted onto the utterance (opening a sentence in lower case, glued to the word "
        "before it, capitalised inside a sentence, after another article, or ending the utterance without a full "
        "stop) instead of said inside a sentence; work the phrase into what the speaker says"]
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    d["turns"][2]["utterance"] = "Any tips on counting?  a positive alert and the yield are combined into one score."
    assert "turn 3: a surface form is pasted" in " ".join(stage2_gate_failures(Stage2Output.model_validate(d), p))
    # recorded from the two-pass scaffold demo (accepted before this check, 2026-12-06): the phrase
    # dropped into a sentence with a capital it does not have ("fine-tune the pre A collection of ...")
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    d["turns"][2]["utterance"] = "We gather the instructions and fine-tune the pre A positive alert on them."
    assert "turn 3: a surface form is pasted" in " ".join(stage2_gate_failures(Stage2Output.model_validate(d), p))
    # said inside sentences, capitalised at a sentence's start or ending before its full stop: no failure
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    d["turns"][1]["utterance"] = "Time zero is already in the table. We can anchor the lead time on time zero."
    assert not [f for f in stage2_gate_failures(Stage2Output.model_validate(d), p) if "pasted" in f]


def test_glued_words_and_a_glued_surface_form_fail():
    # Recorded from the embedded Qwen 1.5B demo (accepted before these checks): a surface form
    # with token debris, "the performance metrics mentioned in both.Readings", said glued to the
    # word before it: "Havethe performance metrics mentioned in both.Readings?"
    p = Stage1Output.model_validate(SEPSIS)
    p.misalignment_points[1].surface_form = "a positive alert in both.Readings"
    assert any("run together" in f and "both.Readings" in f for f in stage1_gate_failures(p))
    p.misalignment_points[1].surface_form = "our unittest.TestCase base"  # code is no debris
    assert not [f for f in stage1_gate_failures(p) if "run together" in f]
    # words run together, recorded from the demo (2026-12-06; the first accepted before this check)
    for glued in ("our questions allow for aStructured/multi-steplegal", "the type of AI used togeneratePredictive",
                  "the practice of maintainingIT-basedSystems", "the large languagemodel'parameters",
                  "the importance ofHuman-basedjudges"):
        p.misalignment_points[1].surface_form = glued
        assert any("run together" in f for f in stage1_gate_failures(p)), glued
    for fine in ("the iPhone cohort", "our mRNA panel", "the fastText baseline", "the macOS build", "a kNN index",
                 "the ForEach loop", "our Type A alerts", "the client's invoices", "the o'clock deadline",
                 "the users' consent form", "our scRNA atlas"):
        p.misalignment_points[1].surface_form = fine
        assert not [f for f in stage1_gate_failures(p) if "run together" in f], fine
    # all lower case, from a case the gates accepted (2026-12-07): a word list tells them apart
    for glued in ("our objective isaccuracy", "our team agrees onprivacy regulations", "the results of thispaper",
                  "our model beats thanbaselinemodel"):
        p.misalignment_points[1].surface_form = glued
        assert any("run together" in f for f in stage1_gate_failures(p)), glued
    for fine in ("the onboarding checklist", "our dataset split", "the pretrained encoder", "the isotope list",
                 "another option", "the inference budget", "our dataloader", "the thesis draft", "the island map"):
        p.misalignment_points[1].surface_form = fine
        assert not [f for f in stage1_gate_failures(p) if "run together" in f], fine
    p = Stage1Output.model_validate(SEPSIS)
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    d["turns"][2]["utterance"] = "Thanks for the numbers, Tomás. Havea positive alert?"
    failures = stage2_gate_failures(Stage2Output.model_validate(d), p)
    assert any(f.startswith("turn 3: a surface form is pasted") for f in failures), failures
    # a lone letter before the phrase, recorded from the demo (accepted before this check,
    # 2026-12-06): "so L our benchmark includes 340 law exams"
    d["turns"][2]["utterance"] = "We compare like with like, so L a positive alert counts once."
    failures = stage2_gate_failures(Stage2Output.model_validate(d), p)
    assert any(f.startswith("turn 3: a surface form is pasted") for f in failures), failures
    # an article before a phrase that opens with one, recorded from the demo (2026-12-07):
    # "I can give you a the PyTorch autograd library and some examples later"
    for doubled in ("I can send you the a positive alert list later.", "So an a positive alert counts once."):
        d["turns"][2]["utterance"] = doubled
        failures = stage2_gate_failures(Stage2Output.model_validate(d), p)
        assert any(f.startswith("turn 3: a surface form is pasted") for f in failures), (doubled, failures)
    for fine in ("So I think a positive alert counts once.", "In plan B, a positive alert counts once.",
                 "As in table A a positive alert counts once.", "Give her a positive alert each time.",
                 "Ask Anna a positive alert question.", "They sent that a positive alert counts once."):
        d["turns"][2]["utterance"] = fine
        assert not [f for f in stage2_gate_failures(Stage2Output.model_validate(d), p) if "pasted" in f], fine
    # a phrase that happens to start inside another word and run on is no glued phrase
    d = copy.deepcopy(SEPSIS_DIALOGUE)
    d["turns"][2]["utterance"] = "We count a positive alert strictly; preventive alerting is out of scope."
    assert not [f for f in stage2_gate_failures(Stage2Output.model_validate(d), p) if "pasted" in f]


def test_words_and_sentences_run_together_in_a_line_or_thought_fail():
    """Recorded from a case the gates accepted (a clean-clone demo run, 2026-12-07): its lines
    went on past a sentence's stop through a quote mark (".'ve been", ".'re focusing") and its
    surface form ran three words together after a preposition ("acrossmultiplecales")."""
    p = Stage1Output.model_validate(SEPSIS)
    p.misalignment_points[1].surface_form = "final tune various base models acrossmultiplecales"
    assert any("run together ('acrossmultiplecales')" in f for f in stage1_gate_failures(p))
    p = Stage1Output.model_validate(SEPSIS)
    for junk, shown in (("Let's dive into our next phase of research.'ve been working hard on it.", "research.'ve"),
                        ("Are you ready to begin?'re excited to see how far we go.", "begin?'re"),
                        ("We tuned the base models acrossmultiplecales last week.", "acrossmultiplecales"),
                        ("We measured theperformance of the alert.", "theperformance"),
                        ("We discussed the techniques...z" + "." * 300 + " fine.", "z...."),
                        # a later demo case's line (2026-12-07), accepted before this mark ran on
                        ("Welcome back again today... ok?!!!!!??!!!??!!!!?" + "!!!???????" * 30 + "I our model", "ok?!!!"),
                        ("We agreed on the plan ****** and moved on.", "******"),
                        # another demo case's lines, the same day: a speaker's cue glued on after a stop,
                        # single letters and dots run on, a stop after question marks
                        ("How will we approach this project??.m.Ueda continues: fine.", "??."),
                        ("You have a good idea there, Leilani.m.Whitefi acknowledges this.", ".m.W"),
                        ("We select features carefully, losure.x.x.x.x. Then we test.", "x.x.x.x."),
                        # the case a v10 demo run accepted (2026-12-07): a word said 18 times, a stop
                        # glued to an abbreviation's dots
                        ("Thank you for your input... " + "using... " * 18 + "the set.", "nput... using"),
                        ("We keep the data.e.g. for the audit.", ".e.g."),
                        ("We ship it, we ship it, we ship it, we ship it today.", "e ship it, we s"),
                        # ellipses run on with a space between (a demo line of 972abc3)
                        ("We agree before moving forward... ... And we test it.", "... ..."),
                        ("We agree before moving forward… … And we test it.", "… …")):
        for field in ("utterance", "inner_thought"):
            d = copy.deepcopy(SEPSIS_DIALOGUE)
            d["turns"][2][field] = junk if field == "utterance" else "I " + junk[0].lower() + junk[1:]
            failures = [f for f in stage2_gate_failures(Stage2Output.model_validate(d), p) if "run together" in f]
            assert len(failures) == 1 and shown in failures[0] and "turn 3." in failures[0], (junk, failures)
    for fine in ("We ran allreduce over the dataloader, e.g. in v2.1, and it's fine... or is it?",
                 "She said 'done.' Then we shipped threading.Lock fixes.", "The throughput went up, didn't it?",
                 "Informationally, the hyperparameters and the leaderboard look fine.",
                 "Really?! That is great!!! Did it pass??? ... yes -- it did.",
                 "No, no, no, not that set; a.k.a. the held-out one, e.g. 0, 0, 0, 0 errors."):
        d = copy.deepcopy(SEPSIS_DIALOGUE)
        d["turns"][2]["utterance"] = fine
        assert not [f for f in stage2_gate_failures(Stage2Output.model_validate(d), p) if "run together" in f], fine


def test_the_prompts_outline_marker_copied_into_a_line_fails():
    # recorded from the embedded Qwen 1.5B demo (two-pass scaffold, 2026-12-06): the marker
    # pasted onto a line, which no other gate caught
    profiles = Stage1Output.model_validate(valid_stage1())
    data = valid_stage2()
    assert stage2_gate_failures(Stage2Output.model_validate(data), profiles) == []
    data["turns"][1]["utterance"] += " [say 'the aim of the benchmark'] inside a sentence; say 'the format'] inside a sentence"
    failures = stage2_gate_failures(Stage2Output.model_validate(data), profiles)
    assert any("turn 2: the prompt's outline marker" in f for f in failures), failures
    data = valid_stage2()
    data["turns"][0]["inner_thought"] += ' [say "the held-out set"]'
    assert any("outline marker" in f for f in stage2_gate_failures(Stage2Output.model_validate(data), profiles))
