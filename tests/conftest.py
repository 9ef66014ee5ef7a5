"""Shared test fixtures: real seed tuples, a clean environment, scripted endpoints."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest
from typer.testing import CliRunner

from ioa_synth.protocol.cells import TASK_TYPES
from ioa_helpers import KEY
from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "seeds" / "snapshot.jsonl"

from ioa_synth.llm.config import COMPONENTS

ENV_VARS = [f"{c}_{v}" for c in ("OPENAI", *(name.upper() for name in COMPONENTS)) for v in ("BASE_URL", "API_KEY")]


@pytest.fixture(autouse=True)
def clean_llm_env(monkeypatch):
    """No test sees the developer's endpoints or keys, nor their terminal width (piped
    tables follow ``COLUMNS`` when it is set)."""
    for var in [*ENV_VARS, "COLUMNS"]:
        monkeypatch.delenv(var, raising=False)


def real_seed_tuples(n: int, domains: tuple[str, ...] | None = None) -> list[dict]:
    """``n`` build-format seed tuples made from real papers of seeds/snapshot.jsonl,
    task types assigned round-robin."""
    papers = [json.loads(line) for line in SNAPSHOT.read_text(encoding="utf-8").splitlines() if line.strip()]
    if domains:
        papers = [p for p in papers if p["domain"] in domains]
    tasks = list(TASK_TYPES)
    return [{"seed_id": f"{p['source']}:{p['source_id']}", "source": p["source"], "domain": p["domain"],
             "task_type": tasks[i % len(tasks)], "title": p["title"], "abstract": p["abstract"],
             "license": p["license"]} for i, p in enumerate(papers[:n])]


@pytest.fixture
def seeds_file(tmp_path):
    """Factory: write ``n`` real seed tuples to a JSONL file and return its path."""

    def make(n: int = 3, name: str = "seeds.jsonl", **kw) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(s) + "\n" for s in real_seed_tuples(n, **kw)), encoding="utf-8")
        return path

    return make


@pytest.fixture
def cli():
    """Run ``ioa-synth`` in-process; returns the click Result (exit_code, stdout, stderr)."""
    from ioa_synth.cli import app

    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    return run


@pytest.fixture
def endpoint(monkeypatch):
    """Start scripted servers: ``start(script=None, responder=None, models=None, env="OPENAI")``
    points ``<env>_BASE_URL`` / ``<env>_API_KEY`` at the new server and returns it."""
    servers: list[ScriptedServer] = []

    def start(script: dict | None = None, responder: Callable | None = None, models: list[str] | None = None,
              env: str = "OPENAI") -> ScriptedServer:
        server = ScriptedServer(responder or ProtocolResponder(script=script), models=models).__enter__()
        servers.append(server)
        monkeypatch.setenv(f"{env}_BASE_URL", server.base_url)
        monkeypatch.setenv(f"{env}_API_KEY", KEY)
        return server

    yield start
    for s in servers:
        s.__exit__(None, None, None)


@pytest.fixture
def read_only(tmp_path):
    """Factory: make a folder that cannot be written (chmod 555 for a normal user; for root,
    which ignores permission bits, the immutable attribute); skips where neither works."""
    made: list[Path] = []

    def make(name: str = "ro") -> Path:
        folder = tmp_path / name
        folder.mkdir()
        if os.geteuid() == 0:
            if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)],
                                                                capture_output=True).returncode:
                pytest.skip("no way to make a read-only folder here (root, no chattr +i)")
        else:
            folder.chmod(0o555)
        made.append(folder)
        try:
            (folder / "probe").touch()
        except OSError:
            return folder
        pytest.skip("the folder stayed writable")

    yield make
    for folder in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
        folder.chmod(0o755)
