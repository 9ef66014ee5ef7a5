"""Shared pieces of the belief-study tests: sample items and the hand-computed scenario."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "belief"

#: Private labels of the scenario (default ``true``): agent 2 is persuaded after round 1,
#: agent 3 after round 2, agent 1 ends mixed.
LABELS = {(2, 1): "manipulated", (2, 2): "manipulated", (3, 2): "manipulated", (2, 3): "manipulated",
          (3, 3): "manipulated", (1, 3): "mixed"}
#: Public stances of the benign utterances (agent, round).
STANCES = {(2, 1): "endorse_manipulated", (3, 1): "reject_manipulated", (1, 1): "hedge_or_partial",
           (3, 2): "hedge_or_partial", (1, 2): "reject_manipulated", (2, 2): "endorse_manipulated",
           (2, 3): "ignore_or_topic_shift", (3, 3): "endorse_manipulated", (1, 3): "reject_manipulated"}


def sample_items(tmp_path: Path, n: int = 2, source: str = "counterfact") -> Path:
    """The first ``n`` shipped items of ``source`` in a file of their own."""
    rows = [json.loads(x) for x in (SAMPLES / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["source"] == source][:n]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
