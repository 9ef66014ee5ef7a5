"""Domains, task types, cells and splits of the IoA-Suite protocol (six domains by five task
types: 30 cells).

A *cell* is a (domain, task type) pair; there are 6 x 5 = 30 cells. The per-cell
targets per split are 40 (train), 4 (val) and 10 (test).
"""

from __future__ import annotations

DOMAINS: tuple[str, ...] = (
    "ml_research",
    "software_engineering",
    "cross_disciplinary",
    "medicine",
    "business",
    "law",
)

#: Task types from McGrath's Group Task Circumplex, each with the one-line description
#: given to the stage-1 generator.
TASK_TYPES: dict[str, str] = {
    "planning": "the pair lays out steps, owners and a timeline to reach a goal they share",
    "design_review": "the pair examines a proposed design or protocol and decides what to keep or change",
    "troubleshooting": "the pair diagnoses an observed problem and agrees on a fix",
    "coordination": "the pair divides work and aligns hand-offs between people or teams",
    "brainstorming": "the pair generates and narrows down candidate ideas for an open question",
}

SPLITS: tuple[str, ...] = ("train", "val", "test")

#: Accepted cases per cell for each split (the paper's 40/4/10: 1,200/120/300 cases).
PER_CELL_TARGET: dict[str, int] = {"train": 40, "val": 4, "test": 10}

#: Disagreement types of a misalignment point (paper App. B.5).
MA_TYPES: tuple[str, ...] = (
    "definitional",
    "referential",
    "criterial",
    "scopal",
    "presuppositional",
    "procedural",
    "other",
)

#: Test-split distribution of MA types reported by the paper (fractions, sum 1.0).
PAPER_MA_TYPE_DISTRIBUTION: dict[str, float] = {
    "definitional": 0.242,
    "referential": 0.158,
    "criterial": 0.233,
    "scopal": 0.182,
    "presuppositional": 0.048,
    "procedural": 0.133,
    "other": 0.002,
}


def cells() -> list[tuple[str, str]]:
    """All 30 (domain, task_type) cells in a fixed order: domains outer, task types inner."""
    return [(d, k) for d in DOMAINS for k in TASK_TYPES]
