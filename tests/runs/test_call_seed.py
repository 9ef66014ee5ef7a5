"""Per-call sampling seed: a stable hash of the call key (case, stage, role, attempt) plus
the component's ``seed`` base, sent through CallRecorder -> LLMClient and stored in the
request JSON. A new attempt is a new draw; a re-run sends the same seeds."""

from __future__ import annotations

import json

import pytest

from ioa_helpers import build, q

from ioa_synth.llm.client import SEED_RANGE
from ioa_synth.runs.recorder import call_seed
from ioa_synth.llm.config import ConfigError, load_config
from ioa_synth.testing.scripted_server import request_kind

PLANNING = "test/ml_research/planning_000"


def sent_seeds(server) -> dict[tuple[str, int], list[int | None]]:
    """Seeds the server received per request kind, in order."""
    out: dict[str, list] = {}
    for r in server.requests:
        out.setdefault(request_kind(r["body"]), []).append(r["body"].get("seed"))
    return out


def stored_seeds(out, case_id: str) -> dict[tuple[int, str, int], int | None]:
    rows = q(out, "SELECT stage, role, attempt, request_json FROM llm_calls WHERE case_id = ? AND error IS NULL",
             [case_id])
    return {(s, r, a): json.loads(body).get("seed") for s, r, a, body in rows}


def test_attempts_draw_new_seeds_and_a_rerun_sends_the_same(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_judge": ["low", "low"]})
    seeds = seeds_file(1)
    out = tmp_path / "out"
    assert build(cli, seeds, out).exit_code == 0
    assert q(out, "SELECT status, stage1_attempts FROM cases") == [("discarded", 2)]
    assert cli("regenerate", "--out", out, "--workers", "1", "--status", "discarded").exit_code == 0
    stored = stored_seeds(out, PLANNING)
    gen = [stored[(1, "generator", a)] for a in (1, 2, 3)]
    assert all(isinstance(s, int) and 0 <= s < SEED_RANGE for s in gen)
    assert len(set(gen)) == 3  # attempt 1, 2 and 3 are three different draws
    assert gen == [call_seed(0, (PLANNING, 1, "generator", a)) for a in (1, 2, 3)]
    assert stored[(1, "judge", 1)] != gen[0]  # the role is part of the key
    # what was sent is what was stored
    assert sent_seeds(server)["stage1_generator"] == gen

    # a re-run of the same build into a fresh directory sends the same seeds again
    again = endpoint({"stage1_judge": ["low", "low"]})
    out2 = tmp_path / "out2"
    build(cli, seeds, out2)
    assert sent_seeds(again)["stage1_generator"] == gen[:2]
    assert {k: v for k, v in stored_seeds(out2, PLANNING).items() if k[2] < 3} == \
        {k: v for k, v in stored.items() if k[2] < 3}


def test_seed_base_shifts_every_seed_and_null_sends_none(cli, endpoint, seeds_file, tmp_path):
    seeds = seeds_file(1)
    base = tmp_path / "base.json"
    base.write_text(json.dumps({"generator": {"seed": 1000}, "judge": {"seed": None}}))
    server = endpoint()
    assert build(cli, seeds, tmp_path / "out", "--config", base).exit_code == 0
    sent = sent_seeds(server)
    assert sent["stage1_generator"] == [call_seed(1000, (PLANNING, 1, "generator", 1))]
    assert sent["stage1_generator"][0] == (call_seed(0, (PLANNING, 1, "generator", 1)) + 1000) % SEED_RANGE
    assert sent["stage1_judge"] == sent["stage2_judge"] == [None]
    assert all("seed" not in r["body"] for r in server.requests if "judge" in request_kind(r["body"]))


def test_a_content_retry_is_a_new_draw(cli, endpoint, seeds_file, tmp_path):
    server = endpoint({"stage1_generator": ["badjson"]})
    out = tmp_path / "out"
    assert build(cli, seeds_file(1), out).exit_code == 0
    first, retry = sent_seeds(server)["stage1_generator"]
    assert retry == first + 1
    rows = q(out, "SELECT try_index, request_json FROM llm_calls WHERE stage = 1 AND role = 'generator' ORDER BY 1")
    assert [json.loads(body)["seed"] for _, body in rows] == [first, retry]


@pytest.mark.parametrize("value", ["7", -1, True, 1.5])
def test_bad_seed_values_are_config_errors(tmp_path, value):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"generator": {"seed": value}}))
    with pytest.raises(ConfigError, match="generator.seed"):
        load_config(cfg)


def test_call_seed_is_stable_and_none_without_base():
    key = ("test/law/planning_000", 2, "generator", 1)
    assert call_seed(0, key) == call_seed(0, tuple(key)) and call_seed(None, key) is None
    assert call_seed(0, key) != call_seed(0, key[:3] + (2,))
