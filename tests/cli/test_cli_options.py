"""Options several commands take are declared once (``ioa_synth/cli/options.py``): a flag has
the same type, bounds, check and common help text in every command that takes it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import typer

from ioa_synth.cli import app
from ioa_synth.llm.local_weights import LOCAL_MODELS

CLI = Path(__file__).resolve().parents[2] / "ioa_synth" / "cli"
SHARED = ("--out", "--config", "--local-model", "--workers", "--limit", "--seed", "--json", "--split", "--threshold",
          "--access", "--detector", "--prompts")


def _commands() -> dict[tuple[str, ...], object]:
    found: dict[tuple[str, ...], object] = {}

    def walk(cmd, path: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
        else:
            found[path] = cmd

    walk(typer.main.get_command(app), ())
    return found


def _taking(flag: str) -> dict[tuple[str, ...], object]:
    """``{command path: its click parameter}`` of every command with ``flag``."""
    return {path: p for path, cmd in _commands().items() for p in cmd.params if flag in p.opts}


def test_each_shared_option_reads_alike_everywhere():
    from ioa_synth.build.dedup import DEFAULT_THRESHOLD

    local = _taking("--local-model")
    assert len(local) >= 12
    for p in local.values():
        assert p.help.startswith(f"{' or '.join(LOCAL_MODELS)} (embedded model") and p.callback is not None
    config = _taking("--config")
    assert len(config) >= 9 and all(p.help.startswith("Per-component LLM settings (JSON)") for p in config.values())
    workers = _taking("--workers")
    assert len(workers) >= 9
    assert all((p.min, p.max) == (1, 256) and p.help.endswith(" in flight at once") for p in workers.values())
    assert all(p.min == 1 and p.default is None for p in _taking("--limit").values())
    assert all((p.min, p.max) == (0, 2**32 - 1) for p in _taking("--seed").values())  # numpy and llama.cpp take it
    assert {(p.default, p.min, p.max) for p in _taking("--threshold").values()} == {(DEFAULT_THRESHOLD, 0.01, 1.0)}
    assert len({p.help for p in _taking("--access").values()}) == 1
    assert all(p.is_flag and p.default is False for p in _taking("--json").values())
    assert all(p.callback is not None for p in _taking("--split").values())


def _hand_declared(path: Path) -> list[str]:
    """``file:line --flag`` of each ``typer.Option(..., "--flag", ...)`` in ``path`` naming a
    shared flag."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "typer.Option":
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and a.value in SHARED]
            found += [f"{path.name}:{node.lineno} {f}" for f in flags]
    return found


def test_no_command_declares_a_shared_option_by_hand():
    # --out is shared only as a build directory; a results folder or a file to write is the command's own
    allowed = {"--out"}
    hand = [h for f in sorted(CLI.glob("*.py")) if f.name != "options.py" for h in _hand_declared(f)
            if h.split()[-1] not in allowed]
    assert not hand, hand


@pytest.mark.parametrize("path", sorted(_taking("--local-model")), ids=" ".join)
def test_every_command_refuses_an_unknown_local_model(cli, path):
    res = cli(*path, "--local-model", "gpt-9")
    assert res.exit_code == 2
    assert res.stderr == f"error: --local-model must be one of {', '.join(LOCAL_MODELS)} (got 'gpt-9')\n"


@pytest.mark.parametrize("flag, bad", [("--split", "dev"), ("--access", "everything")])
def test_every_command_refuses_a_bad_choice(cli, flag, bad):
    for path in _taking(flag):
        res = cli(*path, flag, bad)
        assert res.exit_code == 2 and res.stderr.startswith(f"error: {flag} must be one of "), (path, res.stderr)
