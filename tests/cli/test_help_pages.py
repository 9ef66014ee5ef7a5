"""Help pages: commands grouped in pipeline order, argument names in one style."""

from __future__ import annotations

import re

from ioa_synth.cli import app
from ioa_synth.cli.common import PANELS


def _help(cli, *args: str) -> str:
    res = cli(*args, "--help")
    assert res.exit_code == 0, res.stderr
    return res.stdout


def test_commands_are_grouped_in_pipeline_order(cli):
    text = _help(cli)
    sections = [ln.rstrip(":") for ln in text.splitlines() if ln and not ln.startswith(" ") and ln.endswith(":")]
    panels = [s for s in sections if s in PANELS]
    assert panels == sorted(panels, key=PANELS.index) and len(panels) >= 4
    order = [m.group(1) for m in re.finditer(r"^  (\w[\w-]*)\s", text, re.M)]
    pipeline = ["seeds", "build", "status", "show", "regenerate", "audit", "annotate", "evaluate", "report",
                "compare", "sql"]
    assert [c for c in order if c in pipeline] == pipeline
    assert "Other commands" not in sections  # every command has a panel


def test_argument_names_share_one_style(cli):
    import typer

    group = typer.main.get_command(app)
    paths = []
    for name, cmd in group.commands.items():
        subs = getattr(cmd, "commands", None)
        paths += [(name, sub) for sub in subs] if subs else [(name,)]
    for path in paths:
        usage = _help(cli, *path).splitlines()[0]
        args = usage.split("[OPTIONS]", 1)[1].split()
        for arg in args:
            if arg == "COMMAND" or arg == "[ARGS]...":
                continue
            # click's style: DIR required, [DIR] optional (typer's {DIR} read like a set of choices)
            assert re.fullmatch(r"([A-Z_]+|\[[A-Z_]+\])(\.\.\.)?", arg), (path, usage)
    assert "[CASE_ID]" in _help(cli, "show") and "[[" not in _help(cli, "show")
    assert _help(cli, "sql").splitlines()[0].endswith(" sql [OPTIONS] DIR QUERY")
    assert _help(cli, "meeting", "report").splitlines()[0].endswith(" [OPTIONS] SESSION_DIR...")


def test_sql_help_names_every_folder_with_a_catalog(cli):
    text = " ".join(_help(cli, "sql").split())
    assert "Build directory holding catalog.duckdb" not in text
    for kind in ("build directory", "'evaluate', 'belief run' or 'collab run' results folder", "meeting session",
                 "--out folder of 'train score'", "<stem>.calls folder beside the items file of 'belief items import' "
                 "or 'belief screen'"):
        assert kind in text
