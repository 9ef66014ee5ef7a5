"""The stage-2 judge prompt prepared before its dialogue is known and filled in after is
byte for byte the prompt rendered at once; a template whose loop is not plain is not
prepared."""

from __future__ import annotations

import copy

import jinja2
import pytest
from conftest import real_seed_tuples

from ioa_synth.build.stage2_inputs import stage2_inputs
from ioa_synth.build.stages import judge_prompt, stage_spec
from ioa_synth.llm import loop_prompt
from ioa_synth.testing.scripted_case import valid_stage1, valid_stage2
from ioa_synth.protocol.rubric import load_rubric
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output
from ioa_synth.seeds.tuples import SeedTuple


class _Case:
    def __init__(self, seed: SeedTuple) -> None:
        self.seed = seed


def _dialogues() -> list[dict]:
    plain = [valid_stage2(n) for n in (4, 5, 6)]
    odd = copy.deepcopy(valid_stage2(4))
    odd["turns"][0]["utterance"] = "Braces {{ t.utterance }} and {% raw %}, a NUL \x00, \"quotes\" and ünïcode ✓"
    odd["turns"][1]["inner_thought"] = "  leading and trailing spaces  \n"
    odd["turns"][3]["utterance"] = ""
    return plain + [odd, {"turns": []}]


@pytest.mark.parametrize("seed", [SeedTuple.model_validate(s) for s in real_seed_tuples(3)], ids=lambda s: s.seed_id)
def test_the_prepared_stage2_judge_prompt_equals_the_rendered_one(seed):
    rubric, profiles = load_rubric(), Stage1Output.model_validate(valid_stage1(2))
    prepared = stage2_inputs(_Case(seed), profiles, rubric)
    assert prepared.judge_prompt is not None  # the shipped template's dialogue loop is plain
    for raw in _dialogues():
        dialogue = Stage2Output.model_construct(**raw) if not raw["turns"] else Stage2Output.model_validate(raw)
        fresh = judge_prompt(stage_spec(2), _Case(seed), profiles, dialogue, rubric, False)  # rendered now
        assert all(t["utterance"] in fresh.messages[1]["content"] for t in raw["turns"])
        assert judge_prompt(stage_spec(2), _Case(seed), profiles, dialogue, rubric, False, prepared) == fresh


@pytest.mark.parametrize("body", [
    "{% for t in dialogue.turns %}{{ t.utterance | upper }}{% endfor %}",  # a filter
    "{% for t in dialogue.turns %}{% if t.utterance %}x{% endif %}{% endfor %}",  # a condition
    "{% for t in dialogue.turns %}{{ loop.index }}{% endfor %}",  # the loop variable
    "{% for t in dialogue.turns %}{{ t.utterance }}{% else %}none{% endfor %}",  # an else
    "{% for t in dialogue.turns if t.utterance %}{{ t.utterance }}{% endfor %}",  # a test
    "{{ dialogue.turns | length }}{% for t in dialogue.turns %}{{ t.utterance }}{% endfor %}",  # used again
    "{% for t in dialogue.turns %}{{ t.items }}{% endfor %}",  # a dict method, not a field
])
def test_a_loop_that_is_not_plain_is_not_prepared(body, monkeypatch):
    templates = {"t.jinja2": "{% block system %}s{% endblock %}{% block user %}" + body + "{% endblock %}"}
    env = jinja2.Environment(loader=jinja2.DictLoader(templates), undefined=jinja2.StrictUndefined)
    monkeypatch.setattr(loop_prompt, "_env", lambda: env)
    monkeypatch.setattr(loop_prompt, "template_sha256", lambda name: "0" * 64)
    loop_prompt.loop_body.cache_clear()
    try:
        assert loop_prompt.prepare_loop("t.jinja2", "dialogue", "turns", {}) is None
    finally:
        loop_prompt.loop_body.cache_clear()


def test_a_plain_loop_is_prepared_and_filled(monkeypatch):
    templates = {"t.jinja2": "{% block system %} sys {% endblock %}{% block user %}A\n"
                             "{% for t in dialogue.turns %}[{{ t.n }}] {{ t.say }}\n{% endfor %}B {{ x }}{% endblock %}"}
    env = jinja2.Environment(loader=jinja2.DictLoader(templates), undefined=jinja2.StrictUndefined)
    monkeypatch.setattr(loop_prompt, "_env", lambda: env)
    monkeypatch.setattr(loop_prompt, "template_sha256", lambda name: "0" * 64)
    loop_prompt.loop_body.cache_clear()
    try:
        prepared = loop_prompt.prepare_loop("t.jinja2", "dialogue", "turns", {"x": 7})
        prompt = prepared.fill([{"n": 1, "say": "hi"}, {"n": 2, "say": None}])
        assert prompt.messages == [{"role": "system", "content": "sys"},
                                   {"role": "user", "content": "A\n[1] hi\n[2] None\nB 7"}]
    finally:
        loop_prompt.loop_body.cache_clear()
