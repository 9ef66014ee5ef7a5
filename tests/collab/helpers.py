"""Shared pieces of the collaboration tests: the shipped samples, a detector config, a
scripted team on a scripted server."""

from __future__ import annotations

import json
from pathlib import Path

from ioa_synth.collab.tasks import load_tasks

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "collab"
BCB = SAMPLES / "bcb_sample.jsonl"
HP = SAMPLES / "hidden_profile_sample.json"


def bcb_tasks(n: int | None = None):
    tasks = load_tasks(BCB, "bcb")
    return tasks[:n] if n else tasks


def hp_tasks(n: int | None = None):
    tasks = load_tasks(HP, "hidden-profile")
    return tasks[:n] if n else tasks


def detector_config(tmp_path: Path, name: str = "det.json", block: dict | None = None) -> Path:
    """A detector's config file (a ``prober`` block)."""
    path = tmp_path / name
    path.write_text(json.dumps({"prober": block if block is not None else {"model": "scripted"}}), encoding="utf-8")
    return path


def record(out: Path, task_id: str, config: str) -> dict:
    return json.loads((out / "tasks" / f"{task_id}__{config}.json").read_text(encoding="utf-8"))
