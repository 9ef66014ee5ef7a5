"""One case through the protocol: prober -> simulator (every rollout) -> validity filter
-> categories and metrics, as the case's :class:`~ioa_synth.evaluate.record_model.EvalRecord`
(layout: docs/evaluate.md). In the ``direct`` mode the prober's free-text items go
straight to the filter."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from pydantic import ValidationError

from ioa_synth.evaluate.stored_questions import QuestionsFromError
from ioa_synth.evaluate.record_model import EvalRecord
from ioa_synth.evaluate.scoring import c_breakdown, categorize, dialogue_metrics, expression_overlaps
from ioa_synth.evaluate.multiparty import case_sides, diverges, found, is_multi, separated
from ioa_synth.evaluate.simulator import Permutation, modal, simulate
from ioa_synth.evaluate.validity import judge_divergent, judge_items
from ioa_synth.probing.probers import Probe, Prober
from ioa_synth.probing.calls import CaseCalls
from ioa_synth.probing.cases import EvalCase
from ioa_synth.probing.replies import Question
from ioa_synth.probing.text import token_overlap
from ioa_synth.probing.wordnet import lexical_overlap, load_wordnet
from ioa_synth.llm.client import LLMCallError, LLMClient, StopRun


@dataclass(frozen=True)
class EvalSettings:
    """The protocol settings of a run: ``mode``, ``access`` (Table 16), ``rollouts`` (>= 1)
    and ``permute_seed`` (``None``: the prober's own order)."""

    mode: str = "mcq"
    access: str = "public"
    rollouts: int = 1
    permute_seed: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The settings as stored in records, run.json and summary.json."""
        return {"mode": self.mode, "access": self.access, "rollouts": self.rollouts, "permute_seed": self.permute_seed}


def _head(case: EvalCase, settings: EvalSettings) -> dict[str, Any]:
    def series(p: Any) -> dict[str, Any]:  # a probe of a series: when each point was planted, surfaces, its age
        return {"planted_in": p.planted_in, "surfaces_in": p.surfaces_in, "age": case.ages[p.id]} if case.ages else {}

    return {"case_id": case.case_id, "source_file": case.source_file, "domain": case.domain,
            "task_type": case.task_type, "status": "failed", **settings.as_dict(),
            **({"meeting": case.meeting} if case.meeting is not None else {}),
            "misalignment_points": [{"id": p.id, "type": p.type, "topic": p.topic, "surface_form": p.surface_form,
                                     **({"between": p.between, "neutral": p.neutral or []} if p.between else {}),
                                     **series(p)}
                                    for p in case.profiles.misalignment_points]}


def modal_answers(rollouts: dict[str, list[dict[int, str]]], count: int) -> list[dict[str, dict[str, Any]]]:
    """Per question (number 1..``count``, in order), each participant's answer over the
    rollouts of :func:`~ioa_synth.evaluate.simulator.simulate`: ``{participant: {option
    (the modal one), rollouts (every pick), consistency (0-1 share agreeing)}}`` (pure)."""
    out = []
    for n in range(1, count + 1):
        answers = {}
        for p in rollouts:  # M1, M2 (M1..MN in a multi-party case), as simulate made them
            picks = [r[n] for r in rollouts[p]]
            option, consistency = modal(picks)
            answers[p] = {"option": option, "rollouts": picks, "consistency": consistency}
        out.append(answers)
    return out


def score_questions(questions: list[Question], answers: list[dict[str, dict[str, Any]]],
                    judgements: dict[int, Any], ma_ids: list[str],
                    sides: dict[str, dict[str, list[str]]] | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Question entries of a record and the dialogue's metrics (pure: no call), from the
    :func:`modal_answers` of the questions and the filter's judgements by question number.
    ``sides`` (a multi-party case's :func:`~ioa_synth.evaluate.multiparty.case_sides`):
    apply the found rule (:func:`~ioa_synth.evaluate.multiparty.found`) and list in each
    entry's ``separates`` the points whose sides its answers separate."""
    entries, cats = [], []
    for n, (q, answer) in enumerate(zip(questions, answers), 1):
        options = {p: a["option"] for p, a in answer.items()}
        divergent = diverges(options)  # for two people: M1's option differs from M2's
        j = judgements.get(n) if divergent else None
        jd = j.model_dump(exclude={"question"}) if j is not None else None
        category, reason, ma = categorize(divergent, jd)
        extra: dict[str, Any] = {}
        if sides is not None:
            split = separated(options, sides)
            category, reason, ma = found(category, reason, ma, split)
            extra = {"separates": split}
        cats.append((category, ma))
        entries.append({"number": n, "key": q.key, "kind": "question", "question": q.question, "options": q.options,
                        "answers": answer, "divergent": divergent, "filter": jd, "category": category,
                        "reason": reason, "ma_id": ma, **extra})
    return entries, dialogue_metrics(cats, ma_ids)


def score_items(items: list[Question], judgements: dict[int, Any], ma_ids: list[str]
                ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Entries and metrics of the ``direct`` mode's free-text items (pure: no call). Each
    item is judged like a divergent question (``not_diverging`` never applies); entries
    keep the question shape with ``kind: "item"``, ``question`` = the description and
    ``options``/``answers``/``divergent`` null, so ``compare``/``report`` read them as is."""
    entries, cats = [], []
    for n, item in enumerate(items, 1):
        jd = judgements[n].model_dump(exclude={"question"})
        category, reason, ma = categorize(True, jd)
        cats.append((category, ma))
        entries.append({"number": n, "key": item.key, "kind": "item", "question": item.question, "options": None,
                        "answers": None, "divergent": None, "filter": jd, "category": category, "reason": reason,
                        "ma_id": ma})
    return entries, dialogue_metrics(cats, ma_ids)


def _questions_through_simulator(case: EvalCase, settings: EvalSettings, questions: list[Question],
                                 clients: dict[str, LLMClient | None], calls: CaseCalls
                                 ) -> tuple[list[dict[str, Any]], dict[str, Any], Permutation]:
    """Simulator (every rollout, ``--permute-seed`` order) then filter on the divergent questions."""
    perm = (Permutation.shuffled(questions, settings.permute_seed, case.case_id)
            if settings.permute_seed is not None else Permutation.identity(questions))
    rollouts = simulate(case, questions, perm, settings.rollouts, clients["simulator"], calls)
    answers = modal_answers(rollouts, len(questions))
    chosen = {p: {n: a[p]["option"] for n, a in enumerate(answers, 1)} for p in rollouts}
    judgements = judge_divergent(case, questions, chosen, clients["validity_filter"], calls)
    entries, metrics = score_questions(questions, answers, judgements, case.ma_ids,
                                       case_sides(case) if is_multi(case) else None)
    return entries, metrics, perm


def evaluate_case(case: EvalCase, settings: EvalSettings, prober: Prober, clients: dict[str, LLMClient | None],
                  calls: CaseCalls) -> EvalRecord:
    """The record of ``case``: ``status`` ``scored`` with questions, metrics and calls, or
    ``failed`` with ``error`` (and the calls made). Never raises for a model failure.

    Raises:
        StopRun: a setup error or the run stopping (Ctrl-C): not the case's fault, so
            it gets no record and stays to do.
    """
    record = _head(case, settings)
    try:
        probe: Probe = prober.ask(case, settings.access, clients.get("prober"), calls)
        record |= probe.extra
        if "expressions" in probe.extra:  # the prober never sees the MAs; the overlap is scored here
            forms = {p.id: p.surface_form for p in case.profiles.misalignment_points}
            overlap = (partial(lexical_overlap, lexicon=load_wordnet()) if settings.mode == "wordnet"
                       else partial(token_overlap, language=case.language))  # the dialogue's language's tokens
            record["expressions"] = expression_overlaps(probe.extra["expressions"], forms, overlap)
        perm = None
        if probe.kind == "item":
            judgements = judge_items(case, probe.questions, clients["validity_filter"], calls)
            entries, metrics = score_items(probe.questions, judgements, case.ma_ids)
        else:
            entries, metrics, perm = _questions_through_simulator(case, settings, probe.questions, clients, calls)
    except StopRun:
        raise
    except (LLMCallError, QuestionsFromError) as exc:  # no usable reply; --questions-from without this case
        record["error"] = str(exc)
    except Exception as exc:  # noqa: BLE001 - one broken case must not stop the run
        record["error"] = f"internal error: {type(exc).__name__}: {exc}"
    else:
        record |= {"status": "scored", "questions": entries, "metrics": metrics,
                   "c_breakdown": c_breakdown(e["reason"] for e in entries)}
        if settings.permute_seed is not None and perm is not None:
            record["permutation"] = perm.as_record()
    record["calls"] = calls.log
    try:
        return EvalRecord.model_validate(record)
    except ValidationError as exc:  # a bug: the case fails with the reason rather than the run
        failed = {k: v for k, v in record.items() if k not in _SCORED}
        failed |= {"status": "failed", "error": f"internal error: the record does not fit the results format "
                                                f"({' '.join(str(exc).split())[:300]})"}
        return EvalRecord.model_validate(failed)


#: The fields only a scored record has.
_SCORED = ("questions", "metrics", "c_breakdown", "permutation", "expressions")
