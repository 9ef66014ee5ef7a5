"""One real TRL SFT step on ``train sft``'s file and one real GRPO step whose reward is
``IoAF1Reward``, on a tiny randomly initialised Llama with a tokenizer built here (no
download). The simulator and filter are scripted servers; the rewards TRL logs for each
completion equal the F1 that the scripted answers imply for the question set it holds.

The tokenizer's vocabulary is the special tokens plus three whole question sets as single
tokens, so a one-token completion of the random policy is either one of those sets (a real
protocol reward) or empty (not a question set: 0.0); the chat template's words are <unk>.
"""

from __future__ import annotations

import json
import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
if os.environ.get("CI") != "true":  # CI installs the train extra (scripts/setup.sh): missing there is a failure
    pytest.importorskip("trl", reason="the train extra is not installed (pip install -e '.[train]')")

from evaluate.eval_helpers import Q, STUDY_1, STUDY_2, Study, released_case, write_case  # noqa: E402

from .conftest import STUDY_ALL_C  # noqa: E402

SETS = [STUDY_1, STUDY_2, STUDY_ALL_C]
BY_STEM = {q.stem: q for qs in SETS for q in qs}
TEMPLATE = ("{% for m in messages %}{{ '<|' + m['role'] + '|> ' + m['content'] + ' ' }}{% endfor %}"
            "{% if add_generation_prompt %}{{ '<|assistant|> ' }}{% endif %}")


def question_set(qs: list[Q]) -> str:
    return json.dumps({"questions": [{"question": q.stem, "options": q.options()} for q in qs]})


def implied_f1(text: str, num_mas: int = 4) -> float:
    """The F1 the scripted answers give a completion (paper §4.2), computed here by hand."""
    try:
        qs = [BY_STEM[q["question"]] for q in json.loads(text)["questions"]]
    except (ValueError, KeyError, TypeError):
        return 0.0
    a = [q for q in qs if q.m1 != q.m2 and q.meaningful and q.implicit and q.redundant_with is None and q.hit]
    c = [q for q in qs if q.m1 == q.m2 or not q.meaningful or not q.implicit or q.redundant_with is not None]
    p = len(a) / (len(a) + len(c)) if a or c else 0.0
    r = len({q.hit for q in a}) / num_mas
    return 2 * p * r / (p + r) if p + r else 0.0


def text_of(messages) -> str:
    """The text of a logged conversational prompt or completion (a list of messages)."""
    return messages if isinstance(messages, str) else " ".join(m["content"] for m in messages)


def tiny_model(path):
    """A 1-layer Llama (random weights) and a word-level tokenizer with a chat template, saved to ``path``."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["<pad>", "<eos>", "<unk>", *map(question_set, SETS)])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>")
    tok.chat_template = TEMPLATE
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096,
                         pad_token_id=0, eos_token_id=1, bos_token_id=None, tie_word_embeddings=False)
    import torch

    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def test_sft_step_on_the_exported_file(cli, teacher, tmp_path):
    from datasets import load_dataset
    from trl import SFTConfig, SFTTrainer

    assert cli("train", "sft", "--results", teacher.results, "--out", tmp_path / "sft").exit_code == 0
    model = tiny_model(tmp_path / "tiny")
    data = load_dataset("json", data_files=str(tmp_path / "sft" / "sft.jsonl"), split="train")
    assert len(data) == 3 and data[0]["messages"][-1]["role"] == "assistant"
    args = SFTConfig(output_dir=str(tmp_path / "sft-out"), max_steps=1, per_device_train_batch_size=2,
                     learning_rate=1e-5, max_length=2048, logging_steps=1, report_to="none", save_strategy="no",
                     use_cpu=True, bf16=False, seed=0, dataloader_num_workers=0)
    trainer = SFTTrainer(model=model, args=args, train_dataset=data)
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert trainer.state.global_step == 1 and len(losses) == 1 and losses[0] > 0


def test_grpo_step_with_the_ioa_reward(cli, trio, tmp_path):
    import pandas as pd
    from datasets import load_dataset
    from trl import GRPOConfig, GRPOTrainer

    from ioa_synth.train.reward import IoAF1Reward

    t = trio(Study(STUDY_1 + STUDY_2 + STUDY_ALL_C))  # answers keyed by question stem, whatever the case
    data_dir = tmp_path / "data" / "train"
    write_case(data_dir, "law/planning_001.json", released_case(tag=" One"))
    write_case(data_dir, "business/planning_002.json", released_case(tag=" Two"))
    assert cli("train", "prompts", "--data", data_dir, "--out", tmp_path / "grpo").exit_code == 0
    prompts = load_dataset("json", data_files=str(tmp_path / "grpo" / "train.jsonl"), split="train")
    reward = IoAF1Reward(data=data_dir, out=tmp_path / "reward", workers=8)
    out = tmp_path / "grpo-out"
    args = GRPOConfig(output_dir=str(out), max_steps=1, per_device_train_batch_size=8, num_generations=4,
                      max_completion_length=1, learning_rate=1e-6, logging_steps=1, log_completions=True,
                      report_to="none", save_strategy="no", use_cpu=True, bf16=False, seed=3, temperature=1.0,
                      dataloader_num_workers=0)
    try:
        trainer = GRPOTrainer(model=tiny_model(tmp_path / "tiny"), reward_funcs=[reward], args=args,
                              train_dataset=prompts)
        trainer.train()
    finally:
        reward.close()
    assert trainer.state.global_step == 1
    logged = pd.read_parquet(out / "completions" / "completions_00001.parquet")
    assert len(logged) == 8
    texts = [text_of(c) for c in logged["completion"]]  # conversational: the assistant message
    expected = [implied_f1(c) for c in texts]
    assert logged["ioa_f1"].tolist() == pytest.approx(expected, abs=1e-6)
    assert {round(x, 4) for x in expected} - {0.0}, "the random policy wrote no scored question set; pick another seed"
    step = next(h for h in trainer.state.log_history if "rewards/ioa_f1/mean" in h)
    assert step["rewards/ioa_f1/mean"] == pytest.approx(sum(expected) / len(expected), abs=1e-6)
    sets = set(map(question_set, SETS))  # each (case, question set) pays M1 and M2 once, repeats replay
    paid = {("One" in text_of(p), c) for p, c in zip(logged["prompt"], texts) if c in sets}
    assert len(t.simulator.requests) == 2 * len(paid)


def test_recipe_defaults_are_the_papers(tmp_path, monkeypatch):
    """scripts/train_prober.py builds TRL configs with App. D.1's settings."""
    import importlib.util
    from pathlib import Path

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    path = Path(__file__).resolve().parents[2] / "scripts" / "train_prober.py"
    spec = importlib.util.spec_from_file_location("train_prober", path)
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    sft = recipe.sft_config(recipe.parser().parse_args(
        ["sft", "--model", "m", "--data", "d", "--out", str(tmp_path / "s"), "--no-bf16"]))
    assert (sft.num_train_epochs, sft.learning_rate, sft.max_length) == (2, 1e-5, 8192)
    assert sft.per_device_train_batch_size * sft.gradient_accumulation_steps == 8
    a = recipe.parser().parse_args(["grpo", "--model", "m", "--prompts", "p", "--data", "d", "--out",
                                    str(tmp_path / "g"), "--no-bf16"])
    grpo = recipe.grpo_config(a)
    assert (grpo.num_train_epochs, grpo.learning_rate, grpo.num_generations) == (2, 1e-6, 5)
    assert grpo.per_device_train_batch_size * grpo.gradient_accumulation_steps == 24 * 5
    assert (grpo.max_completion_length, a.max_prompt_length, grpo.scale_rewards) == (4096, 4096, "group")


def _val_setup(cli, trio, tmp_path):
    """A build's train and val splits with one relative path in both (different dialogues),
    their TRL prompt files, and the scripted trio."""
    from datasets import load_dataset

    t = trio(Study(STUDY_1 + STUDY_2 + STUDY_ALL_C))
    root = tmp_path / "data"
    write_case(root / "train", "law/planning_001.json", released_case(tag=" One"))
    write_case(root / "train", "business/planning_002.json", released_case(tag=" Two"))
    write_case(root / "val", "law/planning_001.json", released_case(tag=" Val"))  # same path, another dialogue
    write_case(root / "val", "medicine/planning_004.json", released_case(tag=" Four"))
    for split in ("train", "val"):
        assert cli("train", "prompts", "--data", root / split, "--out", tmp_path / "grpo").exit_code == 0
    load = lambda s: load_dataset("json", data_files=str(tmp_path / "grpo" / f"{s}.jsonl"), split="train")  # noqa: E731
    return t, root, load("train"), load("val")


def _grpo(tmp_path, reward, train, val):
    from trl import GRPOConfig, GRPOTrainer

    args = GRPOConfig(output_dir=str(tmp_path / "grpo-out"), max_steps=1, per_device_train_batch_size=8,
                      per_device_eval_batch_size=8, num_generations=4, max_completion_length=1, learning_rate=1e-6,
                      logging_steps=1, report_to="none", save_strategy="no", use_cpu=True, bf16=False, seed=3,
                      temperature=1.0, dataloader_num_workers=0)
    return GRPOTrainer(model=tiny_model(tmp_path / "tiny"), reward_funcs=[reward], args=args, train_dataset=train,
                       eval_dataset=val)


def test_grpo_evaluation_scores_val_rows_against_the_val_cases(cli, trio, tmp_path):
    """The documented recipe's evaluation: trainer.evaluate() sends the val prompts' rows to the
    reward, which scores each against its own split's case (the reward holds both folders)."""
    from ioa_synth.train.reward import IoAF1Reward

    t, root, train, val = _val_setup(cli, trio, tmp_path)
    assert set(val["split"]) == {"val"} and "law/planning_001" in val["case_id"]
    reward = IoAF1Reward(data=[root / "train", root / "val"], out=tmp_path / "reward", workers=8)
    try:
        trainer = _grpo(tmp_path, reward, train, val)
        metrics = trainer.evaluate()
    finally:
        reward.close()
    assert "eval_rewards/ioa_f1/mean" in metrics
    asked = [json.dumps(r["body"]) for r in t.simulator.requests]
    assert asked, "the random policy wrote no question set in evaluation; pick another seed"
    # every simulated participant is a val dialogue's: none of the train case at the same path
    assert all(" Val" in a or " Four" in a for a in asked) and not any(" One" in a or " Two" in a for a in asked)
    assert any(" Val" in a for a in asked)  # the val case at the train case's path was among them


def test_grpo_evaluation_with_only_the_train_folder_is_refused_loudly(cli, trio, tmp_path):
    """Given only DIR/train (the recipe as it was), evaluation must not score the val case
    law/planning_001 against the train dialogue at the same path: it stops, naming the fix."""
    from ioa_synth.train.cases import SplitMismatchError
    from ioa_synth.train.reward import IoAF1Reward

    t, root, train, val = _val_setup(cli, trio, tmp_path)
    reward = IoAF1Reward(data=root / "train", out=tmp_path / "reward", workers=8)
    try:
        trainer = _grpo(tmp_path, reward, train, val)
        with pytest.raises(SplitMismatchError, match=r"'val' case.*give the reward the val folder too"):
            trainer.evaluate()
    finally:
        reward.close()
    assert t.simulator.requests == [] and t.validity_filter.requests == []
