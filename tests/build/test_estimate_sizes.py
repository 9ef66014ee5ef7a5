"""``estimate build --language TAG`` and ``--participants N``: the prompts counted are those
the build will send (the language note on every call; N members, their sides and turns),
checked against what a scripted-server build then bills, counted with the same tokenizer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ioa_helpers import one_line_error, q

from ioa_synth.llm.tokens import chars_counter
from ioa_synth.testing.scripted_languages import Billed, LanguageResponder
from ioa_synth.testing.scripted_multi import MultiResponder
from ioa_synth.testing.scripted_replies import ProtocolResponder

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"
GERMAN, THREE = ("--language", "de"), ("--participants", "3")


def _estimate(cli, seeds: Path, out: Path, *extra: str) -> dict:
    res = cli("estimate", "build", "--seeds", seeds, "--split", "test", "--out", out, "--type-mix", "none",
              "--tokenizer", "chars", "--json", *extra)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _per_call(est: dict) -> dict[str, float]:
    return {k["kind"]: k["prompt_tokens_per_call"] for k in est["assumptions"]["calls_by_kind"]}


def _responder(extra: tuple[str, ...]):
    if extra == GERMAN:
        pytest.importorskip("lingua")
        return LanguageResponder(json.loads((CASES / "de_case.json").read_text(encoding="utf-8")))
    return MultiResponder() if extra == THREE else ProtocolResponder()


def test_a_german_or_three_person_estimate_counts_more_prompt_than_the_english_two_person_one(cli, monkeypatch,
                                                                                              seeds_file, tmp_path):
    pytest.importorskip("lingua")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # an endpoint (the protocol plan); never called
    seeds = seeds_file(4)
    english = _estimate(cli, seeds, tmp_path / "en")
    german, three = _estimate(cli, seeds, tmp_path / "de", *GERMAN), _estimate(cli, seeds, tmp_path / "m3", *THREE)
    en, de, m3 = _per_call(english), _per_call(german), _per_call(three)
    # the note (about 1,100 characters, a quarter of them as chars/4 tokens) on every call
    assert all(200 < de[kind] - en[kind] < 400 for kind in en), (en, de)
    # three members, their sides by point, and more outline turns in every judge prompt
    assert m3["stage 1 judge"] > en["stage 1 judge"] and m3["stage 2 judge"] > en["stage 2 judge"]
    for est in (german, three):
        assert est["total"]["prompt_tokens"] > english["total"]["prompt_tokens"]
    assert english == _estimate(cli, seeds, tmp_path / "en2", "--language", "en")  # English is the paper's build
    res = cli("estimate", "build", "--seeds", seeds, "--split", "test", "--out", tmp_path / "x", "--language", "tlh")
    assert res.exit_code == 2 and not (tmp_path / "x").exists()
    one_line_error(res, "tlh")


@pytest.mark.parametrize("extra", [(), GERMAN, THREE], ids=["en", "de", "three"])
def test_estimate_matches_the_prompts_the_build_then_sends(cli, endpoint, seeds_file, tmp_path, extra):
    server = endpoint(responder=Billed(_responder(extra), chars_counter()))
    seeds, out = seeds_file(4), tmp_path / "out"
    base = ["build", "--seeds", seeds, "--split", "test", "--out", out, "--type-mix", "none", "--workers", "1", *extra]
    res = cli(*base, "--limit", "1")  # a pilot: the directory measures completions and pass rates
    assert res.exit_code == 0, res.output
    est = _estimate(cli, seeds, out, *extra)
    sent = len(server.requests)
    res = cli(*base)
    assert res.exit_code == 0, res.output
    assert q(out, "SELECT count(*) FROM cases WHERE status = 'accepted'") == [(4,)]
    last_run = "JOIN runs r USING (run_id) WHERE r.started_at = (SELECT max(started_at) FROM runs)"
    ((calls, prompt),) = q(out, f"SELECT count(*), sum(prompt_tokens) FROM llm_calls l {last_run}")
    ((stage1,),) = q(out, f"SELECT avg(prompt_tokens) FROM llm_calls l {last_run} AND stage = 1 AND role = 'generator'")
    assert calls == len(server.requests) - sent == est["total"]["calls"]
    assert abs(est["total"]["prompt_tokens"] - prompt) <= 0.10 * prompt, (est["total"], prompt)
    # the stage-1 generator prompt shows no earlier output: the estimate counts it as sent
    assert abs(_per_call(est)["stage 1 generator"] - stage1) <= 0.02 * stage1, (_per_call(est), stage1)
