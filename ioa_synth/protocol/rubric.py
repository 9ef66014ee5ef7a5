"""The rubric as typed data: dimensions, score ranges, level definitions, θ1 and θ2.

Loaded from ``ioa_synth/protocol/rubric.json`` (the single place the rubric is defined); it feeds
the judge prompts, the JSON schemas sent to judges, the θ gates, the annotation forms
and the reports. Source: paper App. B.2.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, model_validator



#: The one file that defines the rubric.
RUBRIC_FILE = Path(__file__).resolve().parent / "rubric.json"

class Dimension(BaseModel):
    """One rubric dimension scored on the integer range ``min..max``; ``levels`` maps
    each score (as a string) to its definition."""

    name: str
    min: int
    max: int
    question: str
    levels: dict[str, str]

    @model_validator(mode="after")
    def _levels_cover_range(self) -> "Dimension":
        want = {str(s) for s in range(self.min, self.max + 1)}
        if set(self.levels) != want:
            raise ValueError(f"dimension {self.name}: levels must cover exactly {sorted(want)}")
        return self

    @property
    def scores(self) -> list[int]:
        """Allowed scores, highest first."""
        return list(range(self.max, self.min - 1, -1))


class StageRubric(BaseModel):
    """Rubric of one stage: stage 1 scores each misalignment point, stage 2 the dialogue."""

    stage: int
    name: str
    unit: str
    output_key: str
    overall_feedback_key: str | None
    theta: str
    dimensions: list[Dimension]

    @property
    def per_point(self) -> bool:
        """True when each misalignment point is scored on its own (``unit``
        ``misalignment_point``, stage 1); otherwise the stage's output is one item named
        after its ``unit`` (``dialogue``)."""
        return self.unit == "misalignment_point"

    def dimension(self, name: str) -> Dimension:
        """The dimension called ``name``; raises ``KeyError`` if unknown."""
        for d in self.dimensions:
            if d.name == name:
                return d
        raise KeyError(name)


class Rubric(BaseModel):
    """The whole rubric plus the acceptance thresholds θ1/θ2 (all maximal)."""

    version: str
    source: str
    stages: list[StageRubric]
    thresholds: dict[str, dict[str, int]]
    no_change_feedback: str

    def stage(self, stage: int) -> StageRubric:
        """Rubric of stage 1 or 2; raises ``KeyError`` otherwise."""
        for s in self.stages:
            if s.stage == stage:
                return s
        raise KeyError(stage)

    def threshold(self, stage: int) -> dict[str, int]:
        """Minimum score per dimension for stage ``stage`` to pass (θ1 or θ2)."""
        return self.thresholds[self.stage(stage).theta]

    def passes(self, stage: int, scores: dict[str, int]) -> bool:
        """True when one item's ``scores`` (dimension -> score) meet the stage's θ."""
        return all(scores.get(dim, -1) >= need for dim, need in self.threshold(stage).items())

    def all_dimensions(self) -> list[tuple[int, Dimension]]:
        """(stage, dimension) pairs in rubric order."""
        return [(s.stage, d) for s in self.stages for d in s.dimensions]


@lru_cache(maxsize=1)
def load_rubric() -> Rubric:
    """Load and validate ``ioa_synth/protocol/rubric.json``; raises ``pydantic.ValidationError`` if malformed."""
    path = RUBRIC_FILE
    return Rubric.model_validate(json.loads(path.read_text(encoding="utf-8")))


def rubric_sha256() -> str:
    """sha256 of the rubric file, part of the setup fingerprint."""
    return hashlib.sha256(RUBRIC_FILE.read_bytes()).hexdigest()


def item_score_schema(stage: StageRubric, with_feedback: bool = True) -> dict[str, Any]:
    """JSON schema of one scored item: an integer enum per dimension plus ``feedback``."""
    props: dict[str, Any] = {d.name: {"type": "integer", "enum": d.scores[::-1]} for d in stage.dimensions}
    if with_feedback:
        props["feedback"] = {"type": "string", "maxLength": 600}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}
