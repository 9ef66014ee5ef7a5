"""The case plan: per seed tuple the toolkit fixes member ids and names, the number of MAs,
a definitional MA1 and the outline skeleton, and the generator's request schema holds the
model to them (a grammar cannot number a point that does not exist)."""

from __future__ import annotations

import json
import re
from collections import Counter

from conftest import real_seed_tuples
from ioa_helpers import build

from ioa_synth.testing.scripted_server import request_kind, valid_stage1
from ioa_synth.protocol.gate_thresholds import GateThresholds
from ioa_synth.protocol.gates_form import surface_form_problem
from ioa_synth.protocol.plan import LATIN_TEXT, CasePlan, anchor_turns, member_names, points_for, stage2_schema
from ioa_synth.protocol.plan_modes import stage1_request_schema
from ioa_synth.protocol.schemas import Stage1Output


def _schema(body: dict) -> dict:
    fmt = body["response_format"]
    return fmt.get("schema") or fmt["json_schema"]["schema"]


def test_plan_is_fixed_per_seed_and_spreads_over_two_to_four_points():
    seeds = [s["seed_id"] for s in real_seed_tuples(60)]
    counts = Counter(points_for(s) for s in seeds)
    assert set(counts) == {2, 3, 4} and min(counts.values()) >= 10, counts
    for s in seeds[:10]:
        plan = CasePlan.for_seed(s)
        assert plan == CasePlan.for_seed(s)
        n = len(plan.ma_ids)
        assert plan.ma_ids == tuple(f"MA{i}" for i in range(1, n + 1))
        assert len(plan.speakers) == 2 * n + 2
        assert plan.speakers[:4] == ("M1", "M2", "M1", "M2")
        turns = list(plan.anchors.values())
        assert turns == sorted(set(turns)) and turns[0] == 2 and turns[-1] <= len(plan.speakers) - 3
        assert plan.names == member_names(s)


def test_anchor_turns_leave_an_opening_and_a_close():
    assert anchor_turns(2, 8) == [2, 5]
    assert anchor_turns(3, 10) == [2, 4, 7]
    assert anchor_turns(4, 12) == [2, 4, 7, 9]


def test_stage1_schema_holds_ids_names_count_definitional_and_outline():
    seed = real_seed_tuples(1)[0]["seed_id"]
    plan = CasePlan.for_seed(seed)
    props = plan.stage1_schema()["properties"]
    members = props["members"]["prefixItems"]
    assert [(m["properties"]["id"]["const"], m["properties"]["name"]["const"]) for m in members] == \
        list(zip(("M1", "M2"), plan.names))
    held = [m["properties"]["hidden_assumptions"] for m in members]
    assert all(h["minItems"] == h["maxItems"] == 3 for h in held)
    assert props["members"].get("items") is None  # the open member schema is gone, not loosened
    points = props["misalignment_points"]
    assert [p["properties"]["id"]["const"] for p in points["prefixItems"]] == list(plan.ma_ids)
    assert points["minItems"] == points["maxItems"] == len(plan.ma_ids)
    assert points["prefixItems"][0]["properties"]["type"]["const"] == "definitional"
    assert "const" not in points["prefixItems"][1]["properties"]["type"]  # the others are the model's choice
    pattern = re.compile(points["prefixItems"][1]["properties"]["surface_form"]["pattern"])
    for phrase in ("the held-out set", "our March release", "two reviewers", "2,400 questions"):
        assert pattern.match(phrase), phrase
    for phrase in ("the v2.1 release", "the model's output", "the R&D budget"):
        assert pattern.match(phrase), phrase
    for question in ("What version of the dataset did SCALAR use for training?",
                     "the matrix of second-order derivatives for...", "the 标识符 tagger",  # demo replies, recorded "How reliable is the oracle",
                     "how to name variables and functions correctly", "'GDPR'", "the held-out set?",
                     "an identifier is a name given to a variable, function, or object in a set",
                     "the appropriateresponsesofthemodelundertheconstraints"):  # run-together words, recorded
        assert not pattern.match(question), question
    # a phrase cut at the word limit on an article or preposition (recorded from a clean-clone
    # demo run, each a stage-1 gate failure): the grammar cannot write them
    gates = GateThresholds()
    for cut in ("the impact of environmental policies on", "our proposed methodology involves constructing a",
                "the On"):
        assert not pattern.match(cut), cut
        assert surface_form_problem(cut, gates) is not None, cut
    for word in gates.dangling_words:
        assert not pattern.match(f"the final {word}") and not pattern.match(f"the final {word.upper()}"), word
    # a statement stays the gates' to reject: held away from "is", the demo model glued it on
    # ("our objective isaccuracy", accepted before the glue gate)
    for statement in ("both models are evaluated on HumanEval", "our objective is accuracy"):
        assert pattern.match(statement) and "statement" in surface_form_problem(statement, gates)
    for phrase in ("the impact of environmental policies", "the sign-off", "the onboarding", "the theory",
                   "the isotope list", "the a1 form", "the 40%", "the ONE metric", "our Q3 plan", "the set",
                   "the thesis", "the answer", "the inference", "the bytes"):  # words that start like a stop word
        assert pattern.match(phrase), phrase
        assert surface_form_problem(phrase, gates) is None, phrase
    outline = props["conversation_outline"]["prefixItems"]
    assert [t["properties"]["turn"]["const"] for t in outline] == list(range(1, len(plan.speakers) + 1))
    assert [t["properties"]["speaker"]["const"] for t in outline] == list(plan.speakers)
    for ma, turn in plan.anchors.items():
        assert outline[turn - 1]["properties"]["ma_ids"]["prefixItems"] == [{"type": "string", "const": ma}]
    free = [t for i, t in enumerate(outline, 1) if i not in plan.anchors.values()]
    assert all(t["properties"]["ma_ids"]["items"]["enum"] == list(plan.ma_ids) for t in free)
    # the generic schema, which other code reads for field limits, is untouched
    assert "prefixItems" not in Stage1Output.model_json_schema()["properties"]["members"]


def test_stage2_schema_has_one_turn_per_outline_turn_with_its_speaker():
    profiles = Stage1Output.model_validate(valid_stage1())
    turns = stage2_schema(profiles)["properties"]["turns"]
    names = {m.id: m.name for m in profiles.members}
    got = [(t["properties"]["turn_idx"]["const"], t["properties"]["speaker_id"]["const"],
            t["properties"]["speaker_name"]["const"]) for t in turns["prefixItems"]]
    assert got == [(i, t.speaker, names[t.speaker]) for i, t in enumerate(profiles.conversation_outline, 1)]
    assert turns["minItems"] == turns["maxItems"] == len(profiles.conversation_outline)


def test_build_sends_each_case_its_plan(endpoint, cli, seeds_file, tmp_path):
    server = endpoint()
    seeds = seeds_file(2)
    config = tmp_path / "scaffold.json"  # a remote generator defaults to the protocol plan
    config.write_text(json.dumps({"generator": {"plan": "scaffold"}}))
    build(cli, seeds, tmp_path / "out", "--config", config)
    by_seed = {json.loads(line)["seed_id"] for line in seeds.read_text().splitlines()}
    sent = [r["body"] for r in server.requests if request_kind(r["body"]) == "stage1_generator"]
    assert len(sent) == 2
    seen_names = set()
    for body in sent:
        prompt = body["messages"][-1]["content"]
        members = _schema(body)["properties"]["members"]["prefixItems"]
        names = tuple(m["properties"]["name"]["const"] for m in members)
        seen_names.add(names)
        plan = next(CasePlan.for_seed(s) for s in by_seed if member_names(s) == names)
        assert f"exactly {len(plan.ma_ids)} misalignment points" in prompt
        assert f"an outline of {len(plan.speakers)} turns" in prompt
    assert len(seen_names) == 2
    stage2 = [r["body"] for r in server.requests if request_kind(r["body"]) == "stage2_generator"]
    assert stage2 and all("prefixItems" in _schema(b)["properties"]["turns"] for b in stage2)
    utterance = _schema(stage2[0])["properties"]["turns"]["prefixItems"][0]["properties"]["utterance"]
    assert "held-out set" in utterance["pattern"] and re.match(utterance["pattern"], "Fine, Ana.") is None  # its point's phrase


def _free_text(schema, path=""):
    """(path, field schema) of every string field that is neither a constant nor an enum."""
    if isinstance(schema, dict):
        if schema.get("type") == "string" and not {"const", "enum"} & schema.keys():
            yield path, schema
        for key, value in schema.items():
            yield from _free_text(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            yield from _free_text(value, f"{path}/{i}")


def test_scaffold_holds_free_text_to_latin_script_within_its_length_and_protocol_does_not():
    # the demo model drifted into Chinese mid-field in about one case of four (a content gate
    # discards it); the scaffold's grammar cannot write another script, nor ", \\ or a newline
    seed = real_seed_tuples(1)[0]["seed_id"]
    profiles = Stage1Output.model_validate(valid_stage1())
    for schema in (stage1_request_schema("scaffold", seed, ["definitional", "scopal"]), stage2_schema(profiles, latin=True)):
        fields = dict(_free_text(schema))
        assert fields and all("pattern" in f for f in fields.values()), [p for p, f in fields.items() if "pattern" not in f]
        for path, field in fields.items():
            if path.endswith("surface_form") or "{0," in field["pattern"]:  # a phrase the turn must say: below
                continue
            if path.endswith("understanding"):
                assert re.match(field["pattern"], "x" * 29) is None  # a reading, not a word or two
                continue
            text = re.compile(field["pattern"])
            assert text.match("Fine — it’s the “v2” set, naïve (sic) & 40% off: OK?"), path
            for bad in ("the 标识符 tagger", 'a "quoted" word', "two\nlines", "x" * (field["maxLength"] + 1),
                        "naïve [sic]", "obj{'turns'}", "a `name`", "a <b> tag", "x_y | z"):  # plan version 10
                assert not text.match(bad), (path, bad)
    assert not any("pattern" in f for _, f in _free_text(stage2_schema(profiles)))
    protocol = dict(_free_text(stage1_request_schema("protocol", seed, ["definitional", "scopal"])))
    assert protocol and not any("pattern" in f for f in protocol.values())


def test_scaffold_dialogue_turn_that_first_lists_a_point_must_say_its_surface_form():
    # the demo model left a planned phrase unsaid in about one dialogue of two (the coverage gate)
    profiles = Stage1Output.model_validate(valid_stage1())
    turns = stage2_schema(profiles, latin=True)["properties"]["turns"]["prefixItems"]
    phrase = {p.id: p.surface_form for p in profiles.misalignment_points}
    first: dict[str, int] = {}
    for i, t in enumerate(profiles.conversation_outline):
        for ma in t.ma_ids:
            first.setdefault(ma, i)
    assert first and set(first) == set(phrase)
    for i, turn in enumerate(turns):
        utterance = turn["properties"]["utterance"]
        text = re.compile(utterance["pattern"])
        forms = [phrase[ma] for ma, at in first.items() if at == i]
        if not forms:
            assert text.match("We agree, then.")
            continue
        said = " and ".join(forms)
        assert text.match(f"I think {said} is settled, Ana."), (i, utterance["pattern"])
        assert text.match(f"So we keep {said}."), i
        assert not text.match("We agree, then."), i
        assert not text.match("x" * (utterance["maxLength"] - len(said)) + said + ".")  # in sentences of their length
        # said in a sentence (the pasted-phrase gate): opening the line or a sentence only
        # capitalised (held to a word before it, the demo model wrote a stray letter first:
        # "As we D a code generation tool is crucial"), not glued to a word, not ending the
        # line without a full stop
        opening = " and ".join(f[0].upper() + f[1:] if k == 0 else f for k, f in enumerate(forms))
        assert text.match(f"{opening} is settled, Ana."), (i, utterance["pattern"])
        assert text.match(f"Fine, Ana. {opening} is settled."), i
        assert not text.match(f"{said} is settled, Ana."), i
        assert not text.match(f"Fine. {said} is settled."), i
        assert not text.match(f"So we keep {opening}."), i
        # one to three sentences, any of them the phrase's
        for ok in (f"Right, v2.1 it is. I think {said} is settled, Ana. Good!", f"Right. Yes. I think {said} is settled.",
                   f"I think {said} is settled. Good. Fine.", f"Right. {opening} is settled. Good.",
                   f"So, after a long look at every option we had on the table last week, I think {said} is settled."):
            assert text.match(ok), (i, ok)
        for bad in (f"Right. Yes. Fine. I think {said} is settled.", f"I think {said} is settled. Good. Fine. Yes.",
                    f"Right. Yes. Fine. So we go."):
            assert not text.match(bad), (i, bad)
        assert not text.match(f"Let us settle{said}."), i
        assert not text.match(f"Let us settle {said}"), i


def test_scaffold_lines_and_thoughts_are_one_to_three_whole_sentences():
    # asked for one to three sentences, the 1.5B demo model wrote five or six per line and ran
    # one to the 700-character limit, cut mid-sentence (a clean-clone demo run, 2026-12-06)
    from ioa_synth.protocol.plan_passes import DialogueLines, lines_schema, thoughts_schema

    profiles = Stage1Output.model_validate(valid_stage1())
    said = {ma for t in profiles.conversation_outline for ma in t.ma_ids}
    free = [i for i, t in enumerate(profiles.conversation_outline) if not t.ma_ids]
    assert said and free
    turns = lines_schema(profiles)["properties"]["turns"]["prefixItems"]
    line = re.compile(turns[free[0]]["properties"]["utterance"]["pattern"])
    lines = DialogueLines.model_validate({"turns": [
        {"turn_idx": t["properties"]["turn_idx"]["const"], "speaker_id": t["properties"]["speaker_id"]["const"],
         "speaker_name": t["properties"]["speaker_name"]["const"], "utterance": "Fine."} for t in turns]})
    thought = re.compile(thoughts_schema(profiles, lines)["properties"]["turns"]["prefixItems"][0]["properties"]
                         ["inner_thought"]["pattern"])
    for text, ok in (("Fine.", True), ("We ship v2.1 on Friday, e.g., after review. Agreed? Yes!", True),
                     ("Hm... fine, Ana. Two.", True), ("One. Two. Three. Four.", False),
                     ("We go on with the key", False), ("x" * 240 + ".", False),
                     ("We took 340 law exams.Our goal is clear.", False),  # glued sentences, demo lines
                     ("We improve the model.uguayx, how do you think?", False), ("So, i.e. the set, fine.", True),
                     ("Our project..Previously we had feedback.", False), ("It was evaluated.0nHumanEval too.", False),
                     ("We got 3.5% on v2.1, e.g., the set!", True), ("Really?! Fine.", False),
                     # run-on debris of two accepted demo cases, 2026-12-07 (plan version 10)
                     ("We agree.m.Ueda continues.", False), ("So it is.x.x.x.x. Fine.", False),
                     ("Yes?!!!?? fine.", False), ("We keep m.{}} the set.", False),
                     ("We use the data, e.g.... using tests.", False), ("So, e.g. the set, fine.", True),
                     ("So ```obj['turns'] = turns.", False), ("Use [the set] now.", False),
                     ("We meet at 10 am, e.g. on Monday; 5 = five, #3 and ~5% @ Ana's (sic).", True),
                     # past the third sentence through a closing mark: demo lines, 2026-12-07 (plan version 8)
                     ("Let's dive in. Research goes on.'ve been working hard.", False),
                     ("Great project.'re focusing on it.", False), ("We said 'done.' Then left.", False),
                     ("We tried the techniques...z.......... fine.", False), ("Hm...no.", False)):
        assert bool(line.match(text)) is ok, text
        assert bool(thought.match("I " + text[0].lower() + text[1:])) is ok, text
    assert not thought.match("Fine, I think.")  # a thought starts with "I"


def test_scaffold_outline_descriptions_are_one_or_two_whole_sentences():
    # the demo model ran an outline description to its 400-character limit, cut mid-sentence
    seed = real_seed_tuples(1)[0]["seed_id"]
    outline = CasePlan.for_seed(seed).stage1_schema()["properties"]["conversation_outline"]["prefixItems"]
    for turn in outline:
        text = re.compile(turn["properties"]["description"]["pattern"])
        assert text.match("Ada opens the meeting.") and text.match("Ada opens the meeting. She names the v2.1 set.")
        for bad in ("One. Two. Three.", "Ada opens the meeting and many iterations are", "x" * 250 + "."):
            assert not text.match(bad), bad


def test_scaffold_meeting_scenario_is_one_to_four_whole_sentences():
    # the demo model ran the scenario to its 700-character limit, cut mid-sentence ("... By")
    seed = real_seed_tuples(1)[0]["seed_id"]
    scenario = CasePlan.for_seed(seed).stage1_schema()["properties"]["meeting_scenario"]
    text = re.compile(scenario["pattern"])
    assert scenario["maxLength"] == 700
    assert text.match("A review of the v2.1 pipeline. We agree on the scope. Then the budget. Then the date.")
    for bad in ("One. Two. Three. Four. Five.", "The team meets to review quality assessments. By",
                ("x" * 170 + ". ") * 4 + "y."):
        assert not text.match(bad), bad
