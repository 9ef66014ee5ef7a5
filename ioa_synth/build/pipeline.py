"""The two-stage loop for one case (generate, gate, judge, one regeneration; App. B).

Stage 1 (G_participants, then J_participants, gate θ1) and stage 2 (G_dialogue, then
J_dialogue, gate θ2). Before the judge is called, an output must satisfy the structural
rules (:func:`~ioa_synth.protocol.schemas.stage1_problems`) and pass the mechanical
content gates (:mod:`ioa_synth.protocol.gates`); a failure there costs no judge call.
A stage that fails its rules, its gates or its θ gets exactly one regeneration whose
request says what failed (broken rules, gate failures, or every dimension below θ with
score/max followed by the judge's text); a second failure discards the case with the
reasons. Stage 2 regenerates the dialogue only; the accepted profiles stay. Each
generator request carries the case's plan (:mod:`ioa_synth.protocol.plan`) in its schema,
as strict as the generator's plan mode (:mod:`ioa_synth.protocol.plan_modes`) and with the
case's planted types (:mod:`ioa_synth.build.planted`); the stage-1 judge also reads each
point's type, and a type that differs from the plan fails the stage like a score below θ1.
With near-duplicate checking on (``build --dedup``), an accepted case that nearly copies
an earlier one is discarded instead (:mod:`ioa_synth.build.dedup`).

Every successful LLM call is stored (with the scores it produced) in one catalog
transaction, and a re-run replays stored calls instead of paying for them again: a
case interrupted anywhere resumes from its last completed step. The stored rows, record file
and status are made in :mod:`ioa_synth.build.records`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel

from ioa_synth.build.planted import (judged_type_rows, judged_types, mismatch_feedback, mismatch_reason, stored_types,
                                     type_mismatches, with_type_field)
from ioa_synth.build.prompts import CAPABILITY, with_language
from ioa_synth.build.records import JUDGE_INCONSISTENCY, record_bytes, store_outcome, verdict_rows
from ioa_synth.build.stage2_inputs import Stage2Inputs
from ioa_synth.build.stages import DIALOGUE, PROFILES, StageSpec, judge_prompt, next_stage, shown_gate_failures
from ioa_synth.build.stages_series import build_stages, meeting_role
from ioa_synth.core.templates import Prompt, compile_templates
from ioa_synth.llm.ahead import RequestsAhead
from ioa_synth.llm.client import LLMCallError, LLMClient, StopRun
from ioa_synth.protocol.gates_text import in_language, stop_words
from ioa_synth.protocol.judgement import Judgement, judge_schema, parse_judgement
from ioa_synth.protocol.rubric import Rubric
from ioa_synth.protocol.schemas import Stage1Output, Stage2Output
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.recorder import CallKey, CallRecorder, now_utc
from ioa_synth.seeds.tuples import SeedTuple

__all__ = ["JUDGE_INCONSISTENCY", "Case", "Discard", "Outcome", "Pipeline", "StageResult"]


@dataclass
class Case:
    """One seed tuple in a split, and where its record goes."""

    case_id: str
    split: str
    seed: SeedTuple
    path: Path
    #: planned type of MA1, MA2, ... (``None``: built without type planting)
    planned_types: tuple[str, ...] | None = None


@dataclass
class Outcome:
    """What happened to a case in this run; ``status`` in accepted|discarded|failed."""

    case_id: str
    status: str
    stage1_attempts: int = 0
    stage2_attempts: int = 0
    reason: str | None = None
    tokens: int = 0

    def count_attempt(self, spec: StageSpec) -> None:
        """One more generation of ``spec``'s stage in this run."""
        name = f"stage{spec.stage}_attempts"
        setattr(self, name, getattr(self, name) + 1)


class Discard(Exception):
    """A stage failed twice: the case is discarded with this reason."""


@dataclass
class StageResult:
    """A stage that passed: the generator's parsed ``output``
    (:class:`Stage1Output` or :class:`Stage2Output`), the ``attempt`` number that passed
    (1, 2 in the regeneration round; ``regenerate`` continues the numbering) and the build
    judge's ``judgement`` of it."""

    output: BaseModel
    attempt: int
    judgement: Judgement


@dataclass
class Pipeline:
    """Runs cases through the loop against a generator and a judge client.

    Args:
        catalog: where calls, scores and case states are stored.
        generator / judge: clients of the two components.
        rubric: the rubric (θ1, θ2).
        run_id: id of the current run (stored with each call).
        on_tokens: called with the token count of each fresh call (for progress).
    """

    catalog: Catalog
    generator: LLMClient
    judge: LLMClient
    rubric: Rubric
    run_id: str
    on_tokens: Callable[[int], None] = lambda n: None
    judge_role: str = "judge"
    #: the generator's plan strictness, ``scaffold`` or ``protocol`` (default: its endpoint's)
    plan_mode: str | None = None
    #: near-duplicate index of accepted cases (``build --dedup``), or ``None``
    dedup: Any = None
    #: participants per meeting (``build --participants``; 2: the paper's dyad)
    participants: int = 2
    #: meetings per case (``build --meetings``; 1: the paper's single meeting)
    meetings: int = 1
    #: the case the scheduler starts next (its stage-1 request is made while this worker's
    #: last judge call is on the wire), or ``None``
    upcoming: Callable[[], Case | None] = lambda: None
    #: the language of the cases (``build --language``, a BCP-47 tag; ``None``: English, the paper's)
    language: str | None = None
    calls: CallRecorder = field(init=False)
    _ahead: RequestsAhead = field(init=False, repr=False)
    _prepared: RequestsAhead[Stage2Inputs] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # stored replies go in calls.replay (see ioa_synth.runs.recorder.load_replay)
        self.calls = CallRecorder(self.catalog, self.run_id, on_tokens=lambda n: self.on_tokens(n))
        self.plan_mode = self.plan_mode or getattr(self.generator.endpoint, "plan", None) or "scaffold"
        stop_words()  # the gates' word list (read once per run, before the first call)
        compile_templates(CAPABILITY)
        self._ahead = RequestsAhead(self._generation_request)
        self._prepared = RequestsAhead(self._prepare)  # a stage's inputs made from the profiles: gate reference, judge prompt
        self.stages = build_stages(self.participants, self.meetings)  # STAGES itself for two people, one meeting

    # -- public ------------------------------------------------------------------
    def run_case(self, case: Case, first_attempt: int = 1, profiles: Stage1Output | None = None,
                 stage1: dict[str, Any] | None = None) -> Outcome:
        """Run ``case`` through both stages (or stage 2 only when ``profiles`` is given,
        with ``stage1`` the accepted stage-1 quality block) and record the result.

        ``first_attempt`` numbers the first generation of each stage (1 for a build;
        later numbers for ``regenerate``). LLM failures make a ``failed`` outcome, except
        :class:`~ioa_synth.llm.errors.StopRun` (a setup error, Ctrl-C), which is raised
        and leaves the case's status as it was (``pending`` for a new case).
        """
        out = Outcome(case.case_id, "failed")
        record: Callable[[], bytes] | None = None
        if case.planned_types is None:
            case.planned_types = stored_types(self.catalog, case.case_id)
        try:
            if profiles is None:
                s1 = self._stage(case, self.stages[PROFILES.stage], first_attempt, out, profiles=None)
                profiles, stage1 = s1.output, {"attempt": s1.attempt, **s1.judgement.as_quality()}
            s2 = self._stage(case, self.stages[DIALOGUE.stage], first_attempt, out, profiles=profiles)
        except Discard as exc:
            out.status, out.reason = "discarded", str(exc)
        except StopRun:
            raise
        except LLMCallError as exc:
            out.status, out.reason = "failed", str(exc)
        except Exception as exc:  # noqa: BLE001 - one broken case must not stop the run
            out.status, out.reason = "failed", f"internal error: {type(exc).__name__}: {exc}"
        else:
            quality = {"stage1": stage1, "stage2": {"attempt": s2.attempt, **s2.judgement.as_quality()}}
            near = self.dedup.near_copy(case.case_id, profiles, s2.output) if self.dedup is not None else None
            if near:
                out.status, out.reason = "discarded", near
            else:
                record = partial(record_bytes, case, profiles, s2.output, quality, language=self.language)
                out.status = "accepted"
        self._ahead.forget(case.case_id)
        self._prepared.forget(case.case_id)
        store_outcome(self.catalog, case, out, first_attempt, record)
        return out

    def judge_stage(self, case: Case, spec: StageSpec, attempt: int, profiles: Stage1Output,
                    generated: BaseModel) -> Judgement:
        """Score one output of stage ``spec`` with this pipeline's judge client and store calls
        and scores under ``judge_role`` (used by ``audit`` to re-score accepted attempts).

        Raises:
            LLMCallError: the judge gave no usable reply after all retries.
        """
        if case.planned_types is None:  # the same prompt as the build judge's, type reading included
            case.planned_types = stored_types(self.catalog, case.case_id)
        return self._judge(case, spec, attempt, profiles, generated)

    # -- stages --------------------------------------------------------------------
    def _stage(self, case: Case, spec: StageSpec, first_attempt: int, out: Outcome,
               profiles: Stage1Output | None) -> StageResult:
        gen: BaseModel | None = None
        prepared: Stage2Inputs | None = None
        feedback: str | None = None
        reasons: list[str] = []
        for attempt in (first_attempt, first_attempt + 1):
            out.count_attempt(spec)
            previous = gen.model_dump_json() if gen is not None else None  # the rejected attempt
            gen = self._generate(case, spec, attempt, profiles, previous, feedback)
            problems = spec.problems(gen)
            if problems:
                feedback = "The output broke these rules:\n" + "\n".join(f"- {p}" for p in problems)
                reasons.append(f"attempt {attempt}: invalid output: " + "; ".join(problems))
                continue
            if spec.prepare is not None and prepared is None:  # made during the previous judge call when it could be
                prepared = self._prepared.get((case.case_id, spec.stage), case, spec, profiles)
            with in_language(self.language):  # the language's tokens, word lists and language gate
                gates = spec.gates(gen, profiles, prepared.reference if prepared is not None else None)
            if gates:
                feedback = "The output failed these content checks:\n" + "\n".join(
                    f"- {g}" for g in shown_gate_failures(spec, gates, gen, profiles, self.plan_mode))
                reasons.append(f"attempt {attempt}: gate failures: " + "; ".join(gates))
                continue
            self._prepare_next(case, spec, first_attempt, gen)
            verdict = self._judge(case, spec, attempt, spec.profiles_of(gen, profiles), gen, prepared)
            wrong = type_mismatches(case.planned_types, [p.id for p in gen.misalignment_points],
                                    verdict.judged_types) if spec.reads_types else []
            if verdict.passed and not wrong:
                return StageResult(gen, attempt, verdict)
            feedback = verdict.feedback_text() + mismatch_feedback(wrong)
            theta = spec.rubric(self.rubric).theta
            below = "; ".join(f"{item} ({', '.join(f'{d} {s}/{m}' for d, s, m in verdict.below[item])})"
                              for item in verdict.failed_items)
            failed = ([f"below {theta} on {below}"] if verdict.failed_items else []) + \
                ([mismatch_reason(wrong)] if wrong else [])
            reasons.append(f"attempt {attempt}: " + "; ".join(failed))
        raise Discard(f"stage {spec.stage} failed twice ({' | '.join(reasons)})")

    def _prepare_next(self, case: Case, spec: StageSpec, first_attempt: int, gen: BaseModel) -> None:
        """Start making, on the helper thread, the generator request that follows a passing
        verdict of the judge call about to be sent: this case's next stage (its first attempt,
        from ``gen``, and what that stage makes from it ahead, e.g. what its gates compare
        dialogues with), or after the last stage the next case's first stage
        (:mod:`ioa_synth.llm.ahead`)."""
        after = next_stage(spec)
        after = self.stages[after.stage] if after is not None else None  # this build's spec of that stage
        if after is not None:
            self._ahead.start((case.case_id, after.stage, first_attempt), case, after, gen, None, None)
            if after.prepare is not None:
                self._prepared.start((case.case_id, after.stage), case, after, gen)
            return
        nxt = self.upcoming()
        if nxt is not None and nxt is not case and nxt.planned_types is not None:  # its types are known
            self._ahead.start((nxt.case_id, PROFILES.stage, 1), nxt, self.stages[PROFILES.stage], None, None, None)

    def _prepare(self, case: Case, spec: StageSpec, profiles: Stage1Output) -> Stage2Inputs:
        """What ``spec`` makes from the accepted ``profiles`` before its output exists."""
        assert spec.prepare is not None
        with in_language(self.language):  # its gate reference holds the language's tokens
            return spec.prepare(case, profiles, self.rubric)

    def _generation_request(self, case: Case, spec: StageSpec, profiles: Stage1Output | None, previous: str | None,
                            feedback: str | None) -> tuple[Prompt, dict[str, Any]]:
        """The generator's prompt and request schema for one attempt of stage ``spec``."""
        passes = spec.passes_for(self.plan_mode)
        if passes is not None and profiles is not None:
            prompt, schema = passes.lines_request(case.seed, profiles, previous, feedback)
            return with_language(prompt, self.language, "generator"), schema
        if spec.meetings is not None and profiles is not None:  # a series: its first meeting
            return spec.meetings.request(case, profiles, 1, [], feedback)
        ctx = spec.generator_context(case.seed, profiles, previous, feedback, self.plan_mode, case.planned_types)
        prompt = spec.render("generator", **ctx)
        if spec.note is not None:
            prompt = spec.note(prompt, "generator", profiles, None)
        return with_language(prompt, self.language, "generator"), spec.request_schema(self.plan_mode, case, profiles)

    def _generate(self, case: Case, spec: StageSpec, attempt: int, profiles: Stage1Output | None,
                  previous: str | None, feedback: str | None) -> BaseModel:
        prompt, schema = self._ahead.get((case.case_id, spec.stage, attempt), case, spec, profiles, previous, feedback)
        passes = spec.passes_for(self.plan_mode)
        if spec.meetings is not None and profiles is not None:  # a series: one call per meeting, after the first

            def ask(k: int, prompt: Prompt, schema: dict[str, Any]) -> BaseModel:
                key = CallKey(case.case_id, spec.stage, meeting_role(k), attempt)
                return self.calls.call(self.generator, key, with_language(prompt, self.language, "generator"), schema,
                                       spec.call_name, Stage2Output.model_validate,
                                       tags={"component": "generator", "meeting": k})[0]
            return spec.meetings.write(case, profiles, (prompt, schema), feedback, ask)
        if passes is None or profiles is None:
            value, _ = self.calls.call(self.generator, CallKey(case.case_id, spec.stage, "generator", attempt), prompt,
                                       schema, spec.call_name, spec.output.model_validate)
            return value
        lines, _ = self.calls.call(self.generator, CallKey(case.case_id, spec.stage, "generator", attempt), prompt,
                                   schema, spec.call_name, passes.parse_lines)
        prompt, schema = passes.thoughts_request(profiles, lines, feedback)
        prompt = with_language(prompt, self.language, "generator")
        value, _ = self.calls.call(self.generator, CallKey(case.case_id, spec.stage, passes.thoughts_role, attempt),
                                   prompt, schema, passes.thoughts_call, lambda data: passes.parse_thoughts(lines, data),
                                   tags={"component": "generator"})
        return value

    def _judge(self, case: Case, spec: StageSpec, attempt: int, profiles: Stage1Output, gen: BaseModel,
               prepared: Stage2Inputs | None = None) -> Judgement:
        stage = spec.stage
        ma_ids = spec.judged_items(profiles)
        read_types = spec.reads_types and bool(case.planned_types)  # the build judge reads each point's type
        prompt = judge_prompt(spec, case, profiles, gen, self.rubric, read_types, prepared)
        if spec.note is not None:  # a series: the plan of each point and, at stage 2, each meeting's turns
            prompt = spec.note(prompt, self.judge_role, profiles, gen)
        prompt = with_language(prompt, self.language, self.judge_role)
        role, model = self.judge_role, self.judge.endpoint.model
        schema = judge_schema(spec.rubric(self.rubric), ma_ids)
        if read_types:
            schema = with_type_field(schema, ma_ids)

        def score_rows(call_id: str, verdict: Judgement) -> list:  # stored with the call, one journal write
            rows = verdict_rows(call_id, case.case_id, stage, attempt, role, model, verdict)
            base = {"case_id": case.case_id, "stage": stage, "attempt": attempt, "judge_role": role,
                    "judge_model": model, "created_at": now_utc(), "call_id": call_id}
            return [("scores", r) for r in rows + judged_type_rows(base, verdict.judged_types)]

        def parse(data: Any) -> Judgement:
            verdict = parse_judgement(self.rubric, stage, data, ma_ids)
            verdict.judged_types = judged_types(data, ma_ids) if read_types else {}
            return verdict

        value, _ = self.calls.call(self.judge, CallKey(case.case_id, stage, role, attempt), prompt, schema,
                                   f"stage{stage}_scores", parse, score_rows)
        return value
