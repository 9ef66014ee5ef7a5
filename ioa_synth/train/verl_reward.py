"""verl adapter of the training reward (paper §6.1 trained with verl; App. D.1).

For verl 0.9.1 (its reward loop; the keys are checked against that release's packaged config
in ``tests/train/test_verl_line.py``), point the reward at this module::

    reward.custom_reward_function.path=$(python -c 'import ioa_synth.train.verl_reward as m; print(m.__file__)')
    reward.custom_reward_function.name=compute_score
    reward.reward_manager.name=naive

(docs/train.md has the whole launch line). verl 0.9.1's ``main_ppo`` reads only the
``reward.``-prefixed keys: the top-level ``custom_reward_function.*`` it still accepts is never
used there, and its reward-manager registry (``dapo, gdpo, naive, rate_limited, remote``) has
no ``batch``. It starts ``reward.num_workers`` (default 8) reward worker processes, all with
the same environment, configured by these variables (read when the first score is asked for):

- ``IOA_REWARD_DATA`` (required): the built split folder(s) the prompts came from, joined
  by ``os.pathsep`` (``DIR/train:DIR/val`` when verl also validates on ``val.parquet``), or
  the build directory ``DIR`` for all its splits; a row is resolved by its
  ``extra_info["split"]`` (:class:`ioa_synth.train.cases.CaseIndex`);
- ``IOA_REWARD_CONFIG``: a ``--config`` JSON file (optional; endpoints come from
  ``SIMULATOR_*``/``VALIDITY_FILTER_*``/``OPENAI_*`` as for ``evaluate``);
- ``IOA_REWARD_OUT``: the folder of the reward's catalogs (default ``ioa-reward``). A DuckDB
  catalog has one writer process, so each worker process takes the first free
  ``IOA_REWARD_OUT/worker<N>/`` (one a live process holds is skipped), replays the calls
  every worker folder stored (:func:`ioa_synth.runs.catalog_set.sibling_calls`), and
  ``ioa-synth sql IOA_REWARD_OUT "..."`` reads them all as one;
- ``IOA_REWARD_WORKERS``: completions scored at once in a batch (default 32).

``compute_score(data_source, solution_str, ground_truth, extra_info)`` scores one completion:
verl 0.9.1's reward managers call it so, one sample per call, from the threads of a worker's
event loop (extra keywords such as ``reward_router_address`` are ignored). Called with the
plural keywords of the ``batch`` reward manager of verl releases before the reward loop
(``data_sources``, ``solution_strs``, ``ground_truths``, ``extra_infos``) it scores the whole
batch concurrently; no such release is tested. Each score is ``{"score": F1, "precision",
"recall", "k", "failed"}``. verl cannot leave a sample out of its group, so a simulator/filter
call that failed after its retries scores 0.0 with ``failed`` = 1.0.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Sequence

from ioa_synth.runs.catalog import CatalogLocked
from ioa_synth.train.reward import RewardResult, RewardScorer

_scorer: RewardScorer | None = None
_lock = threading.Lock()
#: Worker folders tried before giving up (verl starts ``reward.num_workers`` processes).
MAX_WORKER_FOLDERS = 256


class RewardEnvError(RuntimeError):
    """``IOA_REWARD_DATA`` is not set."""


def open_worker_scorer(out: Path, **kwargs: Any) -> RewardScorer:
    """A scorer on the first ``out/worker<N>`` no other live process holds.

    Raises:
        CatalogLocked: :data:`MAX_WORKER_FOLDERS` folders are all in use.
    """
    for n in range(MAX_WORKER_FOLDERS):
        try:
            return RewardScorer(out=out / f"worker{n}", **kwargs)
        except CatalogLocked:
            continue
    raise CatalogLocked(f"{out}: worker0 to worker{MAX_WORKER_FOLDERS - 1} are all in use by other processes")


def scorer() -> RewardScorer:
    """The process's scorer, opened from the ``IOA_REWARD_*`` variables on first use, in a
    worker folder of its own (:func:`open_worker_scorer`)."""
    global _scorer
    with _lock:
        if _scorer is None:
            data = os.environ.get("IOA_REWARD_DATA")
            if not data:
                raise RewardEnvError("set IOA_REWARD_DATA to the built split folder(s) the prompts came from "
                                     f"(e.g. DIR/train{os.pathsep}DIR/val)")
            _scorer = open_worker_scorer(Path(os.environ.get("IOA_REWARD_OUT") or "ioa-reward"),
                                         data=[d for d in data.split(os.pathsep) if d],
                                         config=os.environ.get("IOA_REWARD_CONFIG") or None,
                                         workers=int(os.environ.get("IOA_REWARD_WORKERS") or 32))
        return _scorer


def _case_id(ground_truth: Any, extra_info: Any) -> str:
    if isinstance(extra_info, dict) and extra_info.get("case_id"):
        return str(extra_info["case_id"])
    return str(ground_truth)


def _split(extra_info: Any) -> str | None:
    return str(extra_info["split"]) if isinstance(extra_info, dict) and extra_info.get("split") else None


def _as_score(r: RewardResult) -> dict[str, float]:
    return {"score": r.f1 or 0.0, "precision": r.precision or 0.0, "recall": r.recall or 0.0,
            "k": float(r.k or 0), "failed": float(r.f1 is None)}


def compute_score(data_source: str | None = None, solution_str: str | None = None, ground_truth: Any = None,
                  extra_info: dict[str, Any] | None = None, *, data_sources: Sequence[str] | None = None,
                  solution_strs: Sequence[str] | None = None, ground_truths: Sequence[Any] | None = None,
                  extra_infos: Sequence[Any] | None = None, **kwargs: Any) -> dict[str, float] | list[dict[str, float]]:
    """The reward of one completion (``solution_str``; the case id is ``ground_truth`` or
    ``extra_info["case_id"]``, its split ``extra_info["split"]``), or of a batch given with
    the plural keywords.

    Raises:
        RewardEnvError: ``IOA_REWARD_DATA`` is not set.
        ioa_synth.train.cases.UnknownCaseError: a case id not in ``IOA_REWARD_DATA``;
            ``SplitMismatchError`` (a subclass): a split ``IOA_REWARD_DATA`` has no folder of.
    """
    if solution_strs is not None:
        infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
        truths = list(ground_truths) if ground_truths is not None else [None] * len(solution_strs)
        ids = [_case_id(g, e) for g, e in zip(truths, infos)]
        return [_as_score(r) for r in scorer().score_many(ids, list(solution_strs), [_split(e) for e in infos])]
    return _as_score(scorer().score(_case_id(ground_truth, extra_info), solution_str or "", _split(extra_info)))
