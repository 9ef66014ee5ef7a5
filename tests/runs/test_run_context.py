"""The shared run context: endpoints, fingerprint refusal, runs rows, tokens, clean close."""

from __future__ import annotations

import json

import pytest

from ioa_synth.llm.config import ToolkitConfig
from ioa_synth.testing.scripted_server import chat_reply
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.context import open_run
from ioa_synth.runs.run_rows import FingerprintMismatch


def test_run_row_tokens_and_stopped_summary(tmp_path, endpoint):
    endpoint(responder=lambda body, headers: chat_reply('{"answer": "x"}'), models=["m"])
    catalog = Catalog(tmp_path)
    try:
        with open_run(catalog, "belief run", ["agent", "belief_judge"], ToolkitConfig(), args={"k": 1}) as run:
            assert set(run.clients) == {"agent", "belief_judge"}
            assert run.endpoints["agent"].temperature == 0.7
            seen = []
            run.tokens.on_change = seen.append
            run.tokens.add(10)
            run.tokens.add(5)
            assert seen == [10, 15] and run.tokens.calls == 2
            run.summary["items"] = 3
        with pytest.raises(RuntimeError):
            with open_run(catalog, "belief run", ["agent"], ToolkitConfig()) as run:
                raise RuntimeError("boom")
        rows = catalog.execute("SELECT command, summary_json, finished_at FROM runs ORDER BY started_at")
        first, second = (json.loads(r[1]) for r in rows)
        assert first == {"items": 3, "tokens": 15}
        assert second["stopped"] == "RuntimeError: boom" and all(r[2] is not None for r in rows)
    finally:
        catalog.close()


def test_custom_check_refuses_before_any_run_row(tmp_path, endpoint):
    endpoint(responder=lambda body, headers: chat_reply("{}"), models=["m"])
    catalog = Catalog(tmp_path)

    def refuse(cat, description):
        assert "agent" in description["components"]
        raise FingerprintMismatch("changed")

    try:
        with pytest.raises(FingerprintMismatch):
            with open_run(catalog, "belief run", ["agent"], ToolkitConfig(), check=refuse):
                pass
        assert list(catalog.execute("SELECT count(*) FROM runs")) == [(0,)]
    finally:
        catalog.close()


class NeverStarted:
    """Stands in for the embedded server; a test fails if it is started."""

    def __init__(self, name, log_path=None, **kw):
        self.name = self.model = name
        self.server = "llama-server build"
        self.base_url, self.parallel = "", 1

    def __enter__(self):
        raise AssertionError("the embedded server was started for a refused setup")

    def __exit__(self, *exc):
        return None


def test_a_refused_setup_starts_no_server_nor_contacts_an_endpoint(tmp_path, endpoint, monkeypatch):
    from ioa_synth.llm import local_model, local_weights

    remote = endpoint(responder=lambda body, headers: chat_reply("{}"), models=["m"], env="JUDGE")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setattr(local_model, "EmbeddedServer", NeverStarted)
    monkeypatch.setattr(local_weights, "default_local_model", lambda: "smollm2-135m")
    seen = []

    def refuse(cat, description):
        seen.append(description["components"])
        raise FingerprintMismatch("changed")

    catalog = Catalog(tmp_path)
    config = ToolkitConfig.model_validate({"judge": {"model": "m"}})
    try:
        with pytest.raises(FingerprintMismatch):
            with open_run(catalog, "build", ["generator", "judge"], config, check=refuse):
                pass
    finally:
        catalog.close()
    assert seen[0]["generator"]["model"] == "smollm2-135m" and seen[0]["generator"]["server"] == "llama-server build"
    assert seen[0]["judge"]["model"] == "m" and remote.requests == []


def test_deferred_run_row_and_recorder(tmp_path, endpoint):
    endpoint(responder=lambda body, headers: chat_reply('{"answer": "x"}'), models=["m"])
    catalog = Catalog(tmp_path)
    try:
        with open_run(catalog, "audit", ["agent"], ToolkitConfig(), check=None, record=False) as run:
            assert run.run_id == ""
            run.summary["tokens"] = 0  # a body may fix the key's place; the counter fills it
        assert list(catalog.execute("SELECT count(*) FROM runs")) == [(0,)]  # never started: no row
        with open_run(catalog, "audit", ["agent"], ToolkitConfig(), check=None, record=False) as run:
            recorder = run.recorder(replay_of=["c1"])
            assert run.run_id and recorder.run_id == run.run_id and recorder.replay == {}
            recorder.on_tokens(7)
        (summary,) = [json.loads(s) for (s,) in catalog.execute("SELECT summary_json FROM runs")]
        assert summary == {"tokens": 7} and run.tokens.calls == 1
    finally:
        catalog.close()
