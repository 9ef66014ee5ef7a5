"""Template names shared by two packages' folders (``register_templates(..., shared=True)``):
one namespace, renders and sha256s from either folder, templates of one folder importing
those of the other, overrides by name, and the refusals that keep a name in one file."""

from __future__ import annotations

import hashlib

import pytest

from ioa_synth.core import templates


def _folder(path, files: dict[str, str]):
    path.mkdir()
    for name, text in files.items():
        (path / name).write_text(text, encoding="utf-8")
    return path


def test_a_capability_registered_shared_from_two_folders_is_one_namespace(tmp_path):
    lower = _folder(tmp_path / "lower", {
        "_m.jinja2": "{% macro who(x) %}<{{ x }}>{% endmacro %}",
        "ask.jinja2": '{% block system %}S{% endblock %}{% block user %}{% import "r2shared/_m.jinja2" as m %}'
                      'ask {{ m.who(who) }}{% endblock %}'})
    upper = _folder(tmp_path / "upper", {
        "tell.jinja2": '{% block system %}T{% endblock %}{% block user %}{% import "r2shared/_m.jinja2" as m %}'
                       'tell {{ m.who(who) }}{% endblock %}'})
    templates.register_templates("r2shared", lower, {"ask.jinja2": "asker"}, shared=True)
    assert templates.render_template("r2shared/ask.jinja2", who="Ada").messages[1]["content"] == "ask <Ada>"
    templates.register_templates("r2shared", upper, {"tell.jinja2": "teller"}, shared=True)  # after a render
    templates.register_templates("r2shared", lower, shared=True)  # again: nothing happens

    names = ("r2shared/_m.jinja2", "r2shared/ask.jinja2", "r2shared/tell.jinja2")
    assert tuple(n for n in templates.template_names() if n.startswith("r2shared/")) == names
    hashes = templates.all_template_hashes("r2shared")
    assert tuple(hashes) == names  # sorted by file name, whichever folder holds it
    assert hashes["r2shared/tell.jinja2"] == hashlib.sha256((upper / "tell.jinja2").read_bytes()).hexdigest()
    assert hashes["r2shared/ask.jinja2"] == hashlib.sha256((lower / "ask.jinja2").read_bytes()).hexdigest()
    assert templates.render_template("r2shared/tell.jinja2", who="Bo").messages[1]["content"] == "tell <Bo>"
    assert templates.project_source("r2shared/tell.jinja2") == (upper / "tell.jinja2").read_text(encoding="utf-8")
    assert templates.template_renders("r2shared/ask.jinja2") == "asker"
    assert templates.template_renders("r2shared/tell.jinja2") == "teller"
    with pytest.raises(ValueError, match="2 folders"):
        templates.template_dir("r2shared")

    source = "{% macro who(x) %}[{{ x }}]{% endmacro %}"  # an override of one folder's file, seen by the other's
    over = templates.Override("r2shared/_m.jinja2", tmp_path / "m.jinja2", source,
                              hashlib.sha256(source.encode()).hexdigest())
    templates.install_overrides({over.name: over})
    try:
        assert templates.render_template("r2shared/tell.jinja2", who="Bo").messages[1]["content"] == "tell [Bo]"
    finally:
        templates.install_overrides({})
    assert templates.render_template("r2shared/tell.jinja2", who="Bo").messages[1]["content"] == "tell <Bo>"


def test_a_shared_folder_may_not_repeat_a_name_nor_join_a_capability_registered_alone(tmp_path):
    one = _folder(tmp_path / "one", {"a.jinja2": "{% block system %}{% endblock %}{% block user %}{% endblock %}"})
    again = _folder(tmp_path / "again", {"a.jinja2": "{% block system %}{% endblock %}{% block user %}{% endblock %}"})
    other = _folder(tmp_path / "other", {"b.jinja2": "{% block system %}{% endblock %}{% block user %}{% endblock %}"})
    templates.register_templates("r2joint", one, shared=True)
    with pytest.raises(ValueError, match="r2joint/a.jinja2 is already a template of another folder"):
        templates.register_templates("r2joint", again, shared=True)
    with pytest.raises(ValueError, match="already registered"):
        templates.register_templates("r2joint", other)  # a folder not said to be shared
    templates.register_templates("r2alone", one)
    with pytest.raises(ValueError, match="already registered"):
        templates.register_templates("r2alone", other, shared=True)  # the first one was not shared
    assert templates.all_template_hashes("r2joint") == {"r2joint/a.jinja2": templates.template_sha256("r2joint/a.jinja2")}
    assert templates.template_dir("r2alone") == one.resolve()
