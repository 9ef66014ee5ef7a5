"""IoA paper tables of prober training (§6.1, App. D.1, D.6): the SFT warm-start subset
(Table 17) from a ``train sft`` folder, and the GRPO settings with the reward's models
(Table 18) from the verl settings file and the reward's models config.

- ``ioa-17`` reads ``sft.jsonl`` with the train capability's reader
  (:func:`ioa_synth.train.sft_summary.read_sft`, :func:`~ioa_synth.train.sft_summary.cell_summary`).
- ``ioa-18`` reads ``configs/verl-grpo.yaml`` (PyYAML; the keys of verl's trainer config) and
  ``configs/paper-reward.json`` (:func:`ioa_synth.llm.config.load_config`), or the files
  given with ``--config``; the paper's values (PROTOCOL §7) stand beside them.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from ioa_synth.tables.ioa_settings import CONFIGS, read_models, temperature, thinking
from ioa_synth.tables.model import PaperTable
from ioa_synth.tables.registry import Needs, SettingsFile, TableError, TableSpec, register
from ioa_synth.train.sft_summary import SftFolderError, cell_summary, read_sft

#: The paper's warm-start subset (§6.1): dialogues of the 1,200-dialogue train split.
PAPER_SFT_DIALOGUES = 300

#: Table 18's rows read from the verl settings: (setting, verl key(s), the paper's value).
VERL_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("advantage estimator", ("algorithm.adv_estimator",), "grpo"),
    ("advantages normalised within the group", ("algorithm.norm_adv_by_std_in_grpo",), "yes"),
    ("dialogues per step (batch)", ("data.train_batch_size",), "24"),
    ("question sets per dialogue (group size G)", ("actor_rollout_ref.rollout.n",), "5"),
    ("learning rate", ("actor_rollout_ref.actor.optim.lr",), "1e-6"),
    ("epochs", ("trainer.total_epochs",), "2"),
    ("steps", ("trainer.total_training_steps",), "100"),
    ("max prompt length (tokens)", ("data.max_prompt_length",), "4096"),
    ("max response length (tokens)", ("data.max_response_length",), "4096"),
    ("GPUs (nodes × per node)", ("trainer.nnodes", "trainer.n_gpus_per_node"), "8 (A800 80 GB)"),
    ("train / validation prompts", ("data.train_files", "data.val_files"), "1,200 / 120 dialogues"),
    ("reward function", ("reward.custom_reward_function.name",), "per-dialogue F1, no format reward"),
)

#: Table 18's reward models (PROTOCOL §7): component -> (model, temperature, thinking).
PAPER_REWARD = {"simulator": ("gemini-3-flash", "0.2", "no thinking"), "validity_filter": ("gpt-5-mini", "0.2", "–")}


def warm_start(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-17: one row per split and cell (domain × task type) present in the folder's
    ``sft.jsonl``: dialogues, questions kept (Category C removed unless ``--keep-c``),
    questions per dialogue, Category-C questions removed; a last row over all."""
    (folder,) = folders["sft"]
    try:
        rows = read_sft(folder)
    except SftFolderError as exc:
        raise TableError(str(exc)) from None
    cells = cell_summary(rows)
    body = [[c["split"], c["domain"], c["task_type"], str(c["dialogues"]), str(c["questions"]),
             f"{c['mean_questions']:.1f}", str(c["removed_c"])] for c in cells]
    questions, removed = sum(r.questions for r in rows), sum(r.removed_c for r in rows)
    body.append(["all", f"{len({(c['domain'], c['task_type']) for c in cells})} cells", "", str(len(rows)),
                 str(questions), f"{questions / len(rows):.1f}", str(removed)])
    teachers = sorted({r.teacher for r in rows})
    return PaperTable("ioa-17", f"Table 17: SFT warm-start subset ({len(rows)} dialogues of {folder.name})",
                      ["split", "domain", "task type", "dialogues", "questions", "questions / dialogue",
                       "C removed"], body,
                      [f"From {folder}/sft.jsonl: one row per dialogue; teacher {', '.join(teachers)}. Questions: "
                       "the question set kept as the assistant turn; C removed: Category-C questions taken out "
                       "(filterC; 0 everywhere with --keep-c). Dialogues left with no question are not in the file.",
                       f"The paper's warm-start: {PAPER_SFT_DIALOGUES} train dialogues of the frontier prober (§6.1); "
                       "'train sft --sample 300 --seed S' draws them stratified by cell (10 per cell of a "
                       "40-per-cell split)."])


def _yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise TableError(f"--config {path}: cannot read it ({exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise TableError(f"--config {path}: not YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise TableError(f"--config {path}: not a verl settings file (its top level is not a mapping)")
    return data


def _lookup(data: dict[str, Any], key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _value(value: Any) -> str:
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        mantissa, _, exp = f"{value:e}".partition("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exp)}" if abs(value) < 1e-3 else f"{value:g}"
    return str(value)


def grpo_settings(folders: dict[str, list[Path]]) -> PaperTable:
    """ioa-18: Table 18's settings as the verl file sets them (a key the file leaves out is
    verl's default: "not set"), then the reward's models (simulator, validity filter: model,
    temperature, thinking) and simulator rollouts, each beside the paper's value."""
    from ioa_synth.train.reward import RewardScorer

    (verl,), (reward,) = folders["verl"], folders["reward"]
    data = _yaml(verl)
    if "data" not in data and "trainer" not in data and "algorithm" not in data:
        raise TableError(f"--config {verl}: not a verl settings file (no data, trainer or algorithm section)")
    rows = []
    for setting, keys, paper in VERL_ROWS:
        value = " / ".join(_value(_lookup(data, k)) for k in keys)
        if len(keys) == 2 and keys[0] == "trainer.nnodes":
            value = value.replace(" / ", " × ")
        rows.append([setting, value, paper, f"{verl.name}: {', '.join(keys)}"])
    config = read_models(reward)
    for name in ("simulator", "validity_filter"):
        block = config.component(name)
        model, temp, think = PAPER_REWARD[name]
        where = f"{reward.name}: {name}"
        rows += [[f"reward {name}: model", block.model or "not set", model, where],
                 [f"reward {name}: temperature", temperature(block, name), temp, where],
                 [f"reward {name}: thinking", thinking(block), think, where]]
    rollouts = inspect.signature(RewardScorer).parameters["rollouts"].default
    rows.append(["reward simulator: rollouts per participant", str(rollouts), "1", "RewardScorer(rollouts=...)"])
    return PaperTable("ioa-18", "Table 18: GRPO settings and reward models",
                      ["setting", "value", "paper", "from"], rows,
                      [f"From {verl} (composed on verl's ppo_trainer: 'not set' keeps verl's default or comes on the "
                       f"command line, e.g. data.train_files / data.val_files) and {reward} (the reward's models; "
                       "endpoints from the environment). Paper: App. D.6 as restated in the protocol notes.",
                       "Thinking: what the block's request_options send ('provider default' when none)."])


register(TableSpec("ioa-17", "SFT warm-start subset", "IoA paper, Table 17 (§6.1)",
                   (Needs("sft", 1, 1, "the --out of 'train sft'"),),
                   "ioa-synth train sft --results TEACHER --out SFT --sample 300 --seed S", warm_start))
register(TableSpec("ioa-18", "GRPO settings and reward models", "IoA paper, Table 18 (App. D.6)", (),
                   "none (configs/verl-grpo.yaml and configs/paper-reward.json, or --config FILE)", grpo_settings,
                   settings=(SettingsFile("verl", (".yaml", ".yml"), CONFIGS / "verl-grpo.yaml",
                                          "verl GRPO settings (.yaml)"),
                             SettingsFile("reward", (".json",), CONFIGS / "paper-reward.json",
                                          "the reward's models config (.json)"))))
