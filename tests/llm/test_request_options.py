"""Nonsensical request options and temperatures in ``--config`` are refused when the config is
read (``ioa_synth.llm.config``): one ``error:`` line naming the component and the key, exit 2,
no request sent, no server started, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ioa_helpers import one_line_error

from ioa_synth.llm.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "evaluate" / "test"


@pytest.mark.parametrize("block, key", [
    ({"request_options": {"max_tokens": -5}}, "request_options.max_tokens"),
    ({"request_options": {"max_tokens": 0}}, "request_options.max_tokens"),
    ({"request_options": {"max_tokens": None}}, "request_options.max_tokens"),  # would lift the embedded cap
    ({"request_options": {"max_completion_tokens": "lots"}}, "request_options.max_completion_tokens"),
    ({"request_options": {"max_tokens": 12.5}}, "request_options.max_tokens"),
    ({"request_options": {"max_tokens": True}}, "request_options.max_tokens"),
    ({"request_options": {"top_p": 1.5}}, "request_options.top_p"),
    ({"request_options": {"presence_penalty": -3}}, "request_options.presence_penalty"),
    ({"request_options": {"frequency_penalty": "high"}}, "request_options.frequency_penalty"),
    ({"request_options": {"reasoning_effort": 3}}, "request_options.reasoning_effort"),
    ({"request_options": {"extra_body": [1]}}, "request_options.extra_body"),
    ({"temperature": -0.1}, "temperature"),
    ({"temperature": 7}, "temperature"),
    ({"temperature": "warm"}, "temperature"),
    ({"temperature": True}, "temperature"),
], ids=lambda v: json.dumps(v) if isinstance(v, dict) else v)
def test_a_nonsensical_option_names_its_component_and_key(tmp_path, block, key):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"judge": block}))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert f"judge.{key}: " in message and "(got " in message, message


def test_sensible_options_pass_unchanged(tmp_path):
    path = tmp_path / "config.json"
    options = {"max_tokens": 1, "max_completion_tokens": 4096, "top_p": 0, "presence_penalty": -2,
               "frequency_penalty": 2.0, "reasoning_effort": "low", "extra_body": {"min_p": 0.05}}
    path.write_text(json.dumps({"judge": {"request_options": options, "temperature": 2},
                                "generator": {"temperature": None}, "prober": {"temperature": 0}}))
    cfg = load_config(path)
    assert cfg.judge.request_options == options  # sent as written
    assert cfg.judge.effective_temperature("judge") == 2
    assert cfg.generator.effective_temperature("generator") is None
    assert cfg.prober.effective_temperature("prober") == 0


@pytest.mark.parametrize("command, component", [
    (["build", "--seeds", ROOT / "seeds" / "demo.jsonl", "--split", "test"], "generator"),
    (["evaluate", "--data", SAMPLE], "simulator"),
], ids=["build", "evaluate"])
def test_a_negative_max_tokens_is_refused_before_anything_starts(cli, endpoint, tmp_path, command, component):
    server = endpoint()  # would answer: the request must never be sent
    config = tmp_path / "config.json"
    config.write_text(json.dumps({component: {"request_options": {"max_tokens": -5}}}))
    out = tmp_path / "out"
    res = cli(*command, "--out", out, "--config", config)
    assert res.exit_code == 2
    one_line_error(res, f"{component}.request_options.max_tokens", "(got -5)")
    assert not out.exists()  # no run.json, catalog.duckdb or logs/
    assert server.requests == []
