"""Prompts on request (docs/prompts.md): ``prompts list``/``export`` and ``--prompts DIR``
(or the config's ``"prompts"`` key) replacing templates by name, seen in the requests a
scripted server receives, in the fingerprint and in ``run.json``; a bad folder is one
``error:`` line, exit 2, before anything is written or sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ioa_helpers import build, one_line_error, q

NAME = "build/stage1_generator.jinja2"
MARK = "EDITED-BY-THE-RESEARCHER: follow the appendix wording."


def _export(cli, folder: Path, *names: str) -> None:
    only = [a for n in names for a in ("--only", n)]
    res = cli("prompts", "export", folder, *only)
    assert res.exit_code == 0, res.output


def _edited(cli, tmp_path: Path, name: str = NAME, mark: str = MARK) -> Path:
    """An exported folder holding ``name`` only, with ``mark`` added to its user block."""
    folder = tmp_path / "prompts"
    _export(cli, folder, name)
    path = folder / name
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("{% block user %}", "{% block user %}" + mark + "\n", 1), encoding="utf-8")
    return folder


def _run_row(out: Path) -> tuple[str, dict, dict]:
    """(fingerprint, its parts, args) of the first run of ``out``."""
    f, parts, args = q(out, "SELECT fingerprint, fingerprint_json, args_json FROM runs ORDER BY started_at LIMIT 1")[0]
    return f, json.loads(parts), json.loads(args)


def _user_texts(server) -> list[str]:
    return [m["content"] for r in server.requests for m in r["body"].get("messages", []) if m["role"] == "user"]


def test_list_names_every_template_with_its_capability_and_component(cli):
    res = cli("prompts", "list")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    row = next(ln.split() for ln in lines if ln.startswith("build/stage1_judge.jinja2"))
    assert row == ["build/stage1_judge.jinja2", "build", "judge,", "audit_judge"]
    names = {ln.split()[0] for ln in lines}
    assert {"evaluate/prober_mcq.jinja2", "belief/probe.jinja2", "collab/hp_final.jinja2",
            "meetings/merge_judge.jinja2", NAME} <= names
    rows = json.loads(cli("prompts", "list", "--json").stdout)
    assert {r["name"]: r["component"] for r in rows}["evaluate/simulator.jinja2"] == "simulator"



def test_list_keeps_its_columns_aligned_for_every_capability(cli):
    """The component column starts at one offset on every line, also after the longest
    capability name (``typelabels`` was wider than the fixed column and pushed its row out)."""
    rows = json.loads(cli("prompts", "list", "--json").stdout)
    lines = cli("prompts", "list").stdout.splitlines()
    starts = {ln.rindex(r["component"]) for ln, r in zip(lines, rows) if r["component"] != "-"}
    assert len(lines) == len(rows) and len(starts) == 1, lines


def test_export_writes_the_packaged_text_and_never_overwrites(cli, tmp_path):
    from ioa_synth.core.templates import project_source, template_names

    folder = tmp_path / "p"
    _export(cli, folder)
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.jinja2")) == list(template_names())
    assert (folder / NAME).read_text(encoding="utf-8") == project_source(NAME)
    (folder / NAME).write_text("mine", encoding="utf-8")
    one_line_error(cli("prompts", "export", folder), "exists", "does not overwrite")
    assert (folder / NAME).read_text(encoding="utf-8") == "mine"
    one_line_error(cli("prompts", "export", tmp_path / "q", "--only", "stage1_generatr.jinja2"),
                   'did you mean "build/stage1_generator.jinja2"')
    assert not (tmp_path / "q").exists()


def test_build_with_edited_prompts_sends_them_and_changes_the_fingerprint(cli, endpoint, seeds_file, tmp_path):
    server = endpoint()
    seeds = seeds_file(1)
    plain, edited = tmp_path / "plain", tmp_path / "edited"
    build(cli, seeds, plain)
    assert not any(MARK in t for t in _user_texts(server))
    n = len(server.requests)
    folder = _edited(cli, tmp_path)
    build(cli, seeds, edited, "--prompts", folder)
    sent = _user_texts(server)[n:]
    assert any(t.startswith(MARK) for t in sent)  # the edited stage-1 generator prompt
    assert not any(MARK in t for t in _user_texts(server)[:n])
    (fa, pa, args_a), (fb, pb, args_b) = (_run_row(d) for d in (plain, edited))
    assert fa != fb
    gen_a, gen_b = (p["components"]["generator"]["templates"] for p in (pa, pb))
    assert gen_a[NAME] != gen_b[NAME] and gen_a["build/stage2_generator.jinja2"] == gen_b["build/stage2_generator.jinja2"]
    assert pa["components"]["judge"] == pb["components"]["judge"]  # the judge's templates were not replaced
    digest = args_b["prompts"][NAME]["sha256"]
    assert "prompts" not in args_a and list(args_b["prompts"]) == [NAME] and gen_b[NAME] == digest
    assert q(edited, "SELECT DISTINCT template_sha256 FROM llm_calls WHERE role = 'generator' AND stage = 1") == [(digest,)]

    # a resume of the same folder with the packaged prompts is refused, and sends nothing
    n = len(server.requests)
    res = cli("build", "--seeds", seeds, "--split", "test", "--out", edited, "--workers", "1")
    one_line_error(res, "generator.templates", NAME, "new --out")
    assert len(server.requests) == n
    # the same prompts through the config's "prompts" key (relative to the config file) resume
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"prompts": "prompts"}), encoding="utf-8")
    res = build(cli, seeds, edited, "--config", cfg)
    assert "1 already finished" in res.output and len(server.requests) == n
    # --prompts wins over the config's key
    other = tmp_path / "other"
    _export(cli, other, "build/stage1_judge.jinja2")
    res = cli("build", "--seeds", seeds, "--split", "test", "--out", edited, "--workers", "1", "--config", cfg,
              "--prompts", other)
    one_line_error(res, "templates", "new --out")


def _bad_folder(cli, tmp_path: Path, problem: str) -> tuple[Path, str]:
    folder = tmp_path / "bad"
    if problem == "missing folder":
        return folder, "no such folder"
    if problem == "empty folder":
        folder.mkdir()
        return folder, "holds no template"
    _export(cli, folder, NAME)
    path = folder / NAME
    text = path.read_text(encoding="utf-8")
    if problem == "unknown name":
        path.rename(folder / "build" / "stage1_generater.jinja2")
        return folder, 'did you mean "build/stage1_generator.jinja2"'
    if problem == "missing block":
        path.write_text(text.replace("{% block system %}", "{% if true %}", 1)
                        .replace("{% endblock %}", "{% endif %}", 1), encoding="utf-8")
        return folder, "no {% block system %}"
    if problem == "syntax error":
        lines = text.splitlines()
        lines[3] += " {% endfor %}"
        path.write_text("\n".join(lines), encoding="utf-8")
        return folder, f"{path}:4:"
    if problem == "undefined variable":
        lines = text.splitlines()
        lines[4] += " {{ seed_paper.title }}"
        path.write_text("\n".join(lines), encoding="utf-8")
        return folder, f"{path}:5: 'seed_paper' is undefined"
    raise AssertionError(problem)


@pytest.mark.parametrize("problem", ["missing folder", "empty folder", "unknown name", "missing block",
                                     "syntax error", "undefined variable"])
def test_a_bad_prompts_folder_is_one_line_before_anything_is_written_or_sent(cli, endpoint, seeds_file, tmp_path,
                                                                             problem):
    server = endpoint()
    folder, needle = _bad_folder(cli, tmp_path, problem)
    out = tmp_path / "out"
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out, "--prompts", folder)
    assert res.exit_code == 2
    one_line_error(res, needle)
    assert not out.exists() and server.requests == []
    # the same folder named by a config's "prompts" key: the same line
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"prompts": str(folder)}), encoding="utf-8")
    res = cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out, "--config", cfg)
    assert res.exit_code == 2
    one_line_error(res, needle)
    assert not out.exists() and server.requests == []


def test_every_model_calling_command_takes_prompts_last():
    """Declared last, ``--prompts`` is checked after ``--config`` is parsed (its key applies)."""
    import typer

    from ioa_synth.cli import app

    def walk(cmd, path=()):
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                yield from walk(sub, (*path, name))
        else:
            yield path, cmd

    taking = {" ".join(p): [x.name for x in c.params] for p, c in walk(typer.main.get_command(app))
              if any("--prompts" in x.opts for x in c.params)}
    assert {"build", "regenerate", "audit", "evaluate", "belief run", "collab run", "meeting probe"} <= set(taking)
    assert all(names[-1] == "prompts" for names in taking.values()), taking


def test_an_attribute_the_context_lacks_stops_the_run_at_the_first_render(cli, endpoint, seeds_file, tmp_path):
    server = endpoint()
    folder = _edited(cli, tmp_path, mark="{{ seed.no_such_field }}")
    path = folder / NAME
    args = ("--seeds", seeds_file(1), "--split", "test", "--prompts", folder)
    for command in (("estimate", "build"), ("build",)):
        res = cli(*command, *args, "--out", tmp_path / "out")
        assert res.exit_code == 2
        one_line_error(res, f"{path}:2:", "no_such_field")
    assert server.requests == []


def test_a_detectors_config_may_not_name_prompts(tmp_path):
    from ioa_synth.probing.detectors import prober_config
    from ioa_synth.llm.config import ConfigError

    cfg = tmp_path / "det.json"
    cfg.write_text(json.dumps({"prober": {}, "prompts": "p"}), encoding="utf-8")
    with pytest.raises(ConfigError, match="applies to a whole run"):
        prober_config(cfg)
