"""Components of a team run: every agent is the ``discusser`` (``DISCUSSER_BASE_URL``, else
``OPENAI_BASE_URL``); each detector reads ``IOA_DETECTOR_<NAME>_BASE_URL``, else
``PROBER_BASE_URL``, else ``OPENAI_BASE_URL``, with its config's ``prober`` block."""

from __future__ import annotations

import duckdb

from ioa_synth.testing.collab_scripted import CollabScript, request_name
from ioa_synth.testing.scripted_server import ScriptedServer

from .helpers import HP, detector_config, hp_tasks


def test_each_detector_reads_its_own_endpoint(cli, monkeypatch, tmp_path):
    tasks = hp_tasks(1)
    script = CollabScript(tasks=hp_tasks())
    with ScriptedServer(script) as team, ScriptedServer(script) as own, ScriptedServer(script) as prober, \
            ScriptedServer(script) as fallback:
        monkeypatch.setenv("OPENAI_BASE_URL", fallback.base_url)
        monkeypatch.setenv("DISCUSSER_BASE_URL", team.base_url)
        monkeypatch.setenv("IOA_DETECTOR_MINE_BASE_URL", own.base_url)
        monkeypatch.setenv("IOA_DETECTOR_MINE_API_KEY", "sk-own-detector-0000")
        monkeypatch.setenv("PROBER_BASE_URL", prober.base_url)
        mine = detector_config(tmp_path, "mine.json", {"model": "scripted", "temperature": 0.9})
        other = detector_config(tmp_path, "other.json")
        out = tmp_path / "res"
        res = cli("collab", "run", "--bench", "hidden-profile", "--tasks", HP, "--out", out, "--limit", "1",
                  "--configs", "mcq:mine,mcq:other", "--detector", f"mine={mine}", "--detector", f"other={other}")
        assert res.exit_code == 0, res.output
        names = {s: [request_name(r["body"]) for r in srv.requests if r["path"].endswith("/chat/completions")]
                 for s, srv in (("team", team), ("own", own), ("prober", prober), ("fallback", fallback))}
        own_auth = {r["headers"].get("authorization") for r in own.requests}
    assert names["own"] == ["prober"] and names["prober"] == ["prober"] and names["fallback"] == []
    assert "prober" not in names["team"] and len(names["team"]) > 0
    assert own_auth == {"Bearer sk-own-detector-0000"}
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    temps = dict(con.execute("SELECT component, max(temperature) FROM collab_calls WHERE kind = 'mcq' "
                             "GROUP BY ALL").fetchall())
    con.close()
    assert temps == {"detector:mine": 0.9, "detector:other": 0.7}
    assert len(tasks) == 1
