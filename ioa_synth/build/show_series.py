"""``ioa-synth show`` of a series of meetings (``build --meetings K``,
:mod:`ioa_synth.build.stages_series`): a stage-2 attempt is K generator calls, one per
meeting (role ``generator`` for meeting 1, ``generator:meeting<k>`` after it), shown as the
one dialogue the build checked and judged (as :func:`~ioa_synth.protocol.series.combine` joins
them: each turn marked with its meeting, ``turn_idx`` 1..T over the series).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ioa_synth.llm.replies import reply_json
from ioa_synth.protocol.schemas import Stage2Output

#: Role prefix of the stage-2 generator calls of meetings 2..K.
MEETING_ROLE = "generator:meeting"


def meeting_of_role(role: str) -> int | None:
    """The meeting a stage-2 generator call wrote (``generator``: 1, ``generator:meeting<k>``:
    k), or ``None`` for any other role."""
    if role == "generator":
        return 1
    if role.startswith(MEETING_ROLE) and role[len(MEETING_ROLE):].isdigit():
        return int(role[len(MEETING_ROLE):])
    return None


def series_dialogues(stored: dict[tuple[str, int, str, int], str]) -> dict[tuple[int, int], str]:
    """The stage-2 reply per ``(2, attempt)`` of a series' stored calls (``stored``: call key
    ``(case_id, stage, role, attempt)`` -> reply text): the meetings written so far (1, 2, ...
    without a gap) joined into one series dialogue's JSON. A meeting whose reply does not read
    as a dialogue is given as it is stored, so that ``show`` reports it unreadable."""
    per: dict[int, dict[int, str]] = {}
    for (_, stage, role, attempt), text in stored.items():
        meeting = meeting_of_role(role)
        if stage == 2 and meeting is not None:
            per.setdefault(attempt, {})[meeting] = text
    out: dict[tuple[int, int], str] = {}
    for attempt, texts in per.items():
        turns: list[dict[str, Any]] = []
        k = 1
        while k in texts:
            try:
                dialogue = Stage2Output.model_validate(reply_json(texts[k]))
            except (ValueError, ValidationError):
                out[(2, attempt)] = texts[k]
                break
            turns += [{**t.model_dump(), "turn_idx": len(turns) + i, "meeting": k}
                      for i, t in enumerate(dialogue.turns, start=1)]
            k += 1
        else:
            out[(2, attempt)] = json.dumps({"turns": turns}, ensure_ascii=False)
    return out


def meeting_label(point: dict[str, Any], k: int) -> str:
    """A series point's plan as ``show`` prints it under its id: ``planted in 1, surfaces in 3``
    or ``planted in 2, hidden through 3``."""
    later = f"surfaces in {point['surfaces_in']}" if point.get("surfaces_in") else f"hidden through {k}"
    return f"planted in {point['planted_in']}, {later}"


__all__ = ["MEETING_ROLE", "meeting_label", "meeting_of_role", "series_dialogues"]
