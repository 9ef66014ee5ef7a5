#!/usr/bin/env python
"""Train a prober the paper's way (§6.1, App. D.1): SFT warm-start, then GRPO on the F1 reward.

Needs the ``train`` extra (``pip install -e '.[train]'``) and, at the paper's size (Qwen3-8B),
GPUs; launch with ``accelerate launch`` for several. Every default below is the paper's setting:

- ``sft``: a teacher's question sets with Category-C questions removed (``ioa-synth train sft``),
  2 epochs, lr 1e-5, effective batch 8 dialogues, max sequence length 8,192 tokens, bf16;
- ``grpo``: from the SFT checkpoint on the train split's prompts (``ioa-synth train prompts``),
  2 epochs, 24 dialogues per step with G = 5 question sets each (120 completions), lr 1e-6,
  prompt and response at most 4,096 tokens each, group-normalised advantages; the reward is
  :class:`ioa_synth.train.reward.IoAF1Reward` (simulator T 0.2 with one rollout, filter T 0.2:
  the components' default temperatures; endpoints from ``--config`` and the ``SIMULATOR_*`` /
  ``VALIDITY_FILTER_*`` / ``OPENAI_*`` variables, as for ``ioa-synth evaluate``).

Usage::

    python scripts/train_prober.py sft --model Qwen/Qwen3-8B --data sft/sft.jsonl --out ckpt/sft
    python scripts/train_prober.py grpo --model ckpt/sft --prompts grpo/train.jsonl --data DIR/train DIR/val \\
        --reward-out reward-catalog --out ckpt/grpo [--eval-prompts grpo/val.jsonl | --no-eval] [--config config.json]

GRPO validates on ``val.jsonl`` beside ``--prompts`` when that file exists (``ioa-synth train
prompts --data DIR/train`` writes it when ``DIR/val`` exists; paper Table 18: 120 validation
dialogues), unless ``--eval-prompts`` names another file or ``--no-eval`` turns it off.

``--dry-run`` prints the trainer configuration and exits.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

#: The paper's settings (App. D.1).
SFT_DEFAULTS = {"epochs": 2, "lr": 1e-5, "batch": 8, "max_length": 8192}
GRPO_DEFAULTS = {"epochs": 2, "lr": 1e-6, "prompts_per_step": 24, "num_generations": 5,
                 "max_prompt_length": 4096, "max_completion_length": 4096}


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1") or 1)


def accumulation(total: int, per_device: int, what: str) -> int:
    """Gradient-accumulation steps giving ``total`` per optimizer step over every process."""
    per_step = per_device * world_size()
    if total % per_step:
        raise SystemExit(f"error: {what} {total} is not a multiple of --per-device-batch {per_device} x "
                         f"{world_size()} process(es)")
    return total // per_step


def sft_config(a: argparse.Namespace) -> Any:
    from trl import SFTConfig

    return SFTConfig(output_dir=a.out, num_train_epochs=a.epochs, learning_rate=a.lr,
                     per_device_train_batch_size=a.per_device_batch,
                     gradient_accumulation_steps=accumulation(a.batch, a.per_device_batch, "--batch"),
                     max_length=a.max_length, bf16=a.bf16, logging_steps=1,
                     save_strategy="epoch", report_to=a.report_to, seed=a.seed)


def eval_prompts_of(a: argparse.Namespace) -> str | None:
    """The validation prompts of the GRPO stage: ``--eval-prompts``; else ``val.jsonl`` (the
    suffix of ``--prompts``) beside ``--prompts`` when it exists; ``None`` with ``--no-eval``."""
    if a.no_eval:
        return None
    if a.eval_prompts:
        return a.eval_prompts
    prompts = Path(a.prompts)
    beside = prompts.with_name("val" + prompts.suffix)
    return str(beside) if beside.is_file() and beside.resolve() != prompts.resolve() else None


def grpo_config(a: argparse.Namespace) -> Any:
    from trl import GRPOConfig

    completions = a.prompts_per_step * a.num_generations
    return GRPOConfig(output_dir=a.out, num_train_epochs=a.epochs, learning_rate=a.lr,
                      per_device_train_batch_size=a.per_device_batch,
                      # TRL needs the global eval batch divisible by G; its default of 8 is not for G = 5
                      per_device_eval_batch_size=a.per_device_batch,
                      gradient_accumulation_steps=accumulation(completions, a.per_device_batch, "completions per step"),
                      num_generations=a.num_generations, max_completion_length=a.max_completion_length,
                      scale_rewards="group", bf16=a.bf16, logging_steps=1,
                      log_completions=True, save_strategy="epoch", report_to=a.report_to, seed=a.seed,
                      eval_strategy="epoch" if eval_prompts_of(a) else "no")


def short_prompts(dataset: Any, tokenizer: Any, limit: int) -> Any:
    """The rows whose templated prompt fits ``limit`` tokens (TRL does not cut prompts)."""
    def fits(row: dict[str, Any]) -> bool:
        ids = tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=True)
        return len(ids["input_ids"] if isinstance(ids, dict) else ids) <= limit

    kept = dataset.filter(fits)
    if len(kept) < len(dataset):
        print(f"{len(dataset) - len(kept)} prompt(s) longer than {limit} tokens left out", file=sys.stderr)
    return kept


def run_sft(a: argparse.Namespace) -> None:
    from datasets import load_dataset
    from trl import SFTTrainer

    config = sft_config(a)
    if a.dry_run:
        print(json.dumps(config.to_dict(), indent=2, default=str))
        return
    data = load_dataset("json", data_files=a.data, split="train")
    trainer = SFTTrainer(model=a.model, args=config, train_dataset=data)
    trainer.train()
    trainer.save_model(a.out)


def run_grpo(a: argparse.Namespace) -> None:
    from datasets import load_dataset
    from transformers import AutoTokenizer
    from trl import GRPOTrainer

    from ioa_synth.train.reward import IoAF1Reward

    config = grpo_config(a)
    if a.dry_run:
        print(json.dumps(config.to_dict(), indent=2, default=str))
        return
    tokenizer = AutoTokenizer.from_pretrained(a.model)
    train = short_prompts(load_dataset("json", data_files=a.prompts, split="train"), tokenizer, a.max_prompt_length)
    eval_prompts = eval_prompts_of(a)
    if eval_prompts and not a.eval_prompts:
        print(f"note: validating on {eval_prompts} (beside --prompts; --no-eval to skip)", file=sys.stderr)
    val = (short_prompts(load_dataset("json", data_files=eval_prompts, split="train"), tokenizer,
                         a.max_prompt_length) if eval_prompts else None)
    reward = IoAF1Reward(data=a.data, config=a.config, workers=a.workers, out=a.reward_out)
    try:
        for rows in (train, val or []):  # every row's case, found now: not at the first evaluation
            for row in rows:
                reward.case(row["case_id"], row.get("split"))
        trainer = GRPOTrainer(model=a.model, reward_funcs=[reward], args=config, train_dataset=train,
                              eval_dataset=val, processing_class=tokenizer)
        trainer.train()
        trainer.save_model(a.out)
    finally:
        reward.close()


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="stage", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--model", required=True, help="Base model (sft) or the SFT checkpoint (grpo)")
    common.add_argument("--out", required=True, help="Output folder of the checkpoint")
    common.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=True, help="bf16 training (paper: on)")
    common.add_argument("--report-to", default="none", help="TRL/transformers report_to (e.g. wandb)")
    common.add_argument("--seed", type=int, default=42)
    common.add_argument("--dry-run", action="store_true", help="Print the trainer configuration and exit")

    s = sub.add_parser("sft", parents=[common], help="SFT warm-start on 'ioa-synth train sft' output")
    s.add_argument("--data", required=True, help="sft.jsonl written by 'ioa-synth train sft'")
    s.add_argument("--epochs", type=float, default=SFT_DEFAULTS["epochs"])
    s.add_argument("--lr", type=float, default=SFT_DEFAULTS["lr"])
    s.add_argument("--batch", type=int, default=SFT_DEFAULTS["batch"], help="Effective batch (dialogues per step)")
    s.add_argument("--per-device-batch", type=int, default=1)
    s.add_argument("--max-length", type=int, default=SFT_DEFAULTS["max_length"])

    g = sub.add_parser("grpo", parents=[common], help="GRPO with the IoA F1 reward")
    g.add_argument("--prompts", required=True, help="train.jsonl written by 'ioa-synth train prompts'")
    ev = g.add_mutually_exclusive_group()
    ev.add_argument("--eval-prompts", help="val.jsonl written by 'ioa-synth train prompts' (default: val.jsonl "
                                           "beside --prompts when it exists)")
    ev.add_argument("--no-eval", action="store_true", help="No validation, even with a val.jsonl beside --prompts")
    g.add_argument("--data", required=True, nargs="+",
                   help="The built split folder(s) those prompts came from: DIR/train, and DIR/val when "
                        "validating (or the build directory DIR for all its splits)")
    g.add_argument("--config", help="Per-component LLM settings for the simulator and filter (JSON)")
    g.add_argument("--reward-out", default="ioa-reward", help="Catalog folder of the reward's calls (resumable)")
    g.add_argument("--workers", type=int, default=32, help="Completions scored at once")
    g.add_argument("--epochs", type=float, default=GRPO_DEFAULTS["epochs"])
    g.add_argument("--lr", type=float, default=GRPO_DEFAULTS["lr"])
    g.add_argument("--prompts-per-step", type=int, default=GRPO_DEFAULTS["prompts_per_step"])
    g.add_argument("--num-generations", type=int, default=GRPO_DEFAULTS["num_generations"], help="Group size G")
    g.add_argument("--per-device-batch", type=int, default=5, help="Completions per device per micro-step")
    g.add_argument("--max-prompt-length", type=int, default=GRPO_DEFAULTS["max_prompt_length"])
    g.add_argument("--max-completion-length", type=int, default=GRPO_DEFAULTS["max_completion_length"])
    return ap


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    try:
        (run_sft if a.stage == "sft" else run_grpo)(a)
    except LookupError as exc:  # a prompt row whose case the reward's --data folders do not hold
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # e.g. bf16 without a GPU that has it: TrainingArguments refuses the setup
        hint = " (--no-bf16 on a machine without a bf16 GPU)" if "bf16" in str(exc) else ""
        print(f"error: {' '.join(str(exc).split())}{hint}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
