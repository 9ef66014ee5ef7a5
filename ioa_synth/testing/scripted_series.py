"""Scripted series of meetings (``build --meetings K``) for the scripted server: a two-person
series of three meetings and a three-person series of two, each passing every gate (the
single-meeting ones over the series and the planted and surfacing gates,
:mod:`ioa_synth.protocol.gates_series`), variants that break one series rule each, and
:class:`SeriesResponder`, which answers a series build's requests meeting by meeting.

The two-person series (:func:`series_stage1`, :func:`series_meetings`), written by hand:

| point | surface form | planted_in | surfaces_in |
| --- | --- | --- | --- |
| MA1 | the held-out set | 1 | 3 (Ben says the loader draws a fresh random tenth; Ada says she meant the frozen March questions) |
| MA2 | rerun the baseline | 1 | null |
| MA3 | good enough to ship | 2 | null |

Its two-meeting form (``meetings=2``: meetings 2 and 3 said as one second meeting) plants
MA1 and MA2 in meeting 1 and MA3 in meeting 2, where MA1 surfaces.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from ioa_synth.testing.scripted_case import _MEMBERS, valid_stage1
from ioa_synth.testing.scripted_multi import valid_stage1_multi, valid_stage2_multi
from ioa_synth.testing.scripted_replies import (ProtocolResponder, Reply, chat_reply, follow_planned_types,
                                                judge_scores)

#: (meeting, speaker, utterance, inner thought, MA ids, outline description) of the two-person series
_SERIES_TURNS = [
    (1, "M1", "So for the comparison, we score everything on the held-out set, same as last time.",
     "For me the held-out set is the frozen 2,400 March questions; nothing else is comparable.", ["MA1"],
     "Ada opens with the evaluation data and names the set they will score on."),
    (1, "M2", "Sure, the held-out set is already wired into the loader, so that part is free.",
     "The loader redraws its tenth with seed 17, so it is always there; easy.", ["MA1"],
     "Ben confirms the set is ready on his side."),
    (1, "M1", "Good. Then we rerun the baseline before we look at any of the new numbers.",
     "Rerunning means retraining the 2023 pipeline with today's tokenizer; it takes two days.", ["MA2"],
     "Ada asks for the baseline to be redone first."),
    (1, "M2", "Fine by me, we rerun the baseline first and meet again on Thursday.",
     "I will pull January's cached scores; recomputing only our model is an hour of work.", ["MA2"],
     "Ben agrees and proposes a follow-up."),
    (2, "M1", "The baseline numbers are in, so today we decide whether it is good enough to ship.",
     "Every language slice has to clear 0.82 before I sign anything.", ["MA3"],
     "Ada opens the second meeting with the release decision."),
    (2, "M2", "Looks good enough to ship to me; I can prepare the container by Friday.",
     "Our average over all queries beats last quarter, which is what the dashboard shows.", ["MA3"],
     "Ben is ready to prepare the release."),
    (3, "M1", "Before the workshop draft goes out, I reran our scores on the held-out set once more.",
     "The frozen March questions gave me a lower score than Ben's dashboard; odd.", ["MA1"],
     "Ada reports a number that does not match."),
    (3, "M2", "For the held-out set I used a fresh random tenth of the corpus that the data loader draws with "
              "seed 17.",
     "She looks surprised; maybe her numbers come from some other file.", ["MA1"],
     "Ben explains where his numbers come from."),
    (3, "M1", "Ah, that explains it: I meant the 2,400 questions from the March 2024 crawl, frozen in the team "
              "bucket.",
     "So we never scored the same thing; both write-ups need fixing before anyone cites them.", ["MA1"],
     "Ada names what she meant and the gap is clear."),
]

#: (planted_in, surfaces_in) of MA1..MA3 of the two-person series
_PLAN = [(1, 3), (1, None), (2, None)]

#: (planted_in, surfaces_in) of MA1..MA3 of the two-person series in two meetings
_PLAN2 = [(1, 2), (1, None), (2, None)]

#: meeting of each outline turn of the three-person series (two meetings of four turns)
_MULTI_MEETINGS = [1, 1, 1, 1, 2, 2, 2, 2]
#: (planted_in, surfaces_in) of MA1..MA3 of the three-person series: none surfaces
_MULTI_PLAN = [(1, None), (1, None), (2, None)]


def _meeting_of(m: int, meetings: int) -> int:
    """Meeting ``m`` of the three-meeting series in a series of ``meetings`` (2: 3 joins 2)."""
    return min(m, meetings)


def series_stage1(meetings: int = 3) -> dict[str, Any]:
    """The stage-1 output of the two-person series of three meetings (``meetings=2``: of two)."""
    data = valid_stage1(3)
    for point, (planted, surfaces) in zip(data["misalignment_points"], _PLAN if meetings == 3 else _PLAN2):
        point["planted_in"], point["surfaces_in"] = planted, surfaces
    data["conversation_outline"] = [{"turn": i + 1, "speaker": spk, "description": plan, "ma_ids": list(mas),
                                     "meeting": _meeting_of(m, meetings)}
                                    for i, (m, spk, _, _, mas, plan) in enumerate(_SERIES_TURNS)]
    return data


def series_meetings(meetings: int = 3) -> list[dict[str, Any]]:
    """The two-person series' dialogues, one generator reply per meeting (turns numbered from 1);
    ``meetings=2``: the two-meeting form."""
    names = {m["id"]: m["name"] for m in _MEMBERS}
    out = []
    for k in range(1, meetings + 1):
        turns = [t for t in _SERIES_TURNS if _meeting_of(t[0], meetings) == k]
        out.append({"turns": [{"turn_idx": i + 1, "speaker_id": spk, "speaker_name": names[spk],
                               "inner_thought": thought, "utterance": said}
                              for i, (_, spk, said, thought, _, _) in enumerate(turns)]})
    return out


def multi_series_stage1() -> dict[str, Any]:
    """The stage-1 output of the three-person series of two meetings
    (:func:`~ioa_synth.testing.scripted_multi.valid_stage1_multi` split after turn 4)."""
    data = valid_stage1_multi()
    for point, (planted, surfaces) in zip(data["misalignment_points"], _MULTI_PLAN):
        point["planted_in"], point["surfaces_in"] = planted, surfaces
    for turn, m in zip(data["conversation_outline"], _MULTI_MEETINGS):
        turn["meeting"] = m
    return data


def multi_series_meetings() -> list[dict[str, Any]]:
    """The three-person series' two dialogues (turns numbered from 1 in each)."""
    turns = valid_stage2_multi()["turns"]
    out = []
    for k in (1, 2):
        mine = [dict(t) for t, m in zip(turns, _MULTI_MEETINGS) if m == k]
        for i, t in enumerate(mine, start=1):
            t["turn_idx"] = i
        out.append({"turns": mine})
    return out


def series_record() -> dict[str, Any]:
    """The two-person series as a ``build --meetings 3`` record would hold it (for evaluate):
    ``profiles`` with the series fields, ``dialogue`` with each turn's ``meeting``."""
    profiles = series_stage1()
    turns, idx = [], 0
    for k, meeting in enumerate(series_meetings(), start=1):
        for t in meeting["turns"]:
            idx += 1
            turns.append({**t, "turn_idx": idx, "meeting": k})
    return {"case_id": "ml_research/planning_000", "profiles": profiles,
            "dialogue": {"num_turns": len(turns), "turns": turns},
            "seed": {"seed_id": "s0", "domain": "ml_research", "task_type": "planning"}}


def series_breaking(action: str, meetings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The two-person series' dialogues broken one way: ``"early"`` (meeting 1 says MA3's
    surface form, planted in 2), ``"no_surface"`` (meeting 3 never states a reading of MA1,
    which surfaces there), ``"leak"`` (meeting 1 states MA1's reading aloud, two meetings early)."""
    out = copy.deepcopy(meetings)
    if action == "early":
        out[0]["turns"][3]["utterance"] = "Fine by me, and then we check whether it is good enough to ship on Thursday."
    elif action == "no_surface":
        out[2]["turns"][1]["utterance"] = "For the held-out set I used what we always use, so we should be fine."
        out[2]["turns"][2]["utterance"] = "Then the numbers stand and I will send the draft around tonight."
    elif action == "leak":
        out[0]["turns"][1]["utterance"] = ("Sure, for the held-out set the data loader draws a fresh random tenth of "
                                           "the corpus anyway.")
    return out


SERIES_ACTIONS = ("early", "no_surface", "leak")


class SeriesResponder(ProtocolResponder):
    """:class:`~ioa_synth.testing.scripted_replies.ProtocolResponder` for a series build:
    the stage-1 generator answers with the series' plan, the stage-2 generator with the
    meeting its prompt names ("meeting k of a series"). ``three``: the three-person series;
    ``meetings``: the two-person series in 3 or 2 meetings; ``case``: another series as
    ``(stage-1 JSON, [meeting 1's dialogue JSON, ...])``. The plan's points take the types
    the request schema fixes (:func:`follow_planned_types`); ``read_types``: the stage-1 judge
    reads each point as the type the plan it scores gave it (as a judge that agrees with the
    plan would). A :data:`SERIES_ACTIONS` action breaks every meeting reply of that stage-2
    attempt (the two-person series of three meetings only)."""

    def __init__(self, *args: Any, three: bool = False, meetings: int = 3,
                 case: tuple[dict[str, Any], list[dict[str, Any]]] | None = None, read_types: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.three, self.meetings, self.case, self.read_types = three, meetings, case, read_types
        self.pending: str | None = None  # the action of the stage-2 attempt under way
        self.written_types: dict[str, str] = {}  # MA id -> type of the last plan written

    def _plan(self) -> dict[str, Any]:
        if self.case is not None:
            return copy.deepcopy(self.case[0])
        return multi_series_stage1() if self.three else series_stage1(self.meetings)

    def _dialogues(self) -> list[dict[str, Any]]:
        if self.case is not None:
            return copy.deepcopy(self.case[1])
        return multi_series_meetings() if self.three else series_meetings(self.meetings)

    def _reply(self, kind: str, body: dict[str, Any], action: str) -> Reply:
        if kind == "stage1_generator" and action == "ok":
            data = follow_planned_types(self._plan(), body)
            self.written_types = {p["id"]: p["type"] for p in data["misalignment_points"]}
            return chat_reply(json.dumps(data, ensure_ascii=False), model=self.model)
        if kind == "stage1_judge" and action == "ok" and self.read_types:
            data = judge_scores(kind, body)
            for ma, block in data["ma_scores"].items():
                block["type"] = self.written_types.get(ma, "definitional")
            return chat_reply(json.dumps(data), model=self.model)
        if kind == "stage2_generator":
            text = " ".join(m.get("content", "") for m in body.get("messages", []))
            k = int(re.search(r"meeting (\d) of a series", text).group(1))
            meetings = self._dialogues()
            if k == 1:
                self.pending = action if action in SERIES_ACTIONS else None
            elif action == "ok" and self.pending:
                action = self.pending
            if action in SERIES_ACTIONS:
                meetings = series_breaking(action, meetings)
            return chat_reply(json.dumps(meetings[k - 1], ensure_ascii=False), model=self.model)
        return super()._reply(kind, body, action)


__all__ = ["SERIES_ACTIONS", "SeriesResponder", "multi_series_meetings", "multi_series_stage1", "series_breaking",
           "series_meetings", "series_record", "series_stage1"]
