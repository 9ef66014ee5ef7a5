"""Judge replies: JSON schemas built from the rubric, parsing, and the θ gates.

Stage 1 (J_participants) replies ``{"ma_scores": {"MA1": {dims..., feedback}, ...},
"overall_feedback": str}``; stage 2 (J_dialogue) replies ``{"dialogue_scores":
{dims..., feedback}}`` (App. B.2). θ1/θ2 come from the rubric (all maximal).

A verdict whose feedback for an item claims no change is needed while one of that
item's scores is below its maximum is *inconsistent*: the item is listed in
:attr:`Judgement.inconsistent`, stored as a ``judge_inconsistency`` row in ``scores``
and counted by ``status``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ioa_synth.protocol.rubric import Rubric, StageRubric, item_score_schema, load_rubric


#: Feedback that claims nothing needs to change (the rubric's own phrase is matched too).
_NO_CHANGE = re.compile(r"\bno (further )?(changes?|edits?|revisions?)( are| is)? (needed|required|necessary)\b"
                        r"|\bnothing (needs )?to (change|fix|improve)\b", re.IGNORECASE)


def claims_no_change(feedback: str, no_change_phrase: str = "") -> bool:
    """True when ``feedback`` says no change is needed (e.g. "No changes needed.")."""
    text = " ".join(feedback.split())
    phrase = no_change_phrase.strip().rstrip(".").lower()
    return bool(_NO_CHANGE.search(text)) or bool(phrase and phrase in text.lower())


class JudgementError(ValueError):
    """A judge reply that does not fit the rubric (missing item, score out of range...)."""


@dataclass
class Judgement:
    """Scores of one judge call.

    ``items`` maps item (MA id for stage 1, ``"dialogue"`` for stage 2) to
    ``{dimension: int}``; ``feedback`` maps item to its written feedback;
    ``overall_feedback`` is stage 1's overall comment ("" for stage 2).
    """

    stage: int
    items: dict[str, dict[str, int]]
    feedback: dict[str, str]
    overall_feedback: str = ""
    failed_items: list[str] = field(default_factory=list)
    #: item -> ``[(dimension, score, max), ...]`` for the dimensions below θ
    below: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict)
    #: items whose feedback claims no change while a score is below its maximum
    inconsistent: list[str] = field(default_factory=list)
    #: stage 1, type planting: the disagreement type the judge read per MA id
    judged_types: dict[str, str] = field(default_factory=dict)
    #: the rubric of the stage (its reply and quality keys); default the shipped rubric's
    rubric_stage: StageRubric | None = field(default=None, repr=False)

    @property
    def passed(self) -> bool:
        """True when every item meets the stage's θ."""
        return not self.failed_items

    def feedback_text(self) -> str:
        """The regeneration request's feedback: first every dimension below θ
        with ``score/max`` per item, then the judge's written feedback (per item, then
        overall)."""
        lines = ["Scores below the threshold (score/maximum):"]
        lines += [f"- {item}: " + ", ".join(f"{d} {s}/{m}" for d, s, m in dims)
                  for item, dims in self.below.items() if dims]
        lines.append("Reviewer's comments:")
        lines += [f"- {item}: {text}" for item, text in self.feedback.items() if text]
        if self.overall_feedback:
            lines.append(f"- overall: {self.overall_feedback}")
        return "\n".join(lines)

    def as_quality(self) -> dict[str, Any]:
        """The scores as stored in a record's ``quality`` block."""
        flag = {"judge_inconsistent": list(self.inconsistent)} if self.inconsistent else {}
        srub = self.rubric_stage or load_rubric().stage(self.stage)
        if srub.per_point:
            scores = {i: {**s, "feedback": self.feedback.get(i, "")} for i, s in self.items.items()}
        else:
            scores = {**self.items[srub.unit], "feedback": self.feedback.get(srub.unit, "")}
        overall = {srub.overall_feedback_key: self.overall_feedback} if srub.overall_feedback_key else {}
        return {srub.output_key: scores, **overall, **flag}


def judge_schema(stage: StageRubric, ma_ids: list[str]) -> dict[str, Any]:
    """JSON schema for a judge reply of ``stage``; a stage scored per point (stage 1) lists
    every MA id as a required key."""
    item = item_score_schema(stage)
    if stage.per_point:
        scores = {"type": "object", "properties": {i: item for i in ma_ids}, "required": list(ma_ids),
                  "additionalProperties": False}
        props = {stage.output_key: scores}
        if stage.overall_feedback_key:
            props[stage.overall_feedback_key] = {"type": "string", "maxLength": 800}
    else:
        props = {stage.output_key: item}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def parse_judgement(rubric: Rubric, stage: int, data: Any, ma_ids: list[str]) -> Judgement:
    """Check a decoded judge reply against the rubric and apply θ.

    Raises:
        JudgementError: not an object, a missing item or dimension, a score that is not
            an integer within the dimension's range.
    """
    srub = rubric.stage(stage)
    if not isinstance(data, dict) or not isinstance(data.get(srub.output_key), dict):
        raise JudgementError(f"reply must be an object with key {srub.output_key!r}")
    block = data[srub.output_key]
    raw_items = {i: block.get(i) for i in ma_ids} if srub.per_point else {srub.unit: block}
    items: dict[str, dict[str, int]] = {}
    feedback: dict[str, str] = {}
    for item, raw in raw_items.items():
        if not isinstance(raw, dict):
            raise JudgementError(f"no scores for {item}")
        items[item] = {d.name: _score(raw, d.name, d.min, d.max, item) for d in srub.dimensions}
        feedback[item] = str(raw.get("feedback") or "")
    overall = str(data.get(srub.overall_feedback_key) or "") if srub.overall_feedback_key else ""
    failed = [i for i, s in items.items() if not rubric.passes(stage, s)]
    need = rubric.threshold(stage)
    below = {i: [(d.name, s[d.name], d.max) for d in srub.dimensions if s[d.name] < need.get(d.name, d.min)]
             for i, s in items.items()}
    inconsistent = [i for i, s in items.items()
                    if any(s[d.name] < d.max for d in srub.dimensions)
                    and claims_no_change(feedback[i], rubric.no_change_feedback)]
    return Judgement(stage=stage, items=items, feedback=feedback, overall_feedback=overall, failed_items=failed,
                     below=below, inconsistent=inconsistent, rubric_stage=srub)


def _score(raw: dict[str, Any], name: str, lo: int, hi: int, item: str) -> int:
    value = raw.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise JudgementError(f"{item}.{name}: expected an integer score, got {value!r}")
    if not lo <= int(value) <= hi:
        raise JudgementError(f"{item}.{name}: score {value} outside {lo}-{hi}")
    return int(value)
