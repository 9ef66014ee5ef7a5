"""Fixtures for the seeds tests: the replay server, settings pointing at it, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ioa_synth.cli.seeds import seeds_app
from ioa_synth.seeds.settings import Settings

from .replay import ReplayServer

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "seeds" / "snapshot.jsonl"
SEED_ENV = ("ARXIV_API_URL", "NCBI_EUTILS_URL", "OPENALEX_API_URL", "NCBI_EMAIL", "NCBI_API_KEY",
            "OPENALEX_EMAIL", "OPENALEX_API_KEY", "IOA_SYNTH_DELAY_SCALE")


@pytest.fixture(autouse=True)
def no_seed_env(monkeypatch):
    """No test sees the developer's endpoints or keys; nothing can reach the real APIs."""
    for var in SEED_ENV:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def replay():
    """The replay server (see replay.py), started on a free port and stopped after the test."""
    server = ReplayServer().start()
    yield server
    server.stop()


@pytest.fixture
def waits() -> list[float]:
    """Every pause the code asks for, in seconds (recorded instead of slept)."""
    return []


@pytest.fixture
def settings(replay, waits) -> Settings:
    """Settings aimed at the replay server; real delays are computed but recorded, not slept."""
    return Settings.from_env(env=replay.env(), sleep=waits.append)


@pytest.fixture
def cli_env(replay, monkeypatch):
    """Environment for CLI runs: base URLs at the replay server, delays scaled to zero."""
    for key, value in {**replay.env(), "IOA_SYNTH_DELAY_SCALE": "0"}.items():
        monkeypatch.setenv(key, value)
    return replay


@pytest.fixture
def run():
    """Invoke ``ioa-synth seeds ...`` in-process; returns the click Result."""
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(seeds_app, [str(a) for a in args], catch_exceptions=False)

    return invoke


def read_jsonl(path: Path) -> list[dict]:
    """Records of a JSONL file."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def snapshot_records() -> list[dict]:
    """The real paper records shipped in seeds/snapshot.jsonl."""
    return read_jsonl(SNAPSHOT)
