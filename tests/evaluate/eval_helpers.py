"""Evaluation test helpers: input cases (released IoA-Suite shape and this toolkit's
record shape) and scripted responders that play the paper's case studies (App. E.1)
as the prober, the simulator and the validity filter, at the HTTP boundary."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ioa_synth.testing.scripted_server import Reply, chat_reply, valid_stage1, valid_stage2

KEYS = {"prober": "sk-prober-key-0001", "simulator": "sk-simulator-key-0002", "validity_filter": "sk-filter-key-0003"}


def released_case(n_mas: int = 4, tag: str = "") -> dict[str, Any]:
    """A case shaped like the released IoA-Suite data: ``profiles`` + ``dialogue``, the
    scenario a string, misalignment points without ``type``, no ``seed``/``quality``."""
    members = [
        {"id": "M1", "name": f"Dana Okafor{tag}", "role": "Head of customer operations",
         "expertise": "support tooling and service-level reporting", "background": "ran a 40-person support desk",
         "private_state": "wants the outage credited to the vendor before the quarterly review",
         "hidden_assumptions": ["tickets means customer-opened tickets", "the SLA clock pauses on weekends",
                                "the rollback is the vendor's job"]},
        {"id": "M2", "name": f"Luis Brandt{tag}", "role": "Site reliability engineer",
         "expertise": "incident response and queue systems", "background": "on call for the billing platform",
         "private_state": "wants a root cause in the retry logic, not the vendor",
         "hidden_assumptions": ["tickets means every queued job", "the SLA clock never pauses",
                                "the team owns the rollback"]},
    ]
    mas = [{"id": f"MA{i}", "topic": f"topic {i}", "surface_form": f"surface phrase {i}",
            "member_a_understanding": f"Dana reads phrase {i} one way", "member_b_understanding": "Luis reads it another way",
            "why_undetected": "both use the same words"} for i in range(1, n_mas + 1)]
    turns = [{"turn_idx": t, "speaker_id": "M1" if t % 2 else "M2", "speaker_name": "Dana" if t % 2 else "Luis",
              "inner_thought": f"private thought {t}", "utterance": f"spoken line {t} about the ticket backlog"}
             for t in range(1, 7)]
    return {"profiles": {"meeting_scenario": "Troubleshooting a billing outage: find the cause and agree on a fix.",
                         "members": members, "misalignment_points": mas,
                         "conversation_outline": [{"turn": 1, "speaker": "M1", "description": "opens", "ma_ids": ["MA1"]}]},
            "dialogue": {"num_turns": len(turns), "turns": turns}}


def toolkit_case(domain: str = "ml_research", task: str = "planning", n_mas: int = 4) -> dict[str, Any]:
    """A record as ``ioa-synth build`` writes it (scripted stage outputs, typed MAs)."""
    turns = valid_stage2(6)["turns"]
    return {"case_id": f"test/{domain}/{task}_000", "profiles": valid_stage1(n_mas),
            "dialogue": {"num_turns": len(turns), "turns": turns},
            "seed": {"seed_id": "arxiv:0000.00000", "domain": domain, "task_type": task, "title": "t", "abstract": "a"},
            "quality": {}}


def write_case(root: Path, rel: str, data: dict[str, Any]) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@dataclass
class Q:
    """A scripted question: M1's and M2's choices (original letters) and the filter's verdict."""

    stem: str
    m1: str
    m2: str
    meaningful: bool = True
    implicit: bool = True
    redundant_with: int | None = None
    hit: str | None = None

    def options(self) -> dict[str, str]:
        return {"A": f"{self.stem} option one", "B": f"{self.stem} option two", "C": f"{self.stem} option three"}


#: App. E.1: five questions A, A, A, A, C (one A per MA) over 4 MAs -> P .80, R 1.00, F1 .889.
STUDY_1 = [Q("S1 q1", "A", "B", hit="MA1"), Q("S1 q2", "A", "C", hit="MA2"), Q("S1 q3", "B", "A", hit="MA3"),
           Q("S1 q4", "C", "A", hit="MA4"), Q("S1 q5", "A", "A")]
#: App. E.1: A(MA2), A(MA3), B, C, C over 4 MAs -> P .50, R .50, F1 .50.
STUDY_2 = [Q("S2 q1", "A", "B", hit="MA2"), Q("S2 q2", "B", "A", hit="MA3"), Q("S2 q3", "A", "C"),
           Q("S2 q4", "A", "B", meaningful=False), Q("S2 q5", "B", "B")]
#: App. E.1: twelve questions, none in category A -> 0 / 0 / 0.
STUDY_3 = ([Q(f"S3 q{i}", "A", "A") for i in range(1, 7)]
           + [Q("S3 q7", "A", "B", implicit=False), Q("S3 q8", "A", "B", implicit=False, hit="MA1"),
              Q("S3 q9", "B", "C", meaningful=False), Q("S3 q10", "A", "B", redundant_with=7),
              Q("S3 q11", "C", "A", redundant_with=9, hit="MA2"), Q("S3 q12", "A", "B")])

_QUESTION = re.compile(r"^Question (\d+): (.+)$")
_OPTION = re.compile(r"^  ([A-E])\. (.+)$")


def shown_questions(text: str) -> list[tuple[int, str, dict[str, str]]]:
    """``(number, stem, {letter: text})`` of the questions printed in a request's prompt."""
    out: list[tuple[int, str, dict[str, str]]] = []
    for line in text.splitlines():
        if m := _QUESTION.match(line):
            out.append((int(m.group(1)), m.group(2), {}))
        elif (m := _OPTION.match(line)) and out:
            out[-1][2][m.group(1)] = m.group(2)
    return out


def user_text(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in body["messages"])


class Study:
    """Responders of the three components for scripted question sets; the study of a
    request is chosen by a marker found in its prompt (``default`` otherwise)."""

    def __init__(self, default: list[Q], by_marker: dict[str, list[Q]] | None = None, model: str = "scripted") -> None:
        self.default, self.by_marker, self.model = default, by_marker or {}, model
        self.flips: dict[str, int] = {}  # participant -> rollout whose answers are flipped once
        self._lock = threading.Lock()
        self._sim_calls: dict[tuple[str, str], int] = {}

    def study(self, text: str) -> list[Q]:
        return next((qs for marker, qs in self.by_marker.items() if marker in text), self.default)

    def prober(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        qs = self.study(user_text(body))
        return chat_reply(json.dumps({"questions": [{"question": q.stem, "options": q.options()} for q in qs]}),
                          model=self.model)

    def simulator(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        text = user_text(body)
        me = re.search(r"You are (M[12])\.", text).group(1)
        qs = {q.stem: q for q in self.study(text)}
        with self._lock:
            n = self._sim_calls[(me, text)] = self._sim_calls.get((me, text), 0) + 1
        answers = []
        for number, stem, options in shown_questions(text):
            q = qs[stem]
            original = q.m1 if me == "M1" else q.m2
            if self.flips.get(me) == n:  # this rollout answers differently on every question
                original = "C" if original != "C" else "B"
            want = q.options()[original]
            answers.append({"question": number, "option": next(k for k, v in options.items() if v == want)})
        return chat_reply(json.dumps({"answers": answers}), model=self.model)

    def filter(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        text = user_text(body)
        qs = {q.stem: q for q in self.study(text)}
        out = []
        for number, stem, _ in shown_questions(text):
            q = qs[stem]
            out.append({"question": number, "is_meaningful": q.meaningful, "is_implicit": q.implicit,
                        "redundant_with": q.redundant_with, "hits_ground_truth": q.hit})
        return chat_reply(json.dumps({"judgements": out}), model=self.model)
