"""What capabilities register with the shared layers: template folders (one jinja2
environment, registration before or after first use), the instructions the content gates
compare with, and the build's fingerprint parts (a default setup describes itself exactly
as the release before the registries did, so old build directories resume)."""

from __future__ import annotations

import ast
from pathlib import Path

import jinja2
import pytest

import ioa_synth.build  # noqa: F401 - registers the build's templates
from ioa_synth.build.fingerprint import build_component_view, build_setup_description
from ioa_synth.core import templates
from ioa_synth.llm.client import Endpoint
from ioa_synth.llm.config import ComponentConfig
from ioa_synth.protocol import gates_text
from ioa_synth.runs.fingerprint import component_view, fingerprint, identity_description

ROOT = Path(__file__).resolve().parents[2]
CAPABILITIES = ("build", "evaluate", "belief", "meetings", "annotate", "export", "train", "seeds", "collab")

#: The fingerprint of a default build setup (generator, judge, audit_judge on model "m", all
#: settings default), remote (False) and embedded (True). The remote one is as release 69a4637
#: computed it, before the build's parts moved out of the runs layer. The embedded one changed
#: once on purpose since: the embedded model moved to llama.cpp's llama-server, whose default
#: structured output is ``json_schema`` (llama-cpp-python's server needed
#: ``json_object_schema``), so an embedded build directory made before refuses those
#: components with the usual one line; and again when the scaffold plan (the embedded
#: default's plan mode) went to version 2 (free text in Latin script, the anchor turn says its
#: surface form), to version 3 (the stage-2 outline names points by surface form, without
#: ids), to version 4 (stage 2 in two passes, lines then inner thoughts, with the
#: scaffold's two templates in its fingerprint), and to version 5 (the lines pass sees a cue
#: per turn, not the stage-1 description; a thought starts with "I"), and to version 6 (an outline
#: of 2n+2 turns, three hidden assumptions per member), and to version 7 (a planned phrase may open a
#: sentence of its line, capitalised; the thoughts pass sees, per turn, the speaker's reading of a phrase the line
#: says and not the lines), and to version 8 (no closing mark after a stop inside a sentence: the
#: model went on past its third sentence through one, ".'re focusing"), and to version 9 (the meeting
#: scenario is one to four whole sentences: the model ran it to its length limit), and to version 10 (no
#: brackets, braces, backticks, run-on inner dots or "?!" in free text: accepted demo cases held such
#: debris), and to version 11 (a regeneration request shows gate failures without the
#: snippets of rejected text they quote: the model pasted one into five lines). A change here means every build directory made before
#: refuses to resume those components: change it only with a template, the rubric, the gates,
#: the plan or the request settings on purpose.
DEFAULT_SETUP = {False: ("21ab8f402b52c2d9", {"audit_judge": "130c9ae333b14736", "generator": "680e3ce04cf19d44",
                                              "judge": "130c9ae333b14736"}),
                 True: ("bd8d60f8fe9f95b7", {"audit_judge": "cf44d323fd1af5a9", "generator": "dbb326aefb9a0d44",
                                             "judge": "cf44d323fd1af5a9"})}


def _endpoints(embedded: bool, components=("generator", "judge", "audit_judge")) -> dict[str, Endpoint]:
    return {c: Endpoint.from_config(c, ComponentConfig(), "http://host:9000/v1", "m", None, embedded)
            for c in components}


@pytest.mark.parametrize("embedded", [False, True])
def test_default_build_setup_describes_itself_as_the_earlier_release(embedded):
    desc = build_setup_description(_endpoints(embedded))
    whole, parts = DEFAULT_SETUP[embedded]
    assert {c: fingerprint(d) for c, d in desc["components"].items()} == parts
    assert fingerprint(desc) == whole
    gen = desc["components"]["generator"]
    assert list(gen)[-3:] == ["templates", "gates", "case_plan"] and "rubric" not in gen
    assert set(desc["components"]["judge"]["templates"]) == {"build/stage1_judge.jinja2", "build/stage2_judge.jinja2"}


def test_the_generic_view_and_identity_description_know_no_capability():
    eps = _endpoints(False, ("agent",))
    desc = identity_description(eps)
    assert desc == {"fingerprint_version": 2, "components": {"agent": eps["agent"].identity()}}
    v1 = {"components": {"agent": {**eps["agent"].identity(), "base_url": "http://a/v1"}}}
    assert component_view(v1, "agent") == eps["agent"].identity()
    assert build_component_view(v1, "judge") is None


def test_a_folder_registered_after_first_render_renders_and_hashes(tmp_path):
    templates.environment().get_template("build/stage1_judge.jinja2")  # the environment exists now
    folder = tmp_path / "tpl"
    folder.mkdir()
    (folder / "ask.jinja2").write_text("{% block system %}You ask.{% endblock %}"
                                       "{% block user %}Ask {{ who }} {# a note #}now.{% endblock %}", encoding="utf-8")
    templates.register_templates("r2probe", folder)
    templates.register_templates("r2probe", folder)  # again: nothing happens
    prompt = templates.render_template("r2probe/ask.jinja2", who="Ada")
    assert prompt.messages == [{"role": "system", "content": "You ask."}, {"role": "user", "content": "Ask Ada now."}]
    assert set(templates.all_template_hashes("r2probe")) == {"r2probe/ask.jinja2"}
    assert templates.template_prose("r2probe/ask.jinja2") == ("You ask.", "Ask ", "now.")
    with pytest.raises(ValueError, match="already registered"):
        templates.register_templates("r2probe", tmp_path)
    with pytest.raises(KeyError, match="no templates registered for 'nobody'"):
        templates.all_template_hashes("nobody")
    with pytest.raises(jinja2.TemplateNotFound):
        templates.render_template("nobody/x.jinja2")
    with pytest.raises(FileNotFoundError):
        templates.template_sha256("nobody/x.jinja2")


def test_capabilities_register_their_own_templates():
    import ioa_synth.belief  # noqa: F401
    import ioa_synth.evaluate  # noqa: F401
    import ioa_synth.meetings  # noqa: F401

    assert {"build", "evaluate", "belief", "meetings"} <= set(templates.registered_capabilities())
    assert "meetings/merge_judge.jinja2" in templates.all_template_hashes("meetings")


def test_instructions_registered_with_the_gates_are_compared():
    text = "Kim and Ola plan the quarterly ledger migration with zebra striped ownership rules"
    assert not gates_text.copies_description(text)
    gates_text.register_instructions("r2 probe", lambda: ["Plan the ledger migration with zebra striped ownership rules inside."])
    try:
        assert gates_text.copies_description(text)
    finally:
        gates_text.register_instructions("r2 probe", lambda: [])
    assert not gates_text.copies_description(text)
    build_prose = " ".join(templates.template_prose("build/stage1_generator.jinja2"))
    assert "JSON object" in build_prose  # the build registered its generator templates' text


@pytest.mark.parametrize("module", ["core/templates.py", "runs/fingerprint.py", "runs/run_rows.py",
                                    "protocol/gates_text.py"])
def test_shared_layers_name_no_capability(module):
    tree = ast.parse((ROOT / "ioa_synth" / module).read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    named = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and id(n) not in docstrings and any(n.value == c or n.value.startswith(c + "/") for c in CAPABILITIES)]
    assert not named
