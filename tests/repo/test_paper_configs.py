"""configs/paper-models.json and configs/paper-reward.json read through the --config reader
(request options checked as for any config) with the paper's models and temperatures
(IoA paper Table 15, §4.2 and App. B.3; the GRPO reward's models, Table 18)."""

from __future__ import annotations

from pathlib import Path

from ioa_synth.llm.config import load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def settings(config, name: str) -> tuple:
    c = config.component(name)
    return c.model, c.temperature, (c.request_options or {}).get("reasoning_effort")


def test_paper_models_per_component():
    config = load_config(CONFIGS / "paper-models.json")
    assert settings(config, "generator") == ("gpt-5.4", 0.7, "none")
    assert settings(config, "judge") == ("gpt-5.4", 0.3, "none")
    assert settings(config, "audit_judge") == ("gemini-3.1-pro-preview", 0.3, None)
    assert settings(config, "prober") == ("gpt-5.4", 0.7, "none")
    assert settings(config, "simulator") == ("gemini-3-flash-preview", 0.2, None)
    assert settings(config, "validity_filter") == ("gpt-5.4", 0.2, "none")
    assert config.generator.plan == "protocol"


def test_paper_reward_models():
    config = load_config(CONFIGS / "paper-reward.json")
    # the simulator without thinking (its lowest level), the filter gpt-5-mini, both at 0.2
    assert settings(config, "simulator") == ("gemini-3-flash-preview", 0.2, "minimal")
    assert settings(config, "validity_filter") == ("gpt-5-mini", 0.2, None)
    assert config.prober.model is None  # the policy being trained is the prober


def test_estimate_reads_both_files_without_contacting_an_endpoint(cli, tmp_path, monkeypatch):
    # an address that cannot answer: estimate never opens an endpoint, so it must not matter
    monkeypatch.setenv("OPENAI_BASE_URL", "http://unused.invalid/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    data = CONFIGS.parent / "samples" / "evaluate" / "test"
    for name, models in (("paper-models", ("gpt-5.4", "gemini-3-flash-preview")),
                         ("paper-reward", ("gpt-5-mini", "gemini-3-flash-preview"))):
        res = cli("estimate", "evaluate", "--data", data, "--out", tmp_path / name, "--config", CONFIGS / f"{name}.json")
        assert res.exit_code == 0, res.output
        assert all(m in res.output for m in models), res.output
        assert not (tmp_path / name).exists()
