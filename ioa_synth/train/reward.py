"""The reward of prober training (paper §6.1, App. D.1): the per-dialogue F1 of the
IoA-Suite protocol computed end to end on a training dialogue, with no format reward.

A completion (the prober's reply) is read as ``evaluate`` reads a prober reply (think block
and code fence removed, :func:`ioa_synth.probing.replies.parse_questions`); a reply that
does not parse scores 0.0 without any call. A parsed question set goes through
:func:`ioa_synth.evaluate.case.evaluate_case` itself, exactly as ``evaluate
--questions-from`` sends it: simulator (its settings, one rollout by default as in the
paper), validity filter on the divergent questions, categories, then P/R/F1. The reward is
the unrounded F1 (:func:`ioa_synth.evaluate.scoring.prf`), equal to the record's
``metrics.f1`` up to that field's rounding. A simulator or filter call that fails after its
retries gives ``None`` (TRL then leaves the completion out of its group's baseline).

Every call is stored in the catalog of the ``out`` folder (``llm_calls``) and replayed on a
later run: the key of a call is ``(<case_id>#<digest>, stage, role, attempt)`` where the
digest hashes the case file, the simulator settings and the completion's question set, so
the same completion for the same case is never paid twice (two completions that differ only
in whitespace or a think block share their calls). Each scored completion also gets a
``train_rewards`` row (P, R, F1, K, |A|, |B|, |C|, each question's category in order, e.g.
``AAAAC``, and the MAs hit).

:class:`RewardScorer` is the scorer; :class:`IoAF1Reward` is its TRL adapter and
:mod:`ioa_synth.train.verl_reward` its verl adapter.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Sequence

from ioa_synth.evaluate.case import EvalSettings, evaluate_case
from ioa_synth.evaluate.stored_questions import StoredQuestions
from ioa_synth.evaluate.record_model import EvalRecord
from ioa_synth.evaluate.scoring import prf
from ioa_synth.evaluate.tables import EVALUATE_TABLES
from ioa_synth.probing.cases import EvalCase
from ioa_synth.probing.calls import CaseCalls
from ioa_synth.probing.replies import parse_questions
from ioa_synth.llm.client import Endpoint
from ioa_synth.llm.config import ToolkitConfig, load_config
from ioa_synth.core.templates import all_template_hashes
from ioa_synth.llm.replies import reply_json
from ioa_synth.runs.recorder import load_replay_tries, now_utc
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.catalog_set import sibling_calls
from ioa_synth.runs.context import open_run
from ioa_synth.train.cases import CaseIndex, Data, SplitMismatchError, UnknownCaseError  # noqa: F401 - raised here
from ioa_synth.train.completions import RewardResult, completion_key, completion_text
from ioa_synth.probing.language import CAPABILITY as LANGUAGE_CAPABILITY
from ioa_synth.train.reward_folder import (COMMAND, COMPONENTS, REWARD_SETUP_VERSION, REWARDS_COLUMNS,  # noqa: F401
                                          REWARDS_TABLE, RewardSetupError, check_folder, refuse_results_folder)

class RewardScorer:
    """Scores completions of the ``data`` splits' cases, ``workers`` at once.

    Args:
        data: the built split folder(s) the prompts came from (``DIR/<split>``, as given to
            ``ioa-synth train prompts``; a list such as ``[DIR/train, DIR/val]`` for a run
            that also evaluates, or the build directory ``DIR`` for all its splits). Case
            ids are paths relative to a split folder; a row is resolved by its ``split`` too
            (:class:`~ioa_synth.train.cases.CaseIndex`).
        config: a ``--config`` file (path), a loaded :class:`ToolkitConfig` or ``None``;
            ``SIMULATOR_*``/``VALIDITY_FILTER_*``/``OPENAI_*`` env vars give the endpoints,
            none means the embedded model (``local_model``).
        out: the catalog folder (created; resumable).
        workers: completions scored at once by :meth:`score_many`.
        rollouts: simulator rollouts per participant (the paper's reward uses one).
        cases: the cases of ``data`` (one folder) when the caller has read them already
            (:func:`ioa_synth.evaluate.inputs.load_cases`).

    Raises:
        ioa_synth.evaluate.inputs.InputError: a folder of ``data`` is not a folder of cases.
        ConfigError: an unusable config file.
        FingerprintMismatch / RewardSetupError: ``out`` holds calls of another setup or command.
        EndpointError / SetupError / LocalModelError: an endpoint cannot be used.
    """

    def __init__(self, data: Data, config: str | Path | ToolkitConfig | None = None,
                 out: str | Path = "ioa-reward", workers: int = 32, local_model: str | None = None,
                 rollouts: int = 1, cases: list[EvalCase] | None = None) -> None:
        self.index = CaseIndex(data, cases)
        self.data = self.index.folders
        cfg = config if isinstance(config, ToolkitConfig) else load_config(config)
        self.settings = EvalSettings(mode="mcq", rollouts=rollouts)
        out = Path(out)
        refuse_results_folder(out)
        self._stack = ExitStack()
        self._closed = False
        try:
            self.catalog = self._stack.enter_context(Catalog(out, tables=[EVALUATE_TABLES]))
            args = {"data": [str(f) for f in self.data], "config": str(config) if isinstance(config, (str, Path)) else None,
                    "workers": workers, "local_model": local_model, **self.settings.as_dict()}
            self.run = self._stack.enter_context(open_run(
                self.catalog, COMMAND, list(COMPONENTS), cfg, local_model, args, describe=self._describe,
                check=check_folder, interruptible=False, setup_version=REWARD_SETUP_VERSION, kind="reward",
                settings=self.settings.as_dict()))
            self.catalog.ensure_table(REWARDS_TABLE, REWARDS_COLUMNS)
            stored = [c for (c,) in self.catalog.execute("SELECT DISTINCT case_id FROM llm_calls WHERE error IS NULL")]
            self.recorder = self.run.recorder(replay_of=stored)
            self.replay_tries = load_replay_tries(self.catalog, stored)
            for key, (text, tries) in sibling_calls(out).items():  # other processes' catalogs, when out is one of a set
                if key not in self.recorder.replay:
                    self.recorder.replay[key], self.replay_tries[key] = text or "", tries
            self._recorded = {k for (k,) in self.catalog.execute(f"SELECT DISTINCT completion_key FROM {REWARDS_TABLE}")}
        except BaseException:
            self._stack.close()
            raise
        self._lock = threading.Lock()
        self._pending: list[dict[str, Any]] = []
        self._key_locks: dict[str, threading.Lock] = {}
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="ioa-reward")
        atexit.register(self.close)

    def _describe(self, eps: dict[str, Endpoint]) -> dict[str, Any]:
        """The reward's setup: its settings and each component's identity with the templates it
        renders: evaluate's, and with a case in another language among the data the language
        note's too (as evaluate's fingerprint has it), so that a changed note is a changed setup.
        English data describes itself as before the note existed."""
        templates = all_template_hashes("evaluate")
        if any(case.language for case in self.index.cases.values()):
            templates = {**templates, **all_template_hashes(LANGUAGE_CAPABILITY)}
        return {"fingerprint_version": REWARD_SETUP_VERSION, "settings": self.settings.as_dict(),
                "components": {n: {**ep.identity(), "templates": templates} for n, ep in sorted(eps.items())}}

    def case(self, case_id: str, split: str | None = None) -> EvalCase:
        """The case ``case_id`` of split ``split`` (``None``: the one split holding it).

        Raises:
            UnknownCaseError: no such case; SplitMismatchError (a subclass): a split the
                reward holds no folder of, or a case id of several splits without a split.
        """
        return self.index.find(case_id, split)

    def score(self, case_id: str, completion: Any, split: str | None = None) -> RewardResult:
        """The reward of ``completion`` (a string or TRL's list of messages) for ``case_id``
        of ``split``.

        Raises:
            UnknownCaseError / SplitMismatchError: see :meth:`case`.
            ioa_synth.llm.client.StopRun: a setup error (HTTP 400/401/...) or :meth:`close`.
            RuntimeError: an internal error of the evaluation path (a bug, not a reward).
        """
        try:
            return self._score(case_id, completion, split)
        finally:
            self._write_rewards()

    def _score(self, case_id: str, completion: Any, split: str | None = None) -> RewardResult:
        case = self.case(case_id, split)
        text = completion_text(completion)
        try:
            questions = parse_questions(reply_json(text))
        except ValueError as exc:  # invalid JSON, wrong shape, placeholder: no format reward, no call
            digest = hashlib.sha256(text.encode()).hexdigest()[:16]
            result = RewardResult(case_id, 0.0, error=f"unparseable: {' '.join(str(exc).split())[:300]}")
            self._store(f"{case_id}#{digest}", result, None)
            return result
        key = completion_key(case, questions, self.settings)
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:  # the same question set scored twice at once waits and replays
            calls = CaseCalls(self.recorder, key, self.replay_tries, language=case.language)  # as evaluate asks
            record = evaluate_case(case, self.settings, StoredQuestions({case_id: questions}), self.run.clients, calls)
            self.recorder.tokens_by_case.pop(key, None)
        paid = sum(1 for c in calls.log if c["error"] is None and not c.get("replayed"))
        if record.status != "scored" or record.metrics is None:
            if (record.error or "").startswith("internal error"):
                raise RuntimeError(f"{case_id}: {record.error}")
            return self._store(key, RewardResult(case_id, None, error=record.error, paid=paid), record)
        m = record.metrics
        p, r, f1 = prf(m.a, m.c, len(m.mas_hit), m.num_mas)
        return self._store(key, RewardResult(case_id, f1, p, r, m.k, m.a, m.b, m.c, paid=paid), record)

    def score_many(self, case_ids: Sequence[str], completions: Sequence[Any],
                   splits: Sequence[str | None] | None = None) -> list[RewardResult]:
        """Rewards of ``completions[i]`` for ``case_ids[i]`` of ``splits[i]``, scored ``workers``
        at once, in order. Every case is found before any call.

        Raises:
            ValueError: the lists differ in length.
            UnknownCaseError, SplitMismatchError, StopRun, RuntimeError: as :meth:`score`.
        """
        splits = [None] * len(case_ids) if splits is None else list(splits)
        if not len(case_ids) == len(completions) == len(splits):
            raise ValueError(f"{len(completions)} completions but {len(case_ids)} case ids and {len(splits)} splits")
        for cid, split in zip(case_ids, splits):
            self.case(cid, split)
        try:
            return list(self._pool.map(self._score, case_ids, completions, splits))
        finally:
            self._write_rewards()

    def _store(self, key: str, result: RewardResult, record: EvalRecord | None) -> RewardResult:
        """Queue the ``train_rewards`` row of a newly scored completion (:meth:`_write_rewards`)."""
        metrics = record.metrics if record is not None and record.status == "scored" else None
        row = {"completion_key": key, **{k: v for k, v in asdict(result).items() if k != "paid"},
               "categories": "".join(q.category for q in record.questions) if metrics is not None else None,
               "mas_hit": ",".join(metrics.mas_hit) if metrics is not None else None,
               "run_id": self.run.run_id, "created_at": now_utc()}
        with self._lock:
            if key not in self._recorded:
                self._recorded.add(key)
                self._pending.append(row)
        return result

    def _write_rewards(self) -> None:
        """Journal the queued ``train_rewards`` rows in one block: between the calls' rows they
        would split the catalog's batched inserts into many small ones. (A kill before this
        loses only these rows; the calls, stored as they are made, replay.)"""
        with self._lock:
            rows, self._pending = self._pending, []
        if rows:
            self.catalog.record([(REWARDS_TABLE, r) for r in rows])

    def close(self) -> None:
        """Stop new calls, wait for those in flight, store the run's summary, close the catalog
        (idempotent; also done at interpreter exit)."""
        if self._closed:
            return
        self._closed = True
        self.run.guard.stop.set()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.run.summary |= {"calls": self.run.tokens.calls}
        self._stack.close()
        atexit.unregister(self.close)

    def __enter__(self) -> "RewardScorer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def rank_folder(out: str | Path) -> Path:
    """``out`` itself, or ``out/rank<RANK>`` when several processes train together
    (``WORLD_SIZE`` > 1): a DuckDB catalog has one writer process. ``ioa-synth sql out``
    reads the rank folders as one (:class:`~ioa_synth.runs.catalog_set.CatalogSet`)."""
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    return Path(out) / f"rank{os.environ.get('RANK', '0')}" if world > 1 else Path(out)


class IoAF1Reward(RewardScorer):
    """TRL reward function: ``GRPOTrainer(reward_funcs=[IoAF1Reward(data=..., out=...)])``.

    Called by TRL with ``prompts``, ``completions`` and the dataset's other columns as
    keyword arguments, among them ``case_id`` and ``split`` (columns of ``ioa-synth train
    prompts``): the same call scores training batches and ``trainer.evaluate``'s val rows,
    each against its own split's case (give ``data`` every split the trainer uses);
    returns one float per completion, ``None`` for a failed call. The batch is scored
    ``workers`` completions at once. With TRL's ``log_extra`` the per-completion P, R, K
    and |A|/|B|/|C| go to its completions table; with ``log_metric`` the share of
    unparseable replies and of failed calls go to its metrics. Several training processes
    each get a catalog of their own (:func:`rank_folder`).
    """

    def __init__(self, data: Data, config: str | Path | ToolkitConfig | None = None, workers: int = 32,
                 out: str | Path = "ioa-reward", local_model: str | None = None, rollouts: int = 1) -> None:
        super().__init__(data, config, rank_folder(out), workers, local_model, rollouts)
        self.__name__ = "ioa_f1"  # TRL names the reward's logged columns after it

    def __call__(self, prompts: Any = None, completions: Sequence[Any] | None = None,
                 case_id: Sequence[str] | None = None, split: Sequence[str] | None = None,
                 log_extra: Callable[[str, list], None] | None = None,
                 log_metric: Callable[[str, float], None] | None = None, **kwargs: Any) -> list[float | None]:
        if completions is None or case_id is None:
            raise TypeError("IoAF1Reward needs completions and a case_id column in the training dataset "
                            "(written by 'ioa-synth train prompts')")
        results = self.score_many(list(case_id), list(completions), None if split is None else list(split))
        if log_extra is not None:
            for name in ("precision", "recall", "k", "a", "b", "c"):
                log_extra(f"ioa_{name}", [getattr(r, name) for r in results])
        if log_metric is not None and results:
            log_metric("ioa/unparseable", sum(r.f1 == 0.0 and r.k is None for r in results) / len(results))
            log_metric("ioa/failed_calls", sum(r.f1 is None for r in results) / len(results))
        return [r.f1 for r in results]
