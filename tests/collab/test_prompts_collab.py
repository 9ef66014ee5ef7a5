"""``collab run`` with a prompts folder named by the config's ``"prompts"`` key: the edited
discussion template reaches the server and the discusser's fingerprint; a resume without it
is refused (docs/prompts.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ioa_synth.testing.collab_scripted import CollabScript

from .helpers import HP, hp_tasks

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ioa_helpers import one_line_error  # noqa: E402

NAME = "collab/hp_discuss.jinja2"
MARK = "Speak as the paper's appendix asks."


def test_collab_run_with_prompts_from_the_config(cli, endpoint, tmp_path):
    server = endpoint(responder=CollabScript(tasks=hp_tasks()))
    folder = tmp_path / "cfgdir" / "my-prompts"
    assert cli("prompts", "export", folder, "--only", NAME).exit_code == 0
    path = folder / NAME
    path.write_text(path.read_text(encoding="utf-8").replace("Keep it to a few sentences.", MARK), encoding="utf-8")
    cfg = tmp_path / "cfgdir" / "cfg.json"
    cfg.write_text(json.dumps({"prompts": "my-prompts"}), encoding="utf-8")  # relative to the config's folder
    out = tmp_path / "res"
    base = ["collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--limit", "1",
            "--configs", "discussion"]
    res = cli(*base, "--config", cfg)
    assert res.exit_code == 0, res.output
    users = [m["content"] for r in server.requests for m in r["body"]["messages"] if m["role"] == "user"]
    assert any(MARK in u for u in users) and not any("Keep it to a few sentences." in u for u in users)
    run = json.loads((out / "run.json").read_text())
    digest = run["prompts"][NAME]["sha256"]
    assert run["fingerprint_parts"]["components"]["discusser"]["templates"][NAME] == digest
    n = len(server.requests)
    one_line_error(cli(*base), NAME, "another setup")
    assert len(server.requests) == n
