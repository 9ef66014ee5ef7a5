"""Probers: the detector under evaluation (PROTOCOL.md §6; paper §4.1). One class per
``mode``; ``mcq`` (multiple-choice questions) is the protocol's, and other modes (issue
8: ``direct``, ``ambiguity``) register next to it in :data:`PROBERS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ioa_synth.evaluate.access import prober_context
from ioa_synth.evaluate.inputs import EvalCase
from ioa_synth.evaluate.records import CaseCalls, read_record
from ioa_synth.evaluate.replies import ProberReply, Question, parse_questions
from ioa_synth.llm.client import LLMClient
from ioa_synth.llm.prompts import render_template
from ioa_synth.protocol.schemas import request_schema


class Prober(Protocol):
    """A probing mode: asks the prober component for the questions of one case."""

    mode: str
    template: str

    def ask(self, case: EvalCase, access: str, client: LLMClient, calls: CaseCalls) -> list[Question]:
        """The case's questions, in the prober's order (possibly none).

        Raises:
            ioa_synth.llm.client.LLMCallError: no usable prober reply.
        """


class McqProber:
    """``mcq``: K multiple-choice questions (stem + 2-5 lettered options), K chosen by the
    prober; reply ``{"questions": [{"question", "options"}]}``. It sees the members'
    profiles and transcript of ``--access`` (Table 16), never the misalignment points."""

    mode = "mcq"
    template = "evaluate/prober_mcq.jinja2"

    def ask(self, case: EvalCase, access: str, client: LLMClient, calls: CaseCalls) -> list[Question]:
        prompt = render_template(self.template, **prober_context(case, access))
        return calls.call(client, "prober", None, 1, prompt, request_schema(ProberReply), parse_questions)


#: Probing modes by name.
PROBERS: dict[str, Prober] = {"mcq": McqProber()}


class StoredQuestions:
    """The questions of an earlier results folder (``--questions-from``): no prober call,
    so two runs (e.g. with and without ``--permute-seed``) ask the same questions."""

    def __init__(self, results_dir: Path) -> None:
        self.results_dir = results_dir

    def ask(self, case: EvalCase, access: str, client: LLMClient | None, calls: CaseCalls) -> list[Question]:
        """Raises ValueError when ``results_dir`` holds no scored record of the case."""
        rec = read_record(self.results_dir, case.case_id)
        if rec is None or rec.get("status") != "scored":
            raise ValueError(f"--questions-from {self.results_dir}: no scored record of {case.case_id}")
        return [Question(q["question"], dict(q["options"])) for q in rec["questions"]]
