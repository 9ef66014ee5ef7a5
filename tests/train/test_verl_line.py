"""The verl launch line of docs/train.md (and the adapter's docstring) against verl 0.9.1's
own files: its packaged trainer config, its reward-manager registry and the keywords its
reward managers pass to ``compute_score``.

``scripts/setup.sh`` downloads the ``verl==0.9.1`` wheel (no dependencies) into
``.venv/share/ioa-synth/wheels/`` without installing it: these tests read files out of the
wheel and never import verl, and no network is needed. (Installed, the wheel's top-level
``tests`` package would shadow this project's ``tests.*`` imports.)"""

from __future__ import annotations

import ast
import inspect
import re
import shlex
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from ioa_synth.train import verl_reward

ROOT = Path(__file__).resolve().parents[2]
#: The verl release the docs name, and where scripts/setup.sh puts its wheel.
VERL = "0.9.1"
WHEELS = Path(sys.prefix) / "share" / "ioa-synth" / "wheels"


@pytest.fixture(scope="module")
def verl_dir() -> zipfile.Path:
    """The ``verl`` package folder inside the release's wheel (read, never imported)."""
    wheels = sorted(WHEELS.glob(f"verl-{VERL}-*.whl"))
    assert wheels, f"no verl {VERL} wheel in {WHEELS}: run scripts/setup.sh (pip download --no-deps verl=={VERL})"
    root = zipfile.Path(wheels[-1])
    assert f"Version: {VERL}\n" in (root / f"verl-{VERL}.dist-info" / "METADATA").read_text()
    return root / "verl"


def files(folder: zipfile.Path, suffix: str = ".py") -> list[zipfile.Path]:
    return sorted((p for p in folder.iterdir() if p.name.endswith(suffix)), key=lambda p: p.name)


@pytest.fixture(scope="module")
def trainer_config(verl_dir) -> dict:
    """verl's whole PPO trainer config as its release ships it (defaults composed)."""
    return yaml.safe_load((verl_dir / "trainer" / "config" / "_generated_ppo_trainer.yaml").read_text())


def overrides(text: str) -> dict[str, str]:
    """The ``key=value`` overrides of the ``verl.trainer.main_ppo`` command in ``text``."""
    command = re.search(r"python -m verl\.trainer\.main_ppo(.*?)(?:\n\s*\n|```|$)", text.replace("\\\n", " "), re.S)
    assert command, "no 'python -m verl.trainer.main_ppo' line"
    words = shlex.split(re.sub(r"\$\((?:[^()']|'[^']*')*\)", "PATH", command.group(1)))
    return dict(w.split("=", 1) for w in words if re.match(r"^[a-z_][\w.]*=", w))


def documented_lines() -> dict[str, dict[str, str]]:
    return {"docs/train.md": overrides((ROOT / "docs" / "train.md").read_text()),
            "verl_reward docstring": overrides("python -m verl.trainer.main_ppo "
                                                + " ".join(re.findall(r"^\s+(reward\.\S+=\S+.*)$",
                                                                      verl_reward.__doc__, re.M)))}


def lookup(config: dict, key: str):
    node = config
    for part in key.split("."):
        assert isinstance(node, dict) and part in node, f"{key}: no such key in verl {VERL}'s trainer config"
        node = node[part]
    return node


def registered_managers(verl_dir: zipfile.Path) -> set[str]:
    """Names registered with the reward loop's registry (``@register("name")``, under any alias)."""
    names = set()
    for path in files(verl_dir / "experimental" / "reward_loop" / "reward_manager"):
        tree = ast.parse(path.read_text())
        aliases = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   and node.module == "verl.experimental.reward_loop.reward_manager"
                   for a in node.names if a.name == "register"}
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for deco in node.decorator_list:
                    if isinstance(deco, ast.Call) and isinstance(deco.func, ast.Name) and deco.func.id in aliases:
                        names.add(deco.args[0].value)
    return names


def test_every_documented_key_exists_in_verls_config(trainer_config):
    for where, keys in documented_lines().items():
        assert {"reward.custom_reward_function.path", "reward.custom_reward_function.name",
                "reward.reward_manager.name"} <= set(keys), where
        for key in keys:
            lookup(trainer_config, key)
        # the pre-reward-loop keys: accepted by the config, unused by main_ppo (below)
        assert not any(k.startswith(("custom_reward_function.", "reward_model.")) for k in keys), where
        assert keys["reward.custom_reward_function.name"] == "compute_score"
    assert documented_lines()["docs/train.md"]["algorithm.adv_estimator"] == "grpo"


def test_main_ppo_reads_the_reward_function_from_the_reward_keys(verl_dir, trainer_config):
    source = (verl_dir / "trainer" / "ppo" / "reward.py").read_text()
    assert 'config.reward.get("custom_reward_function")' in source
    main = (verl_dir / "trainer" / "main_ppo.py").read_text()
    assert "migrate_legacy_reward_impl" not in main  # the top-level keys are not moved for main_ppo
    assert lookup(trainer_config, "reward.num_workers") == 8  # the documented default


def test_the_reward_manager_is_in_verls_registry(verl_dir):
    names = registered_managers(verl_dir)
    assert names == {"dapo", "gdpo", "naive", "rate_limited", "remote"}
    assert "batch" not in names
    for where, keys in documented_lines().items():
        assert keys["reward.reward_manager.name"] in names, where


def test_compute_score_takes_what_verls_managers_pass(verl_dir):
    signature = inspect.signature(verl_reward.compute_score)
    folder = verl_dir / "experimental" / "reward_loop" / "reward_manager"
    checked = 0
    for name in ("naive", "dapo", "gdpo"):
        for node in ast.walk(ast.parse((folder / f"{name}.py").read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compute_score":
                keywords = {k.arg for k in node.keywords if k.arg}
                assert {"data_source", "solution_str", "ground_truth", "extra_info"} <= keywords
                signature.bind(**dict.fromkeys(keywords), reward_router_address="127.0.0.1:1", reward_model_tokenizer=None)
                checked += 1
    assert checked >= 6  # sync and async call sites of each manager
    estimators = (verl_dir / "trainer" / "ppo" / "core_algos.py").read_text()
    assert re.search(r'GRPO = "grpo"', estimators)
