"""Pooled recall of a session (paper §6.2): a detector-blind merge judge groups the
validated discoveries of all detectors into distinct disagreements; a detector's pooled
recall is the share of those disagreements that one of its validated questions found.

The judge sees only question texts and options, shuffled (seeded by the session), never a
set label or a detector name. Its call goes through
:func:`ioa_synth.runs.context.open_run` into the session's catalog and is replayed on
a re-run.
"""

from __future__ import annotations

import random
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.core.templates import render_template, template_sha256
from ioa_synth.meetings.session import Session
from ioa_synth.meetings.tables import MEETING_TABLES
from ioa_synth.protocol.schemas import request_schema
from ioa_synth.runs.recorder import CallKey
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.context import open_run

TEMPLATE = "meetings/merge_judge.jinja2"
#: ``llm_calls.stage`` of the merge judge.
MERGE_STAGE = 3


class MergeReply(BaseModel):
    """``{"groups": [[question number, ...], ...]}``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"additionalProperties": False})
    groups: list[list[int]] = Field(..., json_schema_extra={"maxItems": 200})


def parse_groups(data: Any, count: int) -> list[list[int]]:
    """Groups of a merge-judge reply: every number 1..``count`` exactly once.

    Raises:
        ValueError: another shape, a number missing, repeated or out of range.
    """
    groups = [g for g in MergeReply.model_validate(data).groups if g]
    seen = sorted(n for g in groups for n in g)
    if seen != list(range(1, count + 1)):
        raise ValueError(f"groups must hold every question number 1..{count} exactly once (got {seen})")
    return groups


def pooled_recall(session: Session, validated: dict[str, list[dict[str, Any]]], rule: str, config: ToolkitConfig,
                  local_model: str | None) -> dict[str, Any]:
    """``{"distinct": k, "items": n, "found": {detector: groups found}, "recall": {detector:
    found / k or None}}`` from the
    ``validated`` questions per detector (``{"question", "options"}``); no call when there
    are none (every recall ``None``)."""
    items = [(det, q) for det in sorted(validated) for q in validated[det]]
    if not items:
        return {"distinct": 0, "items": 0, "found": {det: 0 for det in validated},
                "recall": {det: None for det in validated}}
    random.Random(f"{session.session_id}:merge").shuffle(items)
    shown = [{"number": i + 1, "question": q["question"], "options": q["options"]} for i, (_, q) in enumerate(items)]
    prompt = render_template(TEMPLATE, items=shown)
    key = CallKey(f"merge:{rule}", MERGE_STAGE, "merge_judge", 1)
    with Catalog(session.folder, tables=[MEETING_TABLES]) as catalog:
        def describe(eps: dict[str, Any]) -> dict[str, Any]:
            return {"components": {n: ep.identity() for n, ep in eps.items()}, "templates": {TEMPLATE: template_sha256(TEMPLATE)}}

        with open_run(catalog, "meeting report", ["merge_judge"], config, local_model, {"rule": rule},
                      describe=describe, check=None, in_kind="meeting") as run:
            recorder = run.recorder(replay_of=[key.unit])
            groups, _ = recorder.call(run.clients["merge_judge"], key, prompt, request_schema(MergeReply), "merge_judge",
                                      lambda d: parse_groups(d, len(items)), tags={"component": "merge_judge", "rule": rule})
    owner = [det for det, _ in items]
    found = {det: sum(any(owner[n - 1] == det for n in g) for g in groups) for det in validated}
    return {"distinct": len(groups), "items": len(items), "found": found,
            "recall": {det: k / len(groups) for det, k in found.items()}}
