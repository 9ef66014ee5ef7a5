"""The stage-1 and regeneration prompts as the embedded demo model sees them: fixed member
names per seed tuple, and a regeneration request that leads with what failed and does
not paste the rejected attempt (the 1.5B model copied a pasted attempt 97% verbatim)."""

from __future__ import annotations

import json

from conftest import real_seed_tuples

from ioa_synth.build.stages import stage_spec
from ioa_synth.protocol.plan import member_names
from ioa_synth.build.prompts import render
from ioa_synth.testing.scripted_server import valid_stage1
from ioa_synth.protocol.gates import is_placeholder, load_gates
from ioa_synth.protocol.gates_form import is_stock_name
from ioa_synth.protocol.schemas import Stage1Output
from ioa_synth.seeds.tuples import SeedTuple


def _seeds() -> list[SeedTuple]:
    return [SeedTuple.model_validate(s) for s in real_seed_tuples(6)]


def test_member_names_are_two_distinct_real_names_fixed_per_seed():
    gates = load_gates()
    seen = set()
    for seed in _seeds():
        a, b = member_names(seed.seed_id)
        assert a != b and a.split()[0] != b.split()[0] and a.split()[1] != b.split()[1]
        assert (a, b) == member_names(seed.seed_id)
        assert not is_stock_name(a, gates) and not is_placeholder(a, gates)
        seen.add((a, b))
    assert len(seen) > 1  # not one pair for every paper


def test_stage1_prompt_names_the_members_and_regeneration_leads_with_the_failure():
    seed = _seeds()[0]
    a, b = member_names(seed.seed_id)
    first = render(1, "generator", **stage_spec(1).generator_context(seed, None, None, None)).messages[-1]["content"]
    assert f"M1 is {a}" in first and f"M2 is {b}" in first and "rejected" not in first
    previous = Stage1Output.model_validate(valid_stage1(2)).model_dump_json()
    feedback = "The output failed these content checks:\n- MA1: the two understandings are (nearly) the same"
    again = render(1, "generator", **stage_spec(1).generator_context(seed, None, previous, feedback)).messages[-1]["content"]
    assert again.startswith("Your previous answer was rejected. What failed:\n" + feedback)
    scenario = json.loads(previous)["meeting_scenario"]
    assert scenario not in again and previous not in again  # the rejected attempt is not pasted
    assert again.rstrip().endswith(feedback)  # and the failure is repeated last, next to the answer


def test_readme_demo_config_loads_and_sets_the_generator_penalty():
    from pathlib import Path

    from ioa_synth.llm.config import load_config

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "--config config.demo.json" in readme
    cfg = load_config(root / "config.demo.json")
    assert cfg.generator.request_options == {"presence_penalty": 0.6}
    assert cfg.judge.request_options == {}  # the judges keep the paper's settings


def test_thoughts_prompt_gives_each_turn_its_speakers_reading_and_no_line_to_copy():
    # shown the transcript (with the readings above it, or under each line), the 1.5B demo
    # model wrote thoughts that copy a line, mostly the next one (two clean-clone demo runs)
    from ioa_synth.build.passes import TwoPasses
    from ioa_synth.protocol.plan_passes import DialogueLines

    profiles = Stage1Output.model_validate(valid_stage1())
    m1, m2 = profiles.members
    ma = profiles.misalignment_points[0]
    said = ("Shall we start with the budget, Ana?", f"Yes. {ma.surface_form[0].upper() + ma.surface_form[1:]} is ready.",
            f"Good, so {ma.surface_form} it is.", "Agreed, then we ship on Friday.")
    lines = DialogueLines.model_validate({"turns": [
        {"turn_idx": i, "speaker_id": m.id, "speaker_name": m.name, "utterance": text}
        for i, (m, text) in enumerate(zip((m1, m2, m1, m2), said), start=1)]})
    prompt, _ = TwoPasses().thoughts_request(profiles, lines, None)
    text = prompt.messages[-1]["content"]
    assert not any(line in text for line in (said[0], said[3], "is ready", "it is."))  # no line to copy
    turns = text[text.index("Turns ("):text.index("Rules:")]
    assert f"1. {m1.name} opens the meeting, privately wanting: {m1.private_state}" in turns
    assert f'2. {m2.name} says "{ma.surface_form}", privately meaning: {ma.member_b_understanding}' in turns
    assert f'3. {m1.name} says "{ma.surface_form}", privately meaning: {ma.member_a_understanding}' in turns
    # given only "answers ...", the model wrote "I answer Leilani Whitfield."
    assert f"4. {m2.name} closes the meeting in agreement, privately taking for granted: {m2.hidden_assumptions[1]}" \
        in turns
