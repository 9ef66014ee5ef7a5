"""The questions of an earlier ``evaluate`` results folder (``--questions-from``): read
from its records and checked against its manifest before any call, asked again by
:class:`StoredQuestions` in place of a prober (:mod:`ioa_synth.probing.probers`), and
digested for the setup fingerprint."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ioa_synth.evaluate.records import read_record
from ioa_synth.llm.client import LLMClient
from ioa_synth.probing.calls import CaseCalls
from ioa_synth.probing.cases import EvalCase
from ioa_synth.probing.probers import Probe
from ioa_synth.probing.replies import Question
from ioa_synth.runs.manifest import ManifestError, read_manifest


class QuestionsFromError(ValueError):
    """A ``--questions-from`` folder that cannot supply the questions (one-line message)."""


#: Modes whose records hold multiple-choice questions that ``--questions-from`` may reuse.
REUSABLE_MODES = ("mcq", "ambiguity", "wordnet")


def load_stored_questions(folder: Path, case_ids: list[str]) -> dict[str, list[Question]]:
    """The questions of every case in ``case_ids`` from the evaluate results folder
    ``folder`` (``--questions-from``), checked before any call or write.

    Returns ``{case_id: [Question, ...]}`` in the stored order.

    Raises:
        QuestionsFromError: ``folder`` has no ``run.json`` written by ``ioa-synth evaluate``,
            its mode is not one of :data:`REUSABLE_MODES` (``direct`` items have no options),
            or it lacks a scored record with multiple-choice questions of some case (the
            missing case ids are named).
    """
    where = f"--questions-from {folder}"
    try:
        run = read_manifest(folder, "evaluate")
    except ManifestError:
        raise QuestionsFromError(f"{where}: not an 'ioa-synth evaluate' results folder (no run.json of evaluate)") from None
    mode = run.settings.mode
    if mode not in REUSABLE_MODES:
        raise QuestionsFromError(f"{where}: a --mode {mode} results folder; questions can be reused only from "
                                 f"--mode {' or '.join(REUSABLE_MODES)} results")
    out: dict[str, list[Question]] = {}
    missing = []
    for cid in case_ids:
        rec = read_record(folder, cid)
        if rec is None or rec.status != "scored" or any(q.kind == "item" or not q.options for q in rec.questions):
            missing.append(cid)
            continue
        out[cid] = [Question(q.question, dict(q.options or {})) for q in rec.questions]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise QuestionsFromError(f"{where}: no scored record with multiple-choice questions of {len(missing)} "
                                 f"case(s) to evaluate: {shown}")
    return out


def questions_digest(questions: dict[str, list[Question]]) -> dict[str, str]:
    """``{case_id: sha256}`` of each case's reused questions (stem and options, in order):
    what the setup fingerprint keeps of ``--questions-from`` (not its path)."""
    return {cid: hashlib.sha256(json.dumps([[q.question, q.options] for q in qs], ensure_ascii=False)
                                .encode()).hexdigest() for cid, qs in sorted(questions.items())}


class StoredQuestions:
    """The questions of an earlier results folder (``--questions-from``, loaded and checked
    by :func:`load_stored_questions`): no prober call, so two runs (e.g. with and without
    ``--permute-seed``) ask the same questions."""

    def __init__(self, questions: dict[str, list[Question]]) -> None:
        self.questions = questions

    def ask(self, case: EvalCase, access: str, client: LLMClient | None, calls: CaseCalls) -> Probe:
        """The stored questions of ``case``.

        Raises:
            QuestionsFromError: no questions of ``case`` were loaded (a per-case error).
        """
        if case.case_id not in self.questions:
            raise QuestionsFromError(f"--questions-from: no stored questions of {case.case_id}")
        return Probe(list(self.questions[case.case_id]))
