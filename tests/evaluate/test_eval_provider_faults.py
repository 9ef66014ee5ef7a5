"""``evaluate`` against a provider whose content filter answers one case's request with HTTP
400 ``content_filter``: that case fails with the provider's words, the others are scored, and
a re-run asks again (the filter was taken for a setup error before)."""

from __future__ import annotations

import json

from .eval_helpers import released_case, write_case
from ioa_synth.testing.scripted_server import Reply

FILTER_TEXT = ("The response was filtered due to the prompt triggering Azure OpenAI's content management policy. "
               "Please modify your prompt and retry.")


def filtered_once(responder):
    state = {"left": 1}

    def respond(body, headers):
        if state["left"]:
            state["left"] -= 1
            return Reply(status=400, body={"error": {"message": FILTER_TEXT, "param": "prompt",
                                                     "code": "content_filter", "status": 400}})
        return responder(body, headers)

    return respond


def records(out):
    return {p.stem: json.loads(p.read_text()) for p in sorted((out / "records").rglob("*.json"))}


def test_content_filter_fails_one_case_the_run_goes_on_and_a_rerun_asks_again(cli, trio, tmp_path):
    data, out = tmp_path / "data", tmp_path / "results"
    for i in range(4):
        write_case(data, f"law/planning_{i:03d}.json", released_case())
    servers = trio()
    servers.validity_filter.responder = filtered_once(servers.validity_filter.responder)
    res = cli("evaluate", "--data", data, "--out", out, "--workers", "1")
    assert res.exit_code == 1, res.output
    assert "error:" not in res.stderr
    recs = records(out)
    assert sorted(r["status"] for r in recs.values()) == ["failed", "scored", "scored", "scored"]
    (failed,) = [r for r in recs.values() if r["status"] == "failed"]
    assert failed["error"].startswith("content filter: HTTP 400") and "content management policy" in failed["error"]
    assert any(c["error"] and c["error"].startswith("content filter") for c in failed["calls"])
    n = len(servers.validity_filter.requests)
    res = cli("evaluate", "--data", data, "--out", out, "--workers", "1")
    assert res.exit_code == 0, res.output
    assert len(servers.validity_filter.requests) > n
    assert [r["status"] for r in records(out).values()] == ["scored"] * 4
