"""configs/verl-grpo.yaml against verl 0.9.1's own packaged trainer config (every key it sets
exists there) and against the paper's GRPO settings (App. D.6, Table 18: batch 24, G = 5,
lr 1e-6, 2 epochs, 100 steps, prompt and response 4,096 tokens, group-normalised advantages,
8 GPUs). The wheel is read, never imported (see test_verl_line)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.train.test_verl_line import lookup, trainer_config, verl_dir  # noqa: F401 (fixtures)

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "configs" / "verl-grpo.yaml"

#: Table 18's values as verl keys.
TABLE_18 = {
    "algorithm.adv_estimator": "grpo",
    "algorithm.norm_adv_by_std_in_grpo": True,
    "data.train_batch_size": 24,
    "data.max_prompt_length": 4096,
    "data.max_response_length": 4096,
    "actor_rollout_ref.actor.optim.lr": 1e-6,
    "actor_rollout_ref.rollout.n": 5,
    "trainer.total_epochs": 2,
    "trainer.total_training_steps": 100,
    "trainer.nnodes": 1,
    "trainer.n_gpus_per_node": 8,
}


def flat(node: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in node.items():
        if isinstance(value, dict):
            out |= flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def settings() -> dict[str, object]:
    data = yaml.safe_load(SETTINGS.read_text())
    assert data.pop("defaults") == ["ppo_trainer", "_self_"], "the file must compose on verl's ppo_trainer"
    assert data.pop("hydra") == {"searchpath": ["pkg://verl.trainer.config"]}
    return flat(data)


def composed(trainer_config: dict, verl_dir) -> dict:
    """verl's trainer config with ``actor_rollout_ref.rollout`` from the ``rollout/rollout.yaml`` that
    Hydra composes into it (the release's flattened ``_generated_ppo_trainer.yaml`` lacks a few of its
    keys, ``n`` among them)."""
    rollout = yaml.safe_load((verl_dir / "trainer" / "config" / "rollout" / "rollout.yaml").read_text())
    rollout.pop("defaults", None)
    config = dict(trainer_config)
    config["actor_rollout_ref"] = {**config["actor_rollout_ref"],
                                   "rollout": {**config["actor_rollout_ref"]["rollout"], **rollout}}
    return config


def test_every_key_exists_in_verls_packaged_config(trainer_config, verl_dir):
    config = composed(trainer_config, verl_dir)
    for key, value in settings().items():
        default = lookup(config, key)
        assert not isinstance(default, dict), f"{key}: a section in verl's config, not a value"


def test_values_are_table_18s():
    values = settings()
    for key, expected in TABLE_18.items():
        assert key in values, f"{key} missing from {SETTINGS.name}"
        assert values[key] == expected and type(values[key]) is type(expected), (key, values[key], expected)


def test_the_reward_is_the_toolkits_f1_through_the_naive_manager():
    values = settings()
    assert values["reward.custom_reward_function.name"] == "compute_score"
    assert values["reward.reward_manager.name"] == "naive"
