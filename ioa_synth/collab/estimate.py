"""What a ``collab run`` will cost, before any call (``ioa-synth estimate collab run``).

A team run's calls depend on what its agents say (a BCB pair stops when both vote ready,
an intervention fires or not, a triggered team talks until ready or the cap), so the
estimate walks each (task, configuration) not yet on disk through the protocol of
:mod:`ioa_synth.collab.protocol` under stated figures, measured on the task records
already in the results folder (a pilot run: ``--limit``) where there are any:

- ``bcb_rounds``: initial BCB rounds per run (else all of them, 4: an upper bound);
- ``triggered``: share of the ``self-reflection`` and ``mcq:NAME`` runs whose intervention
  fires, per configuration (else 1: every one, an upper bound);
- ``extra_rounds``: re-discussion rounds of a triggered run (else the cap,
  ``--max-extra-rounds``: an upper bound);
- ``questions``: a detector's MCQs per run (else :data:`QUESTIONS`).

Tokens: the prompts of a sample of the runs (:data:`COUNTED_RUNS`) are rendered with the
run's own functions (:mod:`ioa_synth.collab.team`) on empty turns and counted; each turn a
prompt shows adds a turn's completion tokens (a free-text reply, shown whole). Completion
tokens: measured per component and kind of call in the folder, else the component's
``max_tokens``. Each call is sent again as often as the folder measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ioa_synth.collab.protocol import detector_of
from ioa_synth.collab.records import RecordError, read_record, record_files, record_path
from ioa_synth.collab.run import RunJob, component_of
from ioa_synth.collab.tasks import BcbTask, HiddenProfileTask, Task
from ioa_synth.collab.team import (MODERATOR, agent_names, answer_prompt, coder_prompt, final_prompt,
                                   reflection_prompt, say_prompt, single_prompt, stop_vote_prompt)
from ioa_synth.core.templates import render_template
from ioa_synth.llm.component_setup import ComponentSetup, component_setup, prices_for
from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.llm.prices import Price
from ioa_synth.probing.access import transcript_only_context
from ioa_synth.probing.probers import McqProber
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.spend import CallKind, fold, measure_setups, sampled

#: Runs whose prompts are rendered and counted at most (evenly spread over the plan).
COUNTED_RUNS = 24
#: A detector's MCQs per run when the folder holds none (the prober chooses 2-5 or more).
QUESTIONS = 5.0
#: The kinds of call (the role's part before ``:``) and how the estimate names them.
LABELS = {"say": "turn", "vote": "stop-vote", "reflect": "reflection", "mcq": "detector questions",
          "answer": "MCQ answer", "final": "final answer", "code": "solution", "solve": "single solution"}


def estimate_collab(job: RunJob, out: Path, config: ToolkitConfig, local_model: str | None,
                    prices: dict[str, Price], tokenizer: str | None, *, batch: bool = False,
                    catalog: Catalog | None = None) -> dict[str, Any]:
    """The estimate of ``collab run`` of ``job`` into ``out`` (the contract of
    :func:`ioa_synth.runs.spend.fold`). A detector is priced and counted as its config's
    ``prober`` block. A run about to start passes its open ``catalog``.

    Raises:
        ioa_synth.llm.tokens.TokenizerError, ConfigError: see :func:`component_setup`.
    """
    todo = [(t, c) for c in job.configs for t in job.tasks if not record_path(out, t.task_id, c).is_file()]
    setups = {"discusser": component_setup("discusser", config, local_model, tokenizer)}
    setups |= {f"detector:{d.name}": component_setup("prober", d.config, local_model, tokenizer)
               for d in job.detectors}
    figures = _figures(out, job)
    opened = catalog is None and (out / "catalog.duckdb").is_file()
    if opened:
        catalog = Catalog(out, read_only=True)
    try:
        measured = measure_setups(catalog, setups, roles=component_of)
    finally:
        if opened and catalog is not None:
            catalog.close()

    def mean(table: dict[tuple[int, str], float], comp: str, kind: str) -> float | None:
        keys = [key for key in table if component_of(key[1]) == comp and _kind(key[1]) == kind]
        n = sum(measured.calls.get(key, 0) for key in keys)
        return sum(table[key] * measured.calls.get(key, 0) for key in keys) / n if n else None

    def completion(comp: str, kind: str) -> float:
        value = mean(measured.completion, comp, kind)
        return value if value is not None else float(setups[comp].max_tokens)

    turn = completion("discusser", "say")
    per_question = (completion(f"detector:{job.detectors[0].name}", "mcq") / max(1.0, figures["questions"])
                    if job.detectors else 0.0)  # the tokens of one question an MCQ answer shows
    calls: dict[tuple[str, str], float] = {}
    prompts: dict[tuple[str, str], list[float]] = {}
    counted = {id(u) for u in sampled(todo, COUNTED_RUNS)}
    for unit in todo:
        walk = _Walk(job, setups, figures, turn, per_question, count=id(unit) in counted)
        walk.run(*unit)
        for key, n in walk.calls.items():
            calls[key] = calls.get(key, 0.0) + n
        for key, values in walk.prompts.items():
            prompts.setdefault(key, []).extend(values)
    kinds = []
    for (comp, kind), n in sorted(calls.items()):
        retried = 1 + (mean(measured.retries, comp, kind) or 0.0)
        counted_prompts = prompts.get((comp, kind)) or []
        prompt = sum(counted_prompts) / len(counted_prompts) if counted_prompts else 0.0
        kinds.append(CallKind(comp, LABELS.get(kind, kind), n * retried, prompt, completion(comp, kind)))
    assumptions = {
        "command": "collab run", "runs": len(todo), "already_done": len(job.tasks) * len(job.configs) - len(todo),
        "configs": job.configs, "batch": batch, "figures": {k: v for k, v in figures.items() if k != "sources"},
        "figures_source": figures["sources"], "prompts_counted_for_runs": len(counted),
        "completion_tokens_per_call": {f"{c} {LABELS.get(k, k)}": round(completion(c, k), 1) for c, k in calls},
        "completion_source": {f"{c} {LABELS.get(k, k)}": "measured" if mean(measured.completion, c, k) is not None
                              else f"max_tokens {setups[c].max_tokens}" for c, k in calls},
        "tokenizers": {c: s.describe() for c, s in setups.items()},
    }
    return fold(kinds, prices_for(setups, prices), assumptions)


def estimate_of_run(job: RunJob, out: Path, config: ToolkitConfig, local_model: str | None, catalog: Catalog,
                    batch: bool = False) -> dict[str, Any] | None:
    """The estimate a ``collab run`` starts from (``status`` shows it beside what was spent);
    ``None`` when it cannot be made: a run never fails for it."""
    try:
        return estimate_collab(job, out, config, local_model, {}, None, batch=batch, catalog=catalog)
    except Exception:  # noqa: BLE001 - the estimate is a note for status, not part of the run
        return None


def _kind(role: str) -> str:
    """The kind of a team call's role (``discusser|say:Agent1`` -> ``say``)."""
    return role.split("|", 1)[-1].split(":", 1)[0]


def _figures(out: Path, job: RunJob) -> dict[str, Any]:
    """The figures the walk assumes (module docstring), measured on the folder's task
    records where it has any; ``sources`` says which were measured."""
    records = []
    for path in record_files(out):  # at any depth: BigCodeBench/13's record is in tasks/BigCodeBench/
        try:
            records.append(read_record(path))
        except RecordError:  # a record the report would refuse: the walk's upper bounds stand for it
            continue
    s = job.settings
    figures: dict[str, Any] = {"bcb_rounds": float(s.bcb_rounds), "extra_rounds": float(s.extra_cap),
                               "questions": QUESTIONS, "triggered": {}}
    sources = {"bcb_rounds": "upper bound: every round", "extra_rounds": "upper bound: the cap",
               "questions": "stated", "triggered": {}}
    initial = [max((t.round for t in r.turns if t.phase == "initial"), default=0)
               for r in records if r.bench == "bcb" and r.config != "single"]
    if initial:
        figures["bcb_rounds"], sources["bcb_rounds"] = sum(initial) / len(initial), "measured"
    extra = [r.extra_rounds for r in records if r.triggered]
    if extra:
        figures["extra_rounds"], sources["extra_rounds"] = sum(extra) / len(extra), "measured"
    questions = [len(r.probes) for r in records if r.config.startswith("mcq:")]
    if questions:
        figures["questions"], sources["questions"] = sum(questions) / len(questions), "measured"
    for config in job.configs:
        if config in ("self-reflection",) or config.startswith("mcq:"):
            seen = [bool(r.triggered) for r in records if r.config == config]
            figures["triggered"][config] = sum(seen) / len(seen) if seen else 1.0
            sources["triggered"][config] = "measured" if seen else "upper bound: every run"
    figures["sources"] = sources
    return figures


class _Walk:
    """One (task, configuration) walked through the protocol under the figures: its
    expected ``calls`` per ``(component, kind)`` and, with ``count``, the prompt tokens of
    each (``prompts``), each prompt rendered on empty turns plus ``turn`` tokens per turn
    it shows (and ``per_question`` for the question an MCQ answer shows)."""

    def __init__(self, job: RunJob, setups: dict[str, ComponentSetup], figures: dict[str, Any], turn: float,
                 per_question: float, count: bool) -> None:
        self.job, self.setups, self.figures, self.turn, self.per_question = job, setups, figures, turn, per_question
        self.count = count
        self.calls: dict[tuple[str, str], float] = {}
        self.prompts: dict[tuple[str, str], list[float]] = {}

    def ask(self, comp: str, kind: str, weight: float, prompt: Callable[[], Any] | None = None,
            shown: float = 0.0) -> None:
        self.calls[(comp, kind)] = self.calls.get((comp, kind), 0.0) + weight
        if self.count and prompt is not None and weight > 0:
            tokens = self.setups[comp].counter.messages(prompt().messages) + shown
            self.prompts.setdefault((comp, kind), []).append(tokens)

    def run(self, task: Task, config: str) -> None:
        s = self.job.settings
        if config == "single":
            assert isinstance(task, BcbTask)
            self.ask("discusser", "solve", 1.0, lambda: single_prompt(task))
            return
        agents = agent_names(task)
        turns: list[dict[str, Any]] = []
        bcb = isinstance(task, BcbTask)
        rounds = self.figures["bcb_rounds"] if bcb else float(s.hp_rounds)
        self._talk(task, agents, turns, "initial", rounds, votes=bcb, weight=1.0)
        share = self.figures["triggered"].get(config, 0.0)
        if config == "self-reflection":
            for a in agents:
                self.ask("discusser", "reflect", 1.0, lambda a=a: reflection_prompt(task, a, turns, s.seed),
                         len(turns) * self.turn)
        elif (name := detector_of(config)) is not None:
            self._mcq(task, agents, turns, f"detector:{name}")
        if share > 0:  # triggered: the directive turn, the re-discussion, then the end
            again = turns + [{"phase": "rediscussion", "round": 1, "agent": MODERATOR, "text": ""}]
            extra = min(self.figures["extra_rounds"], float(s.extra_cap))
            self._talk(task, agents, again, "rediscussion", extra, votes=True, weight=share, cap=s.extra_cap)
            self._finish(task, agents, again, share)
        self._finish(task, agents, turns, 1.0 - share)

    def _talk(self, task: Task, agents: list[str], turns: list[dict[str, Any]], phase: str, rounds: float,
              votes: bool, weight: float, cap: int | None = None) -> None:
        """``rounds`` rounds (a fraction: the last one partly); turns are appended."""
        s = self.job.settings
        whole = int(rounds) + (1 if rounds > int(rounds) else 0)
        for rnd in range(1, whole + 1):
            w = weight * min(1.0, rounds - rnd + 1)
            for a in agents:
                self.ask("discusser", "say", w, lambda a=a: say_prompt(task, a, turns, phase, rnd, s),
                         self._shown(turns))
                turns.append({"phase": phase, "round": rnd, "agent": a, "text": ""})
            if votes and (cap is None or rnd < cap):
                for a in agents:
                    self.ask("discusser", "vote", w, lambda a=a: stop_vote_prompt(task, a, turns, s.seed),
                             self._shown(turns))

    def _mcq(self, task: Task, agents: list[str], turns: list[dict[str, Any]], detector: str) -> None:
        s = self.job.settings

        def questions() -> Any:
            context = transcript_only_context([(a, a) for a in agents],
                                              [(i, t["agent"], t["text"]) for i, t in enumerate(turns, 1)])
            return render_template(McqProber.template, **context)

        self.ask(detector, "mcq", 1.0, questions, self._shown(turns))
        question = {"question": "", "options": {"A": "", "B": "", "C": "", "D": ""}}
        for a in agents:
            self.ask("discusser", "answer", self.figures["questions"],
                     lambda a=a: answer_prompt(task, a, turns, question, s.seed), self._shown(turns) + self.per_question)

    def _finish(self, task: Task, agents: list[str], turns: list[dict[str, Any]], weight: float) -> None:
        if weight <= 0:
            return
        if isinstance(task, BcbTask):
            self.ask("discusser", "code", weight, lambda: coder_prompt(task, agents[0], turns), self._shown(turns))
            return
        assert isinstance(task, HiddenProfileTask)
        for a in agents:
            self.ask("discusser", "final", weight, lambda a=a: final_prompt(task, a, turns, self.job.settings.seed),
                     self._shown(turns))

    def _shown(self, turns: list[dict[str, Any]]) -> float:
        """Tokens of the turns' texts a prompt shows (a directive as one turn)."""
        return len(turns) * self.turn
